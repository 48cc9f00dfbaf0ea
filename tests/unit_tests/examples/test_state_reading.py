"""The examples of `langctx.state_reading`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.state_reading import as_messages


def test_as_messages() -> None:
    assert (
        [m.type for m in as_messages([{"role": "user", "content": "hi"}, ("ai", "hello")])]
    ) == ["human", "ai"]
