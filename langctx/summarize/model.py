"""The model summarizer: a fixed-structure prompt sent to any chat model or Runnable.

Its calls carry the ``nostream`` tag (LangGraph keeps them out of ``stream_mode="messages"``) and
``langctx:summarizer``, so a summarizer call never shows up as the agent talking to the user.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import Runnable, RunnableConfig

from langctx.machinery import strip_machinery
from langctx.summarize.request import SummaryRequest

__all__ = [
    "MERGE_PROMPT",
    "SUMMARIZER_TAGS",
    "SUMMARY_PROMPT",
    "ModelSummarizer",
    "format_transcript",
]

SUMMARIZER_TAGS = ["langctx:summarizer", "nostream"]

SUMMARY_PROMPT = """\
You compact the history of a coding agent's session so it can keep working without re-reading it.
Write a summary with exactly these sections, in this order, as short bullet lists:

Goal:
Current status:
Important constraints:
Files observed:
Files modified:
Open tool results:
Next step:

Rules:
- Keep facts the agent needs to continue: user constraints verbatim, tech stack and versions
  (e.g. "Java 17", "Python 3.11"), file paths with what they contain or what changed, exact error
  types with file:line, exit codes, and the next step.
- For file reads keep the file's purpose, key classes/functions and dependencies, not the code.
- For command output keep the command, exit code, error type and message, failing test names, file:line.
- For query results keep columns, row counts and anomalies; for web pages the topic, interactive
  elements and key text.
- The mechanical facts given below are authoritative; do not contradict or drop them.
- If something was not kept, say that the agent should re-read it rather than guess.
- At most {max_tokens} tokens. No preamble, no closing remarks."""

MERGE_PROMPT = """\
Merge these summaries of consecutive parts of a coding agent's session (oldest first) into one
summary with the same sections (Goal / Current status / Important constraints / Files observed /
Files modified / Open tool results / Next step). Keep every user constraint, tech stack version,
modified file and the newest status and next step; drop what later parts superseded.
At most {max_tokens} tokens. No preamble."""

_MAX_TOOL_CHARS = 4_000


def _clip_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - limit} characters cut …]\n{text[-tail:]}"


def format_transcript(messages: Sequence[BaseMessage], *, max_chars: int = 96_000) -> str:
    """Render messages as a plain transcript; long tool outputs keep their head and tail.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> format_transcript([HumanMessage("hi")])
        '[user] hi'
    """
    per_tool = _MAX_TOOL_CHARS
    n_tools = sum(isinstance(m, ToolMessage) for m in messages) or 1
    other = sum(len(m.text) for m in messages if not isinstance(m, ToolMessage))
    per_tool = max(400, min(per_tool, (max_chars - min(other, max_chars // 2)) // n_tools))
    lines: list[str] = []
    for m in messages:
        if isinstance(m, ToolMessage):
            status = " error" if m.status == "error" else ""
            lines.append(f"[tool {m.name or ''}{status}] {_clip_middle(m.text, per_tool)}")
        elif isinstance(m, AIMessage):
            calls = "; ".join(
                f"{tc['name']}({_clip_middle(json.dumps(tc['args'], ensure_ascii=False), 300)})"
                for tc in m.tool_calls
            )
            text = _clip_middle(m.text, 2_000)
            lines.append(f"[assistant] {text}" + (f" -> calls: {calls}" if calls else ""))
        elif isinstance(m, HumanMessage):
            lines.append(f"[user] {_clip_middle(m.text, 4_000)}")
        else:
            lines.append(f"[{m.type}] {_clip_middle(m.text, 2_000)}")
    return _clip_middle("\n".join(lines), max_chars)


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


class ModelSummarizer:
    """Summarize with a chat model (use a cheap one, separate from the agent's model).

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
        max_input_chars: int = 96_000,
        transcript: Callable[..., str] = format_transcript,
    ) -> None:
        self.model = model
        self.prompt = prompt
        self.merge_prompt = merge_prompt
        self.max_input_chars = max_input_chars
        self.transcript = transcript

    def build_messages(self, request: SummaryRequest) -> list[BaseMessage]:
        """The messages sent to the model for this request."""
        if request.kind == "merge":
            system = self.merge_prompt.format(max_tokens=request.max_tokens)
            body = "\n\n".join(
                f"<summary {i + 1}>\n{s}\n</summary {i + 1}>"
                for i, s in enumerate(request.summaries)
            )
        else:
            system = self.prompt.format(max_tokens=request.max_tokens)
            parts = []
            task = strip_machinery(request.task) if request.task else ""
            if task:  # the user's request, without the agent's preamble blocks
                parts.append(
                    f"Original task (kept verbatim elsewhere):\n{_clip_middle(task, 2000)}"
                )
            if request.summaries:
                parts.append("Earlier notes to fold in:\n" + "\n".join(request.summaries))
            parts.append("Mechanical facts:\n" + _facts_block(request.facts))
            parts.append(
                "Transcript:\n" + self.transcript(request.messages, max_chars=self.max_input_chars)
            )
            body = "\n\n".join(parts)
        if request.instructions:
            body += f"\n\nFocus on: {request.instructions}"
        return [SystemMessage(system), HumanMessage(body)]

    def _config(self) -> RunnableConfig:
        return RunnableConfig(
            tags=list(SUMMARIZER_TAGS),
            metadata={"langctx": "summarizer"},
            run_name="langctx_summarizer",
        )

    def summarize(self, request: SummaryRequest) -> str:
        """Call the model and return its text."""
        return _text(self.model.invoke(self.build_messages(request), config=self._config()))

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async version of `summarize`."""
        return _text(await self.model.ainvoke(self.build_messages(request), config=self._config()))


def _text(out: object) -> str:
    if isinstance(out, BaseMessage):
        return out.text.strip()
    if isinstance(out, str):
        return out.strip()
    return str(out).strip() if out is not None else ""
