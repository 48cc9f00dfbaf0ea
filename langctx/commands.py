"""The ``/compact [focus]`` command and langctx's notices: control messages, never logged.

Example:
    >>> parse_compact_command(HumanMessage("/compact keep the lexer notes"))
    'keep the lexer notes'
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage

from langctx.entries import CompactionEntry, covered_count
from langctx.markers import NOTICE_ID_PREFIX, NOTICE_MARK, NOTICE_METADATA_KEY

COMPACT_COMMAND = "/compact"


def parse_compact_command(message: BaseMessage) -> str | None:
    """The focus instructions of a ``/compact`` human message ("" when none), else None."""
    if not isinstance(message, HumanMessage):
        return None
    text = message.text.strip()
    head, rest = text[: len(COMPACT_COMMAND)], text[len(COMPACT_COMMAND) :]
    if head != COMPACT_COMMAND or rest[:1] not in ("", " ", "\n"):
        return None
    return rest.strip()


ACK_REQUEST = (
    f"{NOTICE_MARK} The conversation history was just compacted at the user's request (the summary "
    "above stands in for earlier turns). Reply with one short sentence confirming it; do not "
    "continue the task until the user asks."
)
"""Sent to the model instead of the command where it cannot be skipped (``pre_model_hook``)."""


def is_notice(message: BaseMessage) -> bool:
    """True for a notice langctx added: its id, metadata mark and text (a client may set any id)."""
    return (
        isinstance(message, AIMessage)
        and isinstance(message.id, str)
        and message.id.startswith(NOTICE_ID_PREFIX)
        and message.response_metadata.get(NOTICE_METADATA_KEY) == "notice"
        and isinstance(message.content, str)
        and message.content.startswith(NOTICE_MARK)
    )


def is_control_message(message: BaseMessage) -> bool:
    """True for a ``/compact`` command or a langctx notice (never logged, never projected)."""
    return is_notice(message) or parse_compact_command(message) is not None


def state_messages(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation in ``messages``: everything but control messages."""
    return [m for m in messages if not is_control_message(m)]


def pending_command(messages: Sequence[BaseMessage]) -> tuple[BaseMessage, str] | None:
    """The last message and its focus instructions, when it is a ``/compact`` command."""
    if not messages:
        return None
    last = messages[-1]
    instructions = parse_compact_command(last)
    return None if instructions is None else (last, instructions)


def compact_notice(
    entry: CompactionEntry | None,
    *,
    tokens: int,
    tokens_after: int | None = None,
    instructions: str = "",
) -> AIMessage:
    """The notice that replaces a handled ``/compact`` command in ``messages``."""
    if entry is None:
        text = (
            f"{NOTICE_MARK} Nothing to compact yet: the conversation ({tokens} tokens) is all recent "
            "turns."
        )
    else:
        after = entry["tokens_after"] if tokens_after is None else tokens_after
        text = (
            f"{NOTICE_MARK} Compacted {covered_count(entry)} messages into a summary "
            f"({entry['quality']}); context {tokens} -> {after} tokens."
        )
        if instructions:
            text += f" Focus: {instructions}"
    return AIMessage(
        text,
        id=f"{NOTICE_ID_PREFIX}{uuid.uuid4().hex}",
        response_metadata={NOTICE_METADATA_KEY: "notice"},
    )


def handled_command(
    command: tuple[BaseMessage, str],
    entry: CompactionEntry | None,
    *,
    tokens: int,
    tokens_after: int,
) -> list[BaseMessage]:
    """The ``messages`` update after handling a command: remove it, add the notice."""
    message, instructions = command
    notice = compact_notice(
        entry, tokens=tokens, tokens_after=tokens_after, instructions=instructions
    )
    return [RemoveMessage(id=str(message.id)), notice]
