"""The examples of `langctx.timeouts`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.timeouts import call_with_timeout


def test_call_with_timeout() -> None:
    assert call_with_timeout(lambda: 42, 1.0) == 42
