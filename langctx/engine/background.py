"""Model summaries off the critical path, decided in the entries: a fold is written with its local
summary and the model's replaces it at the next fold, in any process (docs/memory.md)."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING

from langctx.engine import planning, summarizer_calls, writing
from langctx.entries import CompactionEntry
from langctx.errors import ConfigError
from langctx.lru import LRU
from langctx.summarize import SummaryRequest, summary_text
from langctx.summarize.calls import failure_reason, warn_failure
from langctx.summarize.request import request_digest

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore

MAX_JOBS = 16
"""Background summaries running at once in a process (a hung summarizer holds its slot)."""

_jobs: LRU[str, tuple[Future[str], float]] = LRU(maxsize=4 * MAX_JOBS)
_slots = threading.BoundedSemaphore(MAX_JOBS)
_in_background = contextvars.ContextVar("langctx_background_summary", default=False)


def in_background() -> bool:
    """True inside a background summary (for a summarizer or a meter that wants to know)."""
    return _in_background.get()


def take(key: str, timeout: float | None) -> tuple[str | None, str]:
    """``(summary, "")`` of the job of ``key`` within ``timeout``, or ``(None, why not)``."""
    job = _jobs.get(key)
    if job is None:
        return None, "no background summary in this process"
    future, started = job
    try:
        return future.result(timeout=_left(started, timeout)), ""
    except Exception as exc:  # FutureTimeout is a TimeoutError: "timed out"
        _jobs.pop(key)
        if isinstance(exc, ConfigError):
            raise  # the summarizer can never work (its answer is not text): do not fall back
        warn_failure(exc, "the local summary (the background summary failed)")
        return None, failure_reason(exc)


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
    return _start(mem, key, request)


def _start(mem: MemoryCore, key: str, request: SummaryRequest) -> bool:
    """Summarize ``request`` in a daemon thread as the job of ``key`` (False: no slot is free)."""
    if _jobs.get(key) is not None:
        return True
    if not _slots.acquire(blocking=False):
        return False
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

    _jobs.put(key, (future, time.monotonic()))
    threading.Thread(target=target, name=f"langctx-summary-{key[:12]}", daemon=True).start()
    return True


def _pending(mem: MemoryCore) -> tuple[CompactionEntry, SummaryRequest | None] | None:
    """The newest level-1 entry when its model summary is pending, and its request as of now."""
    newest = next((e for e in reversed(mem._active) if e["level"] == 1), None)
    if newest is None or newest["quality"] != "mechanical" or newest.get("upgrade_input") is None:
        return None
    request = planning.upgrade_request(mem, newest)
    same = request is not None and request_digest(request) == newest["upgrade_input"]
    return newest, request if same else None


async def await_upgrade(mem: MemoryCore) -> None:
    """Let the pending background summary finish without blocking the loop (starting it if need be)."""
    newest, request = _pending(mem) or (None, None)
    if newest is None or request is None:
        return
    key = newest["upgrade_input"]
    if _start(mem, key, request) and (job := _jobs.get(key)) is not None:
        started = time.perf_counter()
        done = asyncio.shield(asyncio.wrap_future(job[0]))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(done, _left(job[1], mem.config.summary_timeout))
        mem._waited_s += time.perf_counter() - started


def settle_upgrade(mem: MemoryCore, *, wait: bool = True) -> CompactionEntry | None:
    """Apply the pending model summary (waiting within ``summary_timeout``), or discard it."""
    pending = _pending(mem)
    if pending is None:
        return None
    newest, request = pending
    if request is None or not wait:
        why = "its messages changed since it was asked" if request is None else "summarized anew"
        writing.record(mem, "discard", "background", [newest["id"]], 0, why)
        return None
    key = newest["upgrade_input"]
    started = time.perf_counter()
    if _start(mem, key, request):
        text, reason = take(key, mem.config.summary_timeout)
    else:
        text, reason = None, "every background slot is held"
    mem._waited_s += time.perf_counter() - started
    if text is None:
        writing.record(mem, "summarizer_fallback", "background", [newest["id"]], 0, reason[:300])
        return None
    files = {"read_files": newest["read_files"], "modified_files": newest["modified_files"]}
    text = summarizer_calls.cap(mem, text)  # the new entry replaces the mechanical one's text
    entry = writing.write_merge(mem, [newest], text, "model", 1, {**newest["facts"], **files})
    mem._refresh()
    entry["tokens_after"] = mem.context_tokens()
    detail = f"background model summary {entry['id']} replaces {newest['id']}"
    writing.record(mem, "upgrade", "background", [newest["id"]], newest["summary_tokens"], detail)
    return entry
