"""Grep of a stored output: matching lines with line numbers and byte offsets, under a budget.

The model writes the pattern, so matching runs on the ``regex`` engine with a deadline (released
interpreter lock, ``timeout=``): a pattern that backtracks for too long is a one-line answer,
never a stall of the process.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import regex

from langctx.context_mode.references import FetchResult, fetch_call, out_of_range
from langctx.markers import REF_MARKER, escape_delimiters
from langctx.tokens import TextCounter, TokenCounter, text_counter

DEFAULT_GREP_MAX_MATCHES = 50
"""At most this many matching lines per ``grep`` result."""

MAX_GREP_PATTERN_CHARS = 500
"""Longer grep patterns are refused."""

GREP_TIMEOUT_SECONDS = 0.5
"""A grep stops searching after this long (the lines found so far are shown)."""

MAX_GREP_EXPANSION = 100_000
"""Refused: a pattern longer than this once its counted repeats are written out (``(?:a{1000}){1000}``:
the engine expands them when it compiles, which no timeout covers)."""

_GREP_LINE_CHARS = 300
_COUNT = regex.compile(r"\{(\d*)(,(\d*))?\}")  # a counted repeat: {m}, {m,}, {,n}, {m,n}
_SIMPLER = (
    "write a simpler one (e.g. a+b for a*a*b, [\\d.]+ for (\\d+\\.)+\\d+, or two greps for a|b)"
)


def expanded_size(pattern: str) -> int:
    """About how many items ``pattern`` has once its counted repeats are written out (an upper bound).

    A scan of the pattern's text (escapes, sets, groups, ``{m,n}``), not of the engine's internals.
    """
    sizes, last, i = [0], 0, 0  # sizes: the open groups' sizes; last: the item a count repeats
    while i < len(pattern):
        char, item = pattern[i], 1
        if char == "\\":
            i += 2
        elif char == "[":
            i = _set_end(pattern, i)
        elif char == "(":
            sizes.append(0)
            i, last = i + 1, 0
            continue
        elif char == ")" and len(sizes) > 1:
            item, i = sizes.pop(), i + 1
        elif char == "{" and (count := _COUNT.match(pattern, i)):
            low, high = count.group(1, 3)
            times = int(high or low or 0)  # {m}, {m,}: m; {m,n}, {,n}: n
            sizes[-1] += last * max(times - 1, 0)
            last, i = last * max(times, 1), count.end()
            continue
        else:
            i += 1
        sizes[-1] += item
        last = item
    return sum(sizes)


def _set_end(pattern: str, start: int) -> int:
    """The index after the character set opening at ``start`` (``[]a]``, ``[^]a]``, escapes)."""
    i = start + 1 + (pattern.startswith("^", start + 1))
    i += pattern.startswith("]", i)
    while i < len(pattern) and pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


_VERBOSE = regex.compile(r"\(\?[a-zA-Z0-9^]*x")  # (?x), (?ix:...): comments hide the structure


def _pattern_problem(pattern: str) -> str | None:
    """Why grep refuses ``pattern`` (the end of a sentence), or ``None``."""
    if len(pattern) > MAX_GREP_PATTERN_CHARS:
        return f"is too long ({len(pattern)} chars; at most {MAX_GREP_PATTERN_CHARS})"
    if _VERBOSE.search(pattern):
        return "uses verbose mode (?x), which grep does not take: write it without"
    if (size := expanded_size(pattern)) > MAX_GREP_EXPANSION:
        return (
            f"repeats too much ({size:,} items once its {{m,n}} counts are written out; at most "
            f"{MAX_GREP_EXPANSION:,}): {_SIMPLER}"
        )
    return None


def _compile(pattern: str) -> regex.Pattern[bytes] | str:
    """A bytes regex for ``pattern`` (literal if invalid), case-insensitive if all lower case; or
    why grep refuses it (the end of a sentence)."""
    if (problem := _pattern_problem(pattern)) is not None:
        return problem
    flags = regex.MULTILINE if pattern != pattern.lower() else regex.MULTILINE | regex.IGNORECASE
    raw = pattern.encode("utf-8", "surrogatepass")
    try:
        return regex.compile(raw, flags)
    except regex.error:
        return regex.compile(regex.escape(raw), flags)
    except (RecursionError, MemoryError, OverflowError, ValueError) as exc:  # too deep, too big
        return f"cannot be compiled ({type(exc).__name__}): {_SIMPLER}"


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
    timeout: float = GREP_TIMEOUT_SECONDS,
) -> FetchResult:
    """The lines matching ``pattern`` from byte ``offset`` on, with line numbers and byte offsets.

    ``pattern``: a regex (literal if invalid), case-insensitive unless it has an upper-case letter.
    The search stops after ``timeout`` seconds: the lines found so far and where to go on, or a
    one-line answer when none was found.
    """
    count = text_counter(count_tokens)
    ref_id, total = str(meta["ref_id"]), int(meta["size"])
    rx = _compile(pattern)
    if isinstance(rx, str):
        return _refused(ref_id, total, f"the grep pattern {rx}")
    if offset < 0 or (offset >= total and total > 0):
        return out_of_range(ref_id, offset=offset, total=total)
    shown = escape_delimiters(json.dumps(pattern, ensure_ascii=False))
    frame = _grep_head(ref_id, shown, offset, 999) + _grep_foot(ref_id, pattern, 10**12, 1, timeout)
    budget = max_tokens - count(frame) - 4
    lines: list[str] = []
    used, end, next_offset = 0, min(offset, total), None
    stopped: float | None = None  # the timeout, when the search hit it
    hits = _hit_lines(rx, data, offset, deadline=time.monotonic() + timeout)
    try:
        for start, stop, line in hits:
            cost = count(line) + 1
            if len(lines) >= max_matches or used + cost > budget:
                end = next_offset = max(start, offset)
                break
            lines.append(line)
            used, end = used + cost, min(stop + 1, total)
    except TimeoutError:  # the deadline passed (``lines`` were found before it)
        if not lines:
            why = f"took longer than {timeout:g} s on this output, so grep stopped it: {_SIMPLER}"
            return _refused(ref_id, total, f"the grep pattern {why}")
        if end < total:  # else the last line shown ends the output: nothing was left unread
            stopped, next_offset = timeout, end
    head = _grep_head(ref_id, shown, offset, len(lines))
    foot = _grep_foot(ref_id, pattern, next_offset, len(lines), stopped)
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


def _refused(ref_id: str, total: int, why: str) -> FetchResult:
    text = f"{REF_MARKER}{ref_id} · {why}]"
    return FetchResult(text=text, ref_id=ref_id, kind="invalid", ok=False, total=total)


def _hit_lines(
    rx: regex.Pattern[bytes], data: bytes, offset: int, *, deadline: float
) -> Iterator[tuple[int, int, str]]:
    """``(start, stop, "L<number> @<start>: <line>")`` of each line with a match, from ``offset``.

    Raises:
        TimeoutError: ``deadline`` (``time.monotonic()``) passed (the ``regex`` engine's).
    """
    pos, lineno = offset, 1 + data.count(b"\n", 0, offset)  # lineno: the line pos is in
    while pos <= len(data):
        m = rx.search(data, pos, timeout=max(deadline - time.monotonic(), 0.0), concurrent=True)
        if m is None:
            return
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


def _grep_foot(
    ref_id: str, pattern: str, next_offset: int | None, n: int, stopped: float | None = None
) -> str:
    """The last line; ``stopped``: the timeout the search hit (the matches shown are not all)."""
    go_on = None if next_offset is None else fetch_call(ref_id, grep=pattern, offset=next_offset)
    notes = ["no more matches" if go_on is None else f"more matches: {go_on}"]
    if stopped is not None:
        notes = [f"the search stopped after {stopped:g} s: go on with {go_on} or a simpler pattern"]
    if n:
        notes.append(
            f'read around a match with fetch_context(ref_id="{ref_id}", offset=<its @ offset>)'
        )
    return f"{REF_MARKER}{ref_id} grep ends · {' · '.join(notes)}]"
