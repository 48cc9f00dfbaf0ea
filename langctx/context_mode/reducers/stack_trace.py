"""Reducer for stack traces (Python, JS, JVM, C#, Go, Rust): the exception, then the frames."""

from __future__ import annotations

import re

from langctx.context_mode.outputs import OutputMeta, Reduction
from langctx.context_mode.reducers._layout import clip
from langctx.context_mode.reducers.log import LineProfile, reduce_lines
from langctx.context_mode.sanitize import clean_terminal

_PROFILE = LineProfile(head_lines=3, tail_lines=5, edge_head=1, edge_tail=2, context_lines=True)
_EXCEPTION = re.compile(
    r"^(?:Uncaught |Exception in thread \"[^\"]*\" |Caused by: )?"
    r"(?:[\w.$]*(?:Error|Exception|Exit|Interrupt|Warning|Failure)\b(?::.*)?$|Error: .*)"
    r"|^panic: .*|^thread '[^']*' panicked at .*|^fatal error: .*"
)
_MAX_SCAN = 5_000


def exception_summary(text: str) -> str | None:
    """The exception line of a trace (last of a Python one, else first), unless in its first 3."""
    lines = text.split("\n", _MAX_SCAN)[:_MAX_SCAN]
    found = [line.strip() for line in lines if _EXCEPTION.match(line.strip())]
    if not found:
        return None
    python = any("Traceback (most recent call last)" in line for line in lines[:50])
    summary = found[-1] if python else found[0]
    return None if summary in (line.strip() for line in lines[:3]) else summary


def reduce_stack_trace(text: str, *, meta: OutputMeta, budget_tokens: int) -> Reduction:
    """Reduce a stack trace to its exception line(s) and frames, repeats collapsed."""
    summary = exception_summary(clean_terminal(text[:200_000]))
    preface = (f"Exception: {clip(summary, 300)}",) if summary else ()
    return reduce_lines(
        text,
        kind="stack_trace",
        meta=meta,
        budget_tokens=budget_tokens,
        profile=_PROFILE,
        preface=preface,
    )
