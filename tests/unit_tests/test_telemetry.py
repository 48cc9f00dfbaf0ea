"""OpenTelemetry spans of compactions and the LangSmith metadata of the summarizer's runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata

from langctx import LayeredChatMemory, ModelSummarizer, SummaryRequest
from langctx.cli.demo.session import iter_turns
from langctx.engine import background
from langctx.engine.plan import CompactionEvent
from langctx.telemetry import (
    COMPACTION_OPERATION,
    SPAN_NAME,
    current_thread_id,
    set_tracer_provider,
)
from langctx.testing import ScriptedChatModel

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode  # noqa: E402

MODEL = "summarizer-mini"
SUMMARY = "Goal:\n- fix the parser\nCurrent status:\n- summarized"


class NamedModel(ScriptedChatModel):
    """A scripted summarizer model with a name (what LangSmith and the span report)."""

    model_name: str = MODEL


class Recorder(BaseCallbackHandler):
    """Records the metadata and tags of every chat model run."""

    def __init__(self) -> None:
        self.runs: list[dict[str, Any]] = []

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        self.runs.append({"tags": tags or [], "metadata": metadata or {}, "parent": parent_run_id})


class Traced:
    """A tracer provider with an in-memory exporter, set for langctx only (never globally)."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.provider = sdk_trace.TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.exporter))

    def spans(self, name: str = SPAN_NAME) -> list[Any]:
        return [s for s in self.exporter.get_finished_spans() if s.name == name]

    @staticmethod
    def answer(messages: list[BaseMessage]) -> AIMessage:
        """The summarizer model's answer, with the usage a provider reports."""
        return AIMessage(SUMMARY, usage_metadata=usage(messages))


def usage(messages: list[BaseMessage]) -> UsageMetadata:
    """Token usage of an answer to ``messages`` (a function of the input, so a test can check it)."""
    n_in = sum(len(m.text) for m in messages)
    return {"input_tokens": n_in, "output_tokens": 7, "total_tokens": n_in + 7}


@pytest.fixture
def traced() -> Iterator[Traced]:
    t = Traced()
    set_tracer_provider(t.provider)
    background.clear()
    yield t
    set_tracer_provider(None)
    background.clear()
    t.provider.shutdown()


def _memory(
    traced: Traced, events: list[CompactionEvent], **options: Any
) -> tuple[LayeredChatMemory, NamedModel]:
    model = NamedModel(responses=[traced.answer], cycle=True)
    options.setdefault("background_summaries", False)
    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=ModelSummarizer(model),
        summary_threshold_tokens=0,
        on_compaction=events.append,
        **options,
    )
    return mem, model


def _changed(events: list[CompactionEvent]) -> list[CompactionEvent]:
    return [e for e in events if e.phase == "end" and (e.entry is not None or e.edits)]


def test_one_span_per_compaction_with_its_figures_and_the_summarizer_call_as_its_child(
    traced: Traced,
) -> None:
    events: list[CompactionEvent] = []
    mem, model = _memory(traced, events, thread_id="thread-7")
    for turn in iter_turns(40, seed=3):
        mem.add_messages(turn)
    ends = _changed(events)
    spans = traced.spans()
    assert len(ends) >= 2 and len(spans) == len(ends)
    for span, end in zip(spans, ends, strict=True):
        a = dict(span.attributes)
        assert a["gen_ai.conversation.id"] == "thread-7"
        assert a["gen_ai.request.model"] == MODEL
        assert a["langctx.trigger"] == end.trigger
        assert a["langctx.tokens_before"] == end.tokens_before
        assert a["langctx.tokens_after"] == end.tokens_after
        assert a["langctx.messages_after"] < a["langctx.messages_before"]
        assert a["langctx.on_critical_path"] is True
        assert a["langctx.mode"] == end.mode == "blocking"
        assert end.entry is not None
        assert a["langctx.quality"] == end.entry["quality"] == "model"
        assert a["langctx.entry_id"] == end.entry["id"]
        assert a["langctx.level"] >= 1
        assert span.instrumentation_scope.name == "langctx"
        assert a["gen_ai.operation.name"] == COMPACTION_OPERATION
    calls = traced.spans(f"chat {MODEL}")
    assert len(calls) == len(model.calls) >= len(spans)
    ids = {s.context.span_id for s in spans}
    assert all(c.parent is not None and c.parent.span_id in ids for c in calls)
    assert all(s.parent is None for s in spans)  # nothing was current around the memory
    for call, sent in zip(calls, model.calls, strict=True):  # GenAI semantic conventions
        a = dict(call.attributes)
        assert call.kind is SpanKind.CLIENT and a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.request.model"] == MODEL
        assert a["gen_ai.provider.name"] == model._get_ls_params()["ls_provider"]
        assert a["gen_ai.usage.input_tokens"] == usage(sent)["input_tokens"]
        assert a["gen_ai.usage.output_tokens"] == 7


async def test_async_compactions_have_their_spans_too(traced: Traced) -> None:
    events: list[CompactionEvent] = []
    mem, _ = _memory(traced, events, thread_id="thread-a")
    for turn in iter_turns(40, seed=4):
        await mem.aadd_messages(turn)
    spans = traced.spans()
    assert len(spans) == len(_changed(events)) >= 2
    assert {s.attributes["gen_ai.conversation.id"] for s in spans} == {"thread-a"}
    ids = {s.context.span_id for s in spans}
    calls = traced.spans(f"chat {MODEL}")
    assert calls and all(c.parent is not None and c.parent.span_id in ids for c in calls)


def test_a_background_summary_is_off_the_critical_path_and_still_the_spans_child(
    traced: Traced,
) -> None:
    events: list[CompactionEvent] = []
    mem, model = _memory(traced, events, background_summaries=True)
    for turn in iter_turns(40, seed=5):
        mem.add_messages(turn)
    spans = traced.spans()
    assert len(spans) == len(_changed(events))
    off = [s for s in spans if s.attributes["langctx.on_critical_path"] is False]
    assert off and all(s.attributes["langctx.mode"] == "background" for s in off)
    assert all(s.attributes["langctx.quality"] == "mechanical" for s in off)
    assert "gen_ai.conversation.id" not in spans[0].attributes  # no thread: none said
    for _ in range(100):  # the last background summary may still be running
        if len(traced.spans(f"chat {MODEL}")) >= len(model.calls):
            break
        time.sleep(0.02)
    ids = {s.context.span_id for s in off}
    calls = traced.spans(f"chat {MODEL}")
    assert any(c.parent is not None and c.parent.span_id in ids for c in calls)


def test_a_compaction_that_changes_nothing_has_no_span(traced: Traced) -> None:
    events: list[CompactionEvent] = []
    mem, _ = _memory(traced, events)
    mem.add_messages([("user", "Fix the parser.")])
    assert mem.compact() is None
    assert traced.spans() == []


def test_the_summarizer_run_carries_langsmiths_compaction_metadata() -> None:
    recorder = Recorder()
    model = NamedModel(responses=[SUMMARY], cycle=True, callbacks=[recorder])
    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=ModelSummarizer(model),
        summary_threshold_tokens=0,
        background_summaries=False,
        thread_id="thread-9",
    )
    for turn in iter_turns(30, seed=6):
        mem.add_messages(turn)
    assert recorder.runs
    for run in recorder.runs:
        assert run["metadata"]["ls_agent_type"] == "compaction"
        assert run["metadata"]["lc_source"] == "summarization"
        assert run["metadata"]["thread_id"] == "thread-9"
        assert {"nostream", "langctx:summarizer"} <= set(run["tags"])


def test_a_tool_output_summary_is_no_compaction_and_outside_a_thread_says_none() -> None:
    recorder = Recorder()
    model = NamedModel(responses=[SUMMARY], callbacks=[recorder])
    ModelSummarizer(model).summarize(SummaryRequest(kind="tool_output", output="x"))
    (run,) = recorder.runs
    assert "ls_agent_type" not in run["metadata"] and "thread_id" not in run["metadata"]
    assert "nostream" in run["tags"]
    assert current_thread_id() is None


def test_the_run_configs_thread_is_the_compactions_thread_when_the_memory_has_none() -> None:
    from langchain_core.runnables import RunnableLambda

    seen: list[str | None] = []

    def summarize(request: SummaryRequest) -> str:
        seen.append(current_thread_id())
        return SUMMARY

    def step(turns: list[list[BaseMessage]]) -> int:
        mem = LayeredChatMemory(
            max_tokens=3000,
            summarizer=summarize,
            summary_threshold_tokens=0,
            background_summaries=False,
        )
        for turn in turns:
            mem.add_messages(turn)
        return len(mem.compactions)

    config: Any = {"configurable": {"thread_id": "from-config"}}
    assert RunnableLambda(step).invoke(list(iter_turns(30, seed=7)), config) > 0
    assert seen and set(seen) == {"from-config"}


def test_without_opentelemetry_langctx_imports_and_compacts() -> None:
    code = textwrap.dedent(
        """
        import sys
        sys.modules["opentelemetry"] = None  # as if the extra were not installed
        from langctx import LayeredChatMemory
        from langctx.cli.demo.session import iter_turns
        mem = LayeredChatMemory(max_tokens=3000, summarizer=lambda r: "Goal: x",
                                summary_threshold_tokens=0, background_summaries=False)
        for turn in iter_turns(30, seed=1):
            mem.add_messages(turn)
        print(len(mem.compactions) > 0)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


class _BrokenTracer:
    """A tracer whose spans raise on everything (a faulty exporter or SDK)."""

    def __init__(self, where: str) -> None:
        self.where = where

    def start_span(self, *args: Any, **kwargs: Any) -> Any:
        if self.where == "start":
            raise RuntimeError("no span")
        return _BrokenSpan()


class _BrokenSpan:
    def is_recording(self) -> bool:
        return True

    def set_attributes(self, attributes: Any) -> None:
        raise RuntimeError("no attributes")

    def end(self) -> None:
        raise RuntimeError("no end")


class BrokenProvider:
    """A tracer provider whose spans fail at ``where`` ("start" or every later call)."""

    def __init__(self, where: str) -> None:
        self.where = where

    def get_tracer(self, *args: Any, **kwargs: Any) -> _BrokenTracer:
        return _BrokenTracer(self.where)


@pytest.mark.parametrize("where", ["start", "later"])
def test_a_failing_span_never_fails_the_compaction(
    where: str, caplog: pytest.LogCaptureFixture
) -> None:
    set_tracer_provider(BrokenProvider(where))
    try:
        memory = LayeredChatMemory(
            max_tokens=3000,
            summarizer=ModelSummarizer(NamedModel(responses=[SUMMARY], cycle=True)),
            summary_threshold_tokens=0,
            background_summaries=False,
            thread_id="t-1",
        )
        with caplog.at_level("WARNING", logger="langctx.telemetry"):
            for turn in iter_turns(40, seed=1):
                memory.add_messages(turn)
    finally:
        set_tracer_provider(None)
    assert next(e["quality"] for e in memory.compactions if e["level"] == 1) == "model"
    assert any("langctx telemetry" in r.getMessage() for r in caplog.records)
    assert current_thread_id() is None


def test_a_span_that_fails_to_build_leaves_no_thread_behind(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from langctx import telemetry

    def broken(*args: Any) -> None:
        raise RuntimeError("no span")

    memory = LayeredChatMemory(max_tokens=3000)
    memory.thread_id = "t-1"
    for turn in iter_turns(40, seed=1):
        memory.add_messages(turn)
    monkeypatch.setattr(telemetry, "CompactionSpan", broken)
    with caplog.at_level("WARNING", logger="langctx.telemetry"):
        memory.compact()
    assert any("no span" in r.getMessage() for r in caplog.records)
    assert current_thread_id() is None


def test_a_failed_summarizer_call_is_an_error_span_and_still_raises(traced: Traced) -> None:
    model = NamedModel(responses=[TimeoutError("provider timed out")])
    with pytest.raises(TimeoutError):
        ModelSummarizer(model).summarize(SummaryRequest(kind="merge", summaries=["a", "b"]))
    (call,) = traced.spans(f"chat {MODEL}")
    assert call.status.status_code is StatusCode.ERROR
    assert call.attributes["error.type"] == "TimeoutError"
    assert "gen_ai.usage.input_tokens" not in call.attributes
