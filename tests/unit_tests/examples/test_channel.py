"""The examples of `langctx.channel`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.channel import slim_covered


def test_slim_covered() -> None:
    assert slim_covered(["a", "b", "c", "d"]) == ["a", "", "", "d"]
