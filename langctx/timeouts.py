"""Calls with a timeout: a daemon thread (sync) or a cancelled task (async), and their error."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from langctx.errors import LangctxError

T = TypeVar("T")


class GuardTimeoutError(LangctxError, TimeoutError):
    """A guarded call did not return in time (distinct from a ``TimeoutError`` the tool raised)."""

    def __init__(self, timeout: float, detail: str | None = None) -> None:
        super().__init__(detail or f"the call did not return within {timeout:g} s")
        self.timeout = timeout


MAX_STRAGGLERS = 32
"""Timed-out calls that may still run in their threads; past it, a guarded call fails at once."""

_stragglers = 0
_straggler_lock = threading.Lock()


def stragglers() -> int:
    """Guarded calls that timed out and have not returned yet (their threads still run)."""
    return _stragglers


def call_with_timeout(fn: Callable[[], T], timeout: float | None) -> T:
    """``fn()``, run in a daemon thread with the caller's context, or :class:`GuardTimeoutError`
    after ``timeout`` s (at once while :data:`MAX_STRAGGLERS` timed-out calls still run).
    """
    global _stragglers
    if timeout is None:
        return fn()
    if _stragglers >= MAX_STRAGGLERS:  # calls that hang pile up threads: stop starting more
        msg = (
            f"{_stragglers} earlier calls timed out and never returned; not starting another "
            "(the fallback is used until they finish)"
        )
        raise GuardTimeoutError(timeout, msg)
    ctx = contextvars.copy_context()
    box: dict[str, Any] = {}  # the call's "value" or its "error"
    done = threading.Event()
    abandoned = False  # set under the lock once the caller stops waiting: a straggler

    def target() -> None:
        global _stragglers
        try:
            box["value"] = ctx.run(fn)
        except BaseException as exc:  # re-raised in the caller's thread
            box["error"] = exc
        finally:
            with _straggler_lock:
                done.set()
                if abandoned:
                    _stragglers -= 1

    threading.Thread(target=target, daemon=True, name="langctx-guarded-call").start()
    if not done.wait(timeout):
        with _straggler_lock:
            if not done.is_set():
                abandoned = True
                _stragglers += 1
                raise GuardTimeoutError(timeout)
    if "error" in box:
        raise box["error"]
    return box["value"]


async def acall_with_timeout(fn: Callable[[], Awaitable[T]], timeout: float | None) -> T:
    """Async version of `call_with_timeout` (the call is cancelled on timeout)."""
    if timeout is None:
        return await fn()
    task = asyncio.ensure_future(fn())
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:  # the caller was cancelled: so is the call
        task.cancel()
        raise
    if not done:
        task.cancel()
        raise GuardTimeoutError(timeout)
    return task.result()
