"""What a tool call was asked and what it returned, each in one short line (pure functions).

Example:
    >>> call_arguments({"limit": 5, "query": "checkout p99 latency"})
    'query="checkout p99 latency", limit=5'
    >>> result_line("\\nSearch results:\\n1. Checkout latency spikes - https://ex.com/a\\n2. More")
    '1. Checkout latency spikes - https://ex.com/a / 2. More'
    >>> result_line('ERROR:  column "revenue" does not exist\\nLINE 1: SELECT revenue', failed=None)
    'error: ERROR: column "revenue" does not exist'
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from langctx.facts.calls import clip

MAX_ARGUMENTS_CHARS = 160
"""Characters of a call's rendered arguments a :class:`~langctx.facts.ToolCallFact` keeps."""
MAX_RESULT_CHARS = 200
"""Characters of a call's one-line result a :class:`~langctx.facts.ToolCallFact` keeps."""

KEY_ARGUMENTS: tuple[str, ...] = (
    "query", "q", "sql", "statement", "url", "urls", "pattern", "regex", "search", "prompt",
    "question", "expression", "metric", "metrics", "name", "id", "path", "file", "input",
)  # fmt: skip
"""Argument keys that say what a call was about, shown first (in this order)."""

_SCAN_LINES = 200  # a result's informative lines are sought in its first and last lines only
_JOINED_CHARS = 120  # short informative lines are joined up to this many characters
_LABEL = re.compile(r"^[\w\s()'-]{0,40}:$")  # "Results:", "Output (12 lines):"
_ERROR_LINE = re.compile(
    r"^(?:error\b|fatal\b|exception\b|traceback\b|failed\b|failure\b)"
    r"|^[A-Z]\w*(?:Error|Exception)\b"
    r"|^(?:ERROR|FATAL)\b",
    re.IGNORECASE,
)
_OWN_NOTE = "[langctx"  # langctx's own notes in a tool result (references, cuts)
_LOUD = re.compile(r"\b(?:ERROR|FATAL|CRITICAL|WARN|WARNING|SEVERE|PANIC)\b")  # a log's news
_LOG_LINE = re.compile(
    r"^\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|^\[?\d\d:\d\d:\d\d|\b(?:INFO|DEBUG|TRACE|NOTICE)\b"
)


def call_arguments(args: Mapping[str, Any], limit: int = MAX_ARGUMENTS_CHARS) -> str:
    """The arguments of a call as ``key=value``, the key argument first, clipped to ``limit``."""
    keys = sorted(args, key=lambda k: KEY_ARGUMENTS.index(k) if k in KEY_ARGUMENTS else 99)
    parts = [f"{k}={_value(args[k])}" for k in keys if args[k] not in (None, "", [], {})]
    return clip(", ".join(parts), limit)


def _value(value: object) -> str:
    if isinstance(value, str):
        return json.dumps(" ".join(value.split()), ensure_ascii=False)
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return clip(json.dumps(value, ensure_ascii=False, default=str, sort_keys=True), 80)


def informative_lines(text: str) -> list[str]:
    """The lines of ``text`` that say something: no blank, rule, bare label or langctx note."""
    out: list[str] = []
    raws = text.splitlines()
    if len(raws) > 2 * _SCAN_LINES:  # bounded work: the news of a long output is at its ends
        raws = [*raws[:_SCAN_LINES], *raws[-_SCAN_LINES:]]
    for raw in raws:
        line = " ".join(raw.split())
        if not any(ch.isalnum() for ch in line) or line.startswith(_OWN_NOTE):
            continue
        if _LABEL.match(line) or line.startswith("```"):
            continue
        out.append(line)
    labels = [ln for ln in out if ln.endswith(":")]  # "Search results for ...:" heads a list
    return [ln for ln in out if not ln.endswith(":")] or labels


def result_line(text: str, *, failed: bool | None = False, limit: int = MAX_RESULT_CHARS) -> str:
    """What a result said in one line: its error when it failed (``failed=None``: when its first
    line reads as one), else its first informative lines (a log: from its first error or warning)
    joined while short; ``""`` for nothing.
    """
    lines = informative_lines(text)
    if not lines:
        return ""
    error = next((ln for ln in lines if _ERROR_LINE.match(ln)), None)
    if failed or (failed is None and _ERROR_LINE.match(lines[0])):
        return clip("error: " + (error or lines[0]), limit)
    if _LOG_LINE.search(lines[0]) and not _LOUD.search(lines[0]):
        # a log: its first error or warning says more than its start
        start = next((i for i, ln in enumerate(lines) if _LOUD.search(ln)), 0)
        lines = lines[start:]
    shown = lines[0]
    for line in lines[1:]:
        if len(shown) + 3 + len(line) > _JOINED_CHARS:
            break
        shown += " / " + line
    return clip(shown, limit)


def reads_as_error(text: str) -> bool:
    """Whether a result's first informative line reports an error (``ERROR: ...``)."""
    lines = informative_lines(text)
    return bool(lines) and _ERROR_LINE.match(lines[0]) is not None
