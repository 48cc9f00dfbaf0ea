"""The examples of `langctx.facts.failures`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.facts.failures import shown_failure_lines


def test_shown_failure_lines() -> None:
    assert shown_failure_lines(
        {"lines": ["E   assert 3 == 4"], "summary_lines": ["== 1 failed =="]}
    ) == ["E   assert 3 == 4", "== 1 failed =="]
