"""Semantic summary of one tool output by a (cheap) model, with a prompt per tool kind.

The deterministic reducers are the offline default; when a summarizer is configured, Context-mode
asks it to compress large outputs of the kinds it is good at (logs, source files, pages, free
text). The prompt depends on what the tool did (:func:`tool_kind`): ``read_file``,
``run_command``, ``query_db``, ``browse_page`` or ``default``; each asks to keep the actionable
facts verbatim (exit code, error type, file:line, versions). The facts found mechanically are given
to the model as authoritative, and any the summary leaves out are appended to it
(:func:`summary_reduction`), so a summary never loses them.

Model calls carry the ``nostream`` and ``langctx:context_mode`` tags, so they never show up as the
agent talking. Failures, timeouts and empty answers fall back to the deterministic reduction (the
processor decides that; see :class:`~langctx.context_mode.pipeline.ContextModeProcessor`).

Example:
    >>> from langctx.testing import ScriptedChatModel
    >>> s = OutputSummarizer(ScriptedChatModel(responses=["pytest failed: 1 test, exit code 1"]))
    >>> s.summarize("...\\nFAILED t.py::test_a - KeyError\\nexit code 1", tool_name="bash",
    ...             args={"command": "pytest"}, kind="log", max_tokens=200)
    'pytest failed: 1 test, exit code 1'
    >>> tool_kind("bash", {"command": "pytest"}, "log")
    'run_command'
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal, get_args

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig

from langctx.context_mode.detect import is_command_call, is_read_call, output_path
from langctx.context_mode.outputs import ContentKind, OutputMeta, Reduction
from langctx.context_mode.reducers._layout import body_budget, facts_lines, finish
from langctx.facts import extract_output_facts, missing_output_facts

__all__ = [
    "DEFAULT_SUMMARY_KINDS",
    "SUMMARY_PROMPTS",
    "SUMMARY_TAGS",
    "TOOL_KINDS",
    "OutputSummarizer",
    "ToolKind",
    "summary_reduction",
    "tool_kind",
]

ToolKind = Literal["read_file", "run_command", "query_db", "browse_page", "default"]
"""What the tool did, which decides the summary prompt."""

TOOL_KINDS: tuple[ToolKind, ...] = get_args(ToolKind)
"""Every :data:`ToolKind`."""

SUMMARY_TAGS = ["langctx:context_mode", "nostream"]
"""Tags of every summarizer call (``nostream`` keeps it out of ``stream_mode="messages"``)."""

DEFAULT_SUMMARY_KINDS: frozenset[ContentKind] = frozenset(
    {"html", "log", "source", "stack_trace", "text"}
)
"""Content kinds summarized when a model is configured; tables, JSON and binary keep the exact
structural reduction (a model adds nothing there but a chance to misquote numbers)."""

_BASE_PROMPT = """\
You compress the output of one tool call for a coding agent. The agent reads your summary \
instead of the output, so it must be able to decide its next step from it.
Keep every actionable fact verbatim: exit codes, error and exception type names with their \
messages, file paths with line numbers (file:line), names of failing tests, versions of \
languages, packages and tools, counts, ids and URLs it may need. Drop repetition, progress \
output and boilerplate. Never invent anything; if something that may matter is left out, say \
what. The mechanical facts listed with the output are authoritative: keep all of them.
{focus}
At most {max_tokens} tokens. Plain text, no preamble."""

SUMMARY_PROMPTS: Mapping[ToolKind, str] = MappingProxyType(
    {
        "read_file": _BASE_PROMPT.replace(
            "{focus}",
            "The output is the content of a file. Give its purpose and language, its imports "
            "and dependencies, the classes and functions with their signatures (and line numbers "
            "when shown), notable constants and configuration values, TODO/FIXME notes. Not the "
            "bodies.",
        ),
        "run_command": _BASE_PROMPT.replace(
            "{focus}",
            "The output comes from running a command. Give the exit code and whether it "
            "succeeded, each error and warning with its type, message and file:line, the failing "
            "tests, the lines that state the final result, and any versions printed.",
        ),
        "query_db": _BASE_PROMPT.replace(
            "{focus}",
            "The output is a query result. Give the columns, the row count, the ranges or "
            "distinct values of the key columns, NULLs and anomalies, and the rows that matter.",
        ),
        "browse_page": _BASE_PROMPT.replace(
            "{focus}",
            "The output is a web page or a page snapshot. Give its title and purpose, the facts "
            "in its main text, and the interactive elements the agent can use (links, buttons, "
            "inputs, with their labels and refs or ids).",
        ),
        "default": _BASE_PROMPT.replace(
            "{focus}", "Give the facts the agent needs to decide its next step."
        ),
    }
)
"""The system prompt per :data:`ToolKind` (``{max_tokens}`` is filled in)."""

_BROWSE_WORDS = ("browse", "navigate", "page", "snapshot", "web", "url", "click", "screenshot")
_QUERY_WORDS = ("sql", "query", "db", "database", "select", "table")
_MAX_ARGS_CHARS = 600


def tool_kind(
    tool_name: str | None, args: Mapping[str, Any] | None, kind: ContentKind | None = None
) -> ToolKind:
    """Which summary prompt fits an output, from the tool call and the content kind.

    Example:
        >>> tool_kind("read_file", {"path": "a.py"}), tool_kind("run_sql", {"q": "select 1"}, "table")
        ('read_file', 'query_db')
        >>> tool_kind("browser_navigate", {"url": "https://x"}, "html"), tool_kind(None, None)
        ('browse_page', 'default')
    """
    name = (tool_name or "").lower()
    if kind == "html" or any(w in name for w in _BROWSE_WORDS):
        return "browse_page"
    if any(w in name for w in _QUERY_WORDS) or (
        kind == "table" and not is_command_call(tool_name, args)
    ):
        return "query_db"
    if is_read_call(tool_name, args) or kind == "source":
        return "read_file"
    if is_command_call(tool_name, args) or kind in ("log", "stack_trace"):
        return "run_command"
    return "default"


def _clip_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - limit:,} chars not shown …]\n{text[-tail:]}"


class OutputSummarizer:
    """Summarize tool outputs with a chat model (use a cheap one, not the agent's).

    Args:
        model: a chat model or any Runnable taking messages.
        prompts: system prompt per :data:`ToolKind` (default :data:`SUMMARY_PROMPTS`).
        max_input_chars: the output is cut to this many characters (head and tail, plus the
            deterministic reduction, which keeps the error lines of the middle).
    """

    def __init__(
        self,
        model: Runnable[Any, Any],
        *,
        prompts: Mapping[ToolKind, str] | None = None,
        max_input_chars: int = 24_000,
    ) -> None:
        self.model = model
        self.prompts = dict(SUMMARY_PROMPTS if prompts is None else prompts)
        self.max_input_chars = max_input_chars

    def build_messages(
        self,
        text: str,
        *,
        tool_name: str | None = None,
        args: Mapping[str, Any] | None = None,
        kind: ContentKind | None = None,
        max_tokens: int = 1000,
        reduced: str | None = None,
    ) -> list[BaseMessage]:
        """The messages sent to the model for one output.

        Example:
            >>> s = OutputSummarizer(model=None)  # type: ignore[arg-type]
            >>> msgs = s.build_messages("x" * 10, tool_name="read_file", args={"path": "a.py"})
            >>> "content of a file" in msgs[0].content, "Tool: read_file" in msgs[1].content
            (True, True)
        """
        tk = tool_kind(tool_name, args, kind)
        system = self.prompts.get(tk, self.prompts.get("default", SUMMARY_PROMPTS["default"]))
        system = system.replace("{max_tokens}", str(max_tokens))
        facts = extract_output_facts(text)
        arg_text = json.dumps(dict(args or {}), ensure_ascii=False, default=str)
        parts = [
            f"Tool: {tool_name or 'unknown'}",
            f"Arguments: {_clip_middle(arg_text, _MAX_ARGS_CHARS)}",
        ]
        path = output_path(tool_name, args)
        if path:
            parts.append(f"Path: {path}")
        if facts:
            parts.append(
                "Mechanical facts (keep them all): "
                + "; ".join(
                    [*facts.exit_codes, *facts.errors, *(f"at {x}" for x in facts.locations[:40])]
                )
            )
        budget = self.max_input_chars
        if len(text) > budget and reduced:
            parts.append(
                f"Deterministic reduction (keeps the error lines):\n{_clip_middle(reduced, budget // 2)}"
            )
            budget -= min(len(reduced), budget // 2)
        parts.append(f"Output ({len(text):,} chars):\n{_clip_middle(text, max(1000, budget))}")
        return [SystemMessage(system), HumanMessage("\n\n".join(parts))]

    def _config(self) -> RunnableConfig:
        return RunnableConfig(
            tags=list(SUMMARY_TAGS),
            metadata={"langctx": "context_mode"},
            run_name="langctx_context_mode_summary",
        )

    def summarize(self, text: str, **kwargs: Any) -> str:
        """Call the model on one output (keywords as in :meth:`build_messages`); its text."""
        return _text(self.model.invoke(self.build_messages(text, **kwargs), config=self._config()))

    async def asummarize(self, text: str, **kwargs: Any) -> str:
        """Async version of `summarize`."""
        messages = self.build_messages(text, **kwargs)
        return _text(await self.model.ainvoke(messages, config=self._config()))


def _text(out: object) -> str:
    if isinstance(out, BaseMessage):
        return out.text.strip()
    return str(out).strip() if out is not None else ""


def summary_reduction(
    summary: str, text: str, *, kind: ContentKind, meta: OutputMeta, budget_tokens: int
) -> Reduction:
    """Wrap a model summary like a reduction: metadata header, the summary, the facts it left out.

    The summary is escaped (a model may echo a delimiter) and cut to fit ``budget_tokens``.

    Example:
        >>> from langctx.context_mode.processor import build_meta
        >>> out = "x\\n" * 3000 + 'File "a.py", line 3\\nKeyError: 1\\nexit code 1'
        >>> r = summary_reduction("A KeyError.", out, kind="log",
        ...                       meta=build_meta(out, tool_name="bash"), budget_tokens=300)
        >>> "A KeyError." in r.text, "a.py:3" in r.text, r.reduced_tokens <= 300
        (True, True, True)
    """
    facts = extract_output_facts(text)
    lost = missing_output_facts(facts, summary)
    body = summary
    if lost:
        room = max(20, body_budget(kind, meta, budget_tokens) // 3)
        lines, _ = facts_lines(
            lost,
            summary,
            budget_tokens=room,
            count_tokens=meta.count_tokens,
            label="Also in the output",
        )
        body = "\n".join([summary, *lines])
    return finish(
        kind=kind,
        meta=meta,
        budget_tokens=budget_tokens,
        body=body,
        removed="everything but a model's summary of the output",
    )
