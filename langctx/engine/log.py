"""Appending messages to the log and checking them (methods of LayeredChatMemory)."""

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
from langctx.entries import (
    CompactionEntry,
)
from langctx.errors import (
    InvalidHistoryError,
    InvalidMessageError,
)
from langctx.machinery import is_substantive_task
from langctx.markers import (
    MESSAGE_ID_PREFIX,
    NOTICE_MARK,
    REPAIR_ID_PREFIX,
)
from langctx.surrogates import replace_surrogates, surrogate_field
from langctx.turns import after_tool_result, opens_turn, tool_call_ids

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory

logger = logging.getLogger("langctx")


def _append_all(self: LayeredChatMemory, messages: Sequence[Any]) -> bool:
    if isinstance(messages, BaseMessage | str | dict | tuple):
        messages = [messages]
    try:
        converted = convert_to_messages(list(messages))
    except (NotImplementedError, ValueError, TypeError) as exc:
        msg = f"cannot add {messages!r:.200}: {exc}. Pass langchain-core messages."
        raise InvalidMessageError(msg) from exc
    self._validate_batch(converted)
    last_ai = False
    for m in converted:
        if self._append(m):
            last_ai = isinstance(m, AIMessage)
    return last_ai


def _encodable(message: BaseMessage) -> BaseMessage:
    """A tool result holding text no provider can encode, with that text escaped (said once per
    process and tool); other messages as they are (a lone surrogate in them is refused)."""
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


def _validate_batch(self: LayeredChatMemory, batch: Sequence[BaseMessage]) -> None:
    """Raise before anything is appended, so a rejected batch leaves the memory unchanged."""
    seen: dict[str, BaseMessage] = {}
    open_calls = list(self._open_calls) if self._open_ai is not None else []
    for m in map(_encodable, batch):
        if isinstance(m, RemoveMessage):
            msg = (
                f"RemoveMessage({m.id!r}) cannot be added: the log is append-only. Remove "
                "messages from the graph state (its reducer applies RemoveMessage), not the memory."
            )
            raise InvalidMessageError(msg)
        where = surrogate_field(m)
        if where is not None:
            msg = (
                f"message {m.id!r} holds a lone surrogate in its {where} (text decoded with "
                "errors='surrogateescape'), which no provider request can encode; decode it "
                "with errors='replace' first."
            )
            raise InvalidMessageError(msg)
        if m.id is not None:
            old = self._log[self._pos[m.id]] if m.id in self._pos else seen.get(m.id)
            if old is not None and not _same(old, m):
                msg = (
                    f"message id {m.id!r} is already in the log with different content; "
                    "the log is append-only. Give the new message a new id."
                )
                raise InvalidHistoryError(msg)
            if old is not None:
                continue
            seen[m.id] = m
        if isinstance(m, ToolMessage):
            if m.tool_call_id in open_calls:
                open_calls.remove(m.tool_call_id)
            elif self.config.orphan_policy == "error":
                msg = (
                    f"tool result {m.id!r} answers tool call {m.tool_call_id!r}, which is not "
                    "an open call of the preceding AI message. Add the AI message first, or use "
                    "orphan_policy='repair'."
                )
                raise InvalidHistoryError(msg)
        else:
            open_calls = tool_call_ids(m)


def _append(self: LayeredChatMemory, message: BaseMessage) -> bool:
    """Append one message and update the derived indices; False when it is already logged."""
    message = _encodable(message)
    if message.id is not None and message.id in self._pos:
        return _repeated(self, message)
    if message.id is None:
        message = message.model_copy(update={"id": f"{MESSAGE_ID_PREFIX}{uuid.uuid4().hex}"})
    i = len(self._log)
    d = describe(self.counter, message)
    if isinstance(message, ToolMessage):
        _answer_call(self, message, i)
    else:
        _track_turn(self, message, d, i)
    self._log.append(message)
    self._pos[str(message.id)] = i
    self._tok.append(d.tokens)
    if d.view is not None:
        self._views[i] = d.view
        self._vtok[i] = d.view_tokens
    if self._restoring:  # a restore sums the layers and checks the pinned messages once, after
        _index_restored(self, message, d, i)
    else:
        _index_live(self, message, d, i)
    return True


def _repeated(self: LayeredChatMemory, message: BaseMessage) -> bool:
    """A message whose id is logged: False when it is the same message, else an error."""
    old = self._log[self._pos[str(message.id)]]
    if _same(old, message):
        return False
    msg = (
        f"message id {message.id!r} is already in the log with different content; "
        "the log is append-only. Give the new message a new id."
    )
    raise InvalidHistoryError(msg)


def _answer_call(self: LayeredChatMemory, message: ToolMessage, i: int) -> None:
    """A tool result at ``i``: it answers an open call of the turn, or it is an orphan."""
    if self._open_ai is None or message.tool_call_id not in self._open_calls:
        self._orphan(message, i)  # not sent: the turn stays as it was
        return
    self._open_calls.remove(message.tool_call_id)
    if not self._open_calls:
        self._open_ai = None
    self._after_tool = True


def _track_turn(self: LayeredChatMemory, message: BaseMessage, d: Described, i: int) -> None:
    """Any other message at ``i``: it closes the open turn, may open a human turn, and opens
    the tool calls it makes."""
    if self._open_ai is not None:
        self._after_tool = self._after_tool or bool(self._open_calls)  # repairs answer them
        self._close_open_turn(i)
    if opens_turn(message, self._after_tool):
        self._last_human = i
    self._after_tool = after_tool_result(message, self._after_tool)
    if d.call_ids:
        self._open_ai = i
        self._open_calls = list(d.call_ids)
        for cid in d.call_ids:
            self._call_owner[cid] = i


def _index_restored(self: LayeredChatMemory, message: BaseMessage, d: Described, i: int) -> None:
    """The indices of a message a restore replays: system prompts, the task, thinking, and
    provider compaction items."""
    if isinstance(message, SystemMessage) and not self._seen_non_system:
        self._system_idx.append(i)
    else:
        self._seen_non_system = True
        if self._task_idx is None and not self._task_closed and _is_task(self, message, d):
            self._task_idx = i
    if d.thinking:
        self._thinking.append(i)
    if d.provider_compaction:
        self._provider_compacted(i)


def _index_live(self: LayeredChatMemory, message: BaseMessage, d: Described, i: int) -> None:
    """The indices of a message added live (as :func:`_index_restored`), plus the recent tokens,
    the pinned check, the refreshes it calls for and the calibration."""
    if i not in self._skip:
        self._recent_tokens += self._view_tokens(i)
    pinned = False
    if isinstance(message, SystemMessage) and not self._seen_non_system:
        self._system_idx.append(i)
        pinned = True
    else:
        self._seen_non_system = True
        if self._task_idx is None and not self._task_closed and _is_task(self, message, d):
            self._task_idx = i
            pinned = True
            if self._block is not None:  # arrives behind summaries: lifted into the head
                self._refresh_recent()
    if pinned:
        self._check_pinned()
    if d.thinking:
        self._thinking.append(i)
    if self._last_human == i and _thinking_sent(self):
        self._refresh_recent()  # the turn before it completed: its thinking is not sent
    if d.provider_compaction:
        self._provider_compacted(i)
    elif isinstance(message, AIMessage) and message.usage_metadata:
        self._calibrate(message)


def _thinking_sent(self: LayeredChatMemory) -> bool:
    """True when summaries are projected and the latest thinking message is after the cut."""
    return (
        self._block is not None and bool(self._thinking) and self._thinking[-1] >= self._first_kept
    )


def _is_task(self: LayeredChatMemory, message: BaseMessage, d: Described) -> bool:
    if not isinstance(message, HumanMessage):
        return False
    if self.config.is_task is is_substantive_task:
        return d.substantive  # the default predicate, computed once per content
    return self.config.is_task(message)


def _provider_compacted(self: LayeredChatMemory, i: int) -> None:
    """The provider compacted everything before message ``i``: project from it on.

    What lies before it is neither sent nor summarized again; langctx summaries written
    before it stop being projected (the provider's item replaces them), and so does the
    task (the provider's summary carries it). System messages stay. The item's tokens come
    from the next response's usage (calibration restarts here).
    """
    self._pc = i
    self._first_kept = max(self._first_kept, i)
    if self._task_idx is not None and self._task_idx < i:
        self._task_idx = None
    self._task_closed = True
    self._active = [e for e in self._active if self._after_pc(e)]
    if not self._restoring:
        self._refresh()
    self._calibration = 0
    self._record(
        "provider_compaction",
        "add",
        [self._id(i)],
        0,
        "provider compaction item: earlier history is the provider's summary now",
    )


def _after_pc(self: LayeredChatMemory, entry: CompactionEntry) -> bool:
    """True when ``entry`` folds messages after the latest provider compaction item."""
    if self._pc is None:
        return True
    if "provider_compaction_id" in entry:
        return entry["provider_compaction_id"] == self._id(self._pc)
    fk = entry["first_kept_id"]
    return fk is None or self._pos.get(fk, -1) > self._pc


def _orphan(self: LayeredChatMemory, message: ToolMessage, i: int) -> None:
    if self.config.orphan_policy == "error":
        msg = (
            f"tool result {message.id!r} answers tool call {message.tool_call_id!r}, which is not "
            "an open call of the preceding AI message. Add the AI message first, or use "
            "orphan_policy='repair'."
        )
        raise InvalidHistoryError(msg)
    self._skip.add(i)
    self._record(
        "drop_orphan",
        "add",
        [str(message.id)],
        self._tok[i] if i < len(self._tok) else 0,
        f"tool result for unknown call {message.tool_call_id!r} kept in the log only",
    )
    if i >= self._new_from:
        logger.warning("langctx: orphan tool result %s left out of the projection", message.id)


def _close_open_turn(self: LayeredChatMemory, i: int) -> None:
    if self._open_ai is None or not self._open_calls:
        self._open_ai = None
        return
    ai = self._log[self._open_ai]
    names = {tc.get("id"): tc.get("name") for tc in getattr(ai, "tool_calls", [])}
    repairs = [
        ToolMessage(
            f"{NOTICE_MARK} no result was recorded for this tool call.",
            tool_call_id=cid,
            name=names.get(cid) or None,
            status="error",
            id=f"{REPAIR_ID_PREFIX}{cid}",
        )
        for cid in self._open_calls
    ]
    self._repair_after[i - 1] = repairs
    self._recent_tokens += sum(self.counter.count_message(r) for r in repairs)
    self._record(
        "repair",
        "add",
        [str(ai.id)],
        0,
        f"unanswered tool calls {self._open_calls} answered with placeholders",
    )
    self._open_ai = None
    self._open_calls = []


def _calibrate(self: LayeredChatMemory, message: AIMessage) -> None:
    usage = message.usage_metadata
    if usage is None:
        return
    real = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    if real <= 0:
        return
    estimated = self._context_tokens_raw()
    # real count of everything up to this response + estimate of what comes after it
    self._calibration = max(-estimated // 2, real - estimated)


def _calibrate_window(self: LayeredChatMemory) -> None:
    """The calibration of the latest response with usage since the latest compaction."""
    cut = next((e for e in reversed(self._entries) if e["trigger"] != "merge"), None)
    last = cut.get("last_id", "") if cut is not None else None
    after = -1 if last is None else self._pos.get(last)
    if after is None:
        return  # an entry of an older langctx, or its log end is gone: no calibration
    for i in range(len(self._log) - 1, max(after, self._recent_start() - 1), -1):
        m = self._log[i]
        if isinstance(m, AIMessage) and m.usage_metadata:
            usage = m.usage_metadata
            real = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
            if real > 0:
                estimated = self._head_tokens() + self._span_tokens(self._recent_start(), i + 1)
                self._calibration = max(-estimated // 2, real - estimated)
            return


def _same(a: BaseMessage, b: BaseMessage) -> bool:
    return (
        a.type == b.type
        and a.content == b.content
        and getattr(a, "tool_calls", None) == getattr(b, "tool_calls", None)
    )
