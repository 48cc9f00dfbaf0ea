"""Appending messages to the log and checking them."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

from langctx.count_cache import Described, describe
from langctx.engine import writing
from langctx.entries import CompactionEntry
from langctx.errors import InvalidHistoryError, InvalidMessageError
from langctx.machinery import is_substantive_task
from langctx.markers import MESSAGE_ID_PREFIX, NOTICE_MARK, REPAIR_ID_PREFIX
from langctx.message_checks import refusal
from langctx.surrogates import replace_surrogates, surrogate_field
from langctx.turns import after_tool_result, opens_turn, tool_call_ids

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore

logger = logging.getLogger("langctx")


def append_all(mem: MemoryCore, messages: Sequence[Any]) -> bool:
    if isinstance(messages, BaseMessage | str | dict | tuple):
        messages = [messages]
    try:
        converted = convert_to_messages(list(messages))
    except (NotImplementedError, ValueError, TypeError) as exc:
        msg = f"cannot add {messages!r:.200}: {exc}. Pass langchain-core messages."
        raise InvalidMessageError(msg) from exc
    validate_batch(mem, converted)
    last_ai = False
    for m in converted:
        if append(mem, m):
            last_ai = isinstance(m, AIMessage)
    return last_ai


def replay(mem: MemoryCore, sent: Sequence[BaseMessage], new: list[Any]) -> None:
    """Restore the log: ``sent`` as it is (an earlier call checked its pairs), then ``new``, checked
    as a batch; the restore counts the whole, not each message. Each message is checked alone
    (:func:`~langctx.message_checks.refusal`, once per content: its description is cached), since
    what an earlier call sent is not all it was given (a graph's input before its last AI message)."""
    mem._restoring = True
    try:
        for m in sent:
            append(mem, m)
        mem._new_from = len(mem._log)
        append_all(mem, new)
    finally:
        mem._restoring = False


def _encodable(message: BaseMessage) -> BaseMessage:
    """A tool result with its unencodable text (lone surrogates) escaped, warned once per tool."""
    if not isinstance(message, ToolMessage) or surrogate_field(message) is None:
        return message
    name = message.name or "tool"
    if name not in _WARNED:
        _WARNED.add(name)
        logger.warning(
            "langctx: output of %s held text that cannot be encoded (lone surrogates); each was "
            "replaced by its escape, the rest kept. Decode tool output with errors='replace'.",
            name,
        )
    return replace_surrogates(message)


_WARNED: set[str] = set()


def validate_batch(mem: MemoryCore, batch: Sequence[BaseMessage]) -> None:
    """Raise before anything is appended, so a rejected batch leaves the memory unchanged."""
    seen: dict[str, BaseMessage] = {}
    open_calls = list(mem._open_calls)
    for m in map(_encodable, batch):
        if isinstance(m, RemoveMessage):
            raise InvalidMessageError(
                f"RemoveMessage({m.id!r}) cannot be added: the log is append-only. Remove "
                "messages from the graph state (its reducer applies RemoveMessage), not the memory."
            )
        if (refused := refusal(m)) is not None:
            raise InvalidMessageError(refused)
        if m.id is not None:
            if _repeats(mem._log[mem._pos[m.id]] if m.id in mem._pos else seen.get(m.id), m):
                continue
            seen[m.id] = m
        if isinstance(m, ToolMessage):
            if m.tool_call_id in open_calls:
                open_calls.remove(m.tool_call_id)
            else:
                _check_orphan(mem, m)
        else:
            open_calls = tool_call_ids(m)


def append(mem: MemoryCore, message: BaseMessage) -> bool:
    """Append one message and update the derived indices; False when it is already logged."""
    message = _encodable(message)
    if message.id is not None and message.id in mem._pos:
        return not _repeats(mem._log[mem._pos[message.id]], message)
    if message.id is None:
        message = message.model_copy(update={"id": f"{MESSAGE_ID_PREFIX}{uuid.uuid4().hex}"})
    i = len(mem._log)
    d = describe(mem.counter, message)
    if d.refusal is not None:  # restored as sent before, but never checked (a graph's input)
        raise InvalidMessageError(d.refusal)
    if isinstance(message, ToolMessage):
        _answer_call(mem, message, i, d.tokens)
    else:
        _track_turn(mem, message, d, i)
    mem._log.append(message)
    mem._pos[str(message.id)] = i
    mem._tok.append(d.tokens)
    if d.view is not None:
        mem._views[i] = d.view
        mem._vtok[i] = d.view_tokens
    _index(mem, message, d, i)
    return True


def _repeats(old: BaseMessage | None, new: BaseMessage) -> bool:
    """True when ``new`` repeats ``old``, the message logged with its id (InvalidHistoryError: differs)."""
    if old is None:
        return False
    if (
        old.type == new.type
        and old.content == new.content
        and getattr(old, "tool_calls", None) == getattr(new, "tool_calls", None)
    ):
        return True
    raise InvalidHistoryError(
        f"message id {new.id!r} is already in the log with different content; "
        "the log is append-only. Give the new message a new id."
    )


def _check_orphan(mem: MemoryCore, message: ToolMessage) -> None:
    """Raise when ``message`` answers no open call and orphans are errors."""
    if mem.config.orphan_policy == "error":
        raise InvalidHistoryError(
            f"tool result {message.id!r} answers tool call {message.tool_call_id!r}, which is not "
            "an open call of the preceding AI message. Add the AI message first, or use "
            "orphan_policy='repair'."
        )


def _answer_call(mem: MemoryCore, message: ToolMessage, i: int, tokens: int) -> None:
    """A tool result at ``i``: the answer to an open call, or an orphan (logged, not sent)."""
    if message.tool_call_id in mem._open_calls:  # none when no AI message is open
        mem._open_calls.remove(message.tool_call_id)
        mem._after_tool = True
        return
    _check_orphan(mem, message)
    mem._skip.add(i)
    detail = f"tool result for unknown call {message.tool_call_id!r} kept in the log only"
    writing.record(mem, "drop_orphan", "add", [str(message.id)], tokens, detail)
    if i >= mem._new_from:
        logger.warning("langctx: orphan tool result %s left out of the projection", message.id)


def _track_turn(mem: MemoryCore, message: BaseMessage, d: Described, i: int) -> None:
    """Any other message at ``i``: it closes the open turn and opens its own (human or tool calls)."""
    if mem._open_calls:
        mem._after_tool = True  # repairs answer them
        _close_open_turn(mem, i)
    if opens_turn(message, mem._after_tool):
        mem._last_human = i
    mem._after_tool = after_tool_result(message, mem._after_tool)
    if d.call_ids:
        mem._open_calls = list(d.call_ids)
        for cid in d.call_ids:
            mem._call_owner[cid] = i


def _index(mem: MemoryCore, message: BaseMessage, d: Described, i: int) -> None:
    """Index message ``i`` (system, task, thinking, provider item); live, also count and check it."""
    live = not mem._restoring
    if live and i not in mem._skip:
        mem._recent_tokens += mem._view_tokens(i)
    if _pinned(mem, message, d, i) and live:
        if i == mem._task_idx and mem._block is not None:  # behind summaries: lifted into the head
            mem._refresh_recent()
        writing.check_pinned(mem)
    if d.thinking:
        mem._thinking.append(i)
    sent = mem._block is not None and mem._thinking and mem._thinking[-1] >= mem._first_kept
    if live and mem._last_human == i and sent:
        mem._refresh_recent()  # the turn before it completed: its thinking is not sent
    if d.provider_compaction:
        _provider_compacted(mem, i)
    elif live and isinstance(message, AIMessage) and message.usage_metadata:
        _calibrate(mem, message, mem.context_tokens())


def _pinned(mem: MemoryCore, message: BaseMessage, d: Described, i: int) -> bool:
    """Index message ``i`` as a system message (before any other) or the task (never once a
    provider compaction item stands in for it); True if either."""
    if isinstance(message, SystemMessage) and len(mem._system_idx) == i:
        mem._system_idx.append(i)
        return True
    if mem._task_idx is None and mem._pc is None and _is_task(mem, message, d):
        mem._task_idx = i
        return True
    return False


def _is_task(mem: MemoryCore, message: BaseMessage, d: Described) -> bool:
    if not isinstance(message, HumanMessage):
        return False
    if mem.config.is_task is is_substantive_task:
        return d.substantive  # the default predicate, computed once per content
    return mem.config.is_task(message)


def _provider_compacted(mem: MemoryCore, i: int) -> None:
    """The provider compacted everything before message ``i``: project from it on."""
    mem._pc = i
    mem._first_kept = max(mem._first_kept, i)
    if mem._task_idx is not None and mem._task_idx < i:
        mem._task_idx = None
    mem._active = [e for e in mem._active if after_pc(mem, e)]
    if not mem._restoring:
        mem._refresh()
    mem._calibration = 0
    detail = "provider compaction item: earlier history is the provider's summary now"
    writing.record(mem, "provider_compaction", "add", [mem._id(i)], 0, detail)


def after_pc(mem: MemoryCore, entry: CompactionEntry) -> bool:
    """True when ``entry`` folds messages after the latest provider compaction item."""
    if mem._pc is None:
        return True
    if "provider_compaction_id" in entry:
        return entry["provider_compaction_id"] == mem._id(mem._pc)
    fk = entry["first_kept_id"]
    return fk is None or mem._pos.get(fk, -1) > mem._pc


def answer_open_calls(mem: MemoryCore) -> None:
    """Before a model call: the calls the log's last AI message still waits for are answered with
    stand-in results in the projection (the log keeps waiting), so no request sends a call
    without its result (a graph given a history that ends with tool calls, a hand-edited state)."""
    if mem._open_calls:
        _close_open_turn(mem, len(mem._log))


def _close_open_turn(mem: MemoryCore, i: int) -> None:
    """Answer the open calls of the AI message before ``i`` with stand-in results (repairs)."""
    ai = mem._log[mem._call_owner[mem._open_calls[0]]]  # the AI message whose calls are open
    names = {tc.get("id"): tc.get("name") for tc in getattr(ai, "tool_calls", [])}
    repairs = [
        ToolMessage(
            f"{NOTICE_MARK} no result was recorded for this tool call.",
            tool_call_id=cid,
            name=names.get(cid) or None,
            status="error",
            id=f"{REPAIR_ID_PREFIX}{cid}",
        )
        for cid in mem._open_calls
    ]
    mem._repair_after[i - 1] = repairs
    mem._recent_tokens += sum(mem.counter.count_message(r) for r in repairs)
    detail = f"unanswered tool calls {mem._open_calls} answered with placeholders"
    writing.record(mem, "repair", "add", [str(ai.id)], 0, detail)
    mem._open_calls = []


def _calibrate(mem: MemoryCore, message: AIMessage, estimated: int) -> None:
    """Correct the ``estimated`` tokens up to ``message`` by its real usage."""
    usage = message.usage_metadata
    real = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0)) if usage else 0
    if real > 0:
        mem._calibration = max(-estimated // 2, real - estimated)


def calibrate_window(mem: MemoryCore) -> None:
    """The calibration of the latest response with usage since the latest compaction."""
    cut = next((e for e in reversed(mem._entries) if e["trigger"] != "merge"), None)
    last = cut.get("last_id", "") if cut is not None else None
    after = -1 if last is None else mem._pos.get(last)
    if after is None:
        return  # an entry of an older langctx, or its log end is gone: no calibration
    for i in range(len(mem._log) - 1, max(after, mem._recent_start() - 1), -1):
        m = mem._log[i]
        if isinstance(m, AIMessage) and m.usage_metadata:
            _calibrate(mem, m, mem._head_tokens() + mem._span_tokens(mem._recent_start(), i + 1))
            return
