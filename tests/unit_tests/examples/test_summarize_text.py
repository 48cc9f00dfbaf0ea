"""The examples of `langctx.summarize.text`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.summarize.text import constraint_sentences


def test_constraint_sentences() -> None:
    assert constraint_sentences("Rename it. Keep the old name as an alias.") == [
        "Keep the old name as an alias."
    ]
