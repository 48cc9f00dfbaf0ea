"""Observability of a ``create_agent`` run: compaction spans, the summarizer's LangSmith run,
and the start/end events on ``astream_events``."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from opentelemetry.trace import SpanKind

from langctx.engine import background
from langctx.engine.plan import CompactionEvent
from langctx.events import COMPACTION_EVENT
from langctx.middleware import LangctxMiddleware
from langctx.summarize import ModelSummarizer
from langctx.telemetry import COMPACTION_OPERATION, set_tracer_provider
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    config,
    first_input,
    middleware_agent,
    session_script,
    session_tools,
)
from tests.unit_tests.test_telemetry import (
    MODEL,
    SUMMARY,
    BrokenProvider,
    NamedModel,
    Recorder,
    Traced,
    usage,
)

BUDGET = 5000
TURNS = 30


@pytest.fixture
def traced() -> Iterator[Traced]:
    t = Traced()
    set_tracer_provider(t.provider)
    background.clear()
    yield t
    set_tracer_provider(None)
    background.clear()
    t.provider.shutdown()


def _agent(summarizer: object, events: list[CompactionEvent], *, seed: int, **options: Any) -> Any:
    script = session_script(TURNS, seed=seed, final=False)
    middleware = LangctxMiddleware(
        max_tokens=BUDGET,
        summarizer=summarizer,
        summary_threshold_tokens=0,
        on_compaction=events.append,
        **options,
    )
    model = ScriptedChatModel(responses=script.responses)
    return middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())


def _changed(events: list[CompactionEvent]) -> list[CompactionEvent]:
    return [e for e in events if e.phase == "end" and (e.entry is not None or e.edits)]


def test_an_agents_compactions_are_spans_of_its_thread(traced: Traced) -> None:
    events: list[CompactionEvent] = []
    model = NamedModel(responses=[traced.answer], cycle=True)  # answers carry usage_metadata
    agent = _agent(ModelSummarizer(model), events, seed=21, background_summaries=False)
    cfg = config()
    agent.invoke(first_input(with_system=False), cfg)
    spans = traced.spans()
    ends = _changed(events)
    assert len(ends) >= 2 and len(spans) == len(ends)
    thread = cfg["configurable"]["thread_id"]
    for span, end in zip(spans, ends, strict=True):
        a = dict(span.attributes)
        assert a["gen_ai.conversation.id"] == thread
        assert a["gen_ai.request.model"] == MODEL
        assert a["langctx.trigger"] == end.trigger
        assert a["langctx.tokens_before"] == end.tokens_before
        assert a["langctx.tokens_after"] == end.tokens_after < end.tokens_before
        assert a["langctx.messages_after"] < a["langctx.messages_before"]
        assert a["langctx.on_critical_path"] is True and a["langctx.level"] >= 1
        assert a["langctx.quality"] in ("model", "merged")
        assert a["gen_ai.operation.name"] == COMPACTION_OPERATION
    ids = {s.context.span_id for s in spans}
    calls = traced.spans(f"chat {MODEL}")
    assert calls and all(c.parent is not None and c.parent.span_id in ids for c in calls)
    assert len(calls) == len(model.calls)  # one span per summarizer call, in call order
    for call, sent in zip(calls, model.calls, strict=True):
        a = dict(call.attributes)
        assert call.kind is SpanKind.CLIENT
        assert (a["gen_ai.operation.name"], a["gen_ai.request.model"]) == ("chat", MODEL)
        assert a["gen_ai.provider.name"] == model._get_ls_params()["ls_provider"]
        assert a["gen_ai.usage.input_tokens"] == usage(sent)["input_tokens"]
        assert a["gen_ai.usage.output_tokens"] == usage(sent)["output_tokens"]


@pytest.mark.parametrize("where", ["start", "later"])
def test_failing_telemetry_never_fails_the_agent(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    events: list[CompactionEvent] = []
    model = NamedModel(responses=[SUMMARY], cycle=True)
    agent = _agent(ModelSummarizer(model), events, seed=25, background_summaries=False)
    set_tracer_provider(BrokenProvider(where))
    try:
        with caplog.at_level("WARNING", logger="langctx.telemetry"):
            state = agent.invoke(first_input(with_system=False), config())
    finally:
        set_tracer_provider(None)
    assert model.calls and any(e.entry is not None for e in _changed(events))
    assert state["messages"][-1].type == "ai"
    assert any("langctx telemetry" in r.getMessage() for r in caplog.records)


def test_the_summarizers_run_is_a_child_of_the_agents_run_with_compaction_metadata() -> None:
    events: list[CompactionEvent] = []
    agent = _agent(
        NamedModel(responses=[SUMMARY], cycle=True), events, seed=22, background_summaries=False
    )
    recorder = Recorder()
    cfg = {**config(), "callbacks": [recorder]}
    agent.invoke(first_input(with_system=False), cfg)
    summaries = [r for r in recorder.runs if "langctx:summarizer" in r["tags"]]
    assert summaries and len(summaries) < len(recorder.runs)
    for run in summaries:
        assert run["parent"] is not None  # inside the agent's run (its model node)
        assert run["metadata"]["ls_agent_type"] == "compaction"
        assert run["metadata"]["lc_source"] == "summarization"
        assert run["metadata"]["thread_id"] == cfg["configurable"]["thread_id"]
        assert "nostream" in run["tags"]
    agent_runs = [r for r in recorder.runs if "langctx:summarizer" not in r["tags"]]
    assert all("ls_agent_type" not in r["metadata"] for r in agent_runs)


async def test_background_summaries_keep_the_run_and_the_thread() -> None:
    events: list[CompactionEvent] = []
    model = NamedModel(responses=[SUMMARY], cycle=True)
    agent = _agent(model, events, seed=23)
    recorder = Recorder()
    cfg = {**config(), "callbacks": [recorder]}
    await agent.ainvoke(first_input(with_system=False), cfg)
    assert any(e.mode == "background" for e in _changed(events))
    summaries: list[dict[str, Any]] = []
    for _ in range(100):  # the last background summary may still be running
        summaries = [r for r in recorder.runs if "langctx:summarizer" in r["tags"]]
        if len(summaries) >= len(model.calls):
            break
        time.sleep(0.02)
    assert summaries
    for run in summaries:
        assert run["parent"] is not None
        assert run["metadata"]["ls_agent_type"] == "compaction"
        assert run["metadata"]["thread_id"] == cfg["configurable"]["thread_id"]


async def test_astream_events_yields_the_start_and_the_end_of_each_compaction() -> None:
    events: list[CompactionEvent] = []
    agent = _agent(
        NamedModel(responses=[SUMMARY], cycle=True), events, seed=24, background_summaries=False
    )
    custom = [
        e
        async for e in agent.astream_events(first_input(with_system=False), config(), version="v2")
        if e["event"] == "on_custom_event" and e["name"] == COMPACTION_EVENT
    ]
    phases = [e["data"]["phase"] for e in custom]
    assert phases and phases == ["start", "end"] * (len(phases) // 2)
    assert len(custom) == len(events)
    for e, event in zip(custom, events, strict=True):
        assert (e["data"]["phase"], e["data"]["trigger"]) == (event.phase, event.trigger)
        assert e["data"]["tokens_before"] == event.tokens_before
        assert json.loads(json.dumps(e["data"])) == e["data"]  # plain JSON
