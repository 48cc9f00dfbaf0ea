"""Compaction planning decides and writes nothing: a plan leaves the memory as it found it."""

from __future__ import annotations

from typing import Any

import pytest

from langctx import LayeredChatMemory
from langctx.cli.demo.session import coding_session, iter_turns
from langctx.engine import placeholders, planning, writing
from langctx.engine.plan import Plan
from langctx.testing import ScriptedChatModel

MEMOS = frozenset({"_lock", "_alock", "_stripped", "_pc_memo"})
"""Caches a read may fill (derived from the log, not state a plan could change)."""


def snapshot(memory: LayeredChatMemory) -> dict[str, str]:
    return {k: repr(v) for k, v in vars(memory).items() if k not in MEMOS}


def session_memory(turns: int, summarizer: Any = None) -> LayeredChatMemory:
    """A memory holding a coding session, with room for all of it (nothing compacted yet)."""
    memory = LayeredChatMemory(
        max_tokens=400_000, placeholder_min_tokens=200, summarizer=summarizer
    )
    memory.add_messages(coding_session(0, seed=3))
    for turn in iter_turns(turns, seed=3):
        memory.add_messages(turn)
    assert not memory.compactions
    return memory


def kind(plan: Plan | None) -> str:
    if plan is None:
        return "none"
    return "fold" if plan.batch else ("in place" if plan.placeholders else "nothing")


def in_place_plan(memory: LayeredChatMemory) -> Plan:
    """A plan that replaces large tool outputs in place and folds nothing."""
    for keep in range(0, memory.context_tokens(), 250):
        plan = planning.plan(memory, "proactive", None, keep)
        if kind(plan) == "in place":
            assert plan is not None
            return plan
    raise AssertionError("no keep target gives an in-place plan")


def test_a_plan_changes_nothing_in_the_memory_it_reads() -> None:
    memory = session_memory(20)
    before = snapshot(memory)
    kinds: set[str] = set()
    for trigger in ("threshold", "proactive", "manual", "overflow"):
        for keep in [None, *range(0, memory.context_tokens() + 1000, 500)]:
            plan = planning.plan(memory, trigger, None, keep)
            kinds.add(kind(plan))
            assert snapshot(memory) == before, (trigger, keep)
    assert planning.due(memory, True) is None
    assert planning.merge_group(memory) is None
    assert snapshot(memory) == before
    assert {"fold", "in place"} <= kinds  # both paths ran


def test_the_commit_applies_what_the_plan_replaces_in_place() -> None:
    memory = session_memory(20)
    context = memory.context_tokens()
    plan = in_place_plan(memory)
    assert writing.commit(memory, plan, "", "none") is None
    assert [e["id"] for e in memory.edits] == [e["id"] for e in plan.placeholders]
    assert memory.context_tokens() < context
    assert memory.eviction_log[-1]["action"] == "placeholder"


def test_a_mechanical_summary_is_absorbed_by_the_next_plan() -> None:
    """What the plan absorbs is read from the entries alone, never from jobs of the process."""
    memory = session_memory(40, ScriptedChatModel(responses=["Goal: fix the parser."], cycle=True))
    fold = planning.plan(memory, "proactive", None, 2_000)
    assert fold is not None and fold.batch
    entry: dict[str, Any] | None = writing.commit(memory, fold, "mechanical summary", "mechanical")  # type: ignore[assignment]
    assert entry is not None
    for turn in iter_turns(45, seed=3):
        memory.add_messages([m.model_copy(update={"id": f"again-{m.id}"}) for m in turn])
    plan = planning.plan(memory, "manual", None, 2_000)
    assert plan is not None
    assert [e["id"] for e in plan.absorbed] == [entry["id"]]


def test_no_placeholder_is_written_when_all_of_them_could_not_save_enough(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = session_memory(20)
    written: list[int] = []
    real = placeholders.placeholder_text
    monkeypatch.setattr(
        placeholders, "placeholder_text", lambda m, i: written.append(i) or real(m, i)
    )
    plan = planning.plan(memory, "proactive", None, 0)  # everything but the newest turn goes
    assert plan is not None and plan.batch
    assert written == []
    plan = in_place_plan(memory)  # where they do save enough, they are written
    assert written
