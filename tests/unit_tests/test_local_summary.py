"""The local summary renders any facts a fold or a stored entry can hold, within its cap."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from langctx.summarize import SummaryRequest
from langctx.summarize.local import render_local_summary
from langctx.tokens import ApproximateCounter

COMMANDS: list[list[Any]] = [
    [],
    [{"command": "pytest", "exit_code": 1, "ok": False}],
    [{"command": "make", "ok": True}, {"command": None, "ok": False}],
]
ERRORS: list[list[Any]] = [[], [{"lines": ["E   AssertionError"]}], [{}], ["not a dict"]]


@pytest.mark.parametrize(("commands", "errors"), list(itertools.product(COMMANDS, ERRORS)))
@pytest.mark.parametrize("kind", ["turns", "merge"])
def test_any_commands_and_errors_render_within_the_cap(
    commands: list[Any], errors: list[Any], kind: str
) -> None:
    count = ApproximateCounter().count_text
    request = SummaryRequest(
        kind=kind,  # type: ignore[arg-type]
        facts={"commands": commands, "errors": errors},
        max_tokens=120,
    )
    text = render_local_summary(request, count=count)
    assert count(text) <= 120
    failing = [c for c in commands if c["ok"] is False]
    if failing:  # the latest failing command is named even without its error lines
        assert f"`{failing[-1]['command'] or '?'}`" in text
