"""LangChain's documented streaming loops, unchanged, over a 40-turn ``create_agent`` run that folds
and archives (``LangctxMiddleware`` at its defaults, and with a scripted summarizer)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelResponse, ModelRetryMiddleware
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx.archive_repair import state_batches
from langctx.channel import ARCHIVE_KEY
from langctx.delta_state import LangctxDeltaAgentState
from langctx.langgraph import LangctxNode
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    config,
    every_compaction,
    first_input,
    middleware_agent,
    node_agent,
    session_script,
    session_tools,
)

TURNS = 40
SUMMARY = "Goal: fix the parser. STREAMED-SUMMARY-MARKER"
MODES = ["updates", "values", "messages", "custom", "events"]


def _middleware(summarizer: bool) -> tuple[LangctxMiddleware, ScriptedChatModel | None]:
    if not summarizer:
        return LangctxMiddleware(), None
    model = ScriptedChatModel(responses=[SUMMARY], cycle=True)
    return LangctxMiddleware(summarizer=model), model


class _Seen:
    """What the documented loops saw."""

    def __init__(self) -> None:
        self.model_steps: list[list[Any]] = []  # "updates": the model node's messages per step
        self.tokens: list[tuple[Any, dict[str, Any]]] = []  # "messages"
        self.custom: list[Any] = []
        self.stream_events: list[Any] = []  # astream_events: on_chat_model_stream chunks
        self.values = 0


def _loop(mode: str, agent: Any, inp: Any, cfg: Any, seen: _Seen) -> None:
    """One user turn through the loop LangChain's streaming docs show for ``mode``."""
    if mode == "updates":
        for chunk in agent.stream(inp, cfg, stream_mode="updates"):
            for step, data in chunk.items():
                last = data["messages"][-1]
                _ = last.content_blocks
                if step == "model":
                    seen.model_steps.append(list(data["messages"]))
    elif mode == "values":
        for chunk in agent.stream(inp, cfg, stream_mode="values"):
            latest_message = chunk["messages"][-1]
            if latest_message.content:
                seen.values += 1
            elif latest_message.tool_calls:
                seen.values += 1
    elif mode == "messages":
        for token, metadata in agent.stream(inp, cfg, stream_mode="messages"):
            _ = metadata["langgraph_node"], token.content_blocks
            seen.tokens.append((token, metadata))
    elif mode == "custom":
        for chunk in agent.stream(inp, cfg, stream_mode="custom"):
            seen.custom.append(chunk)
    else:  # astream_events has no sync form: several modes at once
        for stream_mode, chunk in agent.stream(inp, cfg, stream_mode=["updates", "custom"]):
            if stream_mode == "custom":
                seen.custom.append(chunk)
            else:
                for _step, data in chunk.items():
                    _ = data["messages"][-1].content_blocks


async def _aloop(mode: str, agent: Any, inp: Any, cfg: Any, seen: _Seen) -> None:
    """Async version of `_loop` (``astream_events(version="v2")`` for "events")."""
    if mode == "updates":
        async for chunk in agent.astream(inp, cfg, stream_mode="updates"):
            for step, data in chunk.items():
                last = data["messages"][-1]
                _ = last.content_blocks
                if step == "model":
                    seen.model_steps.append(list(data["messages"]))
    elif mode == "values":
        async for chunk in agent.astream(inp, cfg, stream_mode="values"):
            latest_message = chunk["messages"][-1]
            if latest_message.content or latest_message.tool_calls:
                seen.values += 1
    elif mode == "messages":
        async for token, metadata in agent.astream(inp, cfg, stream_mode="messages"):
            _ = metadata["langgraph_node"], token.content_blocks
            seen.tokens.append((token, metadata))
    elif mode == "custom":
        async for chunk in agent.astream(inp, cfg, stream_mode="custom"):
            seen.custom.append(chunk)
    else:
        async for event in agent.astream_events(inp, cfg, version="v2"):
            if event["event"] == "on_chat_model_stream":
                seen.stream_events.append(event["data"]["chunk"])
            elif event["event"] == "on_custom_event":
                seen.custom.append(event["data"])


def _inputs(model: ScriptedChatModel) -> Iterator[dict[str, Any]]:
    """The task, then "Go on." whenever the agent stops, until the script is spent."""
    yield first_input(with_system=False)
    while model._index < len(model.responses):
        yield {"messages": [HumanMessage("Go on.")]}


def _check(
    mode: str,
    seen: _Seen,
    state: dict[str, Any],
    model: ScriptedChatModel,
    summarizer: ScriptedChatModel | None,
) -> None:
    assert len(state.get(ARCHIVE_KEY) or []) >= 2 and every_compaction(state)  # it folded
    assert summarizer is None or summarizer.calls
    if mode == "updates":
        assert len(seen.model_steps) == len(model.calls)
        assert all(isinstance(step[-1], AIMessage) for step in seen.model_steps)
        removals = [m for step in seen.model_steps for m in step if isinstance(m, RemoveMessage)]
        assert removals  # the archive's removals came with the model's message
    if mode == "messages":
        assert seen.tokens and not any(isinstance(t, RemoveMessage) for t, _ in seen.tokens)
        assert not any(SUMMARY in str(t.content) for t, _ in seen.tokens)
    if mode == "values":
        assert seen.values
    if mode in ("custom", "events"):
        assert seen.custom


def _run(mode: str, summarizer: bool) -> None:
    script = session_script(TURNS, seed=40)
    model = ScriptedChatModel(responses=script.responses)
    middleware, summary_model = _middleware(summarizer)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg, seen = config(), _Seen()
    for inp in _inputs(model):
        _loop(mode, agent, inp, cfg, seen)
    _check(mode, seen, agent.get_state(cfg).values, model, summary_model)


async def _arun(mode: str, summarizer: bool) -> None:
    script = session_script(TURNS, seed=41)
    model = ScriptedChatModel(responses=script.responses)
    middleware, summary_model = _middleware(summarizer)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg, seen = config(), _Seen()
    for inp in _inputs(model):
        await _aloop(mode, agent, inp, cfg, seen)
    _check(mode, seen, (await agent.aget_state(cfg)).values, model, summary_model)


@pytest.mark.parametrize("summarizer", [False, True], ids=["defaults", "summarizer"])
@pytest.mark.parametrize("mode", MODES)
def test_documented_stream_loops_run_over_a_folding_agent(mode: str, summarizer: bool) -> None:
    _run(mode, summarizer)


@pytest.mark.parametrize("summarizer", [False, True], ids=["defaults", "summarizer"])
@pytest.mark.parametrize("mode", MODES)
async def test_documented_astream_loops_run_over_a_folding_agent(
    mode: str, summarizer: bool
) -> None:
    await _arun(mode, summarizer)


def test_a_compact_command_streams_one_update_ending_in_its_notice() -> None:
    script = session_script(12, seed=42, final=False)
    model = ScriptedChatModel(responses=script.responses)
    tools = session_tools(script.outputs)
    agent = middleware_agent(model, tools, LangctxMiddleware(), InMemorySaver())
    cfg = config()
    agent.invoke(first_input(with_system=False), cfg)
    updates = list(agent.stream({"messages": [("user", "/compact")]}, cfg, stream_mode="updates"))
    assert [list(chunk) for chunk in updates] == [["model"]]
    written = updates[0]["model"]["messages"]
    assert (
        written[0] is written[-1]
    )  # the notice, the command and the archived messages, the notice
    assert sum(isinstance(m, RemoveMessage) for m in written) > 1
    assert isinstance(written[-1], AIMessage) and "Compacted" in written[-1].text


def test_the_memory_node_streams_one_dict_per_step() -> None:
    script = session_script(TURNS, seed=43)
    model = ScriptedChatModel(responses=script.responses)
    graph = node_agent(model, session_tools(script.outputs), LangctxNode(), InMemorySaver())
    cfg = config()
    updates = [
        (step, data)
        for inp in _inputs(model)
        for chunk in graph.stream(inp, cfg, stream_mode="updates")
        for step, data in chunk.items()
    ]
    assert len(graph.get_state(cfg).values.get(ARCHIVE_KEY) or []) >= 2
    memory = [data for step, data in updates if step == "memory"]
    assert memory and all(isinstance(d, dict) for d in memory)
    assert any(isinstance(m, RemoveMessage) for d in memory for m in d.get("messages", []))
    model_steps = [data for step, data in updates if step == "model"]
    assert all(isinstance(d["messages"][-1], AIMessage) for d in model_steps)


def test_a_step_that_repairs_an_invalid_tool_call_stores_no_removal() -> None:
    """``create_agent`` writes the whole history back on the step after a malformed tool call;
    the step's removals are applied after it, never stored as messages."""
    script = session_script(12, seed=44, final=False)
    broken = AIMessage(
        "",
        id="broken",
        invalid_tool_calls=[
            {"type": "invalid_tool_call", "id": "c1", "name": "read_file", "args": "{"}
        ],
    )
    model = ScriptedChatModel(responses=[*script.responses, broken])
    tools = session_tools(script.outputs)
    agent = middleware_agent(model, tools, LangctxMiddleware(max_tokens=4000), InMemorySaver())
    cfg = config()
    out = agent.invoke(first_input(with_system=False), cfg)
    while out["messages"][-1].id != "broken":
        out = agent.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    before = len(out[ARCHIVE_KEY])
    out = agent.invoke({"messages": [HumanMessage("/compact")]}, cfg)
    assert len(out[ARCHIVE_KEY]) > before  # the /compact archived
    assert not any(isinstance(m, RemoveMessage) for m in out["messages"])
    assert not {m.id for m in out["messages"]} & {
        m["data"]["id"] for b in state_batches(out[ARCHIVE_KEY]) for m in b["messages"]
    }


def _session_agent(script: Any, middleware: list[Any], **kw: Any) -> tuple[ScriptedChatModel, Any]:
    """``create_agent`` over ``script``'s session with ``middleware``, on ``InMemorySaver``."""
    model = ScriptedChatModel(responses=script.responses)
    agent = create_agent(
        model,
        tools=session_tools(script.outputs),
        middleware=middleware,
        checkpointer=InMemorySaver(),
        **kw,
    )
    return model, agent


def test_the_updates_loop_over_delta_messages() -> None:
    """``state_schema=LangctxDeltaAgentState`` (``messages`` a delta channel): one dict per step,
    and the thread's messages are those of the default state's."""
    script = session_script(TURNS, seed=45)
    states = []
    for schema in (None, LangctxDeltaAgentState):
        model, agent = _session_agent(script, [LangctxMiddleware()], state_schema=schema)
        cfg, seen = config(), _Seen()
        for inp in _inputs(model):
            _loop("updates", agent, inp, cfg, seen)
        state = agent.get_state(cfg).values
        _check("updates", seen, state, model, None)
        states.append(state)
    plain, delta = states
    assert [m.content for m in delta["messages"]] == [m.content for m in plain["messages"]]
    assert [m.content for m in full_log(delta)] == [m.content for m in full_log(plain)]


def test_an_outer_wrap_model_call_middleware_keeps_the_archive_and_the_shape() -> None:
    """``ModelRetryMiddleware`` listed first wraps the memory's model call: it passes the result,
    removals included, through."""
    script = session_script(TURNS, seed=46)
    middleware = [ModelRetryMiddleware(max_retries=1), LangctxMiddleware()]
    model, agent = _session_agent(script, middleware)
    cfg, seen = config(), _Seen()
    for inp in _inputs(model):
        _loop("updates", agent, inp, cfg, seen)
    state = agent.get_state(cfg).values
    _check("updates", seen, state, model, None)
    assert len(state["messages"]) < 20 < len(full_log(state))


class _Bracketed(AgentMiddleware):  # type: ignore[type-arg]
    """LangChain's documented "Rewrite response" ``wrap_model_call`` (``result[0]``)."""

    def wrap_model_call(self, request: Any, handler: Any) -> ModelResponse:  # type: ignore[type-arg]
        response = handler(request)
        ai_msg = response.result[0]
        return ModelResponse(
            result=[AIMessage(content=f"[{ai_msg.content}]", tool_calls=ai_msg.tool_calls)],
            structured_response=response.structured_response,
        )


def test_langchains_documented_rewrite_listed_first_loses_no_model_message() -> None:
    """The rewrite keeps ``result[0]`` only: that is the model's message, so every answer of the
    model reaches the state (the step's removals are dropped with the rest of the result, so the
    window keeps those messages; nothing is lost)."""
    model, agent = _session_agent(
        session_script(TURNS, seed=47), [_Bracketed(), LangctxMiddleware()]
    )
    cfg = config()
    for inp in _inputs(model):
        agent.invoke(inp, cfg)
    log = full_log(agent.get_state(cfg).values)
    answers = [m for m in log if isinstance(m, AIMessage)]
    assert len(answers) == len(model.calls)
    assert all(str(m.content).startswith("[") for m in answers)
    assert len({m.id for m in log}) == len(log)
