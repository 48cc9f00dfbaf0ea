"""The examples of `langctx.facts.calls`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.facts.calls import runs_itself


def test_runs_itself() -> None:
    assert runs_itself("Python", {"command": "python solve.py"}) is True
