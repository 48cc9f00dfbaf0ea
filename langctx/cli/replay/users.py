"""The real user messages of a recorded session, read from its raw file: truth for two probes.

The replay's ``latest_user_message`` and ``earlier_user_messages`` probes grade whether langctx
keeps what the user said, so their truth must not come from langctx: this module reads the
session file itself (not the replay reader's messages, not :mod:`langctx.machinery`), with the
text rule of :func:`~langctx.cli.replay.truth.user_pieces`:

* Claude Code JSONL: ``user`` lines with a string or text blocks (``tool_result`` blocks are not
  the user's), not ``isMeta`` (text Claude Code injected: a command's expanded prompt, a skill
  body, caveats, hook feedback; unless the line holds the arguments of a command the user ran),
  not a compact summary, not a sidechain line of a main session. A slash command's
  ``<command-args>`` are the user's words unless ``<local-command-stdout>`` follows it (it ran
  in the terminal).
* Codex rollouts: the ``event_msg`` ``user_message`` payloads (what the user typed); in rollouts
  without them, the user ``message`` items less the context blocks Codex injects.
* pi: the ``user`` messages of the branch that ends at the last entry.
* LangChain message JSONL: the ``user_messages`` of the ``<id>.truth.json`` beside the file
  (derived from the original recording), each placed at the human line it opens (and taken
  whole from it when the recording clipped it); without one, the human lines.
* OpenAI / Anthropic request bodies: the ``user`` messages.

A message's position is the line (JSONL) or index (JSON document) the replay reader puts in its
message ids, so :func:`position_of` tells how far the session has got at a model call.

Example:
    >>> import json
    >>> text = "\\n".join(json.dumps(r) for r in [
    ...     {"type": "user", "message": {"role": "user", "content": "Fix the parser."}},
    ...     {"type": "user", "isMeta": True, "message": {"role": "user", "content": "Caveat: x"}},
    ...     {"type": "assistant", "message": {"role": "assistant", "content": []}}])
    >>> [(u.position, u.text) for u in parse_user_messages(text, "claude-code")]
    [(1, 'Fix the parser.')]
    >>> position_of("session:12.1"), position_of("doc:m3"), position_of("doc:system")
    (12, 3, None)
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from langctx.cli.replay.truth import (
    UserMessage,
    command_args,
    is_local_output,
    not_typed,
    position_of,
    user_pieces,
)

__all__ = [
    "CLIPPED_CHARS",
    "parse_user_messages",
    "position_of",
    "read_user_messages",
    "truth_file",
]

CLIPPED_CHARS = 1000
"""The length at which the recordings' ``truth.json`` clips a user message."""

_LEADING_COMMAND = re.compile(r"^/\S+\s+")


def truth_file(path: str | Path) -> Path:
    """The ``<id>.truth.json`` beside a ``<id>.messages.jsonl`` recording."""
    p = Path(path)
    return p.with_name(p.name.removesuffix(".jsonl").removesuffix(".messages") + ".truth.json")


def read_user_messages(path: str | Path, format: str) -> tuple[UserMessage, ...] | None:
    """The real user messages of the session file at ``path`` (read as ``format``, one of the
    replay's formats), oldest first; None when the file cannot be read this way."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
        truth: Any = None
        if format == "langchain" and truth_file(path).is_file():
            truth = json.loads(truth_file(path).read_text(encoding="utf-8"))
        return parse_user_messages(text, format, truth=truth)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def parse_user_messages(
    text: str, format: str, *, truth: Mapping[str, Any] | None = None
) -> tuple[UserMessage, ...]:
    """The real user messages of session ``text`` in ``format`` (see the module docstring).

    Args:
        text: the session file's content.
        format: ``claude-code``, ``codex``, ``pi``, ``langchain`` or ``openai``.
        truth: for ``langchain``, the recording's truth file (its ``user_messages`` are used).

    Raises:
        ValueError: the text is not JSON / JSONL, or the format is unknown.
    """
    doc = _document(text)
    if doc is not None and (isinstance(doc, list) or "messages" in doc or "system" in doc):
        items = doc if isinstance(doc, list) else doc.get("messages") or []
        records = list(enumerate(items))  # the reader's ids say m<index>
    else:
        records = [(1, doc)] if doc is not None else list(_lines(text))
    records = [(n, r) for n, r in records if isinstance(r, Mapping)]
    if format == "claude-code":
        return tuple(_claude_code(records))
    if format == "codex":
        return tuple(_codex(records))
    if format == "pi":
        return tuple(_pi(records))
    if format == "langchain":
        users = truth.get("user_messages") if truth is not None else None
        if isinstance(users, list):
            return tuple(_placed([str(u) for u in users], records))
        return tuple(_langchain(records))
    if format == "openai":
        return tuple(_openai(records))
    msg = f"no user-message reader for format {format!r}"
    raise ValueError(msg)


def _document(text: str) -> Any:
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return None  # JSONL


def _lines(text: str) -> Iterator[tuple[int, Any]]:
    for n, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield n, json.loads(line)


def _text_blocks(content: Any) -> list[Any]:
    """The string and text blocks of a message's content (tool results and images left out)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b
        for b in content
        if isinstance(b, str)
        or (isinstance(b, Mapping) and b.get("type") in ("text", "input_text"))
    ]


def _joined(blocks: Sequence[Any]) -> str:
    return "\n".join(b if isinstance(b, str) else str(b.get("text") or "") for b in blocks)


# ------------------------------------------------------------------------------------ formats


def _claude_code(records: list[tuple[int, Any]]) -> Iterator[UserMessage]:
    talk = [r for _, r in records if r.get("type") in ("user", "assistant")]
    subagent = bool(talk) and all(r.get("isSidechain") for r in talk)
    held: UserMessage | None = None  # a command's arguments, until we know it was not local
    for line, rec in records:
        kind = rec.get("type")
        if kind not in ("user", "assistant") or (rec.get("isSidechain") and not subagent):
            continue
        message = rec.get("message")
        blocks = _text_blocks(message.get("content") if isinstance(message, Mapping) else None)
        if kind == "assistant" or not blocks:
            if held is not None:
                yield held
            held = None
            continue
        raw = _joined(blocks)
        if is_local_output(raw):
            held = None  # the command before ran in the terminal: its arguments were settings
        elif held is not None:
            yield held
            held = None
        if rec.get("isCompactSummary") or rec.get("isVisibleInTranscriptOnly"):
            continue
        asked = bool(command_args(raw))
        if rec.get("isMeta") and not asked:
            continue
        user = UserMessage.of(line, user_pieces(blocks))
        if user is None:
            continue
        if asked:
            held = user
        else:
            yield user
    if held is not None:
        yield held


def _codex(records: list[tuple[int, Any]]) -> Iterator[UserMessage]:
    typed = [
        (line, payload)
        for line, rec in records
        if rec.get("type") == "event_msg"
        and isinstance(payload := rec.get("payload"), Mapping)
        and payload.get("type") == "user_message"
    ]
    if typed:
        for line, payload in typed:
            message = payload.get("message")
            user = UserMessage.of(line, user_pieces(message if isinstance(message, str) else ""))
            if user is not None:
                yield user
        return
    for line, rec in records:
        item = rec.get("payload") if rec.get("type") == "response_item" else rec
        if (
            isinstance(item, Mapping)
            and item.get("type") == "message"
            and item.get("role") == "user"
        ):
            user = UserMessage.of(line, user_pieces(_text_blocks(item.get("content"))))
            if user is not None:
                yield user


def _pi(records: list[tuple[int, Any]]) -> Iterator[UserMessage]:
    entries = [(line, rec) for line, rec in records if rec.get("type") != "session"]
    if any("parentId" in rec and "id" in rec for _, rec in entries) and entries:
        by_id = {str(rec["id"]): (line, rec) for line, rec in entries if rec.get("id") is not None}
        branch: list[tuple[int, Any]] = []
        current: tuple[int, Any] | None = entries[-1]
        seen: set[str] = set()
        while current is not None and str(current[1].get("id")) not in seen:
            branch.append(current)
            seen.add(str(current[1].get("id")))
            parent = current[1].get("parentId")
            current = by_id.get(str(parent)) if parent is not None else None
        entries = branch[::-1]
    for line, rec in entries:
        message = rec.get("message")
        if rec.get("type") == "message" and isinstance(message, Mapping):
            if message.get("role") == "user":
                user = UserMessage.of(line, user_pieces(_text_blocks(message.get("content"))))
                if user is not None:
                    yield user


def _human_records(records: list[tuple[int, Any]]) -> Iterator[tuple[int, Any, Any]]:
    """``(position, content, additional_kwargs)`` of the human records of a LangChain session."""
    for line, rec in records:
        data = rec.get("data") if isinstance(rec.get("data"), Mapping) else rec
        if rec.get("type") == "human":
            extra = data.get("additional_kwargs")
            yield line, data.get("content"), extra if isinstance(extra, Mapping) else {}


def _langchain(records: list[tuple[int, Any]]) -> Iterator[UserMessage]:
    for line, content, extra in _human_records(records):
        if not not_typed(extra):
            user = UserMessage.of(line, user_pieces(_text_blocks(content)))
            if user is not None:
                yield user


def _match(key: str, line: str, how: int) -> bool:
    if how == 0:
        return line == key
    if how == 1:
        return line.startswith(key) or _LEADING_COMMAND.sub("", line).startswith(key)
    return key in line


def _placed(texts: list[str], records: list[tuple[int, Any]]) -> Iterator[UserMessage]:
    """The recording's user messages, each at the first human line from the previous one's that
    is it, else opens with it, else holds it. An entry the recording clipped
    (:data:`CLIPPED_CHARS`) is taken whole from the line it opens."""
    lines = [
        (line, content, " ".join(_joined(_text_blocks(content)).split()))
        for line, content, _ in _human_records(records)
    ]
    cursor = 0
    last: UserMessage | None = None
    for text in texts:
        user = UserMessage.of(0, user_pieces(text))
        if user is None or not lines:
            continue
        found = next(
            (
                (cursor + i, how)
                for how in range(3)
                for i, (_, _, flat) in enumerate(lines[cursor:])
                if _match(user.text, flat, how)
            ),
            None,
        )
        if found is None and last is not None and user.pieces == last.pieces:
            continue  # aider logs "/ask X", then the " X" it sends: one message on one line
        if found is None:  # not in the file: say it where the previous one was said
            last = UserMessage(lines[max(cursor - 1, 0)][0], user.pieces)
            yield last
            continue
        at, how = found
        cursor = at + 1
        line, content, _ = lines[at]
        whole = UserMessage.of(line, user_pieces(_text_blocks(content)))
        clipped = how == 1 and len(text) >= CLIPPED_CHARS
        last = whole if clipped and whole is not None else UserMessage(line, user.pieces)
        yield last


def _openai(records: list[tuple[int, Any]]) -> Iterator[UserMessage]:
    for position, rec in records:
        if rec.get("role") == "user":
            user = UserMessage.of(position, user_pieces(_text_blocks(rec.get("content"))))
            if user is not None:
                yield user
