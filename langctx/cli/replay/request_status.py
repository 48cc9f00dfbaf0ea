"""The ``request_status`` probe's own rules: which requests the transcript answered, and what
status the summary block's ``<langctx:requests>`` section shows for each.

Truth (never :mod:`langctx.requests`, the rule under test): a request is *answered* when an AI
message with text and no tool call (:func:`ends_turn`) comes after it and before the next request
(:func:`answered_requests`, on source positions). :func:`parse_section` reads the section:

* it is the lines between a line ``<langctx:requests>`` and a line ``</langctx:requests>`` (or the
  text's end), in the first message of the request that holds one;
* an item is a line ``- [STATUS] `` then a fence of double quotes: STATUS ``answered`` or one
  starting with ``open`` (``open — act on this``, ``open, interrupted``); any other line is not
  an item (the explanation, ``[3 earlier requests not shown]``);
* a fence of 3+ quotes alone on the item's line opens a block: the request is the lines up to
  the next line that starts with that fence (what follows it there, ``→ the agent answered: ...``,
  is not the request's); otherwise the request is the rest of the line up to the first run of
  exactly the fence's quotes followed by the line's end, `` →`` or `` (``;
* the request's text is whitespace-collapsed; one that ends with ``…`` is *shortened* (its
  opening words only, the ``…`` dropped).

:func:`grade` pairs shown requests with real ones by their opening (the first 60 characters
``earlier_user_messages`` checks: the shown text starts with it, or a shortened one is the start
of it), in order (both oldest first): of the pairings, the one with the most pairs, then the most
shown requests quoted whole, then the fewest real requests skipped between two pairs that are not
verbatim in the window (the section lists the folded ones in a run), then the fewest paired that
are in the window, then the newest.

Example:
    >>> shown = parse_section('<langctx:requests>\\nOldest first.\\n'
    ...     '- [answered] "Fix it." → the agent answered: "Done."\\n'
    ...     '- [open — act on this] "Add a flag…"\\n</langctx:requests>')
    >>> [(s.answered, s.text, s.shortened) for s in shown]
    [(True, 'Fix it.', False), (False, 'Add a flag', True)]
    >>> answered_requests([1, 5], [3, 4, 7], until=6)
    [True, False]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

__all__ = [
    "SECTION_CLOSE",
    "SECTION_OPEN",
    "STATUS_COUNTS",
    "KnownRequest",
    "ShownRequest",
    "StatusGrade",
    "answered_requests",
    "ends_turn",
    "grade",
    "parse_section",
]

SECTION_OPEN = "<langctx:requests>"
"""The line that opens the section (as the probe reads the rendering)."""
SECTION_CLOSE = "</langctx:requests>"
"""The line that closes it."""
STATUS_COUNTS = ("right", "graded", "answered_shown_open", "open_shown_answered", "unmatched")
"""The counts of a :class:`StatusGrade` a report keeps (:meth:`StatusGrade.counts`)."""
SHORTENED = "…"
"""Ends a request shown by its opening words only."""

_ITEM = re.compile(r'^- \[(?P<status>answered|open\b[^\]\n]*)\] (?P<fence>"+)(?P<rest>.*)$')


def ends_turn(message: BaseMessage) -> bool:
    """An AI message that ends the agent's turn: text (a string, or ``text`` blocks) that is not
    blank, and no tool call (valid or not).

    Example:
        >>> ends_turn(AIMessage("Done.")), ends_turn(AIMessage([{"type": "thinking", "thinking": "x"}]))
        (True, False)
    """
    if not isinstance(message, AIMessage) or message.tool_calls or message.invalid_tool_calls:
        return False
    return bool(_reply_text(message.content).strip())


def _reply_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        b if isinstance(b, str) else str(b.get("text") or "")
        for b in content or []
        if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
    )


def answered_requests(
    positions: Sequence[int], answers: Sequence[int], until: int | None = None
) -> list[bool]:
    """Per request (its position, oldest first): whether an answer's position lies after it and
    before the next request's (and before ``until``, the model call, when given)."""
    out = []
    for k, start in enumerate(positions):
        end = positions[k + 1] if k + 1 < len(positions) else None
        out.append(
            any(
                start < a and (end is None or a < end) and (until is None or a < until)
                for a in answers
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class ShownRequest:
    """One item of the section."""

    answered: bool
    """Shown ``[answered]`` (else one of the ``[open …]`` statuses)."""
    text: str
    """The quoted request, whitespace-collapsed (a shortened one without its ``…``)."""
    shortened: bool = False


@dataclass(frozen=True, slots=True)
class KnownRequest:
    """One real request, as the truth knows it."""

    opening: str
    """Its first characters, as ``earlier_user_messages`` checks them."""
    text: str
    answered: bool
    in_window: bool = False
    """Its own message is in the request (so the section need not show it)."""


@dataclass(frozen=True, slots=True)
class StatusGrade:
    """The section of one request against the truth."""

    right: int
    graded: int
    """Shown requests matched to a real one."""
    answered_shown_open: int
    open_shown_answered: int
    unmatched: int
    """Shown requests matched to none."""
    wrong: tuple[str, ...] = ()
    """``"answered shown as open: <opening>"`` / ``"open shown as answered: <opening>"``."""

    def counts(self) -> dict[str, int]:
        """The :data:`STATUS_COUNTS` as a plain dict."""
        return {k: getattr(self, k) for k in STATUS_COUNTS}


def parse_section(text: str) -> list[ShownRequest] | None:
    """The requests the section in ``text`` shows, in order; None when it has no section."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln.strip() == SECTION_OPEN), None)
    if start is None:
        return None
    body = lines[start + 1 :]
    end = next((i for i, ln in enumerate(body) if ln.strip() == SECTION_CLOSE), len(body))
    body = body[:end]
    out: list[ShownRequest] = []
    i = 0
    while i < len(body):
        m = _ITEM.match(body[i])
        i += 1
        if m is None:
            continue
        fence, rest = m.group("fence"), m.group("rest")
        if len(fence) >= 3 and not rest.strip():
            block = []
            while i < len(body) and not _closes(body[i], fence):
                block.append(body[i])
                i += 1
            i += 1
            quoted = "\n".join(block)
        else:
            quoted = _single_line(rest, fence)
        out.append(_shown(m.group("status") == "answered", quoted))
    return out


def _closes(line: str, fence: str) -> bool:
    return line.startswith(fence) and not line.startswith(fence + '"')


def _single_line(rest: str, fence: str) -> str:
    close = re.compile(r'(?<!")' + re.escape(fence) + r'(?!")(?=\s*$| →| \()')
    m = close.search(rest)
    return rest[: m.start()] if m else rest


def _shown(answered: bool, quoted: str) -> ShownRequest:
    text = " ".join(quoted.split())
    if text.endswith(SHORTENED):
        return ShownRequest(answered, text.removesuffix(SHORTENED).rstrip(), True)
    return ShownRequest(answered, text)


def _matches(shown: ShownRequest, known: KnownRequest) -> bool:
    t, key = shown.text, known.opening
    return bool(t and key) and (t.startswith(key) or (shown.shortened and key.startswith(t)))


def _whole(shown: ShownRequest, known: KnownRequest) -> bool:
    return known.text.startswith(shown.text) if shown.shortened else known.text == shown.text


def _align(
    shown: Sequence[ShownRequest], known: Sequence[KnownRequest]
) -> list[tuple[ShownRequest, KnownRequest]]:
    """The shown requests paired in order with the real ones they quote (see the module
    docstring)."""
    pairs = [(i, k) for i, s in enumerate(shown) for k, r in enumerate(known) if _matches(s, r)]
    folded = [0]  # folded[k]: real requests before k not verbatim in the window
    for r in known:
        folded.append(folded[-1] + (not r.in_window))
    best: list[tuple[tuple[int, ...], int]] = []  # per pair: (score, previous pair)
    for n, (i, k) in enumerate(pairs):
        own: tuple[int, ...] = (1, int(_whole(shown[i], known[k])), 0, -int(known[k].in_window), k)
        score, back = own, -1
        for m in range(n):
            (pi, pk), (prev, _) = pairs[m], best[m]
            if pi < i and pk < k:
                skipped = (0, 0, folded[k] - folded[pk + 1], 0, 0)
                grown = tuple(a + b - c for a, b, c in zip(prev, own, skipped, strict=True))
                if grown > score:
                    score, back = grown, m
        best.append((score, back))
    chain: list[tuple[ShownRequest, KnownRequest]] = []
    at = max(range(len(pairs)), key=lambda n: best[n][0], default=-1)
    while at >= 0:
        chain.append((shown[pairs[at][0]], known[pairs[at][1]]))
        at = best[at][1]
    return chain[::-1]


def grade(shown: Sequence[ShownRequest], known: Sequence[KnownRequest]) -> StatusGrade:
    """The shown statuses against the real ones (``known``: the requests so far, oldest first).

    Example:
        >>> g = grade([ShownRequest(False, "Fix it."), ShownRequest(True, "Mystery")],
        ...           [KnownRequest("Fix it.", "Fix it.", answered=True)])
        >>> g.right, g.graded, g.answered_shown_open, g.unmatched, g.wrong
        (0, 1, 1, 1, ('answered shown as open: Fix it.',))
    """
    pairs = _align(shown, known)
    wrong = [
        f"{'answered shown as open' if k.answered else 'open shown as answered'}: {k.opening}"
        for s, k in pairs
        if s.answered != k.answered
    ]
    answered_open = sum(1 for s, k in pairs if k.answered and not s.answered)
    return StatusGrade(
        right=len(pairs) - len(wrong),
        graded=len(pairs),
        answered_shown_open=answered_open,
        open_shown_answered=len(wrong) - answered_open,
        unmatched=len(shown) - len(pairs),
        wrong=tuple(wrong),
    )
