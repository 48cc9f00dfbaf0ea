"""LayeredChatMemory: the standalone memory (an append-only log, its entries, the projection).

Compaction writes entries (summaries and in-place edits) that the projection applies; it never
deletes. The parts live in :mod:`langctx.engine`.

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
import logging
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Unpack

from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)

from langctx.channel import MemorySnapshot, channel_update, check_version
from langctx.config import ConfigOptions, MemoryConfig, config_from
from langctx.engine import (
    background,
    compaction,
    layers,
    log,
    planning,
    restoring,
    summarizer_calls,
    writing,
)
from langctx.engine import stats as stats_module
from langctx.engine.plan import CompactionEvent, Trigger
from langctx.entries import (
    CompactionEntry,
    EditEntry,
    EvictionRecord,
)
from langctx.facts import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    FileToolSpec,
)
from langctx.markers import (
    context_mode_stamp,
)
from langctx.summarize import (
    LocalSummarizer,
    Summarizer,
    resolve_summarizer,
)
from langctx.tokens import TokenCounter, resolve_token_counter

__all__ = ["DEFAULT_PRIORITIES", "CompactionEvent", "LayeredChatMemory"]

logger = logging.getLogger("langctx")

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
        thread_id: the conversation this memory holds, for tracing (:mod:`langctx.telemetry`)
            and the summarizer's run metadata; None: the LangChain run's ``thread_id``, if any.
        **options: any other :class:`MemoryConfig` field (:class:`~langctx.config.ConfigOptions`).
    """

    def __init__(
        self,
        *,
        config: MemoryConfig | None = None,
        summarizer: object = None,
        token_counter: object = "approximate",
        file_tools: Mapping[str, FileToolSpec] | None = None,
        command_tools: Iterable[str] | None = None,
        on_compaction: Callable[[CompactionEvent], None] | None = None,
        thread_id: str | None = None,
        **options: Unpack[ConfigOptions],
    ) -> None:
        self.config = config_from(config, options)
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
        self.thread_id = thread_id
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
        self._last_human = -1  # index of the latest human message that opens a turn
        self._after_tool = False  # the latest message sent, human/system aside, is a tool result
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
        self._new_from = 0  # log index from which messages are new to this memory (warnings)
        self._blocking_calls = 0  # summarizer calls made on the caller's path
        self._waited_s = 0.0  # waiting for a background summary in the current compaction
        self._before: Callable[[str], BaseMessage | None] | None = None  # see restore_window

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
            stamp = context_mode_stamp(m)
            if stamp is not None and stamp.get("action") == "referenced":
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
            trigger = planning.due(self, last_ai)
            if trigger:
                self._compact(trigger, None)

    async def aadd_messages(self, messages: Sequence[Any]) -> None:
        """Async version of `add_messages`.

        Messages added while a compaction runs are appended after it, in order.
        """
        with self._lock:
            last_ai = self._append_all(messages)
        async with self._async_lock():
            trigger = planning.due(self, last_ai)
            if trigger:
                await self._acompact(trigger, None)

    async def aadd_message(self, message: BaseMessage) -> None:
        """Async version of `add_message`."""
        await self.aadd_messages([message])

    def _async_lock(self) -> asyncio.Lock:
        if self._alock is None:
            self._alock = asyncio.Lock()
        return self._alock

    # ------------------------------------------------------------------ projection

    def build_context(self) -> list[BaseMessage]:
        """The messages the model should see now: pinned, summaries, recent (deterministic)."""
        with self._lock:
            out = [self._view(i) for i in self._head_pinned()]
            if self._block is not None:
                out.append(self._block)
            lifted = self._lifted_task()
            skip, repairs, view = self._skip, self._repair_after, self._view
            if not (self._thinking and self._block is not None):  # no thinking is dropped
                views, log = self._views, self._log

                def view(i: int) -> BaseMessage:
                    return views.get(i, log[i])

            for i in range(self._recent_start(), len(self._log)):
                if i not in skip and i != lifted:
                    out.append(view(i))
                if i in repairs:
                    out.extend(repairs[i])
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

    def _id(self, i: int) -> str:
        return str(self._log[i].id)

    def _earlier(self, message_id: str) -> BaseMessage | None:
        """A message of the log before a restored window, by id (None: not known)."""
        return None if self._before is None else self._before(message_id)

    # ------------------------------------------------------------------ triggers

    def needs_compaction(self) -> bool:
        """True when the context is above the compaction mark."""
        return planning.due(self, False) is not None

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

    # ------------------------------------------------------------------ persistence

    def to_state(self) -> MemorySnapshot:
        """A JSON-safe snapshot in the channel's shape, plus the log and the eviction log.

        ``LayeredChatMemory.from_state(mem.to_state())`` builds exactly the same projection.
        """
        with self._lock:
            snapshot = MemorySnapshot(
                **channel_update(
                    compactions=self._entries, edits=self._edits, priorities=self._priority
                )
            )
            snapshot["messages"] = messages_to_dict(self._log)
            snapshot["eviction_log"] = [dict(r) for r in self._evictions]
            return snapshot

    @classmethod
    def from_state(cls, state: Mapping[str, Any], **kwargs: Any) -> LayeredChatMemory:
        """Rebuild a memory from :meth:`to_state` output (kwargs as for the constructor)."""
        check_version(state, "saved")
        mem = cls(**kwargs)
        mem.restore(
            messages_from_dict(list(state.get("messages", []))),
            compactions=state.get("compactions", []),
            edits=state.get("edits", []),
            priorities=state.get("priorities", {}),
            eviction_log=state.get("eviction_log", []),
        )
        return mem

    def clear(self) -> None:
        """Forget everything (log, entries, ledger)."""
        with self._lock:
            self._reset()

    # appending messages to the log and checking them (langctx.engine.log)
    _append_all = log._append_all
    _validate_batch = log._validate_batch
    _append = log._append
    _provider_compacted = log._provider_compacted
    _after_pc = log._after_pc
    _orphan = log._orphan
    _close_open_turn = log._close_open_turn
    _calibrate = log._calibrate
    _calibrate_window = log._calibrate_window
    # the projection's layers and their sizes: pinned head, summary block, recent messages (langctx.engine.layers)
    _context_tokens_raw = layers._context_tokens_raw
    _recent_start = layers._recent_start
    _pc_unit = layers._pc_unit
    _lifted_task = layers._lifted_task
    _head_pinned = layers._head_pinned
    _view = layers._view
    _view_tokens = layers._view_tokens
    _live_start = layers._live_start
    _thinking_dropped = layers._thinking_dropped
    _thinking_set = layers._thinking_set
    _stripped_view = layers._stripped_view
    _live_thinking = layers._live_thinking
    _head_tokens = layers._head_tokens
    _span_tokens = layers._span_tokens
    _refresh = layers._refresh
    _refresh_recent = layers._refresh_recent
    # the summarizer calls of a compaction: fallback to the local summary, cap (langctx.engine.summarizer_calls)
    _run = summarizer_calls._run
    _arun = summarizer_calls._arun
    _unasked = summarizer_calls._unasked
    _summarize = summarizer_calls._summarize
    _asummarize = summarizer_calls._asummarize
    _deadline = summarizer_calls._deadline
    _accepted = summarizer_calls._accepted
    _fallback = summarizer_calls._fallback
    _cap = summarizer_calls._cap
    # writing a compaction: entries, merges, in-place edits, budget truncation, the eviction log (langctx.engine.writing)
    _commit = writing._commit
    _stamp = writing._stamp
    _add_entry = writing._add_entry
    _merge_levels = writing._merge_levels
    _amerge_levels = writing._amerge_levels
    _merged_refresh = writing._merged_refresh
    _merge_without_model = writing._merge_without_model
    _commit_merge = writing._commit_merge
    _apply_edits = writing._apply_edits
    _enforce_budget = writing._enforce_budget
    _truncation = writing._truncation
    _check_pinned = writing._check_pinned
    _record = writing._record
    # figures for dashboards and debugging (langctx.engine.stats)
    stats = stats_module.stats
    # restoring a memory from persisted state (langctx.engine.restoring)
    restore = restoring.restore
    restore_window = restoring.restore_window
    # one compaction from plan to entry, sync and async (langctx.engine.compaction)
    _start = compaction._start
    _compact = compaction._compact
    _acompact = compaction._acompact
    _finish = compaction._finish
    _upgrade_later = compaction._upgrade_later
    # model summaries off the critical path (langctx.engine.background)
    _newest_level1 = background._newest_level1
    _launch_upgrade = background._launch_upgrade
    _pending = background._pending
    _settle_upgrade = background._settle_upgrade
    _await_upgrade = background._await_upgrade
