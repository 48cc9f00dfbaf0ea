"""The examples of `langctx.context_mode.reducers.text`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.text import cut_head_tail, reduce_text


def test_cut_head_tail() -> None:
    assert cut_head_tail(
        "a\nb\nc\nd\ne",
        head_tokens=1,
        tail_tokens=1,
        count_tokens=lambda s: len(s.replace("\n", "")),
    ) == ("a\n", "b\nc\nd\n", "e")


def test_reduce_text() -> None:
    text = "\n".join(f"paragraph {i} " + "word " * 20 for i in range(300))
    r = reduce_text(text, meta=OutputMeta(), budget_tokens=400)
    assert (
        r.text.count("paragraph 0 "),
        r.text.count("paragraph 299 "),
        "not shown" in r.text,
    ) == (1, 1, True)
