"""One model summarizer: compaction and Context-mode ask a model the same way and reject the same answers."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableLambda

from langctx import LayeredChatMemory
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.summary import summary_request
from langctx.errors import SummarizerError
from langctx.summarize import ModelSummarizer, SummaryRequest, call_summarizer, summary_text
from langctx.summarize.prompts import TOOL_OUTPUT_PROMPTS
from langctx.testing import ScriptedChatModel

LOG = "\n".join(f"[{i:05d}] compiling unit {i}" for i in range(6000)) + "\nexit code 2"
NOT_TEXT = [{"summary": "Goal: x"}, ["Goal: x"], None, 42, AIMessage(content=[])]


@pytest.mark.parametrize("answer", NOT_TEXT, ids=["dict", "list", "none", "int", "no-text"])
def test_answers_that_are_not_text_are_rejected(answer: Any) -> None:
    with pytest.raises(SummarizerError):
        summary_text(answer)
    model = ModelSummarizer(RunnableLambda(lambda _: answer))
    with pytest.raises(SummarizerError):
        model.summarize(SummaryRequest(kind="merge", summaries=["a", "b"]))


@pytest.mark.parametrize("answer", NOT_TEXT[:2], ids=["dict", "list"])
def test_compaction_and_context_mode_fall_back_the_same_way(answer: Any) -> None:
    model = RunnableLambda(lambda _: answer)
    mem = LayeredChatMemory(
        max_tokens=3000, summarizer=model, summary_threshold_tokens=0, background_summaries=False
    )
    mem.add_messages([HumanMessage("Fix the parser in parser.py.")])
    for i in range(40):
        mem.add_messages([HumanMessage(f"step {i}: " + "details " * 60), AIMessage("done " * 40)])
    assert mem.compactions
    assert {e["quality"] for e in mem.compactions if e["trigger"] != "merge"} <= {"fallback"}
    out = ContextModeProcessor(summarizer=model).process(LOG, tool_name="bash")
    assert out.action == "referenced" and "Goal: x" not in out.text  # the reduction


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
