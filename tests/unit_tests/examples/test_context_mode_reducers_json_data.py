"""The examples of `langctx.context_mode.reducers.json_data`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.json_data import compact_json, reduce_json


def test_compact_json() -> None:
    assert compact_json({"a": {"b": {"c": 1}}, "s": "x" * 200}, depth=1)["a"] == {"b": "{…1 key}"}


def test_reduce_json() -> None:
    data = str([{"id": i, "name": f"n{i}"} for i in range(300)]).replace("'", '"')
    r = reduce_json(data, meta=OutputMeta(), budget_tokens=1500)
    assert ("Keys (2): id, name" in r.text, "more items not shown" in r.text) == (True, True)
