"""The examples of `langctx.context_mode.reducers._layout`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers._layout import (
    Candidate,
    body_budget,
    clip,
    facts_lines,
    finish,
    names_line,
    render_selection,
    select,
)
from langctx.facts import extract_output_facts


def test_clip() -> None:
    assert (clip("x" * 50, 20), clip("check ━━━━━━━━━━━━━━━━")) == (
        "xxxxxxxxxxxxxxxxxxxx…(+30 chars)",
        "check ━━━…",
    )


def test_names_line() -> None:
    assert (
        names_line("Columns", ["id", "name", "age"], max_listed=2)
        == "Columns (3): id, name, +1 more"
    )


def test_select() -> None:
    p = [Candidate(0, "a"), Candidate(5, "ERR", priority=-1), Candidate(9, "z", priority=1)]
    assert (
        [c.text for c in select(p, budget_tokens=9, total_lines=10, count_tokens=lambda s: 1)]
    ) == ["a", "ERR"]


def test_render_selection() -> None:
    assert render_selection([Candidate(0, "a (×9)")], total_lines=10, hidden=lambda a, b: 2) == [
        "a (×9)",
        "[… 2 of lines 2–10 not shown …]",
    ]


def test_facts_lines() -> None:
    facts = extract_output_facts("boom in a.py:3 (KeyError)")
    assert facts_lines(facts, "kept text", budget_tokens=99, count_tokens=len) == (
        ["Not shown above: KeyError; at a.py:3"],
        0,
    )


def test_body_budget() -> None:
    assert body_budget("log", OutputMeta(), 1500) < 1500


def test_finish() -> None:
    assert (
        str(finish("log", OutputMeta(tool_name="sh"), 99, "<langctx:x> ok", "the rest").text)
        == "[langctx context-mode: sh output reduced (log) · original 0 chars / 0 tokens]\n<\u200blangctx:x> ok\n[langctx context-mode: removed the rest]"
    )
