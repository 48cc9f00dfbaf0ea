"""Grep of a stored output: matching lines with line numbers and byte offsets, under a budget."""

from __future__ import annotations

import json
import re
import re._constants as _sre
import re._parser as _sre_parse
from collections.abc import Iterator, Mapping
from typing import Any

from langctx.context_mode.references import FetchResult, fetch_call, out_of_range
from langctx.markers import REF_MARKER, escape_delimiters
from langctx.tokens import TextCounter, TokenCounter, text_counter

DEFAULT_GREP_MAX_MATCHES = 50
"""At most this many matching lines per ``grep`` result."""

MAX_GREP_PATTERN_CHARS = 500
"""Longer grep patterns are refused."""

_GREP_LINE_CHARS = 300
_REPEATS = frozenset({_sre.MAX_REPEAT, _sre.MIN_REPEAT})


def backtracking_risk(pattern: str) -> str | None:
    """Why ``pattern`` may backtrack exponentially, or ``None``.

    Refused: a repeat holding a repeat or an alternation (``(a+)+``, ``(a|aa)*``), a backreference.
    """
    try:
        tree = _sre_parse.parse(pattern)
    except re.error:
        return None  # not a regex: grep reads it as literal text
    return _risk(tree, inside_repeat=False)


def _risk(items: Any, *, inside_repeat: bool) -> str | None:
    for op, arg in items:
        if op in _REPEATS:
            _low, high, body = arg
            if inside_repeat and high > 1:
                return "a repeat inside a repeat"
            found = _risk(body, inside_repeat=inside_repeat or high > 1)
        elif op is _sre.BRANCH:
            if inside_repeat:
                return "an alternation inside a repeat"
            found = next((r for b in arg[1] if (r := _risk(b, inside_repeat=False))), None)
        elif op in (_sre.GROUPREF, _sre.GROUPREF_EXISTS):
            return "a backreference"
        elif op in (_sre.SUBPATTERN, _sre.ASSERT, _sre.ASSERT_NOT):  # the pattern comes last
            found = _risk(arg[-1], inside_repeat=inside_repeat)
        else:
            found = None
        if found is not None:
            return found
    return None


def _compile(pattern: str) -> re.Pattern[bytes]:
    """A bytes regex for ``pattern`` (literal if invalid), case-insensitive if all lower case."""
    flags = re.MULTILINE if pattern != pattern.lower() else re.MULTILINE | re.IGNORECASE
    raw = pattern.encode("utf-8", "surrogatepass")
    try:
        return re.compile(raw, flags)
    except re.error:
        return re.compile(re.escape(raw), flags)


def _grep_line(line: bytes, match_at: int) -> str:
    text = line.decode("utf-8", "replace").rstrip("\r")
    if len(text) > _GREP_LINE_CHARS:
        lo = max(0, min(match_at - 80, len(text) - _GREP_LINE_CHARS))
        hi = lo + _GREP_LINE_CHARS
        text = ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
    return escape_delimiters(text)


def render_grep(
    meta: Mapping[str, Any],
    data: bytes,
    pattern: str,
    *,
    offset: int = 0,
    max_matches: int = DEFAULT_GREP_MAX_MATCHES,
    max_tokens: int,
    count_tokens: TokenCounter | TextCounter | None = None,
) -> FetchResult:
    """The lines matching ``pattern`` from byte ``offset`` on, with line numbers and byte offsets.

    ``pattern``: a regex (literal if invalid), case-insensitive unless it has an upper-case letter.
    """
    count = text_counter(count_tokens)
    ref_id, total = str(meta["ref_id"]), int(meta["size"])
    if (problem := _pattern_problem(pattern)) is not None:
        text = f"{REF_MARKER}{ref_id} · the grep pattern {problem}]"
        return FetchResult(text=text, ref_id=ref_id, kind="invalid", ok=False, total=total)
    if offset < 0 or (offset >= total and total > 0):
        return out_of_range(ref_id, offset=offset, total=total)
    shown = escape_delimiters(json.dumps(pattern, ensure_ascii=False))
    frame = _grep_head(ref_id, shown, offset, 999) + _grep_foot(ref_id, pattern, 10**12, 1)
    budget = max_tokens - count(frame) - 4
    lines: list[str] = []
    used, end, next_offset = 0, min(offset, total), None
    for start, stop, line in _hit_lines(_compile(pattern), data, offset):
        cost = count(line) + 1
        if len(lines) >= max_matches or used + cost > budget:
            end = next_offset = max(start, offset)
            break
        lines.append(line)
        used, end = used + cost, min(stop + 1, total)
    head = _grep_head(ref_id, shown, offset, len(lines))
    foot = _grep_foot(ref_id, pattern, next_offset, len(lines))
    return FetchResult(
        text="\n".join([head, *lines, foot]),
        ref_id=ref_id,
        kind="grep",
        start=offset,
        end=end,
        total=total,
        next_offset=next_offset,
        matches=len(lines),
    )


def _pattern_problem(pattern: str) -> str | None:
    """Why grep refuses ``pattern`` (the end of a sentence), or ``None``."""
    if len(pattern) > MAX_GREP_PATTERN_CHARS:
        return f"is too long ({len(pattern)} chars; at most {MAX_GREP_PATTERN_CHARS})"
    if (risk := backtracking_risk(pattern)) is None:
        return None
    return (
        f"holds {risk}, which can take exponential time: write it without "
        "(e.g. [\\d.]+ for (\\d+\\.)+\\d+, or two greps for a|b)"
    )


def _hit_lines(rx: re.Pattern[bytes], data: bytes, offset: int) -> Iterator[tuple[int, int, str]]:
    """``(start, stop, "L<number> @<start>: <line>")`` of each line with a match, from ``offset``."""
    pos, lineno = offset, 1 + data.count(b"\n", 0, offset)  # lineno: the line pos is in
    while pos <= len(data) and (m := rx.search(data, pos)) is not None:
        start = data.rfind(b"\n", 0, m.start()) + 1
        stop = data.find(b"\n", m.start())
        stop = len(data) if stop == -1 else stop
        lineno += data.count(b"\n", pos, start)
        yield start, stop, f"L{lineno} @{start}: {_grep_line(data[start:stop], m.start() - start)}"
        pos, lineno = stop + 1, lineno + 1


def _grep_head(ref_id: str, shown: str, offset: int, n: int) -> str:
    what = f"{n} matching line{'' if n == 1 else 's'}"
    if n:
        what += " (line number @ byte offset)"
    return f"{REF_MARKER}{ref_id} grep {shown} from offset {offset}: {what}]"


def _grep_foot(ref_id: str, pattern: str, next_offset: int | None, n: int) -> str:
    notes = ["no more matches"]
    if next_offset is not None:
        notes = [f"more matches: {fetch_call(ref_id, grep=pattern, offset=next_offset)}"]
    if n:
        notes.append(
            f'read around a match with fetch_context(ref_id="{ref_id}", offset=<its @ offset>)'
        )
    return f"{REF_MARKER}{ref_id} grep ends · {' · '.join(notes)}]"
