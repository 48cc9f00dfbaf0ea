"""``/compact [instructions]`` and the ``compact_conversation`` tool, in real graphs."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx.langgraph import LangctxNode, make_compact_tool
from langctx.markers import NOTICE_ID_PREFIX
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    config,
    drive,
    every_compaction,
    first_input,
    middleware_agent,
    node_agent,
    session_script,
    session_tools,
)

BUDGET = 8000


def _never_shows_command(calls: list[Any]) -> None:
    for call in calls:
        for m in call:
            assert not m.text.startswith("/compact"), "the model saw the command"
            assert not str(m.id).startswith(NOTICE_ID_PREFIX), "the model saw a notice"


def test_middleware_compact_with_instructions_steers_the_summary() -> None:
    seen: list[SummaryRequest] = []

    def summarizer(request: SummaryRequest) -> str:
        seen.append(request)
        return f"Goal: fix the parser. Focus: {request.instructions}"

    script = session_script(9, seed=8)  # 9 turns, before the first automatic fold
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(max_tokens=BUDGET, summarizer=summarizer)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg = config()
    drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))
    calls = len(model.calls)
    before = agent.get_state(cfg).values

    out = agent.invoke({"messages": [HumanMessage("/compact keep the lexer notes")]}, cfg)
    assert len(model.calls) == calls  # the run ended after compacting: no model call
    notice = out["messages"][-1]
    assert str(notice.id).startswith(NOTICE_ID_PREFIX)
    assert "Focus: keep the lexer notes" in notice.text
    assert len(full_log(out)) == len(full_log(before)) + 1  # the command was replaced
    manual = [e for e in every_compaction(out) if e["trigger"] == "manual"]
    assert len(manual) == 1 and manual[0]["instructions"] == "keep the lexer notes"
    assert seen and seen[-1].instructions == "keep the lexer notes"

    model.responses.append("Sure, continuing.")
    out = agent.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Sure, continuing."
    _never_shows_command(model.calls)
    assert any("Focus: keep the lexer notes" in m.text for m in model.calls[-1])


def test_node_compact_without_instructions_and_with_nothing_to_compact() -> None:
    model = ScriptedChatModel(responses=["Hello.", "Still here."])
    graph = node_agent(model, [], LangctxNode(max_tokens=BUDGET), InMemorySaver())
    cfg = config()
    graph.invoke(first_input(with_system=True), cfg)

    out = graph.invoke({"messages": [HumanMessage("/compact")]}, cfg)  # nothing to fold yet
    assert out["messages"][-1].text.startswith("[langctx] Nothing to compact yet")
    assert out.get("langctx", {}).get("compactions", []) == []
    assert len(model.calls) == 1

    out = graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Still here."
    _never_shows_command(model.calls)


def test_node_compact_command_after_a_long_session_compacts() -> None:
    script = session_script(12, seed=9)
    model = ScriptedChatModel(responses=script.responses)
    # a manual compaction folds down to the low mark, like the automatic ones
    node = LangctxNode(max_tokens=BUDGET, keep_recent_tokens=500)
    graph = node_agent(model, session_tools(script.outputs), node, InMemorySaver())
    cfg = config()
    drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=True))
    before = len(every_compaction(graph.get_state(cfg).values))
    out = graph.invoke({"messages": [HumanMessage("/compact")]}, cfg)
    new = every_compaction(out)[before:]
    assert new and new[0]["trigger"] == "manual"  # the /compact fold, then any merges it caused
    assert all(e["trigger"] == "merge" for e in new[1:])
    assert out["messages"][-1].text.startswith("[langctx] Compacted")


def test_middleware_can_offer_the_compact_tool() -> None:
    script = session_script(8, seed=21, final=False)
    call = {"id": "call_compact", "name": "compact_conversation", "args": {}, "type": "tool_call"}
    model = ScriptedChatModel(
        responses=[*script.responses, AIMessage("", tool_calls=[call]), "Done."]
    )
    middleware = LangctxMiddleware(max_tokens=BUDGET, keep_recent_tokens=500, compact_tool=True)
    assert [t.name for t in middleware.tools] == ["compact_conversation"]
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg = config()
    out, _ = drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))
    assert every_compaction(out)[-1]["trigger"] in ("manual", "merge")
    assert any(e["trigger"] == "manual" for e in every_compaction(out))
    assert any(
        m.type == "tool" and m.text.startswith("[langctx] Compacted") for m in out["messages"]
    )


def test_compact_tool_writes_the_entry_through_a_command() -> None:
    node = LangctxNode(max_tokens=BUDGET, keep_recent_tokens=500)
    compact_tool = make_compact_tool(node.settings)
    script = session_script(10, seed=10, final=False)
    call_id = f"call_{uuid.uuid4().hex[:8]}"
    ask = AIMessage(
        "",
        tool_calls=[
            {
                "id": call_id,
                "name": "compact_conversation",
                "args": {"instructions": "keep test names"},
                "type": "tool_call",
            }
        ],
    )
    model = ScriptedChatModel(responses=[*script.responses[:-1], ask, "Compacted, carrying on."])
    graph = node_agent(model, [*session_tools(script.outputs), compact_tool], node, InMemorySaver())
    cfg = config()
    out, _ = drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=True))
    results = [m for m in out["messages"] if getattr(m, "tool_call_id", None) == call_id]
    assert results and results[0].text.startswith("[langctx] Compacted")
    manual = [e for e in every_compaction(out) if e["trigger"] == "manual"]
    assert manual and manual[0]["instructions"] == "keep test names"
    assert model.calls[-1][-1].tool_call_id == call_id  # the model got the tool's answer


def test_tool_output_processor_hook_point_sync_and_async() -> None:
    from langchain_core.messages import ToolMessage

    seen: list[str] = []

    def shorten(message: ToolMessage, request: Any) -> ToolMessage:
        seen.append(request.tool_call["name"])
        return message.model_copy(update={"content": f"[{len(message.text)} chars]"})

    script = session_script(3, seed=18)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(max_tokens=BUDGET, tool_output_processor=shorten)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    out = agent.invoke(first_input(with_system=False), config())
    tools = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert tools and all(m.text.endswith("chars]") for m in tools)
    assert seen == [m.name for m in tools]
    assert LangctxMiddleware().tool_output_processor is None  # default: results pass through


async def test_async_tool_output_processor() -> None:
    from langchain_core.messages import ToolMessage

    async def tag(message: ToolMessage, request: Any) -> ToolMessage:
        return message.model_copy(update={"content": "processed"})

    script = session_script(2, seed=19)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(max_tokens=BUDGET, tool_output_processor=tag)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    out = await agent.ainvoke(first_input(with_system=False), config())
    assert {m.text for m in out["messages"] if isinstance(m, ToolMessage)} == {"processed"}
