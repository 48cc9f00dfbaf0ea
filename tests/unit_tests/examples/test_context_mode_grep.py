"""The examples of `langctx.context_mode.grep`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.grep import backtracking_risk, render_grep
from langctx.context_mode.references import new_meta


def test_backtracking_risk() -> None:
    assert (backtracking_risk(r"KeyError|ValueError: .*"), backtracking_risk("(a+)+$")) == (
        None,
        "a repeat inside a repeat",
    )


def test_render_grep() -> None:
    data = b"ok\nboom: KeyError x\nok\nwarn\nKeyError again\n"
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
    assert render_grep(meta, data, "KeyError", max_tokens=500).text.splitlines()[1:3] == [
        "L2 @3: boom: KeyError x",
        "L5 @28: KeyError again",
    ]
