"""Archive mode's pure part: the channel operations, what is archived, restoring from live messages.

No graph here: a memory plays a session, the "state" is updated the way the graph would update it
(messages minus the removals, the channel through its reducer), and a fresh memory restored from
that state alone must project exactly what the original memory projects, at every step.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    message_to_dict,
    messages_from_dict,
    messages_to_dict,
)

from langctx import LayeredChatMemory
from langctx.channel import (
    channel_entries,
    channel_update,
    is_slim,
    merge_langctx,
    slim_covered,
)
from langctx.cli.demo.session import coding_session
from langctx.entries import new_compaction_entry, new_edit_entry
from langctx.state_reading import restore_entries
from langctx.stores.archive import assemble
from langctx.stores.archive_plan import archivable, lean_message_dict, plan_archive


def _entry(n: int, fk: str, merged_from: tuple[str, ...] = ()) -> dict[str, Any]:
    return dict(
        new_compaction_entry(
            summary=f"summary {n}",
            level=2 if merged_from else 1,
            covered_ids=[f"m{i}" for i in range(n)],
            first_kept_id=fk,
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
    assert restore[0]["first_kept_id"] == "m8" and a["first_kept_id"] == "m5"
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


def _archive_steps(
    budget: int,
) -> Iterator[tuple[LayeredChatMemory, dict[str, Any], dict[str, Any], Any, dict[str, Any]]]:
    """A session driven through a memory and archive plans, three messages at a time.

    Yields, for every step that archives: (the memory, the state before, the lease's update, the
    plan, the state after the graph applied it).
    """
    session = coding_session(150, seed=3)
    memory = LayeredChatMemory(max_tokens=budget)
    state: dict[str, Any] = {"messages": [], "langctx": {}}
    known_c = known_e = 0
    for pos in range(0, len(session), 3):
        new = session[pos : pos + 3]
        memory.add_messages(new)
        state["messages"] = [*state["messages"], *new]
        update = channel_update(
            compactions=memory.compactions[known_c:], edits=memory.edits[known_e:]
        )
        known_c, known_e = len(memory.compactions), len(memory.edits)
        plan = plan_archive(
            thread_id="t",
            raw=state["messages"],
            first_kept_id=memory.first_kept_id,
            pinned_ids=memory.pinned_ids,
            channel=state["langctx"],
            update=update,
        )
        if plan is None:
            state["langctx"] = merge_langctx(state["langctx"], update)
            continue
        after = _apply(state, {"messages": plan.removals, "langctx": plan.channel})
        yield memory, state, dict(update), plan, after
        state = after


@pytest.mark.parametrize("budget", [2500, 6000])
def test_a_memory_restored_from_the_archived_state_projects_the_same(budget: int) -> None:
    batches: list[Any] = []
    state: dict[str, Any] = {}
    for original, _before, _update, plan, state in _archive_steps(budget):
        batches.append(plan.batch)
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
    assert len(state["messages"]) < len(coding_session(150, seed=3)) // 4


def test_assemble_puts_pinned_messages_back_in_their_place() -> None:
    live: list[BaseMessage] = [
        SystemMessage("s", id="s"),
        HumanMessage("task", id="t"),
        AIMessage("r", id="r"),
    ]
    batches: list[Any] = [
        _batch(["s", "x"], [{"type": "ai", "data": {"content": "x", "id": "x"}}]),
        _batch(["s", "t", "y"], [{"type": "ai", "data": {"content": "y", "id": "y"}}]),
    ]
    assert [m.id for m in assemble(batches, live)] == ["s", "x", "t", "y", "r"]


def test_lean_message_dicts_read_back_exactly() -> None:
    raw_tool_calls = {
        "tool_calls": [
            {"id": "c9", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
        ]
    }
    messages: list[BaseMessage] = [
        SystemMessage("Be brief.", id="s"),
        HumanMessage("Fix it", id="h", name="ana"),
        AIMessage(
            "Reading.",
            id="a",
            tool_calls=[{"name": "read_file", "args": {"path": "x.py"}, "id": "c1"}],
            usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
            response_metadata={"model_name": "m"},
        ),
        ToolMessage("x = 1\n" * 50, tool_call_id="c1", id="t"),
        ToolMessage("boom", tool_call_id="c2", id="t2", status="error", artifact={"n": 0}),
        AIMessage("", id="a2", additional_kwargs=raw_tool_calls),  # provider-format tool calls
        # built without validation: tool_calls [] next to provider-format ones in
        # additional_kwargs; without its tool_calls field, reading it back would parse them
        AIMessage.model_construct(
            content="",
            additional_kwargs=raw_tool_calls,
            response_metadata={},
            type="ai",
            name=None,
            id="a3",
            tool_calls=[],
            invalid_tool_calls=[],
            usage_metadata=None,
        ),
    ]
    for m in messages:
        lean = lean_message_dict(m)
        full = message_to_dict(m)
        back = messages_from_dict([lean])[0]
        assert json.dumps(message_to_dict(back), sort_keys=True) == json.dumps(
            message_to_dict(messages_from_dict([full])[0]), sort_keys=True
        ), m.id
        assert len(json.dumps(lean)) <= len(json.dumps(full))
    tool = lean_message_dict(messages[3])
    assert tool == {
        "type": "tool",
        "data": {"content": "x = 1\n" * 50, "id": "t", "tool_call_id": "c1"},
    }
    assert lean_message_dict(messages[-1]) == message_to_dict(messages[-1])  # kept whole
    # an older batch (full messages_to_dict dicts) reads back the same way
    assert [m.id for m in assemble([_batch(["t"], [message_to_dict(messages[3])])], [])] == ["t"]


def _replay(budget: int) -> list[tuple[dict[str, Any], dict[str, Any], Any]]:
    """Every archive step of a session: (channel before, the lease's update, the plan)."""
    return [
        (before["langctx"], update, plan) for _, before, update, plan, _ in _archive_steps(budget)
    ]


def test_the_channel_update_writes_new_entries_already_dropped_and_slimmed() -> None:
    steps = _replay(2500)
    written = unfiltered = 0
    for before, update, plan in steps:
        ops = {k: v for k, v in plan.channel.items() if k in ("archive", "drop", "slim")}
        naive = {**update, **ops}  # the entries as the lease made them, ops applied by the reducer
        assert merge_langctx(before, plan.channel) == merge_langctx(before, naive)
        dropped = set(ops.get("drop", {}).get("compactions", []))
        assert not {e["id"] for e in plan.channel["compactions"]} & dropped
        slimmed = set(ops.get("slim", []))
        assert all(
            is_slim(e["covered_ids"]) for e in plan.channel["compactions"] if e["id"] in slimmed
        )
        written += len(json.dumps(plan.channel))
        unfiltered += len(json.dumps(naive))
    assert written < unfiltered


def test_channel_with_a_later_update_keeps_the_planned_archive_ops() -> None:
    _, update, plan = _replay(2500)[-1]
    late_entry = _entry(3, "m3")
    late = {**update, "compactions": [*update["compactions"], late_entry]}
    channel = plan.channel_with(late)
    assert {k: channel.get(k) for k in ("archive", "drop", "slim")} == {
        k: plan.channel.get(k) for k in ("archive", "drop", "slim")
    }
    assert channel["compactions"][-1]["id"] == late_entry["id"]
    assert plan.channel_with(update) == plan.channel


def _batch(order: list[str], messages: list[dict[str, Any]]) -> dict[str, Any]:
    """An archived batch of ``messages`` (every field :func:`checked_batch` reads)."""
    return {
        "v": 1,
        "kind": "langctx_archive_batch",
        "thread_id": "t",
        "seq": 0,
        "prev": None,
        "order": order,
        "messages": messages,
        "compactions": [],
        "edits": [],
        "priorities": {},
        "first_kept": "r",
    }
