"""The local deterministic summarizer (offline default, fallback when a model fails): the prompt's
sections from mechanical facts only, lists shrunk until the summary fits its cap."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langctx.facts.calls import clip
from langctx.facts.record import stored_facts
from langctx.markers import quote_output
from langctx.summarize.request import SummaryRequest
from langctx.summarize.text import truncate_to_tokens


def _approx(text: str) -> int:
    return (len(text) + 3) // 4


def _clip(text: str, n: int) -> str:
    return clip(" ".join(text.split()), n)


def _files(paths: list[str], limit: int) -> str:
    if not paths:
        return "- (none)"
    shown = paths[-limit:] if limit else []
    more = len(paths) - len(shown)
    line = "- " + ", ".join(shown) if shown else "-"
    return line + (f" (+{more} more)" if more else "")


def _last_failure(facts: dict[str, Any], error_lines: int, width: int) -> str | None:
    """The latest failing command and its error lines (quoted tool output)."""
    errors = facts.get("errors", [])
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


def _status(request: SummaryRequest, facts: dict[str, Any], error_lines: int, width: int) -> str:
    """The last command (failing: with its error lines), else what was compacted."""
    if failure := _last_failure(facts, error_lines, width + 60):
        return f"- Last command: {failure}"
    if commands := facts.get("commands"):
        return f"- Last command: `{_clip(commands[-1].get('command') or '?', width)}` ok"
    if request.kind == "merge":
        return f"- {len(request.summaries)} earlier summaries merged"
    return f"- {len(request.messages)} earlier messages compacted"


def render_local_summary(request: SummaryRequest, *, count: Callable[[str], int] = _approx) -> str:
    """The fixed-structure summary of a request from its facts, within its ``max_tokens``.

    Example:
        >>> req = SummaryRequest(kind="turns", task="Fix the parser", facts={
        ...     "modified_files": ["src/lexer.py"], "next_step": "Fix the lexer.",
        ...     "commands": [{"command": "pytest", "exit_code": 1, "ok": False}],
        ...     "errors": [{"lines": ["AssertionError: 2 != 3"]}]})
        >>> print(render_local_summary(req))
        Goal:
        - the task and the user's messages, verbatim in the context
        Current status:
        - Last command: `pytest` exit 1, output: "AssertionError: 2 != 3"
        Files observed:
        - (none)
        Files modified:
        - src/lexer.py
        Next step:
        - Fix the lexer.
    """
    facts = stored_facts(request.facts)
    goal = "see the first user message"
    if request.task or facts.get("user_messages"):  # both are quoted verbatim, never restated
        goal = "the task and the user's messages, verbatim in the context"
    # Shrink step by step: fewer observed files, shorter lines, fewer constraints, fewer error lines.
    for read_limit, width, n_constraints, err_lines, mod_limit in (
        (12, 200, 6, 3, 12),
        (6, 160, 5, 2, 8),
        (3, 120, 4, 2, 6),
        (2, 90, 3, 1, 4),
        (1, 70, 2, 1, 3),
        (0, 60, 2, 1, 2),
        (0, 50, 1, 0, 1),
    ):
        lines = ["Goal:", f"- {_clip(goal, width)}"]
        if request.instructions:
            lines.append(f"- Focus: {_clip(request.instructions, width)}")
        lines += ["Current status:", _status(request, facts, err_lines, width)]
        if constraints := facts.get("constraints"):
            lines.append("Important constraints:")
            lines.extend(f"- {_clip(c, width)}" for c in constraints[-n_constraints:])
        lines += ["Files observed:", _files(facts.get("read_files", []), read_limit)]
        lines += ["Files modified:", _files(facts.get("modified_files", []), mod_limit)]
        if step := facts.get("next_step"):
            lines += ["Next step:", f"- {_clip(step, width)}"]
        text = "\n".join(lines)
        if count(text) <= request.max_tokens:
            return text
    return truncate_to_tokens(text, request.max_tokens, count)


class LocalSummarizer:
    """Deterministic summarizer over mechanical facts; never calls a model.

    Example:
        >>> LocalSummarizer().summarize(SummaryRequest(kind="turns", task="Add a CLI")).splitlines()[:2]
        ['Goal:', "- the task and the user's messages, verbatim in the context"]
    """

    name = "local"

    def __init__(self, *, count: Callable[[str], int] = _approx) -> None:
        self.count = count

    def summarize(self, request: SummaryRequest) -> str:
        return render_local_summary(request, count=self.count)

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async version of `summarize`."""
        return self.summarize(request)
