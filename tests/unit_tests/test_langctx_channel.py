"""The ``langctx`` state channel: its reducer, versions and JSON shape (no graph needed)."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import HumanMessage

from langctx import MemorySettings, StateVersionError, view_state
from langctx.channel import (
    CHANNEL_VERSION,
    channel_entries,
    channel_update,
    merge_langctx,
)
from langctx.entries import ENTRY_VERSION, new_compaction_entry, new_edit_entry


def _compaction(fk: str = "m3") -> dict:
    n = int(fk[1:])
    return dict(
        new_compaction_entry(
            summary="Goal: fix the parser",
            level=1,
            covered_ids=[f"m{i}" for i in range(1, n)],
            first_kept_id=fk,
            tokens_before=900,
            tokens_after=300,
            trigger="manual",
            quality="local",
            read_files=["a.py"],
            modified_files=[],
        )
    )


def _v0(entry: dict) -> dict:
    old = {k: v for k, v in entry.items() if k not in ("kind", "covered_ids", "facts")}
    old["v"] = 0
    old["covered"] = entry["covered_ids"]
    return old


def test_updates_append_by_id_and_are_idempotent() -> None:
    c1, c2 = _compaction(), _compaction("m4")
    e1 = dict(
        new_edit_entry(
            message_id="m2", reason="placeholder", content="[x]", tokens_before=500, tokens_after=9
        )
    )
    state = merge_langctx({}, channel_update(compactions=[c1], edits=[e1]))
    state = merge_langctx(state, channel_update(compactions=[c1, c2]))
    state = merge_langctx(state, channel_update(compactions=[c2], edits=[e1]))
    assert [e["id"] for e in state["compactions"]] == [c1["id"], c2["id"]]
    assert [e["id"] for e in state["edits"]] == [e1["id"]]
    assert state["v"] == CHANNEL_VERSION
    assert json.loads(json.dumps(state)) == state  # plain JSON, nothing else


def test_priorities_merge_and_reset_replaces() -> None:
    state = merge_langctx({}, channel_update(compactions=[_compaction()], priorities={"m1": 10}))
    state = merge_langctx(state, channel_update(priorities={"m2": 20}))
    assert state["priorities"] == {"m1": 10, "m2": 20}
    state = merge_langctx(state, channel_update(reset=True))
    assert state["compactions"] == [] and state["priorities"] == {}
    assert "reset" not in state


def test_unknown_keys_are_kept_for_later_features() -> None:
    state = merge_langctx({}, {"v": 1, "archive": {"upto": "m9"}})
    state = merge_langctx(state, channel_update(compactions=[_compaction()]))
    assert state["archive"] == {"upto": "m9"}


def test_v0_entries_are_migrated_on_write_and_on_read() -> None:
    old = _v0(_compaction())
    old.pop("covered_count")
    written = merge_langctx({}, {"v": 1, "compactions": [old]})
    assert written["compactions"][0]["v"] == ENTRY_VERSION
    assert written["compactions"][0]["covered_ids"] == ["m1", "m2"]  # from the v0 `covered`
    assert written["compactions"][0]["covered_count"] == 2
    comps, _edits, _prio = channel_entries({"v": 1, "compactions": [old]})
    assert comps[0]["kind"] == "compaction" and comps[0]["v"] == ENTRY_VERSION
    stored_v0 = {"v": 1, "compactions": [old], "edits": [], "priorities": {}}
    merged = merge_langctx(stored_v0, channel_update(compactions=[_compaction("m5")]))
    assert [e["v"] for e in merged["compactions"]] == [ENTRY_VERSION, ENTRY_VERSION]


def test_v1_entries_get_their_covered_count() -> None:
    v1 = {**_compaction("m9"), "v": 1}
    v1.pop("covered_count")
    v1["first_kept_entry_id"] = v1.pop("first_kept_id")  # its name before version 3
    v1["facts"] = {"read_files": ["a.py"], "modified_files": [], "commands": []}
    comps, _edits, _prio = channel_entries({"v": 1, "compactions": [v1]})
    assert comps[0]["v"] == ENTRY_VERSION and comps[0]["covered_count"] == 8
    assert comps[0]["covered_ids"] == v1["covered_ids"]


def test_v2_entries_get_first_kept_id() -> None:
    v2 = {**_compaction("m9"), "v": 2}
    v2["first_kept_entry_id"] = v2.pop("first_kept_id")
    comps, _edits, _prio = channel_entries({"v": 1, "compactions": [v2]})
    assert comps[0]["v"] == ENTRY_VERSION == 4
    assert comps[0]["first_kept_id"] == _compaction("m9")["first_kept_id"]
    assert "first_kept_entry_id" not in comps[0]
    written = merge_langctx({}, {"v": 1, "compactions": [v2]})
    assert written["compactions"][0]["first_kept_id"] == comps[0]["first_kept_id"]


def test_unknown_entry_version_raises_a_clear_error() -> None:
    future = {**_compaction(), "v": 99}
    with pytest.raises(StateVersionError, match=r"version 99.*Upgrade langctx"):
        merge_langctx({}, {"v": 1, "compactions": [future]})
    with pytest.raises(StateVersionError, match="version 99"):
        channel_entries({"v": 1, "compactions": [future]})


def test_unknown_channel_version_raises_with_the_fix() -> None:
    with pytest.raises(StateVersionError, match=r"channel has version 7.*reset"):
        merge_langctx({"v": 7, "compactions": []}, channel_update())
    with pytest.raises(StateVersionError):
        channel_entries({"v": 7})


# ----------------------------------------------------------------- malformed channel values

MALFORMED = [
    ({"compactions": "x"}, r"compactions must be a list of entries, got str"),
    ({"compactions": [None]}, r"compactions entry 0 is a NoneType, not a dict"),
    ({"edits": 5}, r"edits must be a list of entries, got int"),
    ({"edits": [["id", "x"]]}, r"edits entry 0 is a list, not a dict"),
    ({"priorities": "x"}, r"priorities must map message ids to integers, got str"),
    ({"priorities": {"m1": "high"}}, r"priorities must map message ids to integers"),
    ({"priorities": {"m1": True}}, r"priorities must map message ids to integers"),
]


@pytest.mark.parametrize(("value", "error"), MALFORMED)
def test_the_reducer_refuses_a_malformed_update_by_name(value: dict, error: str) -> None:
    with pytest.raises(StateVersionError, match=error):
        merge_langctx({}, {"v": 1, **value})


@pytest.mark.parametrize(("value", "error"), MALFORMED)
def test_a_malformed_stored_channel_is_refused_by_name(value: dict, error: str) -> None:
    state = {"messages": [HumanMessage("Fix the parser.", id="h")], "langctx": {"v": 1, **value}}
    with pytest.raises(StateVersionError, match=error):
        view = view_state(state, MemorySettings.of(max_tokens=4000))
        view.compact()  # priorities are read when the memory is built
    with pytest.raises(StateVersionError, match=error):
        channel_entries(state["langctx"])
