"""The examples of `langctx.summarize.calls`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.summarize.calls import failure_reason


def test_failure_reason() -> None:
    assert (failure_reason(TimeoutError()), failure_reason(OSError("down"))) == (
        "timed out",
        "OSError('down')",
    )
