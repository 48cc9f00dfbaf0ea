"""Model summaries off the critical path, decided in the entries (so in the checkpoint).

A fold whose evicted history reaches ``summary_threshold_tokens`` is written at once with the
local summary (quality ``"mechanical"``) and records in its entry the digest of the model
summary's input (``upgrade_input``); that summary is computed in a daemon thread. The next fold,
in whichever process serves it, applies the model's summary (an entry of quality ``"model"``
naming the mechanical one in ``merged_from``) while that entry is still the newest level-1
summary and the log still gives the same digest: a job of this process computing that digest is
waited for, otherwise the summary is computed then. A summary of messages edited or removed
since is discarded, as is one overtaken by a ``/compact`` or an overflow recovery (they call the
model themselves). So the entries, and what the model sees, do not depend on which worker served
the previous call or on a process dying in between.

Jobs are kept per process, keyed by the input's digest (a value), and a finished summary stays
there for a while: a node that runs again (durable execution) finds it instead of asking again.
At most :data:`MAX_JOBS` run at once; a summarizer that hangs holds its slot until it returns
(no new jobs start once all slots are held).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING

from langctx.engine import planning, summarizer_calls, writing
from langctx.entries import CompactionEntry, covered_count
from langctx.errors import ConfigError
from langctx.lru import LRU
from langctx.summarize import SummaryRequest, summary_text
from langctx.summarize.calls import failure_reason, warn_failure
from langctx.summarize.request import request_digest

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore

MAX_JOBS = 16
"""Background summaries running at once in a process."""

_jobs: LRU[str, tuple[Future[str], float]] = LRU(maxsize=4 * MAX_JOBS)
_slots = threading.BoundedSemaphore(MAX_JOBS)
_in_background: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "langctx_background_summary", default=False
)


def in_background() -> bool:
    """True inside a background summary (for a summarizer or a meter that wants to know)."""
    return _in_background.get()


def start_job(key: str, fn: Callable[[], object]) -> bool:
    """Run ``fn`` (a summarizer call) in a daemon thread as the job of input digest ``key``;
    False when all slots are taken or a job for it exists."""
    if _jobs.get(key) is not None or not _slots.acquire(blocking=False):
        return False
    future: Future[str] = Future()
    ctx = contextvars.copy_context()  # callbacks and the run's config travel with the call
    ctx.run(_in_background.set, True)

    def target() -> None:
        try:
            future.set_result(summary_text(ctx.run(fn)))
        except BaseException as exc:
            future.set_exception(exc)
        finally:
            _slots.release()

    _jobs.put(key, (future, time.monotonic()))
    threading.Thread(target=target, name=f"langctx-summary-{key[:12]}", daemon=True).start()
    return True


def take(key: str, timeout: float | None) -> tuple[str | None, str]:
    """``(summary, "")`` for the job of input digest ``key`` (waiting up to what is left of
    ``timeout`` since it started), or ``(None, why not)``: no job, failed, not done in time. A
    summary stays known (a retry finds it); a failed job is forgotten."""
    job = _jobs.get(key)
    if job is None:
        return None, "no background summary in this process"
    future, started = job
    try:
        return future.result(timeout=_left(started, timeout)), ""
    except ConfigError:
        _jobs.pop(key)
        raise  # the summarizer can never work (its answer is not text): say so, do not fall back
    except Exception as exc:  # FutureTimeout is a TimeoutError: "timed out"
        _jobs.pop(key)
        warn_failure(exc, "the local summary (the background summary failed)")
        return None, failure_reason(exc)


async def wait_async(key: str, timeout: float | None) -> None:
    """Wait without blocking the event loop until the job of ``key`` is done or what is left of
    ``timeout`` has passed (then :func:`take` returns at once)."""
    job = _jobs.get(key)
    if job is None:
        return
    future, started = job
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), _left(started, timeout))


def _left(started: float, timeout: float | None) -> float | None:
    return None if timeout is None else max(0.0, timeout - (time.monotonic() - started))


def clear() -> None:
    """Forget every job (running ones finish and are dropped); for tests and benchmarks."""
    _jobs.clear()


# ---------------------------------------------------------------- bound on LayeredChatMemory


def launch_upgrade(mem: MemoryCore, entry: CompactionEntry, asked: SummaryRequest) -> bool:
    """Record in the mechanical ``entry`` the model summary that will replace it, and start it."""
    request = planning.upgrade_request(mem, entry)
    if request is None:
        return False
    key = request_digest(request)
    entry["upgrade_input"] = key
    request = replace(request, context=asked.context)  # a prefix summarizer reads the cache
    return _start(mem, key, request)


def _start(mem: MemoryCore, key: str, request: SummaryRequest) -> bool:
    summarizer = mem.summarizer
    return _jobs.get(key) is not None or start_job(key, lambda: summarizer.summarize(request))


def _pending(mem: MemoryCore) -> tuple[CompactionEntry, SummaryRequest | None] | None:
    """The newest level-1 entry when its model summary is pending, with that summary's request
    as the log gives it now (None: the log no longer gives the recorded input)."""
    newest = next((e for e in reversed(mem._active) if e["level"] == 1), None)
    key = newest.get("upgrade_input") if newest is not None else None
    if newest is None or newest["quality"] != "mechanical" or key is None:
        return None
    request = planning.upgrade_request(mem, newest)
    if request is None or request_digest(request) != key:
        return newest, None
    return newest, request


async def await_upgrade(mem: MemoryCore) -> None:
    """Let the pending background summary finish without blocking the loop (started here when
    no job of this process computes it)."""
    newest, request = _pending(mem) or (None, None)
    if newest is None or request is None:
        return
    key = newest["upgrade_input"]
    if _start(mem, key, request):
        started = time.perf_counter()
        await wait_async(key, mem.config.summary_timeout)
        mem._waited_s += time.perf_counter() - started


def settle_upgrade(mem: MemoryCore, *, wait: bool = True) -> CompactionEntry | None:
    """Apply the pending model summary of the newest mechanical entry.

    ``wait``: a fold waits for it (within ``summary_timeout``; computing it when no job of this
    process does), as the alternative is to throw it away; a ``/compact`` or overflow recovery
    does not (it calls the model itself, and the pending summary is discarded).
    """
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
    summary = summarizer_calls.cap(mem, text)
    files = {"read_files": newest["read_files"], "modified_files": newest["modified_files"]}
    entry = writing.write_entry(
        mem,
        summary,
        {**newest["facts"], **files},
        level=1,
        covered_ids=[],  # the mechanical entry folded the messages; this one replaces its text
        covered_count=covered_count(newest),
        first_kept_id=newest["first_kept_id"],
        trigger="merge",
        quality="model",
        merged_from=[newest["id"]],
    )
    mem._refresh()
    entry["tokens_after"] = mem.context_tokens()
    detail = f"background model summary {entry['id']} replaces {newest['id']}"
    writing.record(mem, "upgrade", "background", [newest["id"]], newest["summary_tokens"], detail)
    return entry
