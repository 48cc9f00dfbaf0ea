"""Archive mode's pure part: the channel operations, what is archived, restoring from live messages.

No graph here: a memory plays a session, the "state" is updated the way the graph would update it
(messages minus the removals, the channel through its reducer), and a fresh memory restored from
that state alone must project exactly what the original memory projects, at every step.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    messages_to_dict,
)

from langctx import LayeredChatMemory
from langctx.demo.session import coding_session
from langctx.entries import new_compaction_entry, new_edit_entry
from langctx.integrations.archive import assemble
from langctx.integrations.archive_plan import archivable, plan_archive, restore_entries
from langctx.integrations.state import (
    channel_entries,
    channel_update,
    is_slim,
    merge_langctx,
    slim_covered,
)


def _entry(n: int, fk: str, merged_from: tuple[str, ...] = ()) -> dict[str, Any]:
    return dict(
        new_compaction_entry(
            summary=f"summary {n}",
            level=2 if merged_from else 1,
            covered_ids=[f"m{i}" for i in range(n)],
            first_kept_entry_id=fk,
            tokens_before=900,
            tokens_after=300,
            trigger="merge" if merged_from else "proactive",
            quality="local",
            read_files=[],
            modified_files=[],
            merged_from=merged_from,
        )
    )


def test_drop_and_slim_apply_after_the_new_entries_and_are_idempotent() -> None:
    a, b = _entry(5, "m5"), _entry(8, "m8")
    edit = dict(
        new_edit_entry(
            message_id="m2", reason="placeholder", content="[x]", tokens_before=90, tokens_after=9
        )
    )
    state = merge_langctx({}, channel_update(compactions=[a], edits=[edit], priorities={"m2": 5}))
    update = channel_update(
        compactions=[b],
        drop={"compactions": [a["id"]], "edits": [edit["id"]], "priorities": ["m2"]},
        slim=[b["id"]],
        archive={"v": 1, "last": "00000000-abc", "batches": 1},
    )
    once = merge_langctx(state, update)
    assert merge_langctx(once, update) == once
    assert [e["id"] for e in once["compactions"]] == [b["id"]]
    assert once["compactions"][0]["covered_ids"] == ["m0", "", "", "", "", "", "", "m7"]
    assert once["edits"] == [] and once["priorities"] == {}
    assert once["archive"]["last"] == "00000000-abc"
    assert not {"drop", "slim", "reset"} & set(once)  # update-only keys are never stored
    assert json.loads(json.dumps(once)) == once


def test_reset_keeps_the_archive_record_unless_it_brings_one() -> None:
    state = merge_langctx({}, channel_update(archive={"v": 1, "last": "k1"}))
    assert merge_langctx(state, channel_update(reset=True))["archive"]["last"] == "k1"
    replaced = merge_langctx(state, channel_update(reset=True, archive={"v": 1, "last": "k2"}))
    assert replaced["archive"]["last"] == "k2"


def test_slim_keeps_length_and_ends() -> None:
    assert slim_covered(["a"]) == ["a"] and slim_covered(["a", "b"]) == ["a", "b"]
    assert slim_covered(list("abcde")) == ["a", "", "", "", "e"]
    assert is_slim(slim_covered(list("abcde"))) and not is_slim(list("abc"))


def test_archivable_keeps_pinned_and_id_less_messages() -> None:
    raw: list[BaseMessage] = [
        SystemMessage("s", id="s"),
        HumanMessage("task", id="t"),
        AIMessage("x"),  # no id: a RemoveMessage cannot name it
        AIMessage("a", id="a"),
        AIMessage("b", id="b"),
    ]
    assert archivable(raw, first_kept_id="b", pinned_ids=["s", "t"]) == (["s", "t", "a"], ["a"])
    assert archivable(raw, first_kept_id="zz", pinned_ids=[]) == ([], [])
    assert archivable(raw, first_kept_id=None, pinned_ids=[]) == ([], [])


def test_restore_entries_replaces_archived_cuts_and_stops_at_missing_ones() -> None:
    a, b = _entry(5, "m5"), _entry(8, "m8")
    merged = _entry(8, "m8", merged_from=(a["id"], "gone-from-channel"))
    record = {"v": 1, "last": "k", "saved": 2, "first_kept": "m8"}
    kept, restore = restore_entries([a, b, merged], {"m8", "m9"}, record)
    assert [e["id"] for e in kept] == [a["id"], b["id"], merged["id"]]
    assert restore[0]["first_kept_entry_id"] == "m8" and a["first_kept_entry_id"] == "m5"
    # without an archive record, an absent cut is a hand edit: the entry and later ones go
    kept, _ = restore_entries([a, b], {"m8"}, None)
    assert kept == []
    # an entry newer than the archive must have its cut in the state
    kept, _ = restore_entries([a, b], {"m9"}, {**record, "saved": 1, "first_kept": "m9"})
    assert [e["id"] for e in kept] == [a["id"]]


def _apply(state: dict[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """What the graph does with a node's update: the messages reducer and the channel reducer."""
    gone = {m.id for m in update.get("messages") or []}
    messages = [m for m in state["messages"] if m.id not in gone]
    return {"messages": messages, "langctx": merge_langctx(state.get("langctx"), update["langctx"])}


@pytest.mark.parametrize("budget", [2500, 6000])
def test_a_memory_restored_from_the_archived_state_projects_the_same(budget: int) -> None:
    session = coding_session(150, seed=3)
    original = LayeredChatMemory(max_tokens=budget)
    state: dict[str, Any] = {"messages": [], "langctx": {}}
    known_c = known_e = 0
    batches: list[Any] = []
    for pos in range(0, len(session), 3):
        new = session[pos : pos + 3]
        original.add_messages(new)
        state["messages"] = [*state["messages"], *new]
        update = channel_update(
            compactions=original.compactions[known_c:], edits=original.edits[known_e:]
        )
        known_c, known_e = len(original.compactions), len(original.edits)
        plan = plan_archive(
            thread_id="t",
            raw=state["messages"],
            first_kept_id=original.first_kept_id,
            pinned_ids=original.pinned_ids,
            channel=state["langctx"],
            update=update,
        )
        if plan is None:
            state["langctx"] = merge_langctx(state["langctx"], update)
            continue
        batches.append(plan.batch)
        state = _apply(state, {"messages": plan.removals, "langctx": plan.channel})
        restored = LayeredChatMemory(max_tokens=budget)
        comps, edits, prio = channel_entries(state["langctx"])
        present = {str(m.id) for m in state["messages"]}
        kept, entries = restore_entries(comps, present, state["langctx"]["archive"])
        assert len(kept) == len(comps)
        restored.restore(state["messages"], compactions=entries, edits=edits, priorities=prio)
        assert messages_to_dict(restored.build_context()) == messages_to_dict(
            original.build_context()
        )
        assert [m.id for m in assemble(batches, state["messages"])] == [
            m.id for m in original.messages
        ]
        assert len(state["langctx"]["compactions"]) <= 10
    assert len(batches) >= 5
    assert len(state["messages"]) < len(session) // 4


def test_assemble_puts_pinned_messages_back_in_their_place() -> None:
    live: list[BaseMessage] = [
        SystemMessage("s", id="s"),
        HumanMessage("task", id="t"),
        AIMessage("r", id="r"),
    ]
    batches: list[Any] = [
        {"order": ["s", "x"], "messages": [{"type": "ai", "data": {"content": "x", "id": "x"}}]},
        {
            "order": ["s", "t", "y"],
            "messages": [{"type": "ai", "data": {"content": "y", "id": "y"}}],
        },
    ]
    assert [m.id for m in assemble(batches, live)] == ["s", "x", "t", "y", "r"]
