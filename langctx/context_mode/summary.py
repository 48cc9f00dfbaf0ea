"""Summary of one tool output by a model, with a prompt per tool kind; facts the summary leaves out
are appended to it."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langctx.context_mode.detect import is_command_call, is_read_call, output_path
from langctx.context_mode.outputs import ContentKind, OutputMeta, Reduction
from langctx.context_mode.reducers._layout import body_budget, facts_lines, finish
from langctx.facts import extract_output_facts, missing_output_facts
from langctx.summarize.model import clip_middle
from langctx.summarize.prompts import ToolKind
from langctx.summarize.request import SummaryRequest

DEFAULT_SUMMARY_KINDS: frozenset[ContentKind] = frozenset(
    {"html", "log", "source", "stack_trace", "text"}
)
"""Content kinds summarized when a model is configured (a model could misquote a table's numbers)."""

DEFAULT_MAX_INPUT_CHARS = 24_000
"""A summarized output is shown to the model cut to this many characters (plus its reduction)."""

_BROWSE_WORDS = ("browse", "navigate", "page", "snapshot", "web", "url", "click", "screenshot")
_QUERY_WORDS = ("sql", "query", "db", "database", "select", "table")
_MAX_ARGS_CHARS = 600


def tool_kind(
    tool_name: str | None, args: Mapping[str, Any] | None, kind: ContentKind | None = None
) -> ToolKind:
    """Which summary prompt fits an output."""
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


def summary_request(
    text: str,
    *,
    tool_name: str | None = None,
    args: Mapping[str, Any] | None = None,
    kind: ContentKind | None = None,
    max_tokens: int = 1000,
    reduced: str | None = None,
) -> SummaryRequest:
    """The ``kind="tool_output"`` request: the call, its facts, the output clipped."""
    facts = extract_output_facts(text)
    arg_text = json.dumps(dict(args or {}), ensure_ascii=False, default=str)
    parts = [
        f"Tool: {tool_name or 'unknown'}",
        f"Arguments: {clip_middle(arg_text, _MAX_ARGS_CHARS)}",
    ]
    if path := output_path(tool_name, args):
        parts.append(f"Path: {path}")
    if facts:
        found = [*facts.exit_codes, *facts.errors, *(f"at {x}" for x in facts.locations[:40])]
        parts.append("Mechanical facts (keep them all): " + "; ".join(found))
    budget = DEFAULT_MAX_INPUT_CHARS
    if len(text) > budget and reduced:
        parts.append(
            f"Deterministic reduction (keeps the error lines):\n{clip_middle(reduced, budget // 2)}"
        )
        budget -= min(len(reduced), budget // 2)
    parts.append(f"Output ({len(text):,} chars):\n{clip_middle(text, max(1000, budget))}")
    return SummaryRequest(
        kind="tool_output",
        output="\n\n".join(parts),
        tool_kind=tool_kind(tool_name, args, kind),
        max_tokens=max_tokens,
    )


def summary_reduction(
    summary: str, text: str, *, kind: ContentKind, meta: OutputMeta, budget_tokens: int
) -> Reduction:
    """Wrap a model summary like a reduction (header, summary, facts it left out), in ``budget_tokens``."""
    body = summary
    if lost := missing_output_facts(extract_output_facts(text), summary):
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
