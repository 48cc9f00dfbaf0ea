"""The examples of `langctx.context_mode.reducers.table`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.table import reduce_table, sniff_delimiter


def test_sniff_delimiter() -> None:
    assert sniff_delimiter(["name\tage", "ann\t3", "bob\t4"]) == "\t"


def test_reduce_table() -> None:
    csv_text = "id,name\n" + "".join(f"{i},user{i}\n" for i in range(500))
    r = reduce_table(csv_text, meta=OutputMeta(), budget_tokens=1500)
    assert ("Columns (2): id, name" in r.text, "450 more rows not shown" in r.text) == (True, True)
