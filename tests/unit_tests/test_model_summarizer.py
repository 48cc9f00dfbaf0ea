"""One model summarizer: compaction and Context-mode ask a model the same way and reject the same answers."""

from __future__ import annotations

import re
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

import langctx.summarize.calls as calls_module
from langctx import LayeredChatMemory
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.summary import summary_request
from langctx.errors import ConfigError, SummarizerError
from langctx.middleware import LangctxMiddleware
from langctx.summarize import (
    ModelSummarizer,
    Summarizer,
    SummaryRequest,
    call_summarizer,
    resolve_summarizer,
    summary_text,
)
from langctx.summarize.prompts import TOOL_OUTPUT_PROMPTS
from langctx.summarize.sections import parse_sections
from langctx.testing import ScriptedChatModel

LOG = "\n".join(f"[{i:05d}] compiling unit {i}" for i in range(6000)) + "\nexit code 2"
NOT_TEXT = [{"summary": "Goal: x"}, ["Goal: x"], None, 42, AIMessage(content=[])]


@pytest.mark.parametrize("answer", NOT_TEXT, ids=["dict", "list", "none", "int", "no-text"])
def test_answers_that_are_not_text_are_rejected(answer: Any) -> None:
    # not text at all: the summarizer can never work; a message without text: this call failed
    expected = SummarizerError if isinstance(answer, AIMessage) else ConfigError
    with pytest.raises(expected):
        summary_text(answer)
    model = ModelSummarizer(RunnableLambda(lambda _: answer))
    with pytest.raises(expected):
        model.summarize(SummaryRequest(kind="merge", summaries=["a", "b"]))


def _fold_a_session(mem: LayeredChatMemory, turns: int = 40) -> None:
    mem.add_messages([HumanMessage("Fix the parser in parser.py.", id="task")])
    for i in range(turns):
        mem.add_messages(
            [
                HumanMessage(f"step {i}: " + "details " * 60, id=f"h{i}"),
                AIMessage("done " * 40, id=f"a{i}"),
            ]
        )


async def _afold_a_session(mem: LayeredChatMemory, turns: int = 40) -> None:
    await mem.aadd_messages([HumanMessage("Fix the parser in parser.py.", id="task")])
    for i in range(turns):
        await mem.aadd_messages(
            [
                HumanMessage(f"step {i}: " + "details " * 60, id=f"h{i}"),
                AIMessage("done " * 40, id=f"a{i}"),
            ]
        )


@pytest.mark.parametrize("answer", NOT_TEXT[:4], ids=["dict", "list", "none", "int"])
def test_a_runnable_answering_with_no_text_type_raises_at_the_first_fold(answer: Any) -> None:
    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=RunnableLambda(lambda _: answer),
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    with pytest.raises(ConfigError, match="not text; make it return a str") as caught:
        _fold_a_session(mem)
    assert "\n" not in str(caught.value)  # one line
    assert mem.compactions == []  # raised at the first fold, nothing folded with a fallback
    # Context-mode keeps its own rule: it falls back on its reduction
    out = ContextModeProcessor(summarizer=RunnableLambda(lambda _: answer)).process(
        LOG, tool_name="bash"
    )
    assert out.action == "referenced" and "Goal: x" not in out.text


# ---------------------------------------------------------------------------------- summarizers that can never work


class _Summarizer:
    def summarize(self, request: SummaryRequest) -> str:
        return "Goal: x"

    async def asummarize(self, request: SummaryRequest) -> str:
        return "Goal: x"


def _two_args(a: object, b: object) -> str:
    return "Goal: x"


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        (
            ScriptedChatModel,
            "summarizer=ScriptedChatModel is a class, not a summarizer; pass an instance",
        ),
        (FakeListChatModel, "summarizer=FakeListChatModel is a class"),
        (_Summarizer, "summarizer=_Summarizer is a class"),
        (42, "got int"),
        (object(), "got object"),
        ("gpt-4o-mini", "summarizer='gpt-4o-mini' is not a summarizer; pass a chat model"),
        (_two_args, "cannot take a SummaryRequest"),
        (lambda: "x", "cannot take a SummaryRequest"),
    ],
    ids=[
        "chat-model-class",
        "base-chat-model-class",
        "summarizer-class",
        "int",
        "object",
        "str",
        "two-args",
        "no-args",
    ],
)
def test_a_summarizer_that_can_never_work_is_refused_at_construction(spec: Any, says: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(says)) as caught:
        LayeredChatMemory(summarizer=spec)
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match=re.escape(says)):
        LangctxMiddleware(summarizer=spec)  # the graph integrations resolve it the same way
    with pytest.raises(ConfigError, match=re.escape(says)):
        resolve_summarizer(spec)


def test_good_summarizers_are_still_accepted() -> None:
    specs: tuple[object, ...] = (
        None,
        "local",
        _Summarizer(),
        lambda request: "Goal: x",
        lambda request, *, extra=1: "Goal: x",
        ScriptedChatModel(responses=["Goal: x"]),
        RunnableLambda(lambda _: "Goal: x"),
    )
    for spec in specs:
        assert isinstance(LayeredChatMemory(summarizer=spec).summarizer, Summarizer)


def test_a_callable_returning_a_non_string_raises_at_the_first_fold() -> None:
    calls: list[SummaryRequest] = []

    def summarizer(request: SummaryRequest) -> dict[str, str]:
        calls.append(request)
        return {"summary": "Goal: x"}

    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=summarizer,
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    with pytest.raises(ConfigError, match="returned a dict, not text"):
        _fold_a_session(mem)
    assert len(calls) == 1  # the first fold asked once and raised
    assert not [r for r in mem.eviction_log if r["action"] == "summarizer_fallback"]


async def test_an_async_callable_returning_a_non_string_raises_at_the_first_fold() -> None:
    async def summarizer(request: SummaryRequest) -> list[str]:
        return ["Goal: x"]

    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=summarizer,
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    with pytest.raises(ConfigError, match="returned a list, not text"):
        await _afold_a_session(mem)


def test_a_background_summary_that_is_not_text_raises_when_it_is_taken() -> None:
    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=lambda request: 42,
        summary_threshold_tokens=0,
        background_summaries=True,
    )
    with pytest.raises(ConfigError, match="returned a int, not text"):
        _fold_a_session(mem)
    assert {e["quality"] for e in mem.compactions} <= {"mechanical"}  # the folds before it


# ---------------------------------------------------------------------------------- failures at run time


@pytest.fixture
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget which kinds of failure this process has warned about."""
    monkeypatch.setattr(calls_module, "_warned", set())


@pytest.mark.usefixtures("fresh_warnings")
@pytest.mark.parametrize("background", [False, True])
def test_run_time_failures_fall_back_with_one_warning_per_kind(
    caplog: pytest.LogCaptureFixture, background: bool
) -> None:
    failures = iter([ConnectionError("provider down")] * 2)

    def summarizer(request: SummaryRequest) -> str:
        raise next(failures, TimeoutError())

    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=summarizer,
        summary_threshold_tokens=0,
        background_summaries=background,
    )
    with caplog.at_level("DEBUG", logger="langctx"):
        _fold_a_session(mem, turns=80)
    fallbacks = [r for r in mem.eviction_log if r["action"] == "summarizer_fallback"]
    assert len(fallbacks) >= 4  # every failed fold fell back, and says why in the eviction log
    assert {"timed out", "ConnectionError('provider down')"} <= {r["detail"] for r in fallbacks}
    warned = [
        r for r in caplog.records if r.levelname == "WARNING" and "summarizer failed" in r.message
    ]
    assert len(warned) == 2, [r.message for r in warned]  # one per kind, not per fold
    assert (
        "ConnectionError('provider down')" in warned[0].message and "timed out" in warned[1].message
    )
    quieter = [
        r for r in caplog.records if r.levelname == "DEBUG" and "summarizer failed" in r.message
    ]
    assert len(quieter) == len(fallbacks) - 2
    assert parse_sections(mem.compactions[0]["summary"])  # the local summary stands in


@pytest.mark.usefixtures("fresh_warnings")
async def test_async_run_time_failures_fall_back_with_one_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def summarizer(request: SummaryRequest) -> str:
        raise OSError("network unreachable")

    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=summarizer,
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    with caplog.at_level("WARNING", logger="langctx"):
        await _afold_a_session(mem)
    assert len([r for r in mem.eviction_log if r["action"] == "summarizer_fallback"]) >= 2
    assert len([r for r in caplog.records if "summarizer failed" in r.message]) == 1


def test_one_summarizer_serves_turns_merges_and_tool_outputs() -> None:
    model = ScriptedChatModel(responses=["The build failed at unit 5999."])
    summarizer = ModelSummarizer(model)
    out = ContextModeProcessor(summarizer=summarizer).process(LOG, tool_name="bash")
    assert out.action == "referenced" and "The build failed at unit 5999." in out.text
    system, human = model.calls[0]
    assert system.text.startswith(TOOL_OUTPUT_PROMPTS["run_command"].split("{max_tokens}")[0])
    assert human.text.startswith("Tool: bash")
    turns = summarizer.build_messages(SummaryRequest(kind="turns", max_tokens=99))[0].text
    assert turns.startswith("You compact the history") and "At most 99 tokens" in turns


def test_tool_output_requests_pick_the_prompt_of_their_tool_kind() -> None:
    seen: list[list[BaseMessage]] = []

    def answer(messages: list[BaseMessage]) -> str:
        seen.append(messages)
        return "ok"

    summarizer = ModelSummarizer(RunnableLambda(answer), tool_prompts={"default": "D {max_tokens}"})
    request = summary_request("x", tool_name="read_file", args={"path": "a.py"}, max_tokens=7)
    assert request.tool_kind == "read_file"
    assert call_summarizer(summarizer, request, timeout=5) == "ok"
    assert seen[0][0].text == "D 7"  # no read_file prompt given: the default one
