"""The examples of `langctx.context_mode.grep`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.grep import expanded_size, render_grep
from langctx.context_mode.references import new_meta


def test_expanded_size() -> None:
    assert (expanded_size(r"\d{4}-\d{2}"), expanded_size("(?:a{1000}){1000}")) == (7, 1_002_000)


def test_render_grep() -> None:
    data = b"ok\nboom: KeyError x\nok\nwarn\nKeyError again\n"
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
    assert render_grep(meta, data, "KeyError", max_tokens=500).text.splitlines()[1:3] == [
        "L2 @3: boom: KeyError x",
        "L5 @28: KeyError again",
    ]
