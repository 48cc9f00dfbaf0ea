"""Detect what a tool output holds, from the tool call (a read of ``x.py`` is source, a shell
command's output a log) and from the first few kilobytes of the content."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Collection, Mapping
from typing import Any

from langctx.context_mode.outputs import ContentKind
from langctx.context_mode.reducers.table import _BOX_SEP, _MD_SEP, _PSQL_SEP, sniff_delimiter
from langctx.facts import DEFAULT_COMMAND_TOOLS, is_command_tool, tool_name_words
from langctx.source_outline import language_for_path, split_listing

_PATH_KEYS = (
    "path", "file_path", "filepath", "file", "filename", "target_file", "absolute_path",
    "relative_path", "filePath", "targetFile", "absolutePath", "relativePath", "uri", "url",
)  # fmt: skip
_READ_WORDS = frozenset({"read", "open", "view", "cat", "show", "get", "fetch", "load", "file"})
_READ_COMMANDS = frozenset({"cat", "open", "view", "less", "more", "head", "tail", "bat", "nl"})
_COMMAND_ARGS = ("command", "cmd", "script", "commands")
_NON_SOURCE = frozenset({"json", "csv", "tsv", "html", "htm", "xhtml", "jsonl", "ndjson", "log"})

_SAMPLE_CHARS = 16_384
_FULL_JSON_CHECK = 2_000_000  # larger texts are checked by their brackets; the reducer parses
_SAMPLE_LINES = 200

# One greedy run for all leading comments: repeated lazy ones backtrack 2**n ways with no root tag.
_HTML_START = re.compile(r"^(?:<!--.*-->\s*)?<(?:!doctype\s+html|html|head|body)\b", re.I | re.S)
_TAG = re.compile(r"</?(?:div|span|p|a|ul|li|table|tr|td|form|input|button|section|nav|h[1-6]|img|"
                  r"script|style|meta|link|label|select|option|textarea|header|footer|main)\b", re.I)  # fmt: skip
_A11Y_LINE = re.compile(
    r"^\s*-\s+(?:link|button|heading|textbox|combobox|checkbox|radio|tab|menuitem|listitem|list|"
    r"navigation|main|banner|img|paragraph|generic|text|searchbox|region|dialog|option|row|cell|"
    r"table|group|article|contentinfo|complementary|form|separator|switch|slider)\b"
)
_EXCEPTION_LINE = re.compile(
    r"^(?:[\w.$]+(?:Error|Exception|Exit|Interrupt|Warning)\b|panic: |thread '.*' panicked at |"
    r"Caused by: |Uncaught |Exception in thread |Error: |Fatal error: )"
)
_FRAME_LINE = re.compile(
    r'^\s+File "[^"]+", line \d+|^\s+at .+(?::\d+|\(.*\))\)?\s*$|^\s*\d+:\s+0x[0-9a-f]+|'
    r"^\s+\S+\.go:\d+|^\s+at \S+\.\w+\(.*\)$|^\s*\.\.\. \d+ more$|^goroutine \d+ \[|"
    r"^\s*\d+: [\w:<>]+$|^\s+at [\w/\\.-]+:\d+:\d+$"
)
_LOG_LINE = re.compile(
    r"^\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}|^\s*\[?\d{2}:\d{2}:\d{2}|"
    r"\b(?:INFO|DEBUG|WARN|WARNING|ERROR|TRACE|FATAL|CRITICAL)\b|^\s*[$>] \S|^npm (?:ERR|WARN)|"
    r"\b(?i:passed|failed|error|warning|exit code|traceback)\b"
)
_CODE_LINE = re.compile(
    r"^\s*(?:import |from \S+ import |#include\b|package |using |def |class |function |"
    r"(?:export |public |private |static |async )+|fn |func |struct |interface |const \w+ = |"
    r"let \w+ = |return\b|if \(|for \(|while \(|\}\s*$|\};?\s*$)|[;{]\s*$"
)
_HEADER_CELL = re.compile(r"^\s*\"?[A-Za-z_][\w .\-]{0,63}\"?\s*$")


def _command(args: Mapping[str, Any] | None) -> str | None:
    if not args:
        return None
    for key in _COMMAND_ARGS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return " ".join(value)
    return None


def output_path(tool_name: str | None, args: Mapping[str, Any] | None) -> str | None:
    """The path of the file a tool call reads or shows (an argument, or ``cat x.py``), or ``None``."""
    if args:
        for key in _PATH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()
    command = _command(args)
    if command:
        first_line = command.strip().split("\n", 1)[0]
        try:
            words = shlex.split(first_line)
        except ValueError:
            words = first_line.split()
        if words and words[0] in _READ_COMMANDS:
            paths = (w for w in words[1:] if not w.startswith("-") and ("." in w or "/" in w))
            return next(paths, None)
    return None


def is_read_call(tool_name: str | None, args: Mapping[str, Any] | None) -> bool:
    """Whether the tool call reads or views a file, by the words of its name however spelled."""
    words = set(tool_name_words(tool_name or ""))
    if words & _READ_WORDS and not words & {"write", "edit", "create", "delete", "run", "exec"}:
        return True
    first = (_command(args) or "").split(None, 1)
    return bool(first) and first[0] in _READ_COMMANDS | {"view"}


def is_command_call(
    tool_name: str | None,
    args: Mapping[str, Any] | None,
    *,
    command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS,
) -> bool:
    """Whether the tool call runs a command: one of ``command_tools``, or any with a command arg."""
    return is_command_tool(tool_name, command_tools) or _command(args) is not None


def _nonblank_lines(text: str) -> list[str]:
    lines = text[:_SAMPLE_CHARS].split("\n")
    if len(text) > _SAMPLE_CHARS and len(lines) > 1:
        lines.pop()  # probably cut in the middle
    return [line for line in lines if line.strip()][:_SAMPLE_LINES]


def _looks_html(head: str, lines: list[str]) -> bool:
    if _HTML_START.match(head):
        return True
    if not head.startswith("<"):
        return False
    tags = len(_TAG.findall(head))
    return tags >= 5 and tags * 2 >= len(lines)


def _looks_a11y(lines: list[str]) -> bool:
    hits = sum(1 for line in lines if _A11Y_LINE.match(line))
    return hits >= 5 and hits * 2 >= len(lines)


def _looks_json(text: str, head: str) -> bool:
    if not head.startswith(("{", "[")):
        return False
    if len(text) > _FULL_JSON_CHECK:  # parsing twice (here and in the reducer) costs seconds
        closing = "}" if head.startswith("{") else "]"
        return text.rstrip().endswith(closing) or _looks_json_lines(text)
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return _looks_json_lines(text)
    return True


def _looks_json_lines(text: str) -> bool:
    lines = _nonblank_lines(text)[:50]
    try:
        return len(lines) >= 2 and all(isinstance(json.loads(line), dict) for line in lines)
    except (ValueError, RecursionError):
        return False


def _looks_stack_trace(lines: list[str]) -> bool:
    if not lines:
        return False
    frames = sum(1 for line in lines if _FRAME_LINE.match(line))
    if lines[0].lstrip().startswith("Traceback (most recent call last)"):
        return frames * 3 >= len(lines) // 2
    has_exception = any(_EXCEPTION_LINE.match(line.lstrip()) for line in lines[:10])
    return has_exception and frames >= 2 and frames * 2 >= len(lines) - 2


def _looks_table(lines: list[str]) -> bool:
    if len(lines) < 3:
        return False
    head = lines[:6]
    piped = sum(1 for line in lines if line.lstrip().startswith("|"))
    if any(_MD_SEP.match(line) for line in head) and piped >= 0.8 * len(lines):
        return True
    if any(_PSQL_SEP.match(line) for line in head[:3]) or any(map(_BOX_SEP.match, head)):
        return True
    return sniff_delimiter(lines, header=_HEADER_CELL) is not None


def _ratio(lines: list[str], pattern: re.Pattern[str]) -> float:
    return sum(1 for line in lines if pattern.search(line)) / len(lines) if lines else 0.0


def detect_kind(
    text: str,
    *,
    tool_name: str | None = None,
    args: Mapping[str, Any] | None = None,
    command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS,
) -> ContentKind:
    """Decide which reducer fits a tool output (any :data:`ContentKind` but ``"binary"``).

    Example:
        >>> detect_kind("<!DOCTYPE html><html><body><a href='/x'>x</a></body></html>")
        'html'
        >>> detect_kind("x = 1", tool_name="read", args={"path": "a.py"})
        'source'
        >>> detect_kind("FAILED tests/test_a.py::test_x", tool_name="bash", args={"command": "pytest"})
        'log'
    """
    head = text[:_SAMPLE_CHARS].lstrip()
    lines = _nonblank_lines(text.lstrip())
    path = output_path(tool_name, args)
    ext = path.rsplit(".", 1)[-1].lower() if path and "." in path.rsplit("/", 1)[-1] else ""
    reading = is_read_call(tool_name, args)
    kind = _kind_from_path(text, head, lines, path, ext, reading=reading)
    kind = kind or _kind_from_content(text, head, lines)
    if kind is not None:
        return kind
    if is_command_call(tool_name, args, command_tools=command_tools) and not reading:
        return "log"
    if reading:
        return "source" if _ratio(lines, _CODE_LINE) >= 0.15 or ext else "text"
    if _ratio(lines, _LOG_LINE) >= 0.2:
        return "log"
    if _ratio(lines, _CODE_LINE) >= 0.25:
        return "source"
    return "text"


def _kind_from_path(
    text: str, head: str, lines: list[str], path: str | None, ext: str, *, reading: bool
) -> ContentKind | None:
    """The kind the extension names, when the content agrees; a source file that was read."""
    if ext in ("html", "htm", "xhtml") and head.startswith("<"):  # _looks_html needs it too
        return "html"
    if ext in ("json", "jsonl", "ndjson", "geojson") and _looks_json(text, head):
        return "json"
    if ext in ("csv", "tsv") and len(lines) >= 2:
        return "table"
    if reading and ext not in _NON_SOURCE and language_for_path(path) is not None:
        return "source"
    return None


def _kind_from_content(text: str, head: str, lines: list[str]) -> ContentKind | None:
    """The kind the content shows unmistakably (markup, JSON, a trace, a table, a listing)."""
    if _looks_html(head, lines) or _looks_a11y(lines):
        return "html"
    if _looks_json(text, head):
        return "json"
    if _looks_stack_trace(lines):
        return "stack_trace"
    if _looks_table(lines):
        return "table"
    if split_listing("\n".join(lines)).numbered:
        return "source"
    return None
