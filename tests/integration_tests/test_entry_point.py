"""``langctx.create_agent``: LangChain's ``create_agent`` with the memory innermost and a delta
``messages`` state; the same conversation as the bare middleware, stored as the step's writes."""

from __future__ import annotations

import re
import warnings
from typing import Any

import pytest
from langchain.agents import create_agent as lc_create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest
from langchain_core.messages import BaseMessage
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langctx import (
    ConfigError,
    LangctxDeltaAgentState,
    LangctxMiddleware,
    LangctxWarning,
    create_agent,
    full_log,
)
from langctx.testing import ScriptedChatModel, ai_tool_call

TURNS = 24


def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + "def parse(src):\n    return src.split()\n" * 60


def _model(seen: list[list[BaseMessage]]) -> ScriptedChatModel:
    def respond(messages: list[BaseMessage]) -> Any:
        seen.append(list(messages))
        k = len(seen)
        return ai_tool_call("read_file", {"path": f"src/m{k}.py"}) if k <= TURNS else "Done."

    return ScriptedChatModel(responses=[respond], cycle=True)


def _run(build: Any) -> tuple[dict[str, Any], list[list[BaseMessage]], Any]:
    seen: list[list[BaseMessage]] = []
    agent = build(_model(seen))
    cfg = {"configurable": {"thread_id": "t"}}
    state = agent.invoke({"messages": [("user", "Fix the parser.")]}, cfg)
    return state, seen, agent


_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f-]{27}|cmp-[0-9a-f]{12}")


def _texts(requests: list[list[BaseMessage]]) -> list[list[str]]:
    """The requests' texts, random message ids (and the entry ids made from them) numbered."""
    names: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        return names.setdefault(m.group(), f"<id{len(names)}>")

    return [[_IDS.sub(name, f"{m.type}:{m.text}") for m in r] for r in requests]


def test_same_requests_as_the_bare_middleware_and_nothing_lost() -> None:
    def entry(model: Any) -> Any:
        return create_agent(
            model,
            [read_file],
            memory=LangctxMiddleware(max_tokens=3000),
            checkpointer=InMemorySaver(),
        )

    def bare(model: Any) -> Any:
        mw = LangctxMiddleware(max_tokens=3000)
        return lc_create_agent(model, [read_file], middleware=[mw], checkpointer=InMemorySaver())

    state, seen, agent = _run(entry)
    bare_state, bare_seen, _ = _run(bare)
    assert _texts(seen) == _texts(bare_seen)
    assert any("<langctx:" in m.text for r in seen for m in r)  # it folded
    assert [m.text for m in state["messages"]] == [m.text for m in bare_state["messages"]]
    # the folded log went to a store beside the checkpoints, not into the state
    assert not state.get("langctx_archive") and bare_state["langctx_archive"]
    assert len(full_log(agent.store, "t", state)) == 2 + 2 * TURNS  # task, calls, results, answer
    assert len(full_log(bare_state)) == 2 + 2 * TURNS
    assert isinstance(agent.channels["messages"], DeltaChannel)  # the step's writes only


def test_a_store_gets_the_folded_log() -> None:
    store = InMemoryStore()
    state, _, _ = _run(
        lambda model: create_agent(
            model, [read_file], checkpointer=InMemorySaver(), store=store, memory=None
        )
    )
    assert not state.get("langctx_archive")  # nothing archived in the state
    assert state["langctx"]["archive"]["batches"] > 0
    assert len(full_log(store, "t", state)) == 2 + 2 * TURNS


def test_a_memory_of_your_own_beside_a_store_keeps_its_archive_and_says_so() -> None:
    store = InMemoryStore()
    with pytest.warns(LangctxWarning, match=r"archive=True"):
        agent = create_agent(
            ScriptedChatModel(responses=["Hi."]),
            store=store,
            memory=LangctxMiddleware(max_tokens=3000, archive="state"),
            checkpointer=InMemorySaver(),
        )
    assert agent is not None
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the store archive, or no store: nothing to say
        create_agent(ScriptedChatModel(responses=["Hi."]), store=store, memory=None)
        create_agent(
            ScriptedChatModel(responses=["Hi."]),
            store=store,
            memory=LangctxMiddleware(archive=True),
        )
        create_agent(ScriptedChatModel(responses=["Hi."]), memory=LangctxMiddleware())
        mine = create_agent(  # its default archive="auto": the given store
            ScriptedChatModel(responses=["Hi."]), store=store, memory=LangctxMiddleware()
        )
    assert mine.store is store


def test_the_memory_runs_after_the_other_middleware() -> None:
    """Innermost: another middleware sees the whole window; the model, langctx's projection."""
    outer: list[bool] = []  # whether the request it was given held langctx's summary block

    class Note(AgentMiddleware[AgentState[Any], Any, Any]):
        def wrap_model_call(self, request: ModelRequest[Any], handler: Any) -> Any:
            outer.append(any("<langctx:summary" in m.text for m in request.messages))
            return handler(request)

    mw = LangctxMiddleware(max_tokens=3000)
    _, seen, _ = _run(
        lambda model: create_agent(model, [read_file], middleware=[Note()], memory=mw)
    )
    assert not any(outer)  # the state's window, then langctx's projection
    assert "<langctx:summary" in seen[-1][1].text
    # the caller's own placement of the memory is kept, and it is not added twice
    outer.clear()
    _, seen, _ = _run(lambda model: create_agent(model, [read_file], middleware=[mw, Note()]))
    assert outer[-1]


class NotDelta(AgentState[Any]):
    extra: int


class OwnDelta(LangctxDeltaAgentState):  # type: ignore[misc, valid-type]
    extra: int


def test_bad_arguments_are_one_line_errors() -> None:
    model = ScriptedChatModel(responses=["Hi."])
    with pytest.raises(ConfigError, match=r"must subclass langctx\.LangctxDeltaAgentState"):
        create_agent(model, state_schema=NotDelta)
    with pytest.raises(ConfigError, match="memory= takes a LangctxMiddleware"):
        create_agent(model, memory=object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="give one langctx memory"):
        create_agent(model, memory=LangctxMiddleware(), middleware=[LangctxMiddleware()])
    agent = create_agent(model, state_schema=OwnDelta)
    assert agent.invoke({"messages": [("user", "Hello")], "extra": 1})["extra"] == 1
