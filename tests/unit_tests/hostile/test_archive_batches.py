"""Hostile archived batches, one field at a time (issue 41, items 5, 6 and 8): the cases the
hypothesis suite found, kept as plain deterministic tests.

A thread of ``create_agent`` (the in-state archive) archives a few batches; then one batch of its
``langctx_archive`` is edited by hand (``update_state`` with ``Overwrite``). ``full_log`` and the
next turn either run with nothing lost or refuse in one line (docs/persistence.md, "When the
channel and the archive disagree"); never a ``KeyError``, never a shorter log said nowhere.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import zlib
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Overwrite

from langctx import LangctxMiddleware, StateVersionError, create_agent
from langctx.archive_packing import is_packed, pack_batch, unpack_batch
from langctx.channel import ARCHIVE_KEY
from langctx.errors import LangctxError
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests.unit_tests.hostile._hostile import assert_one_line_langctx_error

CFG = {"configurable": {"thread_id": "batches"}}


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + "x = 1\n" * 300


@functools.cache
def _thread() -> tuple[Any, ScriptedChatModel, dict[str, Any]]:
    """The agent (it answers "Noted." from now on), its model, and the archived thread's config."""
    calls = [ai_tool_call("read_file", {"path": f"f{i}.py"}, call_id=f"c{i}") for i in range(12)]
    model = ScriptedChatModel(responses=[*calls, "Done."])
    agent = create_agent(
        model,
        [read_file],
        memory=LangctxMiddleware(max_tokens=3000, archive="state"),
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke({"messages": [HumanMessage("Read the files.", id="task")]}, CFG)
    assert len(out[ARCHIVE_KEY]) >= 3, "the session must archive several batches"
    model.responses.extend(["Noted."] * 100)  # the answers of the turns after an edit
    return agent, model, agent.get_state(CFG).config


def _newest(batches: list[dict[str, Any]]) -> int:
    return max(range(len(batches)), key=lambda i: batches[i]["seq"])


def _edited(where: str, edit: Any) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """Thread "batches" with ``edit(batch)`` applied to its newest (or oldest) batch: the config
    of the fork, its state, and the ids full_log gave before the edit."""
    agent, _, cfg = _thread()
    state = agent.get_state(cfg).values
    stored = [str(m.id) for m in full_log(state)]
    batches = copy.deepcopy(list(state[ARCHIVE_KEY]))
    i = _newest(batches) if where == "newest" else 0
    assert is_packed(batches[i]), "the state keeps its batches packed"
    body = unpack_batch(batches[i])  # the batch as written, edited, packed again
    edit(body)
    batches[i] = _repacked(body, batches[i])
    forked = agent.update_state(cfg, {ARCHIVE_KEY: Overwrite(batches)})
    return forked, agent.get_state(forked).values, stored


def _repacked(body: dict[str, Any], packed: dict[str, Any]) -> dict[str, Any]:
    """``body`` packed in place of ``packed``, the outer ``seq`` edited as the body's was."""
    text = json.dumps(body, ensure_ascii=True).encode("ascii")
    out = {**packed, "packed": base64.b64encode(zlib.compress(text)).decode("ascii")}
    out.pop("seq")
    return {**out, **({"seq": body["seq"]} if "seq" in body else {})}


def _drop(key: str) -> Any:
    return lambda b: b.pop(key)


def _set(key: str, value: Any) -> Any:
    return lambda b: b.__setitem__(key, value)


def _archived_id(b: dict[str, Any]) -> str:
    return str(b["messages"][0]["data"]["id"])


def _order_leaves_out_a_message(b: dict[str, Any]) -> None:
    b["order"].remove(_archived_id(b))


def _message_without_id(b: dict[str, Any]) -> None:
    del b["messages"][0]["data"]["id"]


def _message_twice(b: dict[str, Any]) -> None:
    b["messages"].append(copy.deepcopy(b["messages"][0]))


UNREADABLE = {  # what main did when it was not a one-line error, where it was worst
    "thread_id missing": _drop("thread_id"),  # main: KeyError from the memory step
    "thread_id an int": _set("thread_id", 7),
    "seq missing": _drop("seq"),
    "seq a string": _set("seq", "5"),  # main: ValueError from full_log
    "seq negative": _set("seq", -1),
    "seq a bool": _set("seq", True),
    "prev missing": _drop("prev"),  # main: KeyError (newest)
    "prev an int": _set("prev", 3),
    "order missing": _drop("order"),  # main: KeyError (newest)
    "order a string": _set("order", "task"),  # main: full_log 4 messages short
    "order of ints": _set("order", [1, 2]),  # main: full_log 4 messages short
    "order leaves out an archived message": _order_leaves_out_a_message,  # main: 1 short
    "messages a dict": _set("messages", {}),
    "a message without an id": _message_without_id,  # main: full_log 1 message short
    "a message twice": _message_twice,
    "compactions missing": _drop("compactions"),  # main: KeyError (newest)
    "compactions of ints": _set("compactions", [1]),  # main: TypeError (newest)
    "edits a string": _set("edits", "x"),
    "priorities a list": _set("priorities", [["m", 1]]),
    "priorities of strings": _set("priorities", {"m": "high"}),
    "first_kept missing": _drop("first_kept"),
    "v missing": _drop("v"),
    "v newer": _set("v", 3),  # main: read as if it were version 1
}


@pytest.mark.parametrize("where", ["newest", "oldest"])
@pytest.mark.parametrize("edit", list(UNREADABLE), ids=list(UNREADABLE))
def test_an_unreadable_batch_is_refused_in_one_line_where_it_is_read(edit: str, where: str) -> None:
    """full_log reads every batch; a step reads the newest and every batch's seq (the others
    when it repairs)."""
    agent, _, _ = _thread()
    forked, state, _ = _edited(where, UNREADABLE[edit])
    with pytest.raises(StateVersionError, match="cannot be read by this langctx") as info:
        full_log(state)
    assert_one_line_langctx_error(info.value)
    turn = {"messages": [HumanMessage("Go on.", id=f"go-{edit}-{where}")]}
    if where == "newest" or edit.startswith("seq"):
        with pytest.raises(StateVersionError, match="cannot be read by this langctx") as info:
            agent.invoke(turn, forked)
        assert_one_line_langctx_error(info.value)
        return
    out = agent.invoke(turn, forked)  # an older batch: not read by the step, still refused
    with pytest.raises(StateVersionError, match="cannot be read by this langctx"):
        full_log(out)


def test_a_batch_whose_order_leaves_out_a_message_is_never_a_shorter_log() -> None:
    """The first case hypothesis found: full_log returned one message less, silently."""
    _, state, _ = _edited("newest", _order_leaves_out_a_message)
    with pytest.raises(StateVersionError, match="its 'order' does not place it"):
        full_log(state)


def test_a_batch_without_its_thread_id_is_no_key_error() -> None:
    """The second case hypothesis found: a KeyError from the memory step."""
    agent, _, _ = _thread()
    forked, _, _ = _edited("newest", _drop("thread_id"))
    with pytest.raises(StateVersionError, match="its 'thread_id' is missing"):
        agent.invoke({"messages": [HumanMessage("Go on.", id="go-thread-id")]}, forked)


def _message_removed(b: dict[str, Any]) -> None:
    del b["messages"][0]  # its id stays in "order": the batch says it archived it


@pytest.mark.parametrize("channel", ["kept", "emptied"])
def test_a_message_removed_from_the_newest_batch_is_refused_not_lost(channel: str) -> None:
    agent, _, _ = _thread()
    forked, state, stored = _edited("newest", _message_removed)
    if channel == "emptied":
        forked = agent.update_state(forked, {"langctx": Overwrite({})})
        state = agent.get_state(forked).values
    with pytest.raises(LangctxError) as info:
        log = full_log(state)
        assert [str(m.id) for m in log] == stored, "full_log returned less than was stored"
    assert_one_line_langctx_error(info.value)
    with pytest.raises(StateVersionError, match="placed neither by the langctx channel") as info:
        agent.invoke({"messages": [HumanMessage("Go on.", id=f"go-removed-{channel}")]}, forked)
    assert_one_line_langctx_error(info.value)


@pytest.mark.parametrize("edit", ["created_at", "reordered"])
def test_a_batch_edited_where_nothing_is_lost_still_runs(edit: str) -> None:
    """The checks refuse what loses or cannot be read, not every edit: a changed timestamp or
    order of the newest batch is repaired by the documented rule and nothing is lost."""
    agent, model, _ = _thread()

    def change(b: dict[str, Any]) -> None:
        if edit == "created_at":
            b["created_at"] = "\x00"
        else:
            b["order"].reverse()

    forked, state, stored = _edited("newest", change)
    assert sorted(str(m.id) for m in full_log(state)) == sorted(stored)
    calls = len(model.calls)
    out = agent.invoke({"messages": [HumanMessage("Go on.", id=f"go-{edit}")]}, forked)
    assert len(model.calls) == calls + 1
    assert set(stored) | {f"go-{edit}"} <= {str(m.id) for m in full_log(out)}


PACKED = {
    "packed missing": lambda p, b: p.pop("packed"),
    "packed an int": lambda p, b: p.__setitem__("packed", 7),
    "packed not base64": lambda p, b: p.__setitem__("packed", "%%%"),
    "packed not zlib": lambda p, b: p.__setitem__("packed", base64.b64encode(b"x").decode()),
    "packed not JSON": lambda p, b: p.__setitem__(
        "packed", base64.b64encode(zlib.compress(b"{")).decode()
    ),
    "packed holds a list": lambda p, b: p.__setitem__(
        "packed", base64.b64encode(zlib.compress(b"[]")).decode()
    ),
    "packed holds another seq": lambda p, b: p.__setitem__(
        "packed", pack_batch({**b, "seq": b["seq"] + 7})["packed"]
    ),
    "seq changed outside": lambda p, b: p.__setitem__("seq", b["seq"] + 7),
}


@pytest.mark.parametrize("edit", list(PACKED), ids=list(PACKED))
def test_a_packed_batch_that_cannot_be_unpacked_is_refused_in_one_line(edit: str) -> None:
    agent, _, cfg = _thread()
    batches = copy.deepcopy(list(agent.get_state(cfg).values[ARCHIVE_KEY]))
    i = _newest(batches)
    PACKED[edit](batches[i], unpack_batch(batches[i]))
    forked = agent.update_state(cfg, {ARCHIVE_KEY: Overwrite(batches)})
    state = agent.get_state(forked).values
    with pytest.raises(StateVersionError, match="cannot be read by this langctx") as info:
        full_log(state)
    assert_one_line_langctx_error(info.value)


def test_a_compressed_bomb_is_refused_not_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    import langctx.archive_packing as packing

    monkeypatch.setattr(packing, "MAX_UNPACKED_BYTES", 1 << 16)
    bomb = {"v": 2, "kind": "langctx_archive_batch", "seq": 0}
    bomb["packed"] = base64.b64encode(zlib.compress(b" " * (1 << 20))).decode()
    with pytest.raises(ValueError, match="more than 65536 bytes"):
        packing.unpack_batch(bomb)


def test_batches_written_before_packing_are_read_with_the_packed_ones() -> None:
    """A thread written by the earlier default (plain batches) loads and continues."""
    agent, _, cfg = _thread()
    state = agent.get_state(cfg).values
    stored = [str(m.id) for m in full_log(state)]
    plain = [unpack_batch(b) for b in state[ARCHIVE_KEY]]
    forked = agent.update_state(cfg, {ARCHIVE_KEY: Overwrite(plain)})
    assert [str(m.id) for m in full_log(agent.get_state(forked).values)] == stored
    out = agent.invoke({"messages": [HumanMessage("Go on.", id="go-plain")]}, forked)
    assert [str(m.id) for m in full_log(out)][: len(stored)] == stored
