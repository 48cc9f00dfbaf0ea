"""The examples of `langctx.summarize.sections`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.summarize.sections import parse_sections


def test_parse_sections() -> None:
    assert (
        parse_sections("Goal: fix it\nNext step:\n- run pytest"),
        parse_sections("Fixed it."),
    ) == ({"Goal": ["fix it"], "Next step": ["run pytest"]}, None)
