"""The user's own words: real user messages (no machinery, no command), stored when folded, quoted.

Example:
    >>> facts = user_message_facts([HumanMessage("Now the lexer.", id="u2")])
    >>> old = [{"id": "u1", "text": "Fix the parser test.", "answer": "Fixed: it passes."}]
    >>> items, _ = merge_user_messages(old, facts)
    >>> print(render_user_messages(items, max_tokens=60, count=lambda s: len(s) // 4))
    User requests (the user's own words, oldest first, each with its status):
    - [answered] "Fix the parser test." → the agent answered: "Fixed: it passes."
    - [latest: act on it unless the messages below answer it] "Now the lexer."
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage

from langctx.commands import is_control_message
from langctx.entries import user_count
from langctx.errors import StateVersionError
from langctx.facts.record import MAX_CONSTRAINT_CHARS
from langctx.machinery import is_machinery, substantive_text
from langctx.monotone import largest
from langctx.surrogates import encodable_text

MAX_STORED_CHARS = 16_000
"""Characters of one user message an entry stores (head and tail beyond it, marked)."""

FULL_STORED = 8
"""The newest user messages of an entry stored whole; older ones by their opening words."""

MAX_STORED_MESSAGES = 256
"""User messages the ledger lists at most; older ones are only counted (``users_dropped``)."""

SHORT_CHARS = 80
"""Characters of an older user message's opening words (whitespace collapsed, cut at a word)."""

ANSWER_SHOWN_CHARS = 48
"""Characters of an answer's opening words a request's line shows (the ledger stores more)."""

_CUT = "[…cut…]"
_SHORTENED = " [shortened]"
_TITLE = "User requests (the user's own words, oldest first, each with its status):"


def user_text(message: BaseMessage) -> str:
    """The words of a real user message ("" for anything else)."""
    if not isinstance(message, HumanMessage) or is_machinery(message):
        return ""
    return "" if is_control_message(message) else substantive_text(message)


def _head_tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = max(1, (limit - len(_CUT)) // 2)
    return f"{text[:half]}{_CUT}{text[-half:]}"


def opening(text: str, limit: int = SHORT_CHARS) -> str:
    """The first ``limit`` characters of ``text`` with whitespace collapsed, cut at a word."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    space = cut.rfind(" ")
    return (cut[:space] if space >= limit * 4 // 5 else cut) + "…"


def user_message_facts(messages: Iterable[BaseMessage]) -> list[dict[str, Any]]:
    """``{"id", "text"}`` of each real user message in ``messages``, in order (stored form)."""
    return [
        {"id": str(m.id), "text": _head_tail(text, MAX_STORED_CHARS)}
        for m in messages
        if (text := user_text(m))
    ]


def stored_user_messages(items: object) -> list[dict[str, Any]]:
    """Folded user messages read from an entry's facts, bounded, encodable, malformed ones skipped."""
    if not isinstance(items, list | tuple):
        return []
    return [
        {
            "id": encodable_text(item["id"]),
            "text": _head_tail(encodable_text(item["text"]), MAX_STORED_CHARS),
            **({"short": True} if item.get("short") else {}),
            **_constraints_of(item),
            **_answer_of(item),
        }
        for item in items
        if isinstance(item, Mapping)
        and isinstance(item.get("id"), str)
        and isinstance(item.get("text"), str)
    ]


def merge_user_messages(*parts: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The user messages of several entries' facts, oldest first, each once (the newest
    :data:`FULL_STORED` whole), and how many of the oldest were only counted."""
    return merge_read_user_messages(*[stored_user_messages(part) for part in parts])


def merge_read_user_messages(
    *parts: Sequence[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], int]:
    """:func:`merge_user_messages` of parts already in the stored shape (left unmodified)."""
    seen: dict[str, Mapping[str, Any]] = {}
    for part in parts:
        for item in part:
            old = seen.setdefault(item["id"], item)
            if item.get("answer") and not old.get("answer"):  # a later fold found its answer
                seen[item["id"]] = {**old, "answer": item["answer"]}
    items = [dict(item) for item in seen.values()]
    for item in items[:-FULL_STORED]:
        if not item.get("short"):
            item["text"], item["short"] = opening(item["text"]), True
    extra = max(0, len(items) - MAX_STORED_MESSAGES)
    return items[extra:], extra


def _constraints_of(item: Mapping[str, Any]) -> dict[str, list[str]]:
    found = item.get("constraints")
    if not isinstance(found, list):
        return {}
    kept = [encodable_text(c)[:MAX_CONSTRAINT_CHARS] for c in found if isinstance(c, str) and c]
    return {"constraints": kept[:MAX_CONSTRAINTS]} if kept else {}


MAX_CONSTRAINTS = 8
"""Constraint sentences a stored user message keeps beside its opening words."""

ANSWER_CHARS = 200
"""Characters of a request's answer kept (its first line, :mod:`langctx.requests`)."""


def _answer_of(item: Mapping[str, Any]) -> dict[str, str]:
    found = item.get("answer")
    if not isinstance(found, str) or not found.strip():
        return {}
    return {"answer": opening(encodable_text(found), ANSWER_CHARS)}


def _quoted(text: str) -> str:
    """One message as a list item, its text byte-exact: ``- "text"`` on one line; several lines
    between two fence lines of quotes (longer than any run of quotes in the text), unindented."""
    if "\n" not in text:
        return f'- "{text}"'
    longest = max((len(run) for run in re.findall(r'"+', text)), default=0)
    fence = '"' * max(3, longest + 1)
    return f"- {fence}\n{text}\n{fence}"


def render_user_messages(
    items: Sequence[Mapping[str, Any]],
    *,
    max_tokens: int,
    count: Callable[[str], int],
    dropped: int = 0,
    verbatim_tokens: int | None = None,
) -> str:
    """The "User requests" section of a summary block, within ``max_tokens`` ("" when none):
    the newest (cut head + tail only when over ``verbatim_tokens``), then, newest first, earlier
    ones verbatim within ``verbatim_tokens``, then by their opening words; the rest counted.

    Each line starts with the request's status (:mod:`langctx.requests`): ``[answered]`` (an
    item with an ``answer``, quoted after it), else ``[latest: ...]`` for the newest request and
    ``[open, interrupted]`` for an older one (a newer request followed it); ``[command]`` for a
    slash command. Only what was folded decides it, so the block changes only at a fold (no
    prompt-cache break): the newest request's answer, until folded, is in the messages below.
    An item with ``"task": True`` stands for the pinned task (by its opening words)."""
    verbatim = max_tokens if verbatim_tokens is None else min(verbatim_tokens, max_tokens)
    items = [i for i in items if i.get("text")]
    asked = [k for k, i in enumerate(items) if i.get("task") or not is_command(str(i["text"]))]
    items = [{**i, "status": _status(i, [k] == asked[-1:])} for k, i in enumerate(items)]
    if not items:
        return ""
    title = count(_TITLE)
    last = items[-1]
    newest = str(last["text"])
    if count(_TITLE + "\n" + _line(last, newest)) > verbatim:
        room = verbatim - title - 4 - count(_line(last, ""))
        newest = _fit_head_tail(newest, room, count)
    shown = [_line(last, newest)]
    short_only = False  # once an earlier message is shortened, the older ones are too
    used = count(shown[0]) + 1  # the lines shown, each counted once with its newline
    for item in reversed(items[:-1]):
        full = not (short_only or item.get("short"))
        more = _more(len(items) - len(shown) - 1 + dropped)
        rest = title + count(more) + 1 + used  # each line with its newline: an upper bound
        lines = _candidates(item, verbatim if full else None, max_tokens)
        for index, (line, cap) in enumerate(lines):
            n = count(line) + 1
            if rest + n <= cap or count("\n".join([_TITLE, more, line, *shown])) <= cap:
                short_only = short_only or (full and index > 0)  # (near the cap: exact count)
                break
        else:
            break
        shown.insert(0, line)
        used += n
    return _section(shown, len(items) - len(shown) + dropped, max_tokens, count)


ANSWERED = "answered"
LATEST = "latest: act on it unless the messages below answer it"
INTERRUPTED = "open, interrupted"


COMMAND = "command"
_COMMAND = re.compile(r"/[A-Za-z][\w:-]*(?:\s|$)")


def is_command(text: str) -> bool:
    """True for a slash command the user ran (``/run pytest``, ``/compact``): not a request to
    the agent; what it prints is the command's output, not an answer."""
    return _COMMAND.match(text.lstrip()) is not None


def _status(item: Mapping[str, Any], newest: bool) -> str:
    if is_command(str(item["text"])) and not item.get("task"):
        return COMMAND
    if item.get("answer"):
        return ANSWERED
    return LATEST if newest else INTERRUPTED


def _line(item: Mapping[str, Any], text: str, tail: str = "", *, answer: bool = True) -> str:
    """``text`` quoted as ``item``'s list item: its status first, the first words of its answer
    after (:data:`ANSWER_SHOWN_CHARS`; the whole first line is stored) unless ``answer`` is
    False (the status alone)."""
    quoted = _quoted(text)[2:] + tail
    if item.get("task"):
        quoted += " (the task, pinned above)"
    said = str(item.get("answer") or "") if answer else ""
    said = opening(said, ANSWER_SHOWN_CHARS)
    after = f' → the agent answered: "{said}"' if said else ""
    return f"- [{item['status']}] {quoted}{after}"


def _candidates(
    item: Mapping[str, Any], verbatim: int | None, max_tokens: int
) -> list[tuple[str, int]]:
    """An earlier message's lines, best first, each with its cap: verbatim (unless ``None``),
    by its opening words with the user's constraints verbatim (:func:`_with_rules`), by its
    opening words, and for an answered one by its opening words and its status alone (before
    it is only counted)."""
    text = str(item["text"])
    head = opening(text)
    short = _SHORTENED if head != text else ""
    rules = [c for c in _constraints_of(item).get("constraints", []) if c not in head]
    lines = [(_line(item, text), verbatim)] if verbatim is not None else []
    if rules:
        lines.append((_with_rules(item, head, rules), max_tokens))
    lines.append((_line(item, head, short), max_tokens))
    if item.get("answer"):
        lines.append((_line(item, head, short, answer=False), max_tokens))
    return lines


def _with_rules(item: Mapping[str, Any], head: str, rules: Sequence[str]) -> str:
    """The line by ``head`` with the user's constraints verbatim, never saying a thing twice: a
    constraint that begins with the opening words stands for them, and the whole message
    stands for both when it is stored whole and no longer."""
    text = str(item["text"])
    stem = head.removesuffix("…")
    lead = next((c for c in rules if " ".join(c.split()).startswith(stem)), None)
    quote = head if lead is None else lead
    rest = [c for c in rules if c is not lead]
    said = "; ".join(f'"{c}"' for c in rest)
    said = f", saying: {said}" if rest else ""
    line = _line(item, quote, ("" if quote == text else _SHORTENED) + said)
    whole = _line(item, text)
    return whole if not item.get("short") and len(whole) <= len(line) else line


def _section(shown: list[str], hidden: int, max_tokens: int, count: Callable[[str], int]) -> str:
    """The section; the oldest lines shown give way while it counts over ``max_tokens``."""
    while True:
        more = _more(hidden)
        text = "\n".join([_TITLE, *([more] if more else []), *shown])
        if len(shown) == 1 or count(text) <= max_tokens:
            return text
        shown.pop(0)
        hidden += 1


def _more(n: int) -> str:
    return f"- [{n} earlier user message{'s' if n != 1 else ''} not shown]" if n > 0 else ""


def _fit_head_tail(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """``text`` cut to head + tail (marked) so that it counts at most ``max_tokens``."""
    fits = largest(
        lambda n: count(_head_tail(text, n + len(_CUT))) <= max(1, max_tokens), len(text)
    )
    return _head_tail(text, fits + len(_CUT)) if fits else _CUT


# ---------------------------------------------------------------------- the ledger

Ledger = tuple[list[dict[str, Any]], int]
"""The folded user messages, each stored once: the items (stored shape, oldest first, the newest
:data:`FULL_STORED` whole, at most :data:`MAX_STORED_MESSAGES`) and how many older ones are only
counted. The ``langctx`` channel keeps it under ``users`` / ``users_dropped``; entries keep only
how many user messages they stand for (``facts["users"]``, :func:`user_count`)."""


def ledger_appended(ledger: Ledger, items: Sequence[Mapping[str, Any]], dropped: int = 0) -> Ledger:
    """``ledger`` with ``items`` (stored shape) appended, each id once, bounded; ``dropped`` more
    older ones counted."""
    merged, extra = merge_read_user_messages(ledger[0], items)
    return merged, ledger[1] + dropped + extra


def ledger_from_facts(facts: Iterable[Mapping[str, Any]]) -> Ledger:
    """The ledger of a state written before it existed: the ``user_messages`` of the active
    entries' facts (highest level first, then by creation), merged as the summary block read
    them (docs/persistence.md, "The user-message ledger")."""
    parts = list(facts)
    items, extra = merge_user_messages(*[f.get("user_messages") or () for f in parts])
    dropped = sum(
        user_count({"user_messages_dropped": f.get("user_messages_dropped")}) for f in parts
    )
    return items, dropped + extra


def ledger_tail(ledger: Ledger, count: int) -> Ledger:
    """The newest ``count`` folded user messages of ``ledger`` (what the active entries stand
    for: those a provider's compaction item replaced are left out), and how many are counted."""
    items, dropped = ledger
    if count >= len(items) + dropped:
        return items, dropped
    shown = items[len(items) - count :] if count > 0 else []
    return shown, max(0, count - len(shown))


def ledger_prefix(ledger: Ledger, count: int) -> Ledger:
    """The oldest ``count`` folded user messages of ``ledger`` (the entries of a state cut back
    to its first entries stand for them)."""
    items, dropped = ledger
    return items[: max(0, count - dropped)], min(dropped, max(count, 0))


def stored_ledger(items: object, dropped: object = 0) -> Ledger:
    """A ledger read from untrusted state: malformed items skipped, texts cut, bounded.

    Raises:
        StateVersionError: ``items`` is not a list, or ``dropped`` not an int >= 0.
    """
    if not isinstance(items, list):
        msg = f"the langctx channel's users must be a list of user messages, got {type(items).__name__}."
        raise StateVersionError(msg)
    if dropped is None:
        dropped = 0
    if not isinstance(dropped, int) or isinstance(dropped, bool) or dropped < 0:
        msg = f"the langctx channel's users_dropped must be an int >= 0, got {dropped!r:.40}."
        raise StateVersionError(msg)
    # the newest ones only: a huge list is not read whole
    kept = items[-MAX_STORED_MESSAGES:]
    merged, extra = merge_user_messages(kept)
    return merged, dropped + extra + len(items) - len(kept)
