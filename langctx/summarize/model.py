"""The model summarizer: the one place langctx asks a chat model (or any Runnable) for a summary;
calls carry the ``nostream`` tag, so LangGraph keeps them out of ``stream_mode="messages"``."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig

from langctx.facts.record import stored_facts
from langctx.machinery import strip_machinery
from langctx.summarize.calls import summary_text
from langctx.summarize.prompts import MERGE_PROMPT, SUMMARY_PROMPT, TOOL_OUTPUT_PROMPTS
from langctx.summarize.request import SummaryRequest
from langctx.telemetry import chat_span, current_thread_id

SUMMARIZER_TAGS = ["langctx:summarizer", "nostream"]
"""Tags of a compaction's summarizer calls (``kind="turns"`` and ``"merge"``)."""

TOOL_OUTPUT_TAGS = ["langctx:context_mode", "nostream"]
"""Tags of a Context-mode tool-output summary call (``kind="tool_output"``)."""

SUMMARIZER_METADATA = {"ls_agent_type": "compaction", "lc_source": "summarization"}
"""Run metadata of a compaction's summarizer calls, as LangSmith reads it (plus ``thread_id``)."""

_MAX_TOOL_CHARS = 4_000


def clip_middle(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters: its head and tail, and how much was cut."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - limit} characters cut …]\n{text[-tail:]}"


def format_transcript(messages: Sequence[BaseMessage], *, max_chars: int = 96_000) -> str:
    """Render messages as a plain transcript; long tool outputs keep their head and tail."""
    n_tools = sum(isinstance(m, ToolMessage) for m in messages) or 1
    other = sum(len(m.text) for m in messages if not isinstance(m, ToolMessage))
    per_tool = max(400, min(_MAX_TOOL_CHARS, (max_chars - min(other, max_chars // 2)) // n_tools))
    lines: list[str] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            status = " error" if m.status == "error" else ""
            lines.append(f"[tool {m.name or ''}{status}] {clip_middle(m.text, per_tool)}")
        elif isinstance(m, AIMessage):
            calls = "; ".join(
                f"{tc['name']}({clip_middle(json.dumps(tc['args'], ensure_ascii=False), 300)})"
                for tc in m.tool_calls
            )
            text = clip_middle(m.text, 2_000)
            lines.append(f"[assistant] {text}" + (f" -> calls: {calls}" if calls else ""))
        elif isinstance(m, HumanMessage):
            lines.append(f"[user] {clip_middle(m.text, 4_000)}")
        else:
            lines.append(f"[{m.type}] {clip_middle(m.text, 2_000)}")
    return clip_middle("\n".join(lines), max_chars)


def _facts_block(facts: dict[str, Any]) -> str:
    keep = {
        k: facts[k]
        for k in ("read_files", "modified_files", "constraints", "next_step")
        if facts.get(k)
    }
    if facts.get("commands"):
        keep["last_commands"] = facts["commands"][-5:]
    if facts.get("errors"):
        keep["last_errors"] = facts["errors"][-2:]
    return json.dumps(keep, ensure_ascii=False, indent=1)


def request_parts(request: SummaryRequest, *, user_messages: bool) -> list[str]:
    """The task, (the user's messages,) earlier notes and facts a ``"turns"`` request sends."""
    facts = stored_facts(request.facts)
    parts = []
    task = strip_machinery(request.task) if request.task else ""
    if task:  # the user's request, without the agent's preamble blocks
        parts.append(f"Original task (kept verbatim elsewhere):\n{clip_middle(task, 2000)}")
    users = facts.get("user_messages") if user_messages else None
    if users:  # built from the log: the model is told them, never trusted to keep them
        parts.append(
            "User messages in this part (quoted verbatim beside your summary; do not "
            "restate them, say what was done about each; one marked answered was answered: "
            "never name it as a next step or reopen it):\n"
            + "\n".join(_request_line(u) for u in users)
        )
    if request.summaries:
        parts.append("Earlier notes to fold in:\n" + "\n".join(request.summaries))
    parts.append("Mechanical facts:\n" + _facts_block(facts))
    return parts


def _request_line(item: dict[str, Any]) -> str:
    """A user message for the summarizer, with its answer when the log has one."""
    said = f"- {clip_middle(item['text'], 2000)}"
    return f'{said}\n  [answered: "{item["answer"]}"]' if item.get("answer") else said


class ModelSummarizer:
    """Summarize with a chat model (use a cheap one, separate from the agent's model).

    Args:
        model: a chat model or any Runnable taking messages.
        prompt: system prompt of ``kind="turns"`` requests; ``merge_prompt``: of ``"merge"``.
        tool_prompts: system prompt of ``kind="tool_output"`` requests, per tool kind.
        max_input_chars: the transcript of a ``"turns"`` request is cut to this many characters.
        transcript: renders the messages of a ``"turns"`` request.

    Example:
        >>> from langctx.testing import ScriptedChatModel
        >>> s = ModelSummarizer(ScriptedChatModel(responses=["Goal:\\n- fix it"]))
        >>> s.summarize(SummaryRequest(kind="merge", summaries=["a", "b"]))
        'Goal:\\n- fix it'
    """

    name = "model"

    def __init__(
        self,
        model: Runnable[Any, Any],
        *,
        prompt: str = SUMMARY_PROMPT,
        merge_prompt: str = MERGE_PROMPT,
        tool_prompts: Mapping[str, str] | None = None,
        max_input_chars: int = 96_000,
        transcript: Callable[..., str] = format_transcript,
    ) -> None:
        self.model = model
        self.prompt = prompt
        self.merge_prompt = merge_prompt
        self.tool_prompts: dict[str, str] = dict(
            TOOL_OUTPUT_PROMPTS if tool_prompts is None else tool_prompts
        )
        self.max_input_chars = max_input_chars
        self.transcript = transcript

    def build_messages(self, request: SummaryRequest) -> list[BaseMessage]:
        if request.kind == "tool_output":
            system = self.tool_prompts.get(request.tool_kind) or self.tool_prompts.get(
                "default", TOOL_OUTPUT_PROMPTS["default"]
            )
            system = system.replace("{max_tokens}", str(request.max_tokens))
            body = request.output
        elif request.kind == "merge":
            system = self.merge_prompt.format(max_tokens=request.max_tokens)
            body = "\n\n".join(
                f"<summary {i + 1}>\n{s}\n</summary {i + 1}>"
                for i, s in enumerate(request.summaries)
            )
        else:
            system = self.prompt.format(max_tokens=request.max_tokens)
            transcript = self.transcript(request.messages, max_chars=self.max_input_chars)
            parts = [*request_parts(request, user_messages=True), f"Transcript:\n{transcript}"]
            body = "\n\n".join(parts)
        if request.instructions:
            body += f"\n\nFocus on: {request.instructions}"
        return [SystemMessage(system), HumanMessage(body)]

    def _config(self, request: SummaryRequest) -> RunnableConfig:
        metadata: dict[str, Any]
        if request.kind == "tool_output":
            tags, run_name = TOOL_OUTPUT_TAGS, "langctx_context_mode_summary"
            metadata = {"langctx": "context_mode"}
        else:
            tags, run_name = SUMMARIZER_TAGS, "langctx_summarizer"
            metadata = {"langctx": "summarizer", **SUMMARIZER_METADATA}
        if (thread := current_thread_id()) is not None:
            metadata["thread_id"] = thread
        return RunnableConfig(tags=list(tags), metadata=metadata, run_name=run_name)

    def _model(self, request: SummaryRequest) -> Runnable[Any, Any]:
        return self.model

    def summarize(self, request: SummaryRequest) -> str:
        """Call the model (in a ``chat {model}`` span, see :func:`~langctx.telemetry.chat_span`);
        its answer is read by :func:`~langctx.summarize.summary_text`."""
        model, messages = self._model(request), self.build_messages(request)
        with chat_span(model) as span:
            answer = model.invoke(messages, config=self._config(request))
            if span is not None:
                span.record(answer)
        return summary_text(answer)

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async version of `summarize`."""
        model, messages = self._model(request), self.build_messages(request)
        with chat_span(model) as span:
            answer = await model.ainvoke(messages, config=self._config(request))
            if span is not None:
                span.record(answer)
        return summary_text(answer)
