"""Stored state is hostile (issue 41, items 5 and 8): any JSON-ish value, or a real session's
state with keys dropped, types changed, lists truncated, entries from another thread, huge, NUL
or surrogate strings, negative or huge ints, NaN, read by ``LayeredChatMemory.from_state``, by the
graph faces (``create_agent`` + middleware, ``LangctxNode``) and by the chat history.

The property: a one-line ``langctx.errors`` exception, or the documented repair
(``langctx.archive_repair``, docs/persistence.md) with nothing lost (every stored message is still
in the log / ``full_log``) and a valid request within the budget."""

from __future__ import annotations

import copy
import functools
import itertools
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, event, given, note, settings
from hypothesis import strategies as st
from langchain.agents import create_agent  # imported once, before any example is timed
from langchain_core.chat_history import InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Overwrite

from langctx import InvalidMessageError, LayeredChatMemory, MemorySettings, StateVersionError
from langctx.archive_packing import pack_batch, unpack_batch
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import view_state
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests._helpers import assert_pairs_intact
from tests.unit_tests.hostile._hostile import (
    BUDGET,
    JSONISH,
    assert_one_line_langctx_error,
    assert_request_pairs,
    memory_session,
    mutated,
    refused_or,
)

AGENT_BUDGET = 3000
TASK = "Read the files."


def _ids(messages: list[BaseMessage]) -> list[str]:
    return [str(m.id) for m in messages]


def _assert_request(messages: list[BaseMessage], budget: int, *, mid_turn: bool = False) -> None:
    """Within ``budget``, pairs intact; ``mid_turn``: a memory's ``build_context`` may end with
    the calls its last AI message still waits for (a graph's request answers them)."""
    counter = MemorySettings.of(max_tokens=budget).counter
    assert counter.count_messages(messages) <= budget
    (assert_request_pairs if mid_turn else assert_pairs_intact)(messages)


# ------------------------------------------------------------ LayeredChatMemory.from_state


def _check_memory(state: Any, log_ids: list[str] | None) -> None:
    """from_state then a turn: refused in one line, or nothing lost and a valid request."""
    mem, refused = refused_or(lambda: LayeredChatMemory.from_state(state, max_tokens=BUDGET))
    if refused is not None:
        return
    if log_ids is not None:
        assert set(log_ids) <= set(_ids(mem.messages))
    # from_state runs no compaction: the next call compacts first when due (as every face does)
    _, refused = refused_or(lambda: mem.needs_compaction() and mem.compact(trigger="proactive"))
    if refused is None:
        _assert_request(mem.build_context(), BUDGET, mid_turn=True)
    _, refused = refused_or(lambda: mem.add_messages([HumanMessage("next " * 400, id="hostile")]))
    if refused is None:
        _assert_request(mem.build_context(), BUDGET, mid_turn=True)
        assert "hostile" in _ids(mem.messages)


@settings(max_examples=150)
@given(
    state=st.one_of(
        JSONISH,
        st.dictionaries(
            st.sampled_from(
                ["v", "compactions", "edits", "priorities", "messages", "eviction_log"]
            ),
            JSONISH,
        ),
    )
)
def test_from_state_on_any_value_loads_or_fails_in_one_line(state: Any) -> None:
    _check_memory(state, None)


@settings(max_examples=150)
@given(data=st.data())
def test_from_state_on_a_mutated_session_loads_or_fails_in_one_line(data: st.DataObject) -> None:
    log, state = memory_session()
    bad = data.draw(mutated(copy.deepcopy(state)), label="state")
    messages = bad.get("messages") if isinstance(bad, dict) else None
    kept = None
    if messages == state["messages"]:  # the log itself is intact: nothing of it may be lost
        kept = _ids(list(log))
    _check_memory(bad, kept)


# ------------------------------------------------------------ the graph faces


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + "x = 1\n" * 300


def _session_script(n: int) -> list[Any]:
    calls = [ai_tool_call("read_file", {"path": f"f{i}.py"}, call_id=f"c{i}") for i in range(n)]
    return [*calls, "Done."]


@functools.cache
def _agent_threads() -> tuple[Any, ScriptedChatModel, dict[str, Any]]:
    """A create_agent + LangctxMiddleware graph whose threads "a" and "b" each archived batches;
    the agent that continues them (answers "Noted."), its model, and their checkpoint configs."""

    saver = InMemorySaver()
    configs = {}
    for name in ("a", "b"):
        cfg = {"configurable": {"thread_id": name}}
        agent = create_agent(
            ScriptedChatModel(responses=_session_script(12)),
            tools=[read_file],
            middleware=[LangctxMiddleware(max_tokens=AGENT_BUDGET)],
            checkpointer=saver,
        )
        out = agent.invoke({"messages": [HumanMessage(TASK, id=f"task-{name}")]}, cfg)
        assert out["langctx_archive"], "the session must archive"
        configs[name] = agent.get_state(cfg).config
    model = ScriptedChatModel(responses=["Noted."], cycle=True)
    agent = create_agent(
        model,
        tools=[read_file],
        middleware=[LangctxMiddleware(max_tokens=AGENT_BUDGET)],
        checkpointer=saver,
    )
    return agent, model, configs


@functools.cache
def _node_threads() -> tuple[Any, ScriptedChatModel, dict[str, Any]]:
    """As :func:`_agent_threads`, for a StateGraph with ``LangctxNode``."""
    from langctx.langgraph import LangctxNode
    from tests.integration_tests._agents import node_agent

    saver = InMemorySaver()
    configs = {}
    for name in ("a", "b"):
        cfg = {"configurable": {"thread_id": name}, "recursion_limit": 200}
        model = ScriptedChatModel(responses=_session_script(12))
        graph = node_agent(model, [read_file], LangctxNode(max_tokens=AGENT_BUDGET), saver)
        out = graph.invoke({"messages": [HumanMessage(TASK, id=f"task-{name}")]}, cfg)
        assert out["langctx_archive"], "the session must archive"
        configs[name] = graph.get_state(cfg).config
    model = ScriptedChatModel(responses=["Noted."], cycle=True)
    graph = node_agent(model, [read_file], LangctxNode(max_tokens=AGENT_BUDGET), saver)
    return graph, model, configs


_turns = itertools.count()


def _continue_with(face: Any, key: str, draw: st.DataObject) -> None:
    """Put a hostile value at ``key`` of thread "a"'s state (bypassing the reducer, as a hand
    edit or a corrupt checkpoint does), then run one more turn."""
    graph, model, configs = face()
    state = graph.get_state(configs["a"]).values
    theirs = graph.get_state(configs["b"]).values
    stored = _ids(full_log(state))
    value = draw.draw(
        st.one_of(mutated(copy.deepcopy(state[key]), copy.deepcopy(theirs[key])), JSONISH),
        label=key,
    )
    try:
        forked = graph.update_state(configs["a"], {key: Overwrite(value)})
    except TypeError as exc:  # ints over 64 bits: no checkpointer stores them, in any channel
        assume("msgpack serializable" not in str(exc))
        raise
    log, refused = refused_or(lambda: full_log(graph.get_state(forked).values))
    if refused is None:
        assert set(stored) <= set(_ids(log)), "full_log returned less than was stored"
    newest = f"hostile-{next(_turns)}"
    calls = len(model.calls)
    out, refused = refused_or(
        lambda: graph.invoke({"messages": [HumanMessage("Go on.", id=newest)]}, forked)
    )
    event("refused" if refused is not None else "ran")
    if refused is not None:
        note(f"refused: {refused}")
        return
    sent = model.calls[calls]
    _assert_request(sent, AGENT_BUDGET)
    texts = [m.text for m in sent]
    assert any(TASK in t for t in texts), "the task is sent"
    assert any(m.id == newest for m in sent), "the newest user message is sent"
    log, refused = refused_or(lambda: full_log(out))
    if refused is None and key != "langctx_archive":
        assert set(stored) | {newest} <= set(_ids(log)), "nothing stored is lost"


_GRAPH = settings(max_examples=25, suppress_health_check=[HealthCheck.too_slow])


@_GRAPH
@given(data=st.data())
def test_create_agent_on_a_hostile_channel_repairs_or_fails_in_one_line(
    data: st.DataObject,
) -> None:
    _continue_with(_agent_threads, "langctx", data)


@_GRAPH
@given(data=st.data())
def test_create_agent_on_a_hostile_archive_repairs_or_fails_in_one_line(
    data: st.DataObject,
) -> None:
    _continue_with(_agent_threads, "langctx_archive", data)


@_GRAPH
@given(data=st.data())
def test_langctx_node_on_a_hostile_channel_repairs_or_fails_in_one_line(
    data: st.DataObject,
) -> None:
    _continue_with(_node_threads, "langctx", data)


# ------------------------------------------------------------ the chat history


@pytest.mark.filterwarnings(  # upstream deprecated the class itself; not ours
    "ignore:The class `InMemoryChatMessageHistory` was deprecated:"
    "langchain_core._api.deprecation.LangChainDeprecationWarning"
)
@settings(max_examples=60)
@given(data=st.data())
def test_chat_history_on_hostile_stored_entries_loads_or_fails_in_one_line(
    data: st.DataObject,
) -> None:
    from langctx.history import LangctxChatMessageHistory

    log, state = memory_session()
    saved = {"v": state["v"], "compactions": state["compactions"], "edits": state["edits"]}
    value = data.draw(st.one_of(mutated(copy.deepcopy(saved)), JSONISH), label="entries")
    inner = InMemoryChatMessageHistory(messages=list(log))
    history, refused = refused_or(
        lambda: LangctxChatMessageHistory(
            history=inner, state={"langctx": value}, max_tokens=BUDGET
        )
    )
    if refused is not None:
        return
    assert _ids(history.full_messages) == _ids(list(log))
    if history.memory.needs_compaction():  # entries lost: compact() (docs/chat-history.md)
        refused_or(history.compact)
        assert _ids(history.full_messages) == _ids(list(log))
    _assert_request(history.messages, BUDGET)
    _, refused = refused_or(lambda: history.add_messages([HumanMessage("more " * 300, id="n")]))
    if refused is None:
        _assert_request(history.messages, BUDGET)
        assert _ids(history.full_messages)[-1] == "n"


def test_the_checks_see_a_non_langctx_error() -> None:
    """The suite's check fails on anything but a one-line langctx error (no test that cannot
    fail)."""
    with pytest.raises(AssertionError):
        assert_one_line_langctx_error(TypeError("x"))
    from langctx import StateVersionError

    with pytest.raises(AssertionError):
        assert_one_line_langctx_error(StateVersionError("a\nb"))


def test_a_stored_tool_result_without_its_call_id_is_refused_where_the_state_enters() -> None:
    """Found by the property above: a stored session whose last tool result lost its
    ``tool_call_id`` (``''``) loaded, and ``build_context`` sent the call it answered (``c9``)
    with no result. A tool result that answers nothing is refused as it enters, in one line."""
    _, state = memory_session()
    bad = copy.deepcopy(state)
    last = bad["messages"][-1]
    assert last["data"]["id"] == "t9"
    last["data"]["tool_call_id"] = ""
    with pytest.raises(InvalidMessageError, match=r"^tool result 't9' has no tool_call_id") as info:
        LayeredChatMemory.from_state(bad, max_tokens=BUDGET)
    assert "\n" not in str(info.value)


def test_a_graph_given_a_history_that_ends_with_tool_calls_sends_them_answered() -> None:
    """A sibling: ``create_agent`` given ``[task, AI(call c1)]`` called the model with ``c1``
    unanswered. Before a model call, an open call gets a stand-in result in the request."""
    model = ScriptedChatModel(responses=["Done."])
    agent = create_agent(
        model,
        tools=[read_file],
        middleware=[LangctxMiddleware(max_tokens=AGENT_BUDGET)],
        checkpointer=InMemorySaver(),
    )
    call = {"id": "c1", "name": "read_file", "args": {"path": "f.py"}}
    history = [HumanMessage(TASK, id="task"), AIMessage("", id="a", tool_calls=[call])]
    out = agent.invoke({"messages": history}, {"configurable": {"thread_id": "open"}})
    sent = model.calls[-1]
    assert [m.id for m in sent] == ["task", "a", "langctx-repair-c1"]
    assert_pairs_intact(sent)
    assert [m.id for m in out["messages"]][:2] == ["task", "a"]  # the log is not rewritten


@pytest.mark.parametrize("field", ["id", "tool_call_id"])
def test_a_stored_message_id_with_a_lone_surrogate_is_refused_in_one_line(field: str) -> None:
    """Found by the property above: a stored tool result whose id was ``'\\ud800'`` loaded, and
    the next compaction escaped as ``UnicodeEncodeError`` (an entry id hashes the ids). An id is
    never rewritten, so it is refused as it enters."""
    _, state = memory_session()
    bad = copy.deepcopy(state)
    bad["messages"][-1]["data"][field] = "t\ud800"
    with pytest.raises(InvalidMessageError, match=f"lone surrogate in its {field}") as info:
        LayeredChatMemory.from_state(bad, max_tokens=BUDGET)
    assert "\n" not in str(info.value)


def test_a_hand_edited_archive_record_or_batch_message_fails_in_one_line() -> None:
    """Found by the graph properties above: a channel whose archive record names its newest
    batch by a list (``TypeError: unhashable type``), and an archived tool result whose ``name``
    is a list (pydantic's multi-line error), escaped; each is a one-line ``StateVersionError``."""
    agent, _, configs = _agent_threads()
    cfg = configs["a"]
    values = agent.get_state(cfg).values
    channel = copy.deepcopy(dict(values["langctx"]))
    channel["archive"]["last"] = ["x"]
    with pytest.raises(StateVersionError, match=r"archive record has last=\['x'\]") as info:
        view_state({**values, "langctx": channel}, MemorySettings.of(max_tokens=AGENT_BUDGET))
    assert "\n" not in str(info.value)
    batches = [unpack_batch(b) for b in values["langctx_archive"]]  # (packed in the state)
    tool = next(m for m in batches[-1]["messages"] if m["type"] == "tool")
    tool["data"]["name"] = []
    batches[-1] = pack_batch(batches[-1])
    with pytest.raises(StateVersionError, match="cannot be read by this langctx") as info:
        full_log({**values, "langctx_archive": batches})
    assert "\n" not in str(info.value)
