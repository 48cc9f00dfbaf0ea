"""Model summaries off the critical path.

A fold whose evicted history reaches ``summary_threshold_tokens`` is written at once with the
local summary (quality ``"mechanical"``); the model's summary of the same span runs in a daemon
thread. At the next fold (when the summary block changes anyway, so no extra provider cache is
broken) a finished summary replaces the mechanical entry by an entry of quality ``"model"`` that
names it in ``merged_from`` — only while that entry is still the newest level-1 summary, so a
summary computed for a history that changed meanwhile (a ``/compact``, a merge) is discarded. If
the process dies, the mechanical entry stands and a later fold asks again: nothing is lost.

Jobs are kept per process, keyed by the mechanical entry's id (a digest of the messages it
covers), so the stateless integrations find them on the next call; another worker simply does not
(it folds on and asks for the whole span later). At most :data:`MAX_JOBS` run at once; a summarizer
that hangs holds its slot until it returns (no new jobs start once all slots are held).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING

from langctx.entries import CompactionEntry, covered_count, new_compaction_entry
from langctx.errors import ConfigError
from langctx.lru import LRU
from langctx.summarize import SummaryRequest, summary_text
from langctx.summarize.calls import failure_reason, warn_failure

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory

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


def start_job(entry_id: str, fn: Callable[[], object]) -> bool:
    """Run ``fn`` (a summarizer call) in a daemon thread for ``entry_id``; False when all slots
    are taken or a job for it exists."""
    if _jobs.get(entry_id) is not None or not _slots.acquire(blocking=False):
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

    _jobs.put(entry_id, (future, time.monotonic()))
    threading.Thread(target=target, name=f"langctx-summary-{entry_id}", daemon=True).start()
    return True


def running(entry_id: str) -> bool:
    """True when a background summary for ``entry_id`` exists in this process."""
    return _jobs.get(entry_id) is not None


def take(entry_id: str, timeout: float | None) -> tuple[str | None, str]:
    """``(summary, "")`` for the finished job of ``entry_id`` (waiting up to what is left of
    ``timeout`` since it started), or ``(None, why not)``: no job, failed, not done in time. The
    job is forgotten either way."""
    job = _jobs.pop(entry_id)
    if job is None:
        return None, "no background summary in this process"
    future, started = job
    left = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
    if timeout == 0 and not future.done():
        return None, "discarded: the span is summarized on the spot"
    try:
        return future.result(timeout=left), ""
    except ConfigError:
        raise  # the summarizer can never work (its answer is not text): say so, do not fall back
    except Exception as exc:  # FutureTimeout is a TimeoutError: "timed out"
        warn_failure(exc, "the local summary (the background summary failed)")
        return None, failure_reason(exc)


async def wait_async(entry_id: str, timeout: float | None) -> None:
    """Wait without blocking the event loop until the job for ``entry_id`` is done or what is
    left of ``timeout`` has passed (then :func:`take` returns at once)."""
    job = _jobs.get(entry_id)
    if job is None:
        return
    future, started = job
    left = None if timeout is None else max(0.0, timeout - (time.monotonic() - started))
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)), left)


def clear() -> None:
    """Forget every job (running ones finish and are dropped); for tests and benchmarks."""
    _jobs.clear()


# ---------------------------------------------------------------- bound on LayeredChatMemory


def _newest_level1(self: LayeredChatMemory) -> CompactionEntry | None:
    level1 = [e for e in self._active if e["level"] == 1]
    return level1[-1] if level1 else None


def _launch_upgrade(
    self: LayeredChatMemory, entry: CompactionEntry, request: SummaryRequest
) -> bool:
    """Start the model summary that will replace the mechanical ``entry``."""
    summarizer = self.summarizer
    return start_job(entry["id"], lambda: summarizer.summarize(request))


async def _await_upgrade(self: LayeredChatMemory) -> None:
    """Let a running background summary for the newest entry finish without blocking the loop."""
    newest = self._newest_level1()
    if newest is not None and newest["quality"] == "mechanical" and running(newest["id"]):
        started = time.perf_counter()
        await wait_async(newest["id"], self.config.summary_timeout)
        self._waited_s += time.perf_counter() - started


def _settle_upgrade(self: LayeredChatMemory, *, wait: bool = True) -> CompactionEntry | None:
    """Apply a finished background summary to the newest mechanical entry it was computed for.

    ``wait``: a fold waits for a summary still running (within ``summary_timeout``), as the
    alternative is to throw it away; a ``/compact`` or overflow recovery does not (it calls the
    model itself, and the running summary is then discarded).
    """
    newest = self._newest_level1()
    if newest is None or newest["quality"] != "mechanical" or not running(newest["id"]):
        return None
    started = time.perf_counter()
    text, reason = take(newest["id"], self.config.summary_timeout if wait else 0.0)
    self._waited_s += time.perf_counter() - started
    if text is None:
        action = "summarizer_fallback" if wait else "discard"
        self._record(action, "background", [newest["id"]], 0, reason[:300])
        return None
    summary = self._cap(text)
    entry = new_compaction_entry(
        summary=summary,
        summary_tokens=self.counter.count_text(summary),
        level=1,
        covered_ids=[],  # the mechanical entry folded the messages; this one replaces its text
        covered_count=covered_count(newest),
        first_kept_id=newest["first_kept_id"],
        tokens_before=self.context_tokens(),
        tokens_after=0,
        trigger="merge",
        quality="model",
        read_files=newest["read_files"],
        modified_files=newest["modified_files"],
        merged_from=[newest["id"]],
        facts=newest["facts"],
    )
    self._stamp(entry)
    self._add_entry(entry)
    self._refresh()
    entry["tokens_after"] = self.context_tokens()
    self._record(
        "upgrade",
        "background",
        [newest["id"]],
        newest["summary_tokens"],
        f"background model summary {entry['id']} replaces {newest['id']}",
    )
    return entry
