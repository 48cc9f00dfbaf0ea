"""The examples of `langctx.summarize.model`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from langctx.summarize.model import clip_middle, format_transcript


def test_clip_middle() -> None:
    assert clip_middle("abcdefghij", 6) == "abcd\n[… 4 characters cut …]\nij"


def test_format_transcript() -> None:
    assert format_transcript([HumanMessage("hi")]) == "[user] hi"
