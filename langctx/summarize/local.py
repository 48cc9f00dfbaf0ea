"""The local deterministic summarizer (offline default, fallback when a model fails): for any agent,
its commands and files, its own conclusions, each other tool call with its result, its open
questions and the next step, from mechanical facts only, shrunk until the summary fits its cap."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langctx.facts.calls import clip
from langctx.facts.record import stored_facts
from langctx.markers import quote_output
from langctx.summarize.request import SummaryRequest
from langctx.summarize.text import trim_sentences, truncate_to_tokens


def _approx(text: str) -> int:
    return (len(text) + 3) // 4


def _clip(text: str, n: int) -> str:
    return clip(" ".join(text.split()), n)


def _files(paths: list[str], limit: int) -> str | None:
    """The newest ``limit`` of ``paths`` on one line, the rest counted; None when there are none."""
    if not paths:
        return None
    shown = paths[-limit:] if limit else []
    more = len(paths) - len(shown)
    line = "- " + ", ".join(shown) if shown else "-"
    return line + (f" (+{more} more)" if more else "")


def _last_failure(facts: dict[str, Any], error_lines: int, width: int) -> str | None:
    """The latest failing command and its error lines (quoted tool output)."""
    own_line = {c.get("message_id") for c in facts.get("calls", ())} - {None}
    errors = [e for e in facts.get("errors", ()) if e.get("message_id") not in own_line]
    failing = [c for c in facts.get("commands", ()) if c.get("ok") is False]
    head = ""
    if failing:
        c = failing[-1]
        code = c.get("exit_code")
        head = f"`{_clip(c.get('command') or '?', 120)}`" + (
            f" exit {code}" if code is not None else " failed"
        )
    last = errors[-1] if errors else {}
    lines = [_clip(x, 160) for x in last.get("lines", [])][-error_lines:]
    if not (error_lines and lines):
        return _clip(head, width) or None
    room = max(20, width - len(head) - len(', output: ""'))
    quoted = quote_output(_clip("; ".join(lines), room))  # clipped inside the quotes
    return f"{head}, {quoted}" if head else quoted


def _status(facts: dict[str, Any], error_lines: int, width: int) -> str | None:
    """The last command (failing: with its error lines); None when no command ran."""
    if failure := _last_failure(facts, error_lines, width + 60):
        return f"- Last command: {failure}"
    if commands := facts.get("commands"):
        return f"- Last command: `{_clip(commands[-1].get('command') or '?', width)}` ok"
    return None


def _calls(calls: list[dict[str, Any]], n: int, args_width: int, result_width: int) -> list[str]:
    """The newest ``n`` calls, one line each with its result; without results, one line a tool."""
    shown = calls[-n:] if n else []
    lines: list[str] = []
    if result_width:
        for c in shown:
            line = f"- {c.get('name', '?')}({_clip(c.get('args', ''), args_width)})"
            if result := c.get("result"):
                line += f" -> {_clip(result, result_width)}"
            lines.append(line)
    else:  # the calls of each tool together: name and key argument only
        by_name: dict[str, list[str]] = {}
        for c in shown:
            key = _clip(_key_argument(c.get("args", "")), args_width)
            by_name.setdefault(c.get("name", "?"), []).append(key)
        lines = [f"- {name}({'; '.join(args)})" for name, args in by_name.items()]
    if more := len(calls) - len(shown):
        lines.append(f"- (+{more} earlier calls)")
    return lines


_DECODER = json.JSONDecoder()


def _key_argument(args: str) -> str:
    """The first ``key=value`` of rendered arguments (the key argument comes first)."""
    key, eq, rest = args.partition("=")
    if not eq:
        return args
    try:
        _, end = _DECODER.raw_decode(rest)
    except ValueError:  # clipped: the whole of it
        return args
    return f"{key}={rest[:end]}"


@dataclass(frozen=True, slots=True)
class _Room:
    """How much of each section one rendering shows."""

    width: int
    constraints: int
    read: int
    modified: int
    error_lines: int
    conclusions: int
    conclusion_width: int
    calls: int
    args_width: int
    result_width: int
    questions: int


_STEPS = (  # shrink step by step: results, observed files, older conclusions, calls last
    _Room(200, 6, 12, 12, 3, 8, 280, 12, 120, 160, 4),
    _Room(160, 5, 6, 8, 2, 6, 200, 12, 90, 100, 3),
    _Room(120, 4, 3, 6, 2, 4, 160, 12, 70, 70, 2),
    _Room(90, 3, 2, 4, 1, 3, 120, 12, 60, 40, 2),
    _Room(70, 2, 1, 3, 1, 3, 100, 12, 60, 0, 1),
    _Room(60, 2, 0, 2, 1, 2, 90, 12, 48, 0, 1),
    _Room(50, 1, 0, 1, 0, 2, 70, 10, 40, 0, 1),
    _Room(50, 1, 0, 1, 0, 1, 60, 8, 32, 0, 0),
    _Room(40, 1, 0, 1, 0, 1, 50, 6, 24, 0, 0),
)


def _render(request: SummaryRequest, facts: dict[str, Any], room: _Room) -> str:
    """The sections that have something to say, each within ``room``."""
    width = room.width
    sections: list[tuple[str, list[str]]] = []
    if request.instructions:
        sections.append(("Goal", [f"- Focus: {_clip(request.instructions, width)}"]))
    if status := _status(facts, room.error_lines, width):
        sections.append(("Current status", [status]))
    if constraints := facts.get("constraints"):
        shown = constraints[-room.constraints :]
        sections.append(("Important constraints", [f"- {_clip(c, width)}" for c in shown]))
    if read := _files(facts.get("read_files", []), room.read):
        sections.append(("Files observed", [read]))
    if modified := _files(facts.get("modified_files", []), room.modified):
        sections.append(("Files modified", [modified]))
    if concluded := facts.get("conclusions", [])[-room.conclusions :]:
        lines = [f"- {trim_sentences(c, room.conclusion_width)}" for c in concluded]
        sections.append(("Conclusions", lines))
    if calls := facts.get("calls"):
        lines = _calls(calls, room.calls, room.args_width, room.result_width)
        sections.append(("Tool calls", lines))
    if questions := facts.get("open_questions", [])[-room.questions :] if room.questions else []:
        sections.append(("Open questions", [f"- {_clip(q, width)}" for q in questions]))
    if step := facts.get("next_step"):  # one sentence, the line to go on from: never clipped
        sections.append(("Next step", [f"- {step}"]))
    return "\n".join(line for name, lines in sections for line in (f"{name}:", *lines))


def render_local_summary(request: SummaryRequest, *, count: Callable[[str], int] = _approx) -> str:
    """The fixed-structure summary of a request from its facts, within its ``max_tokens``; only the
    sections with something to say ("" when none has: no summary to show).

    Example:
        >>> req = SummaryRequest(kind="turns", task="Find why checkout is slow", facts={
        ...     "conclusions": ["Payments times out since 10:02; checkout only waits on it."],
        ...     "calls": [{"name": "grep_logs", "args": 'pattern="timeout"', "ok": True,
        ...                "result": "10:02:13 checkout ERROR upstream timeout (payments)"}],
        ...     "next_step": 'Act on the latest request: "Check the payments service too."'})
        >>> print(render_local_summary(req))
        Conclusions:
        - Payments times out since 10:02; checkout only waits on it.
        Tool calls:
        - grep_logs(pattern="timeout") -> 10:02:13 checkout ERROR upstream timeout (payments)
        Next step:
        - Act on the latest request: "Check the payments service too."
        >>> render_local_summary(SummaryRequest(kind="turns", task="Fix the parser"))
        ''
    """
    facts = stored_facts(request.facts)
    text = ""
    for room in _STEPS:
        text = _render(request, facts, room)
        if count(text) <= request.max_tokens:
            return text
    return truncate_to_tokens(text, request.max_tokens, count)


class LocalSummarizer:
    """Deterministic summarizer over mechanical facts; never calls a model.

    Example:
        >>> facts = {"conclusions": ["The CLI needs a --json flag."], "next_step": "Add the flag."}
        >>> LocalSummarizer().summarize(SummaryRequest(kind="turns", facts=facts)).splitlines()[:2]
        ['Conclusions:', '- The CLI needs a --json flag.']
    """

    name = "local"

    def __init__(self, *, count: Callable[[str], int] = _approx) -> None:
        self.count = count

    def summarize(self, request: SummaryRequest) -> str:
        return render_local_summary(request, count=self.count)

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async version of `summarize`."""
        return self.summarize(request)
