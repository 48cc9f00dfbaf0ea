"""The examples of `langctx.context_mode.reducers.source`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.source import reduce_source
from langctx.source_outline import split_listing


def test_split_listing() -> None:
    lst = split_listing("[File: a.py (9 lines total)]\n7:x = 1\n8:y = 2\n9:z = 3")
    assert (lst.numbers, lst.code, lst.notes) == (
        [7, 8, 9],
        ["x = 1", "y = 2", "z = 3"],
        [(0, "[File: a.py (9 lines total)]")],
    )


def test_reduce_source() -> None:
    code = "class A:\n" + "    x = 1\n" * 300 + "    def run(self):\n        pass\n"
    r = reduce_source(code, meta=OutputMeta(path="a.py"), budget_tokens=400)
    assert "L1 class A:" in r.text and "L302   def run(self):" in r.text
