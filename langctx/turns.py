"""Turns and safe cut points: a cut falls only at the start of a *unit* (an AI message with its
tool calls' results, or any other single message)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.blocks import has_thinking, starts_with_thinking


@dataclass(frozen=True, slots=True)
class Unit:
    """Messages ``[start, end)`` of a sequence that stay together."""

    start: int
    end: int
    pending: bool = False
    """True when some tool call of the unit has no result yet."""


@dataclass(frozen=True, slots=True)
class UnitGrouping:
    """The units of a sequence, plus what did not fit a unit."""

    units: list[Unit]
    orphans: list[int] = field(default_factory=list)
    """Indices of ToolMessages whose tool call is not in the sequence (or came after them)."""
    unanswered: dict[int, list[str]] = field(default_factory=dict)
    """AIMessage index -> ids of its tool calls that were never answered before the next turn."""


def tool_call_ids(message: BaseMessage) -> list[str]:
    """Ids of an AI message's tool calls, with the invalid ones that have an id and a name."""
    if not isinstance(message, AIMessage):
        return []
    ids = [str(tc.get("id")) for tc in message.tool_calls if tc.get("id")]
    ids.extend(
        str(tc.get("id")) for tc in message.invalid_tool_calls if tc.get("id") and tc.get("name")
    )
    return ids


def opens_turn(message: BaseMessage, after_tool: bool) -> bool:
    """True when ``message`` opens a turn, as the provider sees it: a human message right after a
    tool result (``after_tool``, :func:`after_tool_result`) continues the assistant turn.

    Example:
        >>> opens_turn(HumanMessage("Next task."), False), opens_turn(HumanMessage("Also..."), True)
        (True, False)
    """
    return isinstance(message, HumanMessage) and not after_tool


def after_tool_result(message: BaseMessage, after_tool: bool) -> bool:
    """``after_tool`` for the message after ``message``: set by a tool result, cleared by an AI
    message."""
    if isinstance(message, HumanMessage | SystemMessage):
        return after_tool
    return isinstance(message, ToolMessage)


def pair_errors(messages: Sequence[BaseMessage]) -> tuple[int, int]:
    """(tool results that answer no earlier call, tool calls without a result): 0, 0 in every
    projection.
    """
    calls: set[str] = set()
    answered: set[str] = set()
    orphans = 0
    for m in messages:
        if isinstance(m, AIMessage):
            calls.update(tool_call_ids(m))
        elif isinstance(m, ToolMessage):
            if m.tool_call_id in calls and m.tool_call_id not in answered:
                answered.add(m.tool_call_id)
            else:
                orphans += 1
    return orphans, len(calls - answered)


def group_units(messages: Sequence[BaseMessage]) -> UnitGrouping:
    """Split messages into units that a cut may not divide.

    Tool results join their open AI turn in any order; others are ``orphans``. Calls still open
    at the next non-tool message are ``unanswered``, at the end ``pending``. In a turn that
    started with thinking, a message without a thinking block joins the unit before (Anthropic).
    """
    units: list[Unit] = []
    orphans: list[int] = []
    unanswered: dict[int, list[str]] = {}
    open_start: int | None = None
    open_ids: set[str] = set()
    open_order: list[str] = []

    for i, msg in enumerate(messages):
        if isinstance(msg, ToolMessage):
            if open_start is None or msg.tool_call_id not in open_ids:
                orphans.append(i)
                continue
            open_ids.discard(msg.tool_call_id)
            if not open_ids:
                units.append(Unit(open_start, i + 1))
                open_start = None
            continue
        if open_start is not None:  # a turn left with calls unanswered
            unanswered[open_start] = [c for c in open_order if c in open_ids]
            units.append(Unit(open_start, i))
            open_start = None
        open_order = tool_call_ids(msg)
        if open_order:
            open_start, open_ids = i, set(open_order)
        else:
            units.append(Unit(i, i + 1))
    if open_start is not None:
        units.append(Unit(open_start, len(messages), pending=True))
    return UnitGrouping(
        units=_join_thinking_turns(messages, units), orphans=orphans, unanswered=unanswered
    )


def _join_thinking_turns(messages: Sequence[BaseMessage], units: list[Unit]) -> list[Unit]:
    """Merge each unit that may not start a kept part of a thinking turn into the unit before it."""
    out: list[Unit] = []
    thinking_turn = after_tool = False
    for unit in units:
        first = messages[unit.start]
        if isinstance(first, AIMessage):
            joins = thinking_turn and not starts_with_thinking(first)
            thinking_turn = thinking_turn or has_thinking(first)
            after_tool = bool(tool_call_ids(first))  # answered by its results, or by repairs
        else:
            thinking_turn = thinking_turn and not opens_turn(first, after_tool)
            joins = thinking_turn
            after_tool = after_tool_result(first, after_tool)
        if joins and out:
            prev = out.pop()
            out.append(Unit(prev.start, unit.end, pending=unit.pending))
        else:
            out.append(unit)
    return out
