"""Compaction events reach the custom stream and LangChain callbacks; summaries never stream."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx.events import COMPACTION_EVENT
from langctx.langgraph import LangctxNode
from langctx.middleware import LangctxMiddleware
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

SUMMARY = "Goal: fix the parser. SUMMARIZER-OUTPUT-MARKER"
BUDGET = 5000
TURNS = 14


class _Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.events.append((name, data))


def _summarizer() -> ScriptedChatModel:
    return ScriptedChatModel(responses=[SUMMARY], cycle=True)


def _check_pairs(payloads: list[dict[str, Any]]) -> None:
    starts = [p for p in payloads if p["phase"] == "start"]
    ends = [p for p in payloads if p["phase"] == "end"]
    assert starts and len(starts) == len(ends)
    for p in ends:
        assert p["event"] == COMPACTION_EVENT
        assert p["trigger"] in ("threshold", "proactive", "manual", "overflow")
        assert p["tokens_before"] > 0 and p["tokens_after"] is not None
        assert p["duration_s"] is not None and p["duration_s"] >= 0
    assert any(p["quality"] == "model" and p["tokens_after"] < p["tokens_before"] for p in ends)
    assert {p["mode"] for p in ends} <= {"blocking", "none"} and any(
        p["mode"] == "blocking" for p in ends
    )  # these runs ask the model on the spot (background_summaries=False)


def test_events_on_custom_stream_and_callbacks_and_no_summary_in_messages_stream() -> None:
    script = session_script(TURNS, seed=16, final=False)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(
        max_tokens=BUDGET,
        summarizer=_summarizer(),
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    recorder = _Recorder()
    cfg = {**config(), "callbacks": [recorder]}
    custom: list[dict[str, Any]] = []
    streamed: list[str] = []
    for mode, chunk in agent.stream(
        first_input(with_system=False), cfg, stream_mode=["custom", "messages"]
    ):
        if mode == "custom":
            custom.append(chunk)
        else:
            message, _meta = chunk
            streamed.append(message.text)

    _check_pairs([c for c in custom if c.get("event") == COMPACTION_EVENT])
    _check_pairs([data for name, data in recorder.events if name == COMPACTION_EVENT])
    assert len(recorder.events) == len(custom)
    assert streamed, "the agent's own messages do stream"
    assert not any("SUMMARIZER-OUTPUT-MARKER" in text for text in streamed)
    compactions = every_compaction(agent.get_state(cfg).values)
    assert any(e["quality"] == "model" for e in compactions)  # persisted, not only announced


async def test_async_node_events_reach_astream_events_and_the_custom_stream() -> None:
    script = session_script(TURNS, seed=17, final=False)
    model = ScriptedChatModel(responses=script.responses)
    node = LangctxNode(
        max_tokens=BUDGET,
        summarizer=_summarizer(),
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    graph = node_agent(model, session_tools(script.outputs), node, InMemorySaver())
    cfg = config()
    custom: list[dict[str, Any]] = []
    streamed: list[tuple[BaseMessage, dict[str, Any]]] = []
    async for mode, chunk in graph.astream(
        first_input(with_system=True), cfg, stream_mode=["custom", "messages"]
    ):
        if mode == "custom":
            custom.append(chunk)
        else:
            streamed.append(chunk)
    _check_pairs(custom)
    # No summarizer call streams. (The node writes the projection, summary block included, to
    # `llm_input_messages`; LangGraph streams that HumanMessage from the "memory" node.)
    for message, meta in streamed:
        assert "langctx:summarizer" not in (meta.get("tags") or [])
        assert not (isinstance(message, AIMessage) and SUMMARY in message.text)
    assert any(meta.get("langgraph_node") == "model" for _, meta in streamed)

    cfg2 = config()
    script2 = session_script(TURNS + 8, seed=17, final=False)
    model2 = ScriptedChatModel(responses=script2.responses)
    graph2 = node_agent(model2, session_tools(script2.outputs), node, InMemorySaver())
    events = [
        e["data"]
        async for e in graph2.astream_events(first_input(with_system=True), cfg2, version="v2")
        if e["event"] == "on_custom_event" and e["name"] == COMPACTION_EVENT
    ]
    _check_pairs(events)


def test_background_folds_say_so_on_the_stream() -> None:
    script = session_script(TURNS, seed=18, final=False)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(
        max_tokens=BUDGET, summarizer=_summarizer(), summary_threshold_tokens=0
    )
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    custom = [
        chunk
        for mode, chunk in agent.stream(
            first_input(with_system=False), config(), stream_mode=["custom", "updates"]
        )
        if mode == "custom" and chunk.get("event") == COMPACTION_EVENT
    ]
    ends = [p for p in custom if p["phase"] == "end" and p["quality"] is not None]
    assert ends and any(p["mode"] == "background" for p in ends)
    assert all(p["quality"] == "mechanical" for p in ends if p["mode"] == "background")


async def test_an_async_agent_gets_its_model_summaries_from_the_background() -> None:
    script = session_script(TURNS, seed=19, final=False)
    model = ScriptedChatModel(responses=script.responses)
    summarizer = _summarizer()
    middleware = LangctxMiddleware(
        max_tokens=BUDGET, summarizer=summarizer, summary_threshold_tokens=0
    )
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg = config()
    custom = [
        chunk
        async for mode, chunk in agent.astream(
            first_input(with_system=False), cfg, stream_mode=["custom", "updates"]
        )
        if mode == "custom" and chunk.get("event") == COMPACTION_EVENT
    ]
    ends = [p for p in custom if p["phase"] == "end" and p["quality"] is not None]
    assert ends and any(p["mode"] == "background" for p in ends)
    entries = every_compaction((await agent.aget_state(cfg)).values)
    upgrades = [e for e in entries if e["quality"] == "model" and e["trigger"] == "merge"]
    assert upgrades and summarizer.calls  # model summaries arrived and replaced local ones
    mechanical = {e["id"] for e in entries if e["quality"] == "mechanical"}
    assert all(set(e["merged_from"]) <= mechanical for e in upgrades)
