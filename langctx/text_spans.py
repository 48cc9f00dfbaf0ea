"""Spans of machinery in a text in one scan: regex matches and opener/closer pairs (:class:`Finder`,
linear where a regex ``opener.*?closer`` is quadratic), and code spans (:func:`code_spans`).

Example:
    >>> import re
    >>> finder = Finder(re.compile(r"<(note)>"), re.compile(r"</(note)>"), by_name=True)
    >>> strip_spans("a <note>x</note> b <note> c", (finder,))
    'a \\n b <note> c'
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from dataclasses import dataclass

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*$", re.M)
_INLINE_CODE = re.compile(r"(`+)[^`\n]+?\1")

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Finder:
    """Finds the matches of ``regex``, or with ``closer`` each opener to the first closer after it
    (of the same group 1 when ``by_name``)."""

    regex: re.Pattern[str]
    closer: re.Pattern[str] | None = None
    by_name: bool = False

    def over(self, text: str) -> Callable[[int], Span | None]:
        """The function giving the next span of ``text`` at or after a position."""
        if self.closer is None:
            regex = self.regex
            return lambda pos: _next_match(regex, text, pos)
        return _Pairs(self, text).next_at


class _Pairs:
    """Openers and closers of one text, found once and paired with a binary search."""

    def __init__(self, finder: Finder, text: str) -> None:
        assert finder.closer is not None
        name = (lambda m: m.group(1)) if finder.by_name else (lambda m: "")
        self.openers = [(m.start(), m.end(), name(m)) for m in finder.regex.finditer(text)]
        self.starts = [start for start, _, _ in self.openers]
        self.closers: dict[str, list[Span]] = {}
        for m in finder.closer.finditer(text):
            self.closers.setdefault(name(m), []).append((m.start(), m.end()))

    def next_at(self, pos: int) -> Span | None:
        pair = self.next_pair(pos)
        return None if pair is None else (pair[0][0], pair[1][1])

    def next_pair(self, pos: int) -> tuple[Span, Span, str] | None:
        """(opener span, closer span, name) of the first closed opener at or after ``pos``."""
        for k in range(bisect.bisect_left(self.starts, pos), len(self.openers)):
            start, end, name = self.openers[k]
            closers = self.closers.get(name, ())
            i = bisect.bisect_left(closers, (end, -1))
            if i < len(closers):
                return (start, end), closers[i], name
        return None


def pairs(finder: Finder, text: str) -> list[tuple[Span, Span, str]]:
    """``(opener span, closer span, name)`` of each element ``finder`` finds, as ``finditer`` reads
    ``opener(.*?)closer``.
    """
    found = _Pairs(finder, text)
    out: list[tuple[Span, Span, str]] = []
    pos = 0
    while (pair := found.next_pair(pos)) is not None:
        out.append(pair)
        pos = pair[1][1]
    return out


def code_spans(text: str) -> list[tuple[int, int]]:
    """Fenced code blocks (to the closing fence or the end) and inline code spans."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := _FENCE.search(text, pos)) is not None:
        fence = m.group(1)
        close = re.compile(rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", re.M)
        end_m = close.search(text, m.end())
        end = end_m.end() if end_m else len(text)
        spans.append((m.start(), end))
        pos = end
    outside = zip([0, *(b for _, b in spans)], [*(a for a, _ in spans), len(text)], strict=True)
    for a, b in outside:
        spans.extend((a + m.start(), a + m.end()) for m in _INLINE_CODE.finditer(text[a:b]))
    return sorted(spans)


def _next_match(regex: re.Pattern[str], text: str, pos: int) -> Span | None:
    """The next non-empty match at or after ``pos``."""
    while pos <= len(text):
        m = regex.search(text, pos)
        if m is None:
            return None
        if m.end() > m.start():
            return m.span()
        pos = m.start() + 1
    return None


def in_spans(spans: list[Span], starts: list[int], at: int) -> Span | None:
    """The span of sorted, disjoint ``spans`` (``starts``: their starts) that holds ``at``."""
    k = bisect.bisect_right(starts, at) - 1
    return spans[k] if k >= 0 and at < spans[k][1] else None


def strip_spans(text: str, finders: tuple[Finder, ...]) -> str:
    """``text`` with each span the ``finders`` find outside code replaced by a line break (leftmost
    and longest first)."""
    code: list[Span] | None = None  # computed once a candidate is found
    code_starts: list[int] = []
    pieces: list[str] = []
    pos = keep_from = 0
    nexts = [f.over(text) for f in finders]
    found = [n(0) for n in nexts]
    while True:
        for i, m in enumerate(found):  # refresh matches that start before the cursor
            if m is not None and m[0] < pos:
                found[i] = nexts[i](pos)
        live = [m for m in found if m is not None]
        if not live:
            break
        start, end = min(live, key=lambda x: (x[0], -x[1]))
        if code is None:
            code = code_spans(text)
            code_starts = [a for a, _ in code]
        inside = in_spans(code, code_starts, start)
        if inside is not None:  # a tag quoted in code is prose: look again after the code
            pos = inside[1]
            continue
        pieces += [text[keep_from:start], "\n"]
        pos = keep_from = end
    pieces.append(text[keep_from:])
    return "".join(pieces)
