"""LayeredChatMemory: the standalone memory (an append-only log, its entries, the projection).

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> mem = LayeredChatMemory(max_tokens=2000)
    >>> mem.add_messages([SystemMessage("You are a coding agent."), HumanMessage("Fix the parser.")])
    >>> mem.build_context()[1].content
    'Fix the parser.'
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage, messages_to_dict

from langctx.channel import (
    MemorySnapshot,
    channel_entries,
    channel_update,
    channel_users,
    check_version,
)
from langctx.engine import compaction, log, planning, restoring, writing
from langctx.engine.core import EarlierLog, MemoryCore
from langctx.engine.plan import CompactionEvent as CompactionEvent  # re-exported: its old home
from langctx.engine.plan import Trigger
from langctx.entries import (
    ENTRY_VERSION,
    CompactionEntry,
    EditEntry,
    EvictionRecord,
    active_summaries,
    read_entry,
    validate_entry,
)
from langctx.state_reading import stored_evictions, stored_messages


class LayeredChatMemory(MemoryCore):
    """Layered, compacting chat memory over langchain-core messages: pinned, summaries, recent.

    Args:
        config: a full :class:`MemoryConfig`; cannot be combined with config keywords.
        summarizer: None/"local" (offline), a chat model or Runnable, an object with
            ``summarize(request)``, or a callable taking a :class:`SummaryRequest`.
        token_counter: "approximate", "tiktoken", an encoding name, a chat model, a callable over
            messages, or a :class:`TokenCounter`.
        file_tools: tool name -> :class:`FileToolSpec`, for mechanical file extraction.
        thread_id: the conversation, for tracing and run metadata; None: the LangChain run's.
        **options: any :class:`MemoryConfig` field (``max_tokens``, ...; ``ConfigOptions``).
    """

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

    def set_priority(self, message_id: str, priority: int) -> None:
        """Override a message's priority in the memory's own ledger (e.g. fetched reference -> 10)."""
        if message_id not in self._pos:
            msg = f"no message with id {message_id!r} in this memory."
            raise KeyError(msg)
        self._priority[message_id] = int(priority)

    def add_message(self, message: BaseMessage) -> None:
        """Add one message (see :meth:`add_messages`)."""
        self.add_messages([message])

    def add_messages(self, messages: Sequence[Any]) -> None:
        """Append messages to the log (a logged id is skipped; with other content,
        :class:`InvalidHistoryError`), then compact if a trigger fires."""
        with self._lock:
            last_ai = log.append_all(self, messages)
            if trigger := planning.due(self, last_ai):
                compaction.compact(self, trigger, None)
            writing.record_block_room(self)

    async def aadd_messages(self, messages: Sequence[Any]) -> None:
        """Async version of `add_messages` (messages added while a compaction runs follow it)."""
        with self._lock:
            last_ai = log.append_all(self, messages)
        async with self._async_lock():
            if trigger := planning.due(self, last_ai):
                await compaction.acompact(self, trigger, None)
            with self._lock:
                writing.record_block_room(self)

    async def aadd_message(self, message: BaseMessage) -> None:
        """Async version of `add_message`."""
        await self.aadd_messages([message])

    def needs_compaction(self) -> bool:
        """True when the context is above the compaction mark."""
        return planning.due(self, False) is not None

    def stats(self) -> dict[str, Any]:
        """Figures for dashboards and debugging.

        Example:
            >>> LayeredChatMemory(max_tokens=4000).stats()["budget"]
            4000
        """
        merges = sum(1 for e in self._entries if e["trigger"] == "merge")
        return {
            "messages": len(self._log),
            "context_tokens": self.context_tokens(),
            "budget": self._config.max_tokens_resolved,
            "compactions": len(self._entries) - merges,
            "merges": merges,
            "summaries_by_level": dict(Counter(e["level"] for e in self._active)),
            "summary_tokens": sum(e["summary_tokens"] for e in self._active),
            "edits": len(self._edits),
            "blocking_summarizer_calls": self._blocking_calls,
            "first_kept_id": self.first_kept_id,
            "entry_version": ENTRY_VERSION,
        }

    def compact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Compact now; the new entry, or None when there is nothing to compact.

        Args:
            instructions: focus instructions that steer the summary (``/compact ...``).
            keep_recent_tokens: recent tokens to keep this time (default: the low mark).
        """
        with self._lock:
            return compaction.compact(self, trigger, instructions, keep_recent_tokens)

    async def acompact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Async version of `compact`."""
        async with self._async_lock():
            return await compaction.acompact(self, trigger, instructions, keep_recent_tokens)

    def _async_lock(self) -> asyncio.Lock:
        if self._alock is None:
            self._alock = asyncio.Lock()
        return self._alock

    def to_state(self) -> MemorySnapshot:
        """A JSON-safe snapshot in the channel's shape, plus the log and the eviction log."""
        with self._lock:
            users, dropped = self._users
            update = channel_update(
                compactions=self._entries,
                edits=self._edits,
                priorities=self._priority,
                users=users,
                users_dropped=dropped,
            )
            return MemorySnapshot(
                **update,
                messages=messages_to_dict(self._log),
                eviction_log=[dict(r) for r in self._evictions],
            )

    @classmethod
    def from_state(cls, state: Mapping[str, Any], **kwargs: Any) -> LayeredChatMemory:
        """Rebuild a memory from :meth:`to_state` output (kwargs as for the constructor); a corrupt
        ``state`` raises :class:`StateVersionError` naming the part."""
        compactions, edits, priorities = channel_entries(check_version(state, "saved"))
        users, dropped = channel_users(state)
        mem = cls(**kwargs)
        mem.restore(
            stored_messages(state.get("messages")),
            compactions=compactions,
            edits=edits,
            priorities=priorities,
            eviction_log=stored_evictions(state.get("eviction_log")),
            users=users,
            users_dropped=dropped,
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
        users: Sequence[Mapping[str, Any]] | None = None,
        users_dropped: int = 0,
    ) -> None:
        """Replace this memory's state with a persisted log and its entries (no compaction runs).

        Args:
            users: the ledger of folded user messages (``to_state()["users"]``), oldest first;
                None: a state written before the ledger, read from its entries.
            users_dropped: how many older folded user messages the ledger only counts.

        Raises:
            StateVersionError: an entry or the ledger is corrupt, or an entry does not fit the log.
        """
        with self._lock:
            self._reset()
            log.replay(self, (), list(messages))
            for raw in edits:
                restoring.apply_edit(self, validate_entry(raw))
            task = None if self._task_idx is None else self._id(self._task_idx)
            self._entries = [  # a cut no fold makes (it folds past the task) is ignored
                e
                for e in map(read_entry, compactions)
                if e["trigger"] == "merge" or task is None or e["first_kept_id"] != task
            ]
            self._active = [e for e in active_summaries(self._entries) if log.after_pc(self, e)]
            restoring.restore_users(self, users, users_dropped)
            self._first_kept = restoring.restored_cut(self)
            self._priority = {k: int(v) for k, v in (priorities or {}).items() if k in self._pos}
            self._evictions = [EvictionRecord(**r) for r in eviction_log]  # type: ignore[typeddict-item]
            self._refresh()
            writing.check_pinned(self)

    def restore_window(
        self,
        head: Sequence[BaseMessage],
        window: Sequence[BaseMessage],
        *,
        compactions: Sequence[CompactionEntry] = (),
        edits: Sequence[EditEntry] = (),
        priorities: Mapping[str, int] | None = None,
        validate_from: int = 0,
        before: EarlierLog | None = None,
        archived_to: str | None = None,
        users: Sequence[Mapping[str, Any]] | None = None,
        users_dropped: int = 0,
    ) -> None:
        """Rebuild from a window of a longer log (no compaction runs).

        Args:
            head: the messages before the cut that stay projected (system, task, provider item).
            window: the log from the latest compaction's cut on.
            validate_from: only ``window[validate_from:]`` is validated (the rest was sent before).
            before: the log before the window: a message by id, an archived entry's ids.
            archived_to: archive mode: the id of the first message after the archived part of
                the log (what the entries fold before it is in the append-only archive).
            users, users_dropped: the ledger of folded user messages (see :meth:`restore`).
        """
        with self._lock:
            self._reset()
            self._before, self._archived_to = before, archived_to
            head, window = restoring.as_messages(head), restoring.as_messages(window)
            log.replay(self, [*head, *window[:validate_from]], window[validate_from:])
            pos = self._pos
            logged = [e for e in edits if e["message_id"] in pos]
            for e in sorted(logged, key=lambda e: pos[e["message_id"]]):  # stable: in edit order
                restoring.apply_edit(self, e)
            self._entries = entries = list(compactions)
            active = restoring.active_positions(entries)
            projected = [n - 1 for n in active if log.after_pc(self, entries[n - 1])]
            for k in projected:  # read, their facts too: a state written without the reducer
                entries[k] = read_entry(entries[k])
            self._active = [entries[k] for k in projected]
            restoring.restore_users(self, users, users_dropped)
            self._first_kept = max(len(head) if entries else 0, self._first_kept)
            self._priority = {k: int(v) for k, v in (priorities or {}).items() if k in self._pos}
            self._refresh()
            log.calibrate_window(self)
            writing.check_pinned(self)

    def clear(self) -> None:
        """Forget everything (log, entries, ledger)."""
        with self._lock:
            self._reset()
