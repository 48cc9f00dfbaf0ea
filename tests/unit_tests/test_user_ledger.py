"""The user-message ledger: each folded user message stored once, in the channel's ``users``;
states written before it (``tests/fixtures/ledger/old_state.json``, by langctx 9c5ee3d) load and
project exactly as they did."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from langctx import LayeredChatMemory
from langctx.channel import channel_users, merge_langctx
from langctx.errors import StateVersionError
from langctx.state_memory import MemorySettings, view_state
from langctx.user_messages import MAX_STORED_MESSAGES

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ledger"
_spec = importlib.util.spec_from_file_location("make_old_state", FIXTURE / "make_old_state.py")
assert _spec is not None and _spec.loader is not None
maker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(maker)


def _old() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURE / "old_state.json").read_text())
    return data


def _digest(messages: list[Any]) -> str:
    text = json.dumps([[m.type, str(m.content)] for m in messages])
    return hashlib.sha256(text.encode()).hexdigest()


# The continuations run with ``files_share=0``: langctx 9c5ee3d had no files in hand, and a fold
# of the default share adds them to the summary block (the restore alone projects as before).
OLD = {"max_tokens": 2000, "files_share": 0.0}


def test_an_old_state_projects_as_before_and_continues_as_before() -> None:
    old = _old()
    assert "users" not in old["state"] and old["state"]["v"] == 1
    restored = LayeredChatMemory.from_state(old["state"], max_tokens=2000)
    assert _digest(restored.build_context()) == old["shown"]  # at the defaults
    mem = LayeredChatMemory.from_state(old["state"], **OLD)
    assert _digest(mem.build_context()) == old["shown"]
    for t, want in zip(range(150, 180), old["later"], strict=True):
        mem.add_messages(maker.turn(t))
        assert _digest(mem.build_context()) == want, f"turn {t}"
    state = mem.to_state()
    again = LayeredChatMemory.from_state(json.loads(json.dumps(state)), **OLD)
    assert _digest(again.build_context()) == old["later"][-1]
    assert state["users"] and len(state["users"]) <= MAX_STORED_MESSAGES


def test_an_old_channel_in_graph_state_projects_as_before_and_gets_a_ledger() -> None:
    old = _old()["state"]
    channel = {k: v for k, v in old.items() if k not in ("messages", "eviction_log")}
    messages = LayeredChatMemory.from_state(old).messages
    assert (
        _digest(
            view_state(
                {"messages": messages, "langctx": channel}, MemorySettings.of(max_tokens=2000)
            ).projection()
        )
        == _old()["shown"]
    )
    settings = MemorySettings.of(**OLD)
    view = view_state({"messages": messages, "langctx": channel}, settings)
    assert _digest(view.projection()) == _old()["shown"]
    for t in range(150, 180):  # a graph's turns: each call from the reduced state
        messages += maker.turn(t)
        view = view_state({"messages": messages, "langctx": channel}, settings)
        view.compact_if_due()
        channel = merge_langctx(channel, view.update())
    assert "users" in channel
    mem = LayeredChatMemory.from_state(_old()["state"], **OLD)
    for t in range(150, 180):
        mem.add_messages(maker.turn(t))
    final = view_state({"messages": messages, "langctx": channel}, settings)
    assert _digest(final.projection()) == _digest(mem.build_context()) == _old()["later"][-1]


def test_entries_count_user_messages_and_the_ledger_holds_each_once() -> None:
    mem = LayeredChatMemory(max_tokens=2000)
    mem.add_messages(maker.turn(0)[:1])
    for t in range(1, 400):
        mem.add_messages(maker.turn(t))
    state = mem.to_state()
    assert all("user_messages" not in e["facts"] for e in state["compactions"])
    assert any(e["facts"].get("users") for e in state["compactions"] if e["level"] == 3)
    ids = [u["id"] for u in state["users"]]
    assert len(ids) == len(set(ids)) > 100  # each folded one once
    total = len(state["users"]) + state.get("users_dropped", 0)
    assert total == len(range(3, 400, 3))  # every folded one listed or counted (u0 is the task)


@pytest.mark.parametrize(
    "users",
    ["not a list", {"id": "u1"}, 7],
)
def test_a_ledger_that_is_no_list_is_one_line(users: Any) -> None:
    with pytest.raises(StateVersionError, match="users must be a list") as info:
        channel_users({"v": 2, "users": users})
    assert "\n" not in str(info.value)


def test_malformed_and_huge_ledgers_are_read_bounded() -> None:
    junk: list[Any] = [None, 3, {"id": 1, "text": "x"}, {"id": "a"}, {"text": "b"}]
    items = [{"id": f"u{i}", "text": "word " * 5000} for i in range(5000)]
    users, dropped = channel_users({"v": 2, "users": [*junk, *items], "users_dropped": 2})
    assert len(users) == MAX_STORED_MESSAGES and users[-1]["id"] == "u4999"
    assert dropped == 2 + len(junk) + 5000 - MAX_STORED_MESSAGES
    assert all(len(u["text"]) <= 16_000 for u in users)
    assert sum(not u.get("short") for u in users) == 8
    with pytest.raises(StateVersionError, match="users_dropped"):
        channel_users({"v": 2, "users": [], "users_dropped": -1})
