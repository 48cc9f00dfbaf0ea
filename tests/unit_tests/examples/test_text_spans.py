"""The examples of `langctx.text_spans`'s helpers, moved here from their docstrings."""

from __future__ import annotations

import re

from langctx.text_spans import Finder, pairs


def test_pairs() -> None:
    finder = Finder(re.compile(r"<(b)>"), re.compile(r"</(b)>"), by_name=True)
    assert pairs(finder, "<b><b>x</b> <b>") == [((0, 3), (7, 11), "b")]
