"""Decisions written once, as generators of the calls they need, run by a sync or an async driver.

Example:
    >>> def steps():
    ...     answer = yield "ask"
    ...     return answer.upper()
    >>> drive(steps(), lambda op: f"{op}ed")
    'ASKED'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator
from typing import Any, TypeVar

Op = TypeVar("Op")
T = TypeVar("T")


def drive(steps: Generator[Op, Any, T], call: Callable[[Op], Any]) -> T:
    """Run ``steps``, making each call with ``call``: the answer is sent back, an exception thrown in."""
    answer: Any = None
    failed: BaseException | None = None
    while True:
        try:
            op = steps.send(answer) if failed is None else steps.throw(failed)
        except StopIteration as done:
            return done.value
        try:
            answer, failed = call(op), None
        except BaseException as exc:  # cancellation too: the steps' cleanup sees it
            failed = exc


async def adrive(steps: Generator[Op, Any, T], call: Callable[[Op], Awaitable[Any]]) -> T:
    """Async version of `drive`."""
    answer: Any = None
    failed: BaseException | None = None
    while True:
        try:
            op = steps.send(answer) if failed is None else steps.throw(failed)
        except StopIteration as done:
            return done.value
        try:
            answer, failed = await call(op), None
        except BaseException as exc:
            failed = exc
