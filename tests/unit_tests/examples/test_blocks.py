"""The examples of `langctx.blocks`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from langctx.blocks import strip_thinking


def test_strip_thinking() -> None:
    ai = AIMessage([{"type": "thinking", "thinking": "hm", "signature": "s"}, "Done."])
    assert strip_thinking(ai).content == ["Done."]
