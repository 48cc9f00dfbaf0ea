"""MemoryCore: a memory's settings, its record (what ``to_state`` returns), what is derived from it,
and the projection; the functions that write the record are the engine's."""

from __future__ import annotations

import asyncio
import bisect
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Protocol, Unpack

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.blocks import strip_thinking
from langctx.config import DEFAULT_PRIORITIES, ConfigOptions, MemoryConfig, config_from
from langctx.engine.layers import latest_files, summary_block
from langctx.engine.plan import CompactionEvent
from langctx.entries import CompactionEntry, EditEntry, EvictionRecord
from langctx.facts import DEFAULT_COMMAND_TOOLS, DEFAULT_FILE_TOOLS, FileToolSpec
from langctx.markers import context_mode_stamp
from langctx.summarize import LocalSummarizer, Summarizer, resolve_summarizer
from langctx.tokens import TokenCounter, resolve_token_counter
from langctx.turns import group_units, tool_call_ids
from langctx.user_messages import Ledger, opening, user_text


class EarlierLog(Protocol):
    """The log before a restored window (``restore_window``'s ``before``)."""

    def __call__(self, message_id: str) -> BaseMessage | None:
        """The message of ``message_id`` (None: not in it)."""

    def covered(self, entry_id: str) -> list[str] | None:
        """Every id an archived entry folded (the channel keeps the ends only; None: unknown)."""


class MemoryCore:
    """The settings, record and projection of one memory (base of :class:`~langctx.LayeredChatMemory`)."""

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
        self._counter: TokenCounter = resolve_token_counter(token_counter)  # type: ignore[arg-type]
        self._local = LocalSummarizer(count=self._counter.count_text)
        self.summarizer = summarizer
        self._config = config_from(config, options)
        self._file_tools = dict(DEFAULT_FILE_TOOLS if file_tools is None else file_tools)
        tools = DEFAULT_COMMAND_TOOLS if command_tools is None else command_tools
        self._command_tools = frozenset(tools)
        self._on_compaction = on_compaction
        self.thread_id = thread_id
        """The conversation this memory holds, for tracing; None: the LangChain run's."""
        self._lock = threading.RLock()
        self._alock: asyncio.Lock | None = None
        self._reset()

    def _reset(self) -> None:
        # the record (what to_state() returns)
        self._log: list[BaseMessage] = []
        self._entries: list[CompactionEntry] = []
        self._edits: list[EditEntry] = []
        self._evictions: list[EvictionRecord] = []
        self._priority: dict[str, int] = {}
        self._users: Ledger = ([], 0)  # the folded user messages, each once (bounded)
        self._users_log: list[dict[str, Any]] = []  # the ledger's items given, then appended
        self._users_given = 0  # how many of ``_users_log`` the restore gave
        # derived from the record on append and restore: each message's index, tokens and view
        self._pos: dict[str, int] = {}
        self._tok: list[int] = []
        self._views: dict[int, BaseMessage] = {}
        self._vtok: dict[int, int] = {}
        self._edit_of: dict[str, EditEntry] = {}
        self._skip: set[int] = set()
        # ... the messages that are pinned or shape turns
        self._system_idx: list[int] = []
        self._task_idx: int | None = None
        self._pc: int | None = None  # latest message holding a provider compaction item
        self._thinking: list[int] = []  # indices of AI messages with thinking blocks, ascending
        self._last_human = -1  # index of the latest human message that opens a turn
        self._after_tool = False  # the latest message sent, human/system aside, is a tool result
        self._call_owner: dict[str, int] = {}
        self._open_calls: list[str] = []
        self._repair_after: dict[int, list[ToolMessage]] = {}
        # ... the projection: the cut, the active summaries, the layers' tokens, caches of reads
        self._first_kept = 0
        self._active: list[CompactionEntry] = []
        self._block: BaseMessage | None = None
        self._block_tokens = 0
        self._block_given = 0  # what the sent block gave up at the last add (record_block_room)
        self._recent_tokens = 0
        self._calibration = 0
        self._pc_memo: tuple[tuple[int, int], range] | None = None
        self._stripped: dict[int, tuple[BaseMessage, int]] = {}  # completed thinking turns
        # the operation under way
        self._restoring = False
        self._new_from = 0  # log index from which messages are new to this memory (warnings)
        self._blocking_calls = 0  # summarizer calls made on the caller's path
        self._waited_s = 0.0  # waiting for a background summary in the current compaction
        self._before: EarlierLog | None = None  # see restore_window
        self._archived_to: str | None = None  # see restore_window

    @property
    def config(self) -> MemoryConfig:
        """The frozen configuration."""
        return self._config

    @property
    def counter(self) -> TokenCounter:
        """The token counter (resolved once, at construction)."""
        return self._counter

    @property
    def summarizer(self) -> Summarizer:
        """The summarizer (the local one when none was given)."""
        return self._summarizer

    @summarizer.setter
    def summarizer(self, value: object) -> None:
        resolved = resolve_summarizer(value)
        self._summarizer = self._local if isinstance(resolved, LocalSummarizer) else resolved

    @property
    def file_tools(self) -> dict[str, FileToolSpec]:
        """Tool name -> :class:`FileToolSpec`, for mechanical file extraction."""
        return dict(self._file_tools)

    @property
    def command_tools(self) -> frozenset[str]:
        """Names of the tools that run shell commands."""
        return self._command_tools

    @property
    def pinned_ids(self) -> list[str]:
        """Ids of the pinned messages (system messages and the task)."""
        return [self._id(i) for i in sorted(self._pinned())]

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
        m = self._log[i]
        if i in self._system_idx or isinstance(m, SystemMessage):
            return DEFAULT_PRIORITIES["system"]
        if i == self._task_idx:  # always a human message
            return DEFAULT_PRIORITIES["first_human"]
        if isinstance(m, ToolMessage):
            stamp = context_mode_stamp(m)
            referenced = stamp is not None and stamp.get("action") == "referenced"
            return DEFAULT_PRIORITIES["context_ref" if referenced else "tool_result"]
        return DEFAULT_PRIORITIES["recent_human" if isinstance(m, HumanMessage) else "recent_ai"]

    def build_context(self) -> list[BaseMessage]:
        """The messages the model should see now: pinned, summaries, recent (deterministic)."""
        with self._lock:
            return self._projection(self._sent_block()[0])

    def _projection(self, block: BaseMessage | None) -> list[BaseMessage]:
        """Pinned, ``block``, recent: :meth:`build_context`, or with the block as rendered
        (``self._block``: what a request before the budget was passed held)."""
        with self._lock:
            out = [self._view(i) for i in self._head_pinned()]
            if block is not None:
                out.append(block)
            sent = self._sent(self._recent_start(), len(self._log))
            out += (self._view(m) if isinstance(m, int) else m for m in sent)
            return out

    async def abuild_context(self) -> list[BaseMessage]:
        """Async version of `build_context`."""
        return self.build_context()

    def context_tokens(self) -> int:
        """Tokens of :meth:`build_context`, by the memory's counter (O(1))."""
        return self._full_tokens() - self._block_tokens + self._sent_block()[1]

    def _full_tokens(self) -> int:
        """Context tokens with the block as rendered at the last fold (what plans and cuts use)."""
        return self._head_tokens() + self._recent_tokens

    def calibrated_tokens(self) -> int:
        """Context tokens corrected by the last real ``usage_metadata`` (what triggers use; the
        block as rendered: a due fold, not a shrunk block, is what makes the room)."""
        return max(0, self._full_tokens() + self._calibration)

    def _pinned(self) -> list[int]:
        """Indices of the pinned messages: the system messages, then the task."""
        return [*self._system_idx, *([] if self._task_idx is None else [self._task_idx])]

    def _id(self, i: int) -> str:
        return str(self._log[i].id)

    def _recent_start(self) -> int:
        """First index of the recent layer: the cut, past the pinned messages on it (they are head)."""
        start = self._first_kept
        if start == 0:
            return 0
        pinned = {*self._pinned(), *self._pc_unit()}
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
        """The task's index when it arrived after compactions: it is lifted ahead of the summaries."""
        t = self._task_idx
        if t is not None and self._block is not None and t >= self._recent_start():
            return t
        return None

    def _head_pinned(self) -> list[int]:
        start = self._recent_start()
        idx = [i for i in self._system_idx if i < start]
        t = self._task_idx
        if t is not None and (t < start or self._block is not None):  # behind the cut, or lifted
            idx.append(t)
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
        """First index of the live run: the turn in progress (:func:`~langctx.turns.opens_turn`)."""
        return max(self._last_human + 1, self._first_kept)

    def _thinking_dropped(self, i: int) -> bool:
        """True when message ``i`` is sent without thinking (a completed turn's behind summaries)."""
        if not (self._thinking and self._block is not None and i < self._live_start()):
            return False
        k = bisect.bisect_left(self._thinking, i)
        return k < len(self._thinking) and self._thinking[k] == i

    def _stripped_view(self, i: int) -> tuple[BaseMessage, int]:
        if i not in self._stripped:
            view = strip_thinking(self._views.get(i, self._log[i]))
            self._stripped[i] = (view, self._counter.count_message(view))
        return self._stripped[i]

    def _live_thinking(self) -> bool:
        """True when a projected message of the live run carries thinking."""
        live = self._live_start()
        return bool(self._thinking) and self._thinking[-1] >= max(live, self._recent_start())

    def _head_tokens(self) -> int:
        return sum(self._view_tokens(i) for i in self._head_pinned()) + self._block_tokens

    def _sent(self, lo: int, hi: int) -> Iterator[int | ToolMessage]:
        """The indices of [lo, hi) that are sent, each followed by the repairs after it."""
        lifted, skip, repairs = self._lifted_task(), self._skip, self._repair_after
        for i in range(lo, hi):
            if i not in skip and i != lifted:
                yield i
            if i in repairs:
                yield from repairs[i]

    def _span_tokens(self, lo: int, hi: int) -> int:
        count = self._counter.count_message
        return sum(
            self._view_tokens(m) if isinstance(m, int) else count(m) for m in self._sent(lo, hi)
        )

    def _refresh(self) -> None:
        """Recompute the cached layer sizes after a compaction (O(recent))."""
        self._block, self._block_tokens = self._render_block()
        self._refresh_recent()
        self._calibration = 0

    def _render_block(self, room: int | None = None) -> tuple[BaseMessage | None, int]:
        """The summary block in the head budget, or within ``room`` tokens."""
        pinned = sum(self._view_tokens(i) for i in self._pinned())
        t = self._task_idx
        task = None if t is None else (self._id(t), opening(user_text(self._log[t])))
        return summary_block(
            self._active,
            self._config,
            self._counter,
            pinned_tokens=pinned,
            users=self._users,
            task=task,
            files=latest_files(self._entries),
            room=room,
        )

    def _sent_block(self) -> tuple[BaseMessage | None, int]:
        """The block as sent: when the kept messages, cut as far as they go, leave it less than
        its rendered size (a newest turn of many tool calls at a small budget), it is rendered
        in what they leave. A function of the state alone: a restored memory sends the same."""
        over = self._full_tokens() - self._config.max_tokens_resolved
        if over <= 0 or self._block is None:
            return self._block, self._block_tokens
        return self._render_block(room=self._block_tokens - over)

    def _refresh_recent(self) -> None:
        self._recent_tokens = self._span_tokens(self._recent_start(), len(self._log))
