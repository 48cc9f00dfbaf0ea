"""Model summaries off the critical path, decided in the entries: a fold is written with its local
summary and the model's replaces it at the next fold, in any process (docs/memory.md)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, replace
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
class _Pending:
    """The newest level-1 entry whose model summary is pending, and what became of its input."""

    entry: CompactionEntry
    key: str
    request: SummaryRequest | None
    """What to summarize if no job of this process holds it (None: it cannot be rebuilt)."""
    changed: bool
    """Its messages changed since it was asked: its answer must not be used."""


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


def _pending(mem: MemoryCore) -> _Pending | None:
    """The newest level-1 entry when its model summary is pending, and its input as of now."""
    newest = next((e for e in reversed(mem._active) if e["level"] == 1), None)
    key = None if newest is None else newest.get("upgrade_input")
    if newest is None or newest["quality"] != "mechanical" or not isinstance(key, str):
        return None
    request = planning.upgrade_request(mem, newest)
    same = request is not None and request_digest(request) == key
    if planning.archived(mem, newest):  # they cannot change; an archive not in the state
        return _Pending(newest, key, request if same else None, changed=False)  # lacks them
    return _Pending(newest, key, request if same else None, changed=not same)


def _job(mem: MemoryCore, pending: _Pending) -> _Job | None:
    """The job of ``pending``: this process's, or started now from its request (None: neither)."""
    job = _jobs.get(pending.key)
    if job is None and pending.request is not None:
        job = _start(mem, pending.key, pending.request)
    return job


async def await_upgrade(mem: MemoryCore) -> None:
    """Let the pending background summary finish without blocking the loop (starting it if need be)."""
    pending = _pending(mem)
    if pending is None or pending.changed:
        return
    job = _job(mem, pending)
    if job is None or job.dropped:
        return
    started = time.perf_counter()
    done = asyncio.shield(asyncio.wrap_future(job.future))
    with contextlib.suppress(Exception):
        await asyncio.wait_for(done, _left(job.started, mem.config.summary_timeout))
    mem._waited_s += time.perf_counter() - started


def settle_upgrade(mem: MemoryCore) -> CompactionEntry | None:
    """Apply the pending model summary (waiting within ``summary_timeout``), or drop it and say
    why, once. Its answer is this process's job's, or made now from the state's messages (in
    any process alike): None only when the state does not hold them (changed, or archived in a
    store) and no job of this process does."""
    pending = _pending(mem)
    if pending is None:
        return None
    started = time.perf_counter()
    try:
        text, why, exc = _answer(mem, pending)
    finally:
        mem._waited_s += time.perf_counter() - started
    if text is None:
        if why:
            _drop(mem, pending, why, exc)
        return None
    newest = pending.entry
    files = {"read_files": newest["read_files"], "modified_files": newest["modified_files"]}
    entry = writing.write_merge(mem, [newest], text, "model", 1, {**newest["facts"], **files})
    mem._refresh()
    entry["tokens_after"] = mem.context_tokens()
    detail = f"background model summary {entry['id']} replaces {newest['id']}"
    writing.record(mem, "upgrade", "background", [newest["id"]], newest["summary_tokens"], detail)
    return entry


def _answer(mem: MemoryCore, pending: _Pending) -> tuple[str | None, str, BaseException | None]:
    """The summary of ``pending``'s job, capped, or None and why not ("": nothing to say)."""
    job = _jobs.get(pending.key)
    if job is not None and job.dropped:
        return None, "", None  # said already
    if pending.changed:
        return None, "its messages changed since it was asked", None
    job = _job(mem, pending)
    if job is None:
        if pending.request is not None:
            return None, "every background slot is held", None
        return None, "its messages are archived and no job here holds them", None
    try:
        text = job.future.result(timeout=_left(job.started, mem.config.summary_timeout))
        return summarizer_calls.checked(mem, text), "", None
    except Exception as exc:  # FutureTimeout is a TimeoutError: "timed out"
        if isinstance(exc, ConfigError):
            _jobs.pop(pending.key)
            raise  # the summarizer can never work (its answer is not text): do not fall back
        return None, failure_reason(exc), exc


def _drop(mem: MemoryCore, pending: _Pending, why: str, exc: BaseException | None = None) -> None:
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
