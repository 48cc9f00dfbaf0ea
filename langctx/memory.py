"""LayeredChatMemory: the engine that decides what the model sees.

The log is append-only: every message ever added stays in :attr:`LayeredChatMemory.messages`.
Compaction writes entries (summaries and in-place edits) that the projection applies; it never
deletes. Decisions (where to cut, what to shed, what to project) are pure and synchronous; only the
summarizer call has a sync and an async form, and the twins differ only at that call.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    >>> mem = LayeredChatMemory(max_tokens=2000)
    >>> mem.add_messages([SystemMessage("You are a coding agent."), HumanMessage("Fix the parser.")])
    >>> for i in range(12):
    ...     mem.add_messages([
    ...         AIMessage("", tool_calls=[{"id": f"c{i}", "name": "read_file", "args": {"path": f"f{i}.py"}}]),
    ...         ToolMessage("x = 1\\n" * 60, tool_call_id=f"c{i}"),
    ...     ])
    >>> len(mem.compactions) > 0, mem.context_tokens() <= 2000
    (True, True)
    >>> ctx = mem.build_context()
    >>> ctx[1].content
    'Fix the parser.'
    >>> len(mem.messages)
    26
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import json
import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
    messages_from_dict,
    messages_to_dict,
)

from langctx.blocks import (
    cut_text_blocks,
    has_opaque_blocks,
    has_thinking,
    is_provider_compaction,
    strip_thinking,
)
from langctx.config import MemoryConfig
from langctx.entries import (
    ENTRY_VERSION,
    CompactionEntry,
    EditEntry,
    EvictionRecord,
    active_summaries,
    covered_count,
    entry_facts,
    new_compaction_entry,
    new_edit_entry,
    validate_entry,
)
from langctx.errors import (
    BudgetError,
    ConfigError,
    InvalidHistoryError,
    InvalidMessageError,
    StateVersionError,
)
from langctx.facts import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    FileToolSpec,
    empty_facts,
    extract_facts,
)
from langctx.machinery import substantive_text
from langctx.projection import (
    CONTEXT_MODE_STAMP,
    render_facts,
    render_summary_block,
    view_message,
)
from langctx.summarize import (
    LocalSummarizer,
    Summarizer,
    SummaryRequest,
    resolve_summarizer,
    truncate_to_tokens,
)
from langctx.summarize.text import merge_summary_facts, summary_facts
from langctx.tokens import TokenCounter, resolve_token_counter
from langctx.turns import group_units, tool_call_ids

__all__ = ["DEFAULT_PRIORITIES", "STATE_VERSION", "CompactionEvent", "LayeredChatMemory"]

logger = logging.getLogger("langctx")

STATE_VERSION = 1

DEFAULT_PRIORITIES: Mapping[str, int] = {
    "system": 100,
    "first_human": 90,
    "summary": 70,
    "recent_human": 60,
    "recent_ai": 50,
    "tool_result": 30,
    "context_ref": 20,
    "fetched_ref": 10,
}
"""Priorities of the article; lower is shed first inside the evictable region."""

_MAX_LEVEL = 3
_SUMMARY_OVERHEAD = 40  # delimiters and attributes per summary, in tokens (generous)
_PLACEHOLDER_MARK = "[langctx: tool output elided"
_EXECUTOR = concurrent.futures.ThreadPoolExecutor(
    max_workers=4, thread_name_prefix="langctx-summarizer"
)

Trigger = Literal["threshold", "proactive", "manual", "overflow"]


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """What a listener is told when a compaction starts (``entry`` None) and ends."""

    phase: Literal["start", "end"]
    trigger: str
    tokens_before: int
    tokens_after: int | None = None
    duration_s: float | None = None
    entry: CompactionEntry | None = None
    edits: int = 0


@dataclass(slots=True)
class _Plan:
    """A compaction decided but not yet written (the summarizer call sits in between)."""

    trigger: str
    tokens_before: int
    cut: int  # absolute log index of the first kept message
    batch: list[int]  # absolute log indices folded into the new summary
    absorbed: list[CompactionEntry]  # mechanical summaries the new one replaces
    request: SummaryRequest | None  # None: no summarizer call (mechanical or local)
    quality: str
    placeholders: list[EditEntry] = field(default_factory=list)


class LayeredChatMemory:
    """Layered, compacting chat memory over langchain-core messages.

    Layers of the projection: pinned (system messages and the first substantive human message,
    verbatim), summaries (bounded, merged level by level), recent (verbatim, newest first under the
    budget). See ``DESIGN.md`` for the invariants this class keeps.

    Args:
        max_tokens: budget of the projected context (shortcut for ``MemoryConfig(max_tokens=...)``).
        config: a full :class:`MemoryConfig`; cannot be combined with other config keywords.
        summarizer: ``None``/"local" (offline, deterministic), a chat model or Runnable, an object
            with ``summarize(request)``, or a callable taking a :class:`SummaryRequest`.
        token_counter: "approximate", "tiktoken", an encoding name, a chat model, a callable over
            messages, or a :class:`TokenCounter`.
        file_tools: tool name -> :class:`FileToolSpec`, for mechanical file extraction.
        command_tools: names of tools that run shell commands.
        on_compaction: called with a :class:`CompactionEvent` at the start and end of each compaction.
        **config_kwargs: any other :class:`MemoryConfig` field.
    """

    def __init__(
        self,
        max_tokens: int | None = None,
        *,
        config: MemoryConfig | None = None,
        summarizer: object = None,
        token_counter: object = "approximate",
        file_tools: Mapping[str, FileToolSpec] | None = None,
        command_tools: Iterable[str] | None = None,
        on_compaction: Callable[[CompactionEvent], None] | None = None,
        **config_kwargs: Any,
    ) -> None:
        if config is not None and (max_tokens is not None or config_kwargs):
            msg = "pass either config=MemoryConfig(...) or config keywords, not both."
            raise ConfigError(msg)
        if config is None:
            try:
                config = MemoryConfig(max_tokens=max_tokens, **config_kwargs)
            except TypeError as exc:
                msg = f"unknown LayeredChatMemory option: {exc}. See MemoryConfig for the fields."
                raise ConfigError(msg) from exc
        self.config = config
        self.counter: TokenCounter = resolve_token_counter(token_counter)  # type: ignore[arg-type]
        self._local = LocalSummarizer(count=self.counter.count_text)
        resolved = resolve_summarizer(summarizer)
        self.summarizer: Summarizer = (
            self._local if isinstance(resolved, LocalSummarizer) else resolved
        )
        self.file_tools = dict(DEFAULT_FILE_TOOLS if file_tools is None else file_tools)
        self.command_tools = frozenset(
            DEFAULT_COMMAND_TOOLS if command_tools is None else command_tools
        )
        self.on_compaction = on_compaction
        self._lock = threading.RLock()
        self._alock: asyncio.Lock | None = None
        self._reset()

    # ------------------------------------------------------------------ state

    def _reset(self) -> None:
        self._log: list[BaseMessage] = []
        self._pos: dict[str, int] = {}
        self._tok: list[int] = []
        self._views: dict[int, BaseMessage] = {}
        self._vtok: dict[int, int] = {}
        self._entries: list[CompactionEntry] = []
        self._edits: list[EditEntry] = []
        self._edit_of: dict[str, EditEntry] = {}
        self._evictions: list[EvictionRecord] = []
        self._priority: dict[str, int] = {}
        self._first_kept = 0
        self._system_idx: list[int] = []
        self._task_idx: int | None = None
        self._task_closed = False  # a provider compaction stands in for the task from now on
        self._pc: int | None = None  # latest message holding a provider compaction item
        self._pc_memo: tuple[tuple[int, int], range] | None = None
        self._thinking: list[int] = []  # indices of AI messages with thinking blocks
        self._last_human = -1  # index of the latest human message
        self._stripped: dict[int, tuple[BaseMessage, int]] = {}  # completed thinking turns
        self._thinking_memo: tuple[list[int], frozenset[int]] = ([], frozenset())
        self._seen_non_system = False
        self._skip: set[int] = set()
        self._call_owner: dict[str, int] = {}
        self._open_calls: list[str] = []
        self._open_ai: int | None = None
        self._repair_after: dict[int, list[ToolMessage]] = {}
        self._recent_tokens = 0
        self._block: BaseMessage | None = None
        self._block_tokens = 0
        self._calibration = 0
        self._active: list[CompactionEntry] = []
        self._seq: dict[str, int] = {}
        self._restoring = False

    # ------------------------------------------------------------------ public views

    @property
    def messages(self) -> list[BaseMessage]:
        """The full append-only log (a copy of the list; messages are shared)."""
        return list(self._log)

    @property
    def compactions(self) -> list[CompactionEntry]:
        """Every compaction entry, in the order written (plain, versioned dicts)."""
        return list(self._entries)

    @property
    def edits(self) -> list[EditEntry]:
        """Every in-place edit (placeholders, truncations), in the order written."""
        return list(self._edits)

    @property
    def eviction_log(self) -> list[EvictionRecord]:
        """What left the projection, when and why: compactions, edits, dropped orphans, merges."""
        return list(self._evictions)

    @property
    def summaries(self) -> list[CompactionEntry]:
        """The compaction entries currently projected, oldest (highest level) first."""
        return list(self._active)

    @property
    def priorities(self) -> dict[str, int]:
        """The priority overrides of the ledger (message id -> priority)."""
        return dict(self._priority)

    @property
    def pinned_ids(self) -> list[str]:
        """Ids of the pinned messages (system messages and the task)."""
        idx = sorted([*self._system_idx, *([self._task_idx] if self._task_idx is not None else [])])
        return [self._id(i) for i in idx]

    @property
    def first_kept_id(self) -> str | None:
        """Id of the first message of the verbatim recent layer."""
        return self._id(self._first_kept) if self._first_kept < len(self._log) else None

    def priority_of(self, message_id: str) -> int:
        """The ledger priority of a logged message (see :data:`DEFAULT_PRIORITIES`)."""
        if message_id in self._priority:
            return self._priority[message_id]
        i = self._pos.get(message_id)
        if i is None:
            msg = f"no message with id {message_id!r} in this memory."
            raise KeyError(msg)
        if i in self._system_idx:
            return DEFAULT_PRIORITIES["system"]
        if i == self._task_idx:
            return DEFAULT_PRIORITIES["first_human"]
        m = self._log[i]
        if isinstance(m, ToolMessage):
            stamp = m.response_metadata.get(CONTEXT_MODE_STAMP)
            if isinstance(stamp, dict) and stamp.get("action") == "referenced":
                return DEFAULT_PRIORITIES["context_ref"]
            return DEFAULT_PRIORITIES["tool_result"]
        if isinstance(m, HumanMessage):
            return DEFAULT_PRIORITIES["recent_human"]
        if isinstance(m, SystemMessage):
            return DEFAULT_PRIORITIES["system"]
        return DEFAULT_PRIORITIES["recent_ai"]

    def set_priority(self, message_id: str, priority: int) -> None:
        """Override a message's priority in the ledger (e.g. a fetched context reference -> 10).

        The ledger is the memory's own; nothing is written into fields sent to a provider.
        """
        if message_id not in self._pos:
            msg = f"no message with id {message_id!r} in this memory."
            raise KeyError(msg)
        self._priority[message_id] = int(priority)

    # ------------------------------------------------------------------ adding

    def add_message(self, message: BaseMessage) -> None:
        """Add one message (see :meth:`add_messages`)."""
        self.add_messages([message])

    def add_messages(self, messages: Sequence[Any]) -> None:
        """Append messages to the log, then compact if a trigger fires.

        A message whose id is already logged with the same content is skipped (so the same history
        can be synced twice); the same id with different content raises
        :class:`InvalidHistoryError`. Messages without an id get one.
        """
        with self._lock:
            last_ai = self._append_all(messages)
            trigger = self._due(last_ai)
            if trigger:
                self._compact(trigger, None)

    async def aadd_messages(self, messages: Sequence[Any]) -> None:
        """Async version of `add_messages`.

        Messages added while a compaction runs are appended after it, in order.
        """
        with self._lock:
            last_ai = self._append_all(messages)
        async with self._async_lock():
            trigger = self._due(last_ai)
            if trigger:
                await self._acompact(trigger, None)

    async def aadd_message(self, message: BaseMessage) -> None:
        """Async version of `add_message`."""
        await self.aadd_messages([message])

    def _async_lock(self) -> asyncio.Lock:
        if self._alock is None:
            self._alock = asyncio.Lock()
        return self._alock

    def _append_all(self, messages: Sequence[Any]) -> bool:
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

    def _validate_batch(self, batch: Sequence[BaseMessage]) -> None:
        """Raise before anything is appended, so a rejected batch leaves the memory unchanged."""
        seen: dict[str, BaseMessage] = {}
        open_calls = list(self._open_calls) if self._open_ai is not None else []
        for m in batch:
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

    def _append(self, message: BaseMessage) -> bool:
        if message.id is not None and message.id in self._pos:
            old = self._log[self._pos[message.id]]
            if _same(old, message):
                return False
            msg = (
                f"message id {message.id!r} is already in the log with different content; "
                "the log is append-only. Give the new message a new id."
            )
            raise InvalidHistoryError(msg)
        if message.id is None:
            message = message.model_copy(update={"id": f"lcx-{uuid.uuid4().hex}"})
        i = len(self._log)
        if isinstance(message, HumanMessage):
            self._last_human = i
        if isinstance(message, ToolMessage):
            if self._open_ai is None or message.tool_call_id not in self._open_calls:
                self._orphan(message, i)
            else:
                self._open_calls.remove(message.tool_call_id)
                if not self._open_calls:
                    self._open_ai = None
        else:
            self._close_open_turn(i)
            ids = tool_call_ids(message)
            if ids:
                self._open_ai = i
                self._open_calls = list(ids)
                for cid in ids:
                    self._call_owner[cid] = i
        self._log.append(message)
        self._pos[str(message.id)] = i
        n = self.counter.count_message(message)
        self._tok.append(n)
        view = view_message(message)
        if view is not message:
            self._views[i] = view
            self._vtok[i] = self.counter.count_message(view)
        if i not in self._skip:
            self._recent_tokens += self._view_tokens(i)
        pinned = False
        if isinstance(message, SystemMessage) and not self._seen_non_system:
            self._system_idx.append(i)
            pinned = True
        else:
            self._seen_non_system = True
            if (
                self._task_idx is None
                and not self._task_closed
                and isinstance(message, HumanMessage)
                and self.config.is_task(message)
            ):
                self._task_idx = i
                pinned = True
                if self._block is not None:  # arrives behind summaries: lifted into the head
                    self._refresh_recent()
        if pinned and not self._restoring:
            self._check_pinned()
        if has_thinking(message):
            self._thinking.append(i)
        if (
            isinstance(message, HumanMessage)
            and self._block is not None
            and self._thinking
            and self._thinking[-1] >= self._first_kept
            and not self._restoring
        ):
            self._refresh_recent()  # the turn before it completed: its thinking is not sent
        if is_provider_compaction(message):
            self._provider_compacted(i)
        elif isinstance(message, AIMessage) and message.usage_metadata:
            self._calibrate(message)
        return True

    def _provider_compacted(self, i: int) -> None:
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

    def _after_pc(self, entry: CompactionEntry) -> bool:
        """True when ``entry`` folds messages after the latest provider compaction item."""
        if self._pc is None:
            return True
        fk = entry["first_kept_entry_id"]
        return fk is None or self._pos.get(fk, -1) > self._pc

    def _orphan(self, message: ToolMessage, i: int) -> None:
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
        logger.warning("langctx: orphan tool result %s left out of the projection", message.id)

    def _close_open_turn(self, i: int) -> None:
        if self._open_ai is None or not self._open_calls:
            self._open_ai = None
            return
        ai = self._log[self._open_ai]
        names = {tc.get("id"): tc.get("name") for tc in getattr(ai, "tool_calls", [])}
        repairs = [
            ToolMessage(
                "[langctx] no result was recorded for this tool call.",
                tool_call_id=cid,
                name=names.get(cid) or None,
                status="error",
                id=f"langctx-repair-{cid}",
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

    def _calibrate(self, message: AIMessage) -> None:
        usage = message.usage_metadata
        if usage is None:
            return
        real = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
        if real <= 0:
            return
        estimated = self._context_tokens_raw()
        # real count of everything up to this response + estimate of what comes after it
        self._calibration = max(-estimated // 2, real - estimated)

    # ------------------------------------------------------------------ projection

    def build_context(self) -> list[BaseMessage]:
        """The messages the model should see now: pinned, summaries, recent (deterministic)."""
        with self._lock:
            out = [self._view(i) for i in self._head_pinned()]
            if self._block is not None:
                out.append(self._block)
            lifted = self._lifted_task()
            for i in range(self._recent_start(), len(self._log)):
                if i not in self._skip and i != lifted:
                    out.append(self._view(i))
                if i in self._repair_after:
                    out.extend(self._repair_after[i])
            return out

    async def abuild_context(self) -> list[BaseMessage]:
        """Async version of `build_context`."""
        return self.build_context()

    def context_tokens(self) -> int:
        """Tokens of :meth:`build_context`, by the memory's counter (O(1))."""
        return self._context_tokens_raw()

    def calibrated_tokens(self) -> int:
        """Context tokens corrected by the last real ``usage_metadata`` (what triggers use)."""
        return max(0, self._context_tokens_raw() + self._calibration)

    def _context_tokens_raw(self) -> int:
        head = sum(self._view_tokens(i) for i in self._head_pinned())
        return head + self._block_tokens + self._recent_tokens

    def _recent_start(self) -> int:
        """First index of the recent layer: the cut, moved past pinned messages that sit on it.

        Pinned messages at the cut belong to the head, so the summary block never precedes them.
        """
        start = self._first_kept
        if start == 0:
            return 0
        pinned = {*self._system_idx, *([self._task_idx] if self._task_idx is not None else [])}
        pinned.update(self._pc_unit())
        while start < len(self._log) and start in pinned:
            start += 1
        return start

    def _pc_unit(self) -> range:
        """Indices of the latest provider compaction item's unit (its message and results)."""
        if self._pc is None:
            return range(0)
        key = (self._pc, len(self._log))
        if self._pc_memo is None or self._pc_memo[0] != key:
            width = 2 + 2 * len(tool_call_ids(self._log[self._pc]))
            units = group_units(self._log[self._pc : self._pc + width]).units
            self._pc_memo = (key, range(self._pc, self._pc + (units[0].end if units else 1)))
        return self._pc_memo[1]

    def _lifted_task(self) -> int | None:
        """The task's index when it sits in the recent layer behind summaries.

        That happens when compactions ran before the task arrived (a session opening with slash
        commands and their output); the task is then lifted into the head, ahead of the summaries.
        """
        t = self._task_idx
        if t is not None and self._block is not None and t >= self._recent_start():
            return t
        return None

    def _head_pinned(self) -> list[int]:
        start = self._recent_start()
        idx = [i for i in self._system_idx if i < start]
        if self._task_idx is not None and (
            self._task_idx < start or self._lifted_task() is not None
        ):
            idx.append(self._task_idx)
        idx.extend(i for i in self._pc_unit() if i < start and i not in self._skip)
        return sorted(idx)

    def _view(self, i: int) -> BaseMessage:
        if self._thinking_dropped(i):
            return self._stripped_view(i)[0]
        return self._views.get(i, self._log[i])

    def _view_tokens(self, i: int) -> int:
        if self._thinking_dropped(i):
            return self._stripped_view(i)[1]
        return self._vtok.get(i, self._tok[i])

    def _live_start(self) -> int:
        """First index of the live run: the AI and tool messages after the latest human message."""
        return max(self._last_human + 1, self._first_kept)

    def _thinking_dropped(self, i: int) -> bool:
        """True when message ``i`` is sent without its thinking blocks.

        Once summaries stand in for earlier history, the thinking blocks of completed turns in
        the recent layer no longer match the prefix they were written for (Anthropic's prefix
        check rejects them); Anthropic's advice is to remove the thinking of kept turns. The
        live run keeps its thinking: a compaction never changes what precedes it (see
        ``_plan``).
        """
        return self._block is not None and i < self._live_start() and i in self._thinking_set()

    def _thinking_set(self) -> frozenset[int]:
        if len(self._thinking_memo[0]) != len(self._thinking):
            self._thinking_memo = (list(self._thinking), frozenset(self._thinking))
        return self._thinking_memo[1]

    def _stripped_view(self, i: int) -> tuple[BaseMessage, int]:
        if i not in self._stripped:
            view = strip_thinking(self._views.get(i, self._log[i]))
            self._stripped[i] = (view, self.counter.count_message(view))
        return self._stripped[i]

    def _live_thinking(self) -> bool:
        """True when a projected message of the live run carries thinking."""
        live = self._live_start()
        return bool(self._thinking) and self._thinking[-1] >= max(live, self._recent_start())

    def _id(self, i: int) -> str:
        return str(self._log[i].id)

    # ------------------------------------------------------------------ triggers

    def _due(self, after_ai_with_usage: bool) -> Trigger | None:
        if not self._log:
            return None
        last = self._log[-1]
        tokens = self.calibrated_tokens()
        if (
            tokens <= self.config.high_mark
            and self._context_tokens_raw() <= self.config.max_tokens_resolved
        ):
            return None
        if after_ai_with_usage and isinstance(last, AIMessage) and last.usage_metadata:
            return "threshold"
        return "proactive"

    def needs_compaction(self) -> bool:
        """True when the context is above the compaction mark."""
        return self._due(False) is not None

    # ------------------------------------------------------------------ compaction (twins)

    def compact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Compact now. Returns the new entry, or None when there is nothing to compact.

        Args:
            instructions: focus instructions that steer the summary (e.g. from ``/compact ...``).
            trigger: recorded on the entry; "manual" unless an integration says otherwise.
            keep_recent_tokens: verbatim recent tokens to keep this time (default: the configured
                low mark); 0 keeps only the newest turn. Overflow recovery lowers it per retry.
        """
        with self._lock:
            return self._compact(trigger, instructions, keep_recent_tokens)

    async def acompact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Async version of `compact`."""
        async with self._async_lock():
            return await self._acompact(trigger, instructions, keep_recent_tokens)

    def _start(self, plan: _Plan | None) -> None:
        if plan is not None and self.on_compaction is not None:
            self.on_compaction(
                CompactionEvent(
                    phase="start", trigger=plan.trigger, tokens_before=plan.tokens_before
                )
            )

    def _compact(
        self, trigger: str, instructions: str | None, keep: int | None = None
    ) -> CompactionEntry | None:
        started = time.perf_counter()
        plan = self._plan(trigger, instructions, keep)
        self._start(plan)
        if plan is None:
            return None
        summary, quality = self._run(plan, lambda req: self._call_sync(req))
        entry = self._commit(plan, summary, quality)
        self._merge_levels(lambda req: self._call_sync(req))
        self._finish(plan, entry, started)
        return entry

    async def _acompact(
        self, trigger: str, instructions: str | None, keep: int | None = None
    ) -> CompactionEntry | None:
        started = time.perf_counter()
        with self._lock:
            plan = self._plan(trigger, instructions, keep)
        self._start(plan)
        if plan is None:
            return None
        summary, quality = await self._arun(plan)
        with self._lock:
            entry = self._commit(plan, summary, quality)
        await self._amerge_levels()
        self._finish(plan, entry, started)
        return entry

    def _finish(self, plan: _Plan, entry: CompactionEntry | None, started: float) -> None:
        self._enforce_budget(plan.trigger)
        if entry is not None:
            entry["tokens_after"] = self.context_tokens()
        if self.on_compaction is not None:
            self.on_compaction(
                CompactionEvent(
                    phase="end",
                    trigger=plan.trigger,
                    tokens_before=plan.tokens_before,
                    tokens_after=self.context_tokens(),
                    duration_s=time.perf_counter() - started,
                    entry=entry,
                    edits=len(plan.placeholders),
                )
            )

    # ------------------------------------------------------------------ planning (pure)

    def _plan(
        self, trigger: str, instructions: str | None, keep_override: int | None = None
    ) -> _Plan | None:
        tokens_before = self.context_tokens()
        n = len(self._log)
        lo = max(self._first_kept, self._pc_unit().stop)  # never fold the provider's compaction
        grouping = group_units(self._log[lo:n])
        starts = [lo + u.start for u in grouping.units]
        if not starts:
            return None
        keep = self._keep_target() if keep_override is None else max(0, keep_override)
        cut = starts[-1]
        acc = self._span_tokens(cut, n)
        for s, nxt in zip(reversed(starts[:-1]), reversed(starts), strict=False):
            add = self._span_tokens(s, nxt)
            if acc + add > keep:
                break
            acc += add
            cut = s
        t = self._task_idx
        if t is not None and lo <= t and cut <= t:
            # Never leave the task behind a summary: fold everything before it as well.
            cut = next((s for s in starts if s > t), n)
        if cut > lo and self._live_thinking():
            # A fold changes what precedes the live run's thinking blocks, which Anthropic then
            # rejects: fold the live run with it (the request ends with the summary), or wait
            # for the results of calls still open.
            if grouping.units[-1].pending:
                return None
            cut = n
        target = self._head_tokens() + keep
        placeholders: list[EditEntry] = []
        if trigger in ("threshold", "proactive") and cut > lo:
            placeholders = self._plan_placeholders(lo, cut, self.context_tokens() - target)
            saved = sum(e["tokens_before"] - e["tokens_after"] for e in placeholders)
            if placeholders and self.context_tokens() - saved <= target:
                self._apply_edits(placeholders, trigger)
                self._record(
                    "placeholder",
                    trigger,
                    [e["message_id"] for e in placeholders],
                    saved,
                    f"{len(placeholders)} large tool outputs replaced in place; no fold needed",
                )
                return _Plan(
                    trigger, tokens_before, self._first_kept, [], [], None, "none", placeholders
                )
        batch = [
            i
            for i in range(lo, cut)
            if i not in self._skip and i not in self._system_idx and i != self._task_idx
        ]
        if not batch:
            return _Plan(trigger, tokens_before, self._first_kept, [], [], None, "none")
        batch_tokens = sum(self._tok[i] for i in batch)
        if self.summarizer is self._local:
            quality = "local"
        elif (
            batch_tokens < self.config.summary_threshold_tokens
            and not instructions
            and trigger != "manual"
        ):
            quality = "mechanical"  # no model call; waits to be absorbed by the next model summary
        else:
            quality = "model"
        absorbed = (
            [e for e in self._active if e["level"] == 1 and e["quality"] == "mechanical"]
            if quality != "mechanical"
            else []
        )
        msgs = [self._log[i] for i in batch]
        facts = summary_facts(msgs, extract=self._extract)
        if absorbed:
            facts = merge_summary_facts(*[entry_facts(e) for e in absorbed], facts)
        request = SummaryRequest(
            kind="turns",
            messages=msgs,
            summaries=[e["summary"] for e in absorbed],
            facts=facts,
            task=self._task_text(),
            instructions=instructions,
            max_tokens=self.config.max_summary_tokens_resolved,
        )
        return _Plan(trigger, tokens_before, cut, batch, absorbed, request, quality)

    def _keep_target(self) -> int:
        """Recent tokens to keep: the low mark, lowered if the head would leave no hysteresis."""
        head_after = (
            self._head_tokens() + self.config.max_summary_tokens_resolved + _SUMMARY_OVERHEAD
        )
        room = self.config.high_mark - head_after - self.config.max_tokens_resolved // 10
        room -= max(
            0, self._calibration
        )  # what the provider counts beyond our messages (tools, ...)
        return max(0, min(self.config.keep_recent_tokens_resolved, room))

    def _plan_placeholders(self, lo: int, hi: int, excess: int) -> list[EditEntry]:
        """Large low-priority tool outputs in [lo, hi) replaced by a short note, lowest priority first."""
        floor = self._edit_floor()
        cands = [
            i
            for i in range(max(lo, floor + 1), hi)
            if isinstance(self._log[i], ToolMessage)
            and i not in self._skip
            and self._id(i) not in self._edit_of
            and self._view_tokens(i) >= self.config.placeholder_min_tokens
        ]
        cands.sort(key=lambda i: (self.priority_of(self._id(i)), i))
        out: list[EditEntry] = []
        saved = 0
        for i in cands:
            if saved >= excess:
                break
            text = self._placeholder_text(i)
            after = self.counter.count_message(self._log[i].model_copy(update={"content": text}))
            before = self._view_tokens(i)
            if after >= before:
                continue
            out.append(
                new_edit_entry(
                    message_id=self._id(i),
                    reason="placeholder",
                    content=text,
                    tokens_before=before,
                    tokens_after=after,
                )
            )
            saved += before - after
        return out

    def _placeholder_text(self, i: int) -> str:
        m = self._log[i]
        assert isinstance(m, ToolMessage)
        owner = self._call_owner.get(m.tool_call_id)
        call: dict[str, Any] = {}
        if owner is not None:
            call = next(
                (
                    tc
                    for tc in getattr(self._log[owner], "tool_calls", [])
                    if tc.get("id") == m.tool_call_id
                ),
                {},
            )
        # files from the call's arguments; error lines from the output when the call failed
        facts = self._extract([self._log[owner], m]) if owner is not None else empty_facts()
        files = [*facts["read_files"], *facts["modified_files"]]
        failed = [c for c in facts["commands"] if c.get("ok") is False]
        error_lines = [ln for e in facts["errors"][-1:] for ln in e.get("lines") or []][-3:]
        args = json.dumps(call.get("args", {}), ensure_ascii=False)
        args = args if len(args) <= 160 else args[:157] + "..."
        text = m.text
        parts = [
            f"{_PLACEHOLDER_MARK} to save context]",
            f"tool: {m.name or call.get('name') or '?'} {args}",
            f"size: {len(text)} chars, {self._tok[i]} tokens",
        ]
        if files:
            parts.append("files: " + ", ".join(files[:5]))
        if failed or error_lines:
            code = failed[-1].get("exit_code") if failed else None
            parts.append(
                "failed"
                + (f" (exit {code})" if code is not None else "")
                + ": "
                + "; ".join(error_lines)
            )
        first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
        if first:
            parts.append(f"first line: {first[:120]}")
        parts.append("The full output is kept in the log; re-run the tool if you need it.")
        return "\n".join(parts)

    def _edit_floor(self) -> int:
        """Index of the latest projected thinking message (-1: none).

        Nothing at or before a live thinking block is edited in place: Anthropic checks that the
        content before a thinking block is what the model saw when it wrote the block.
        """
        if not self._thinking:
            return -1
        last = self._thinking[-1]
        return last if last >= self._recent_start() else -1

    def _head_tokens(self) -> int:
        return sum(self._view_tokens(i) for i in self._head_pinned()) + self._block_tokens

    def _span_tokens(self, lo: int, hi: int) -> int:
        total = 0
        lifted = self._lifted_task()
        for i in range(lo, hi):
            if i not in self._skip and i != lifted:
                total += self._view_tokens(i)
            if i in self._repair_after:
                total += sum(self.counter.count_message(r) for r in self._repair_after[i])
        return total

    def _task_text(self) -> str | None:
        if self._task_idx is None:
            return None
        return substantive_text(self._log[self._task_idx]) or self._log[self._task_idx].text

    def _extract(self, messages: Sequence[BaseMessage]) -> Any:
        return extract_facts(messages, file_tools=self.file_tools, command_tools=self.command_tools)

    # ------------------------------------------------------------------ summarizer calls

    def _run(self, plan: _Plan, call: Callable[[SummaryRequest], str]) -> tuple[str, str]:
        if plan.request is None:
            return "", plan.quality
        if plan.quality in ("local", "mechanical"):
            return self._local.summarize(plan.request), plan.quality
        return self._checked(plan.request, call)

    async def _arun(self, plan: _Plan) -> tuple[str, str]:
        if plan.request is None:
            return "", plan.quality
        if plan.quality in ("local", "mechanical"):
            return self._local.summarize(plan.request), plan.quality
        try:
            coro = self.summarizer.asummarize(plan.request)
            text = await asyncio.wait_for(coro, self.config.summary_timeout)
        except Exception as exc:
            return self._fallback(plan.request, exc)
        return self._accept(plan.request, text)

    def _call_sync(self, request: SummaryRequest) -> str:
        timeout = self.config.summary_timeout
        if timeout is None or self.summarizer is self._local:  # local: no thread hand-off
            return self.summarizer.summarize(request)
        ctx = contextvars.copy_context()  # keep callbacks / run tree of the caller
        future = _EXECUTOR.submit(ctx.run, self.summarizer.summarize, request)
        return future.result(timeout=timeout)

    def _checked(
        self, request: SummaryRequest, call: Callable[[SummaryRequest], str]
    ) -> tuple[str, str]:
        try:
            text = call(request)
        except Exception as exc:
            return self._fallback(request, exc)
        return self._accept(request, text)

    def _accept(self, request: SummaryRequest, text: object) -> tuple[str, str]:
        if not isinstance(text, str) or not text.strip():
            return self._fallback(request, ValueError("the summarizer returned no text"))
        quality = "merged" if request.kind == "merge" else "model"
        return self._cap(text.strip()), quality

    def _fallback(self, request: SummaryRequest, exc: BaseException) -> tuple[str, str]:
        reason = (
            "timed out"
            if isinstance(exc, TimeoutError | concurrent.futures.TimeoutError)
            else repr(exc)
        )
        logger.warning("langctx: summarizer failed (%s); using the local summary", reason[:300])
        self._record("summarizer_fallback", request.kind, [], 0, reason[:300])
        return self._local.summarize(request), "fallback"

    def _cap(self, text: str) -> str:
        return truncate_to_tokens(
            text, self.config.max_summary_tokens_resolved, self.counter.count_text
        )

    # ------------------------------------------------------------------ writing

    def _commit(self, plan: _Plan, summary: str, quality: str) -> CompactionEntry | None:
        if not plan.batch:
            return None
        covered = [self._id(i) for i in plan.batch]
        facts = plan.request.facts if plan.request is not None else {}
        entry = new_compaction_entry(
            summary=summary,
            summary_tokens=self.counter.count_text(summary),
            level=1,
            covered_ids=covered,
            covered_count=len(covered) + sum(covered_count(e) for e in plan.absorbed),
            first_kept_entry_id=self._id(plan.cut) if plan.cut < len(self._log) else None,
            tokens_before=plan.tokens_before,
            tokens_after=0,
            trigger=plan.trigger,
            quality=quality,
            read_files=facts.get("read_files", []),
            modified_files=facts.get("modified_files", []),
            merged_from=[e["id"] for e in plan.absorbed],
            facts=facts,
            instructions=plan.request.instructions if plan.request is not None else None,
        )
        self._add_entry(entry)
        self._first_kept = plan.cut
        self._refresh()
        self._record(
            "compact",
            plan.trigger,
            covered,
            sum(self._tok[i] for i in plan.batch),
            f"folded {len(plan.batch)} messages into {entry['id']} ({quality})",
        )
        return entry

    def _add_entry(self, entry: CompactionEntry) -> None:
        """Append an entry and update the active summaries without rescanning all entries."""
        self._entries.append(entry)
        gone = set(entry["merged_from"])
        self._seq[entry["id"]] = len(self._entries)
        live = [e for e in self._active if e["id"] not in gone]
        live.append(entry)
        self._active = sorted(live, key=lambda e: (-e["level"], self._seq[e["id"]]))

    def _refresh(self) -> None:
        """Recompute the cached layer sizes after a compaction (O(recent))."""
        if self._active:
            facts = merge_summary_facts(*[entry_facts(e) for e in self._active])
            ledger = render_facts(
                facts,
                max_tokens=self.config.max_facts_tokens_resolved,
                count=self.counter.count_text,
            )
            self._block = render_summary_block(
                self._active, role=self.config.summary_role, facts=ledger
            )
            self._block_tokens = self.counter.count_message(self._block)
        else:
            self._block, self._block_tokens = None, 0
        self._recent_tokens = self._span_tokens(self._recent_start(), len(self._log))
        self._calibration = 0

    def _merge_levels(self, call: Callable[[SummaryRequest], str]) -> None:
        merged: list[CompactionEntry] = []
        while (group := self._merge_group()) is not None:
            req = self._merge_request(group)
            text, quality = self._checked(req, call)
            merged.append(
                self._commit_merge(group, text, "merged" if quality != "fallback" else "fallback")
            )
        self._merged_refresh(merged)

    async def _amerge_levels(self) -> None:
        merged: list[CompactionEntry] = []
        while (group := self._merge_group()) is not None:
            req = self._merge_request(group)
            try:
                text = await asyncio.wait_for(
                    self.summarizer.asummarize(req), self.config.summary_timeout
                )
                out = self._accept(req, text)
            except Exception as exc:
                out = self._fallback(req, exc)
            with self._lock:
                merged.append(
                    self._commit_merge(
                        group, out[0], "merged" if out[1] != "fallback" else "fallback"
                    )
                )
        with self._lock:
            self._merged_refresh(merged)

    def _merged_refresh(self, merged: list[CompactionEntry]) -> None:
        """Re-render the summary block once after a cascade of merges."""
        if not merged:
            return
        self._refresh()
        for entry in merged:
            entry["tokens_after"] = self.context_tokens()

    def _merge_group(self) -> list[CompactionEntry] | None:
        """The next summaries to merge, oldest first, or None.

        Over ``max_summaries`` level-1 summaries, the oldest ``merge_count`` become one level 2;
        over ``max_level2`` level-2 summaries, the oldest ``merge_count`` merge *into* the level-3
        summary (one call, not a level 3 that a second merge would fold at once).
        """
        caps = {1: self.config.max_summaries, 2: self.config.max_level2, 3: 1}
        for level in (1, 2, 3):
            live = [e for e in self._active if e["level"] == level]
            if len(live) > caps[level]:
                if level == _MAX_LEVEL:
                    return live
                top = [e for e in self._active if e["level"] == _MAX_LEVEL]
                group = live[: self.config.merge_count]
                return [*top, *group] if level == _MAX_LEVEL - 1 else group
        return None

    def _merge_request(self, group: list[CompactionEntry]) -> SummaryRequest:
        return SummaryRequest(
            kind="merge",
            summaries=[e["summary"] for e in group],
            facts=merge_summary_facts(*[entry_facts(e) for e in group]),
            task=self._task_text(),
            max_tokens=self.config.max_summary_tokens_resolved,
            level=min(group[0]["level"] + 1, _MAX_LEVEL),
        )

    def _commit_merge(
        self, group: list[CompactionEntry], text: str, quality: str
    ) -> CompactionEntry:
        level = min(group[0]["level"] + 1, _MAX_LEVEL)
        facts = merge_summary_facts(*[entry_facts(e) for e in group])
        entry = new_compaction_entry(
            summary=text,
            summary_tokens=self.counter.count_text(text),
            level=level,
            covered_ids=[],  # a merge folds no message itself: its entries did
            covered_count=sum(covered_count(e) for e in group),
            first_kept_entry_id=group[-1]["first_kept_entry_id"],
            tokens_before=self.context_tokens(),
            tokens_after=0,
            trigger="merge",
            quality=quality,
            read_files=facts.get("read_files", []),
            modified_files=facts.get("modified_files", []),
            merged_from=[e["id"] for e in group],
            facts=facts,
        )
        self._add_entry(entry)
        self._record(
            "merge",
            "merge",
            [e["id"] for e in group],
            sum(e["summary_tokens"] for e in group),
            f"merged {len(group)} level-{group[0]['level']} summaries into {entry['id']}",
        )
        return entry

    def _apply_edits(self, edits: Sequence[EditEntry], trigger: str) -> None:
        for e in edits:
            i = self._pos[e["message_id"]]
            self._edits.append(e)
            self._edit_of[e["message_id"]] = e
            self._views[i] = view_message(self._log[i], e)
            self._vtok[i] = e["tokens_after"]
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        self._recent_tokens = self._span_tokens(self._recent_start(), len(self._log))

    def _enforce_budget(self, trigger: str) -> None:
        """Last resort when the newest turn alone is too large: marked truncation, never silent loss.

        Only runs when folding could not bring the context under the compaction mark. It then cuts
        the largest kept messages (head and tail kept, marked) to a little below the mark, so the
        next turn does not compact again at once.
        """
        budget = self.config.max_tokens_resolved
        if self.context_tokens() <= min(budget, self.config.high_mark):
            return
        target = min(budget, self.config.high_mark - budget // 10)
        over = self.context_tokens() - target
        if over <= 0:
            return
        floor = self._edit_floor()
        recent = [
            i
            for i in range(max(self._recent_start(), floor + 1), len(self._log))
            if i not in self._skip
        ]
        edits: list[EditEntry] = []
        for i in sorted(recent, key=lambda i: (-self._view_tokens(i), i)):
            if over <= 0:
                break
            before = self._view_tokens(i)
            keep = max(before - over - 24, 16)
            edit = self._truncation(i, keep)
            if edit is None:
                continue
            edits.append(edit)
            over -= before - edit["tokens_after"]
        if edits:
            self._apply_edits(edits, trigger)
            self._record(
                "truncate",
                trigger,
                [e["message_id"] for e in edits],
                sum(e["tokens_before"] - e["tokens_after"] for e in edits),
                "newest turn larger than the budget: head and tail kept, marked",
            )

    def _truncation(self, i: int, keep_tokens: int) -> EditEntry | None:
        """Cut message ``i`` (its text, and the string arguments of its tool calls) to ``keep_tokens``."""
        m = self._log[i]
        view = self._view(i)
        before = self._view_tokens(i)
        if before <= keep_tokens or has_opaque_blocks(m):
            return None  # signed / encrypted blocks travel whole: the message is kept or folded
        content = view.content
        calls = [dict(tc) for tc in view.tool_calls] if isinstance(view, AIMessage) else []
        ratio = max(keep_tokens - 40, 0) / before
        best: tuple[str | list[Any], list[dict[str, Any]] | None, int] | None = None
        new_calls: list[dict[str, Any]] = []
        for _ in range(12):  # shrink until it fits: cutting changes the mix of the text
            new_text = _cut_content(content, ratio, str(m.id))
            new_calls = [
                {**tc, "args": _cut_args(tc.get("args", {}), ratio, str(m.id))} for tc in calls
            ]
            update: dict[str, Any] = {"content": new_text}
            if calls:
                update["tool_calls"] = new_calls
            after = self.counter.count_message(m.model_copy(update=update))
            best = (new_text, new_calls if calls else None, after)
            if after <= keep_tokens or ratio <= 0:
                break
            ratio *= 0.85
        assert best is not None
        new_text, cut_calls, after = best
        if after >= before:
            return None
        return new_edit_entry(
            message_id=str(m.id),
            reason="truncate",
            content=new_text,
            tool_calls=cut_calls,
            tokens_before=before,
            tokens_after=after,
        )

    def _check_pinned(self) -> None:
        pinned = [*self._system_idx, *([self._task_idx] if self._task_idx is not None else [])]
        allowed = self.config.head_budget - self.config.summary_cap_tokens - _SUMMARY_OVERHEAD * 4
        total = sum(self._view_tokens(i) for i in pinned)
        if total <= allowed:
            return
        if self.config.oversize_policy == "error":
            msg = (
                f"pinned messages (system + task) take {total} tokens but only {allowed} fit beside "
                "the summaries and the reserve; raise max_tokens, shorten the task, or use "
                "oversize_policy='truncate'."
            )
            raise BudgetError(msg)
        over = total - allowed
        edits: list[EditEntry] = []
        for i in sorted(pinned, key=lambda i: -self._view_tokens(i)):
            if over <= 0:
                break
            before = self._view_tokens(i)
            edit = self._truncation(i, max(before - over - 24, 16))
            if edit is not None:
                edits.append(edit)
                over -= before - edit["tokens_after"]
        if edits:
            self._apply_edits(edits, "add")
            self._record(
                "truncate_pinned",
                "add",
                [e["message_id"] for e in edits],
                sum(e["tokens_before"] - e["tokens_after"] for e in edits),
                "pinned messages larger than their share of the budget: head and tail kept, marked",
            )
            logger.warning(
                "langctx: pinned messages truncated to fit the budget (full text stays in the log)"
            )

    def _record(self, action: str, trigger: str, ids: list[str], tokens: int, detail: str) -> None:
        self._evictions.append(
            EvictionRecord(
                at=datetime.now(UTC).isoformat(timespec="milliseconds"),
                action=action,
                trigger=trigger,
                ids=list(ids),
                tokens=int(tokens),
                detail=detail,
            )
        )

    # ------------------------------------------------------------------ persistence

    def to_state(self) -> dict[str, Any]:
        """A JSON-safe snapshot: the log, the entries, the edits, the ledger, the eviction log.

        ``LayeredChatMemory.from_state(mem.to_state())`` builds exactly the same projection.
        """
        with self._lock:
            return {
                "v": STATE_VERSION,
                "messages": messages_to_dict(self._log),
                "compactions": [dict(e) for e in self._entries],
                "edits": [dict(e) for e in self._edits],
                "priorities": dict(self._priority),
                "eviction_log": [dict(r) for r in self._evictions],
            }

    @classmethod
    def from_state(cls, state: Mapping[str, Any], **kwargs: Any) -> LayeredChatMemory:
        """Rebuild a memory from :meth:`to_state` output (kwargs as for the constructor)."""
        if not isinstance(state, Mapping) or state.get("v") != STATE_VERSION:
            version = state.get("v") if isinstance(state, Mapping) else type(state).__name__
            msg = f"langctx state version {version!r} is not {STATE_VERSION}; upgrade langctx or rebuild the memory."
            raise StateVersionError(msg)
        mem = cls(**kwargs)
        mem.restore(
            messages_from_dict(list(state.get("messages", []))),
            compactions=state.get("compactions", []),
            edits=state.get("edits", []),
            priorities=state.get("priorities", {}),
            eviction_log=state.get("eviction_log", []),
        )
        return mem

    def restore(
        self,
        messages: Sequence[BaseMessage],
        *,
        compactions: Sequence[Mapping[str, Any]] = (),
        edits: Sequence[Mapping[str, Any]] = (),
        priorities: Mapping[str, int] | None = None,
        eviction_log: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        """Replace this memory's state with a persisted log and its entries (no compaction runs).

        Used by the integrations to rebuild the memory from graph state or a database.
        """
        with self._lock:
            self._reset()
            self._restoring = True
            try:
                self._append_all(list(messages))
            finally:
                self._restoring = False
            for raw in edits:
                e = validate_entry(raw)
                if e["message_id"] not in self._pos:
                    msg = f"edit {e['id']} names message {e['message_id']!r}, which is not in the log."
                    raise StateVersionError(msg)
                self._edits.append(e)
                self._edit_of[e["message_id"]] = e
                i = self._pos[e["message_id"]]
                self._views[i] = view_message(self._log[i], e)
                self._vtok[i] = self.counter.count_message(self._views[i])
            for raw in compactions:
                self._entries.append(validate_entry(raw))
                self._seq[self._entries[-1]["id"]] = len(self._entries)
            self._active = active_summaries(self._entries)
            cut = 0
            for e in self._entries:
                fk = e["first_kept_entry_id"]
                if e["trigger"] != "merge" and fk is not None:
                    if fk not in self._pos:
                        msg = f"compaction {e['id']} keeps from {fk!r}, which is not in the log."
                        raise StateVersionError(msg)
                    cut = max(cut, self._pos[fk])
                elif e["trigger"] != "merge" and fk is None:
                    cut = len(self._log)
            if self._pc is not None:
                cut = max(cut, self._pc)
                self._active = [e for e in self._active if self._after_pc(e)]
            self._first_kept = cut
            self._priority = {str(k): int(v) for k, v in (priorities or {}).items()}
            self._evictions = [EvictionRecord(**r) for r in eviction_log]  # type: ignore[typeddict-item]
            self._refresh()
            self._check_pinned()

    def sync(self, messages: Sequence[BaseMessage]) -> None:
        """Add the messages of ``messages`` that are not logged yet (by id), then check triggers."""
        self.add_messages([m for m in messages if m.id is None or m.id not in self._pos])

    async def async_sync(self, messages: Sequence[BaseMessage]) -> None:
        """Async version of `sync`."""
        await self.aadd_messages([m for m in messages if m.id is None or m.id not in self._pos])

    def clear(self) -> None:
        """Forget everything (log, entries, ledger)."""
        with self._lock:
            self._reset()

    def stats(self) -> dict[str, Any]:
        """Figures for dashboards and debugging."""
        levels: dict[int, int] = {}
        for e in self._active:
            levels[e["level"]] = levels.get(e["level"], 0) + 1
        return {
            "messages": len(self._log),
            "context_tokens": self.context_tokens(),
            "budget": self.config.max_tokens_resolved,
            "compactions": sum(1 for e in self._entries if e["trigger"] != "merge"),
            "merges": sum(1 for e in self._entries if e["trigger"] == "merge"),
            "summaries_by_level": levels,
            "summary_tokens": sum(e["summary_tokens"] for e in self._active),
            "edits": len(self._edits),
            "first_kept_id": self.first_kept_id,
            "entry_version": ENTRY_VERSION,
        }


def _same(a: BaseMessage, b: BaseMessage) -> bool:
    return (
        a.type == b.type
        and a.content == b.content
        and getattr(a, "tool_calls", None) == getattr(b, "tool_calls", None)
    )


def _cut_args(value: Any, ratio: float, message_id: str) -> Any:
    """Tool-call arguments with every long string cut to its head and tail (same shape)."""
    if isinstance(value, str):
        return _head_tail(value, int(len(value) * ratio), message_id) if len(value) > 200 else value
    if isinstance(value, dict):
        return {k: _cut_args(v, ratio, message_id) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut_args(v, ratio, message_id) for v in value]
    return value


def _cut_content(content: str | list[Any], ratio: float, message_id: str) -> str | list[Any]:
    """Content cut to about ``ratio`` of its text; a list stays blocks (only text blocks cut)."""

    def cut(text: str) -> str:
        return _head_tail(text, int(len(text) * ratio), message_id) if len(text) > 200 else text

    if isinstance(content, str):
        return cut(content)
    return cut_text_blocks(content, cut)


def _head_tail(text: str, keep_chars: int, message_id: str) -> str:
    head = keep_chars * 2 // 3
    tail = keep_chars - head
    cut = len(text) - keep_chars
    marker = f"\n[langctx: {cut} characters cut here to fit the budget; the full text is message {message_id} in the log]\n"
    return text[:head] + marker + (text[-tail:] if tail else "")
