"""Reducer for anything else: the head and the tail, with a marker of what was cut in between."""

from __future__ import annotations

from collections.abc import Callable

from langctx.context_mode.outputs import ContentKind, OutputMeta, Reduction
from langctx.context_mode.reducers._layout import body_budget, facts_lines, finish
from langctx.facts import extract_output_facts
from langctx.monotone import largest

HEAD_SHARE = 0.35
"""Share of the budget given to the start of the text."""

TAIL_SHARE = 0.25
"""Share of the budget given to the end of the text."""

_CHARS_PER_TOKEN_MAX = 8  # searches start with at most this many chars per token
_SNAP = 0.5  # a cut moves to a line break if that keeps at least this share of the piece


def cut_head_tail(
    text: str, *, head_tokens: int, tail_tokens: int, count_tokens: Callable[[str], int]
) -> tuple[str, str, str]:
    """Split ``text`` into ``(head, middle, tail)``: head and tail fit their tokens and end at a
    close line break; the cost does not grow with the text.
    """
    hi = min(len(text), max(0, head_tokens) * _CHARS_PER_TOKEN_MAX)
    head_len = largest(lambda n: count_tokens(text[:n]) <= head_tokens, hi)
    cut = text.rfind("\n", 0, head_len) + 1
    if head_len < len(text) and cut >= head_len * _SNAP:
        head_len = cut
    rest_len = len(text) - head_len
    hi = min(rest_len, max(0, tail_tokens) * _CHARS_PER_TOKEN_MAX)
    tail_len = largest(lambda n: count_tokens(text[len(text) - n :]) <= tail_tokens, hi)
    if tail_len < rest_len:
        start = len(text) - tail_len
        nl = text.find("\n", start)
        if nl != -1 and len(text) - nl - 1 >= tail_len * _SNAP:
            tail_len = len(text) - nl - 1
    middle_end = len(text) - tail_len
    return text[:head_len], text[head_len:middle_end], text[middle_end:]


def reduce_text(
    text: str, *, meta: OutputMeta, budget_tokens: int, kind: ContentKind = "text"
) -> Reduction:
    """Keep the start and the end of ``text``, listing the facts of the cut middle after them.

    ``kind``: the kind to report (reducers of other kinds fall back to this one).
    """
    count = meta.count_tokens
    budget = body_budget(kind, meta, budget_tokens)
    head, middle, tail = cut_head_tail(
        text,
        head_tokens=int(budget * HEAD_SHARE),
        tail_tokens=int(budget * TAIL_SHARE),
        count_tokens=count,
    )
    first, cut_lines = head.count("\n") + 1, middle.count("\n")
    lines = f" (lines {first + 1:,}–{first + cut_lines:,})" if cut_lines > 1 else ""
    middle_note = f"[… {len(middle):,} chars not shown{lines} …]" if middle else ""
    head, tail = head.rstrip("\n"), tail.lstrip("\n")
    note, unlisted = facts_lines(
        extract_output_facts(middle),
        f"{head}\n{tail}",
        budget_tokens=max(0, budget - int(budget * (HEAD_SHARE + TAIL_SHARE)) - 20),
        count_tokens=count,
    )
    body = "\n".join(part for part in (head, middle_note, tail, *note) if part)
    total_lines = text.count("\n") + 1
    removed = (
        f"{len(middle):,} of {len(text):,} chars ({cut_lines:,} of {total_lines:,} lines)"
        " from the middle"
    )
    return finish(kind, meta, budget_tokens, body, removed, unlisted)
