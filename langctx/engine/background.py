"""Model summaries off the critical path, decided in the entries: a fold is written with its local
summary and the model's replaces it at the first fold, in any process, that finds it ready within
``summary_wait`` (docs/memory.md)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from langctx.engine import planning, summarizer_calls, writing
from langctx.engine.plan import CompactionEvent
from langctx.entries import CompactionEntry
from langctx.errors import ConfigError
from langctx.lru import LRU
from langctx.summarize import SummaryRequest, summary_text
from langctx.summarize.calls import failure_reason, warn_failure
from langctx.summarize.request import request_digest
from langctx.telemetry import notify

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore

MAX_JOBS = 16
"""Background summaries running at once in a process (a hung summarizer holds its slot)."""

logger = logging.getLogger("langctx")


@dataclass(slots=True)
class _Job:
    """One background summary of this process, by the digest of its input."""

    future: Future[str]
    started: float
    dropped: bool = False
    """Its answer was refused or never came, and that was said (it is not asked again)."""


@dataclass(frozen=True, slots=True)
class Pending:
    """A level-1 entry whose model summary is pending, and what became of its input."""

    entry: CompactionEntry
    key: str
    request: SummaryRequest | None
    """What to summarize if no job of this process holds it (None: it cannot be rebuilt)."""
    changed: bool
    """Its messages changed since it was asked: its answer must not be used."""


@dataclass(frozen=True, slots=True)
class Settled:
    """What a fold made of the pending model summaries: applied, or still running."""

    upgraded: list[CompactionEntry] = field(default_factory=list)
    """The model summaries applied, each in place of its local one."""
    waiting: list[Pending] = field(default_factory=list)
    """Still running: their local summaries stay, no fold absorbs them, a later fold applies them."""

    @property
    def waiting_ids(self) -> frozenset[str]:
        return frozenset(p.entry["id"] for p in self.waiting)


@dataclass(frozen=True, slots=True)
class _Drop:
    """A model summary that will not be used, and why ("": said already)."""

    why: str
    exc: BaseException | None = None


_jobs: LRU[str, _Job] = LRU(maxsize=4 * MAX_JOBS)
_slots = threading.BoundedSemaphore(MAX_JOBS)
_in_background = contextvars.ContextVar("langctx_background_summary", default=False)


def in_background() -> bool:
    """True inside a background summary (for a summarizer or a meter that wants to know)."""
    return _in_background.get()


def _left(started: float, timeout: float | None) -> float | None:
    return None if timeout is None else max(0.0, timeout - (time.monotonic() - started))


def wait_idle(timeout: float | None = None) -> bool:
    """Wait until no job runs (each holds a slot); False if one still runs after ``timeout`` s."""
    held = 0
    try:
        while held < MAX_JOBS and _slots.acquire(timeout=timeout):
            held += 1
        return held == MAX_JOBS
    finally:
        for _ in range(held):
            _slots.release()


def clear() -> None:
    """Forget every job (running ones finish and are dropped); for tests and benchmarks."""
    _jobs.clear()


def launch_upgrade(
    mem: MemoryCore, entry: CompactionEntry | None, asked: SummaryRequest | None
) -> bool:
    """Record in ``entry`` the model summary ``asked`` to replace it, and start it (False: none)."""
    if entry is None or asked is None:
        return False
    request = planning.upgrade_request(mem, entry)
    if request is None:
        return False
    key = request_digest(request)
    entry["upgrade_input"] = key
    request = replace(request, context=asked.context)  # a prefix summarizer reads the cache
    return _start(mem, key, request) is not None


def _start(mem: MemoryCore, key: str, request: SummaryRequest) -> _Job | None:
    """Summarize ``request`` in a daemon thread as the job of ``key`` (None: no slot is free)."""
    if (job := _jobs.get(key)) is not None:
        return job
    if not _slots.acquire(blocking=False):
        return None
    future: Future[str] = Future()
    ctx = contextvars.copy_context()  # callbacks and the run's config travel with the call
    ctx.run(_in_background.set, True)
    summarizer = mem.summarizer

    def target() -> None:
        try:
            future.set_result(summary_text(ctx.run(summarizer.summarize, request)))
        except BaseException as exc:
            future.set_exception(exc)
        finally:
            _slots.release()

    job = _Job(future, time.monotonic())
    _jobs.put(key, job)
    threading.Thread(target=target, name=f"langctx-summary-{key[:12]}", daemon=True).start()
    return job


def _pending(mem: MemoryCore) -> list[Pending]:
    """The level-1 entries whose model summary is pending, oldest first, and their input as of now."""
    out = []
    for entry in mem._active:
        key = entry.get("upgrade_input")
        if entry["level"] != 1 or entry["quality"] != "mechanical" or not isinstance(key, str):
            continue
        request = planning.upgrade_request(mem, entry)
        same = request is not None and request_digest(request) == key
        # archived: they cannot change; an archive not in the state lacks them
        changed = not same and not planning.archived(mem, entry)
        out.append(Pending(entry, key, request if same else None, changed))
    return out


def _job(mem: MemoryCore, pending: Pending) -> _Job | None:
    """The job of ``pending``: this process's, or started now from its request (None: neither)."""
    job = _jobs.get(pending.key)
    if job is None and pending.request is not None:
        job = _start(mem, pending.key, pending.request)
    return job


def _budget(mem: MemoryCore) -> float | None:
    """What the fold may still wait for background summaries (None: up to their timeouts)."""
    bound = mem.config.summary_wait
    return None if bound is None else max(0.0, bound - mem._waited_s)


def _patience(mem: MemoryCore, job: _Job) -> float | None:
    """How long to wait for ``job`` now: within the fold's budget and the job's timeout."""
    left, budget = _left(job.started, mem.config.summary_timeout), _budget(mem)
    if budget is None or left is None:
        return left if budget is None else budget
    return min(left, budget)


async def await_upgrade(mem: MemoryCore) -> None:
    """Async version of the wait in `settle_upgrade` (all pending jobs at once, the loop free)."""
    jobs = [
        job
        for pending in _pending(mem)
        if not pending.changed and (job := _job(mem, pending)) is not None and not job.dropped
    ]
    if not jobs:
        return
    waits = [_patience(mem, job) for job in jobs]
    timeout = None if None in waits else max(w for w in waits if w is not None)
    started = time.perf_counter()
    # shielded: a wait that ends never cancels a job (another fold may still apply it)
    futures = [asyncio.shield(asyncio.wrap_future(job.future)) for job in jobs]
    await asyncio.wait(futures, timeout=timeout)
    mem._waited_s += time.perf_counter() - started


def settle_upgrade(mem: MemoryCore) -> Settled:
    """Apply the pending model summaries that are ready, oldest first, each in place of its local
    one, waiting for those still running at most what is left of ``summary_wait`` (and of their
    ``summary_timeout``); the others wait for a later fold. A summary of changed messages, or one
    that failed or timed out, is dropped and said once. A pending summary no job of this process
    holds is started now from the state's messages (dropped when the state does not hold them)."""
    settled = Settled()
    for pending in _pending(mem):
        started = time.perf_counter()
        try:
            answer = _answer(mem, pending)
        finally:
            mem._waited_s += time.perf_counter() - started
        if answer is None:
            settled.waiting.append(pending)
        elif isinstance(answer, _Drop):
            if answer.why:
                _drop(mem, pending, answer.why, answer.exc)
        else:
            settled.upgraded.append(_apply(mem, pending.entry, answer))
    if settled.upgraded:
        mem._refresh()
        for entry in settled.upgraded:
            entry["tokens_after"] = mem.context_tokens()
    return settled


def _apply(mem: MemoryCore, pending: CompactionEntry, text: str) -> CompactionEntry:
    """Write the model summary ``text`` in place of the local summary of ``pending``."""
    files = {"read_files": pending["read_files"], "modified_files": pending["modified_files"]}
    entry = writing.write_merge(mem, [pending], text, "model", 1, {**pending["facts"], **files})
    detail = f"background model summary {entry['id']} replaces {pending['id']}"
    writing.record(mem, "upgrade", "background", [pending["id"]], pending["summary_tokens"], detail)
    return entry


def _answer(mem: MemoryCore, pending: Pending) -> str | _Drop | None:
    """The summary of ``pending``'s job, capped; a drop; or None: not ready within the wait."""
    job = _jobs.get(pending.key)
    if job is not None and job.dropped:
        return _Drop("")
    if pending.changed:
        return _Drop("its messages changed since it was asked")
    job = _job(mem, pending)
    if job is None:
        if pending.request is None:
            return _Drop("its messages are archived and no job here holds them")
        return None  # every background slot is held: a later fold starts it
    try:
        return summarizer_calls.checked(mem, job.future.result(timeout=_patience(mem, job)))
    except Exception as exc:  # FutureTimeout is a TimeoutError: "timed out"
        if isinstance(exc, ConfigError):
            _jobs.pop(pending.key)
            raise  # the summarizer can never work (its answer is not text): do not fall back
        if not job.future.done() and _left(job.started, mem.config.summary_timeout) != 0:
            return None  # still running, within its timeout
        return _Drop(failure_reason(exc), exc)


def merged_away(mem: MemoryCore, waiting: list[Pending]) -> None:
    """Drop (and say once) the model summaries of ``waiting`` entries a merge took meanwhile."""
    active = {e["id"] for e in mem._active}
    for pending in waiting:
        if pending.entry["id"] not in active:
            _drop(mem, pending, "its entry was merged into a higher-level summary before it came")


def _drop(mem: MemoryCore, pending: Pending, why: str, exc: BaseException | None = None) -> None:
    """Keep the entry's local summary: say why in the eviction log, an event and one log line."""
    job = _jobs.get(pending.key)
    if job is None:  # remembered, so that it is said once
        job = _Job(Future(), time.monotonic())
        job.future.cancel()
        _jobs.put(pending.key, job)
    job.dropped = True
    entry = pending.entry
    action = "discard" if exc is None else "summarizer_fallback"
    writing.record(mem, action, "background", [entry["id"]], 0, why[:300])
    if exc is not None:
        warn_failure(exc, f"the local summary of {entry['id']} (the background summary failed)")
    else:
        logger.warning(
            "langctx: the background model summary of %s is not used (%s); %s keeps its local "
            "summary.",
            entry["id"],
            why,
            entry["id"],
        )
    if mem._on_compaction is not None:
        event = CompactionEvent("dropped", "background", mem.context_tokens(), entry=entry)
        notify(mem._on_compaction, replace(event, detail=why[:300]))
