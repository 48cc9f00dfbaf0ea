"""The examples of `langctx.context_mode.reducers.log`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.log import reduce_lines, reduce_log


def test_reduce_lines() -> None:
    out = "building\n" * 500 + "failed: 1 test\n"
    r = reduce_lines(out, kind="log", meta=OutputMeta(), budget_tokens=200, preface=("Hi",))
    assert r.text.splitlines()[1:3] == ["Hi", "building (×500)"]


def test_reduce_log() -> None:
    log = "compiling\n" * 400 + "src/a.py:3: error: bad\nexit code 1"
    r = reduce_log(log, meta=OutputMeta(), budget_tokens=300)
    assert "src/a.py:3: error: bad" in r.text and "(×400)" in r.text
