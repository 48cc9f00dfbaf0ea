"""ThreadMemories: one LayeredChatMemory per graph thread, kept in sync with the graph state.

The graph state is the truth: ``messages`` plus the ``langctx`` channel. A memory is only a cache of
what they imply, kept per ``thread_id`` in this process so a step costs work proportional to what
is new. Each use of a thread's memory is a :class:`MemoryLease`, which first brings the memory in
line with the state it was given:

- the memory's log is a prefix of the state's messages (by id and content) and its entries start
  with the channel's: only the new messages are added (the memory's triggers run on them);
- otherwise (a new process, a message removed or edited by hand, time travel to an older
  checkpoint, messages archived): the memory is rebuilt with ``restore``. Channel entries that
  name messages no longer in the state are dropped, and the lease's update then resets the channel
  to the entries kept; entries whose messages were archived (the channel's ``archive`` record says
  so) are kept and restored with the archive's cut, so the projection is unchanged.

Concurrency: leases of one thread share its memory while their states extend each other, so a
message added during a running async compaction is appended after it, in order (the core queues
it). A lease whose state diverges from a memory that another lease is using gets a private memory
rebuilt from its own state; nothing is shared between diverging runs, and each run writes only
entries consistent with its own messages.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> memories = ThreadMemories(max_tokens=4000)
    >>> state = {"messages": [SystemMessage("Be brief.", id="s"), HumanMessage("Hi", id="h")]}
    >>> with memories.lease(state, {"configurable": {"thread_id": "t1"}}) as lease:
    ...     [m.id for m in lease.projection()], lease.update()
    (['s', 'h'], None)
"""

from __future__ import annotations

import operator
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig, ensure_config

from langctx.entries import CompactionEntry
from langctx.errors import ConfigError
from langctx.integrations.archive_plan import archive_record, restore_entries
from langctx.integrations.control import state_messages
from langctx.integrations.events import emit_compaction_event
from langctx.integrations.state import (
    ArchiveRecord,
    LangctxChannel,
    channel_entries,
    channel_update,
)
from langctx.memory import CompactionEvent, LayeredChatMemory, Trigger

__all__ = ["NO_THREAD", "MemoryFactory", "MemoryLease", "ThreadMemories", "thread_id_of"]

MemoryFactory = Callable[[], LayeredChatMemory]
"""Makes a fresh, identically configured memory (called once per thread and on rebuilds)."""

NO_THREAD = "__langctx_no_thread__"
"""Cache key used when the run's config has no ``thread_id`` (no checkpointer)."""

_SUMMARY_PREFIX = "langctx-summary-"


def thread_id_of(config: RunnableConfig | None) -> str:
    """The ``thread_id`` of a run's config, or :data:`NO_THREAD`."""
    configurable = (config or {}).get("configurable") or {}
    tid = configurable.get("thread_id")
    return NO_THREAD if tid is None else str(tid)


@dataclass(eq=False)
class _Slot:
    memory: LayeredChatMemory
    seen: list[BaseMessage] = field(default_factory=list)
    """The conversation messages (control messages filtered out) that the memory has logged."""
    raw: list[BaseMessage] = field(default_factory=list)
    """The state's ``messages`` that ``seen`` was filtered from (for an O(new) identity check)."""
    busy: int = 0
    lock: threading.RLock = field(default_factory=threading.RLock)


@dataclass
class _Plan:
    """How a lease brings its memory in line with a state (decided under the slot lock)."""

    shared: bool
    memory: LayeredChatMemory
    new: list[BaseMessage] = field(default_factory=list)
    rebuilt: bool = False
    reset: bool = False
    known: tuple[int, int, dict[str, int]] = (0, 0, {})
    archive: ArchiveRecord | None = None
    """The channel's archive record (archive mode), kept for private rebuilds."""


class ThreadMemories:
    """Process-local cache of one :class:`~langctx.LayeredChatMemory` per graph thread.

    Args:
        factory: makes a fresh memory; every memory it makes must be configured the same way.
            Default: ``LayeredChatMemory(**memory_kwargs)``.
        max_threads: memories kept; the least recently used idle one is dropped beyond it (it is
            rebuilt from the state when its thread comes back).
        **memory_kwargs: options of :class:`~langctx.LayeredChatMemory` (when no factory is given).

    Example:
        >>> memories = ThreadMemories(max_tokens=8000)
        >>> memories.get("t1") is None
        True
    """

    def __init__(
        self,
        factory: MemoryFactory | None = None,
        *,
        max_threads: int = 128,
        **memory_kwargs: Any,
    ) -> None:
        if factory is not None and memory_kwargs:
            msg = "pass either factory=... or LayeredChatMemory options, not both."
            raise ConfigError(msg)
        if not isinstance(max_threads, int) or max_threads < 1:
            msg = f"max_threads must be a positive int, got {max_threads!r}."
            raise ConfigError(msg)
        if factory is None:
            LayeredChatMemory(**memory_kwargs)  # validate the options now, not at the first step

            def factory() -> LayeredChatMemory:
                return LayeredChatMemory(**memory_kwargs)

        self.factory: MemoryFactory = factory
        self.max_threads = max_threads
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ memories

    def new_memory(self) -> LayeredChatMemory:
        """A fresh memory from the factory, wired to emit compaction events."""
        memory = self.factory()
        if not isinstance(memory, LayeredChatMemory):
            msg = f"the memory factory returned {type(memory).__name__}, not a LayeredChatMemory."
            raise ConfigError(msg)
        user = memory.on_compaction
        if getattr(user, "_langctx_emitter", False):
            return memory

        def on_compaction(event: CompactionEvent) -> None:
            emit_compaction_event(event)
            if user is not None:
                user(event)

        on_compaction._langctx_emitter = True  # type: ignore[attr-defined]
        memory.on_compaction = on_compaction
        return memory

    def get(self, thread_id: str) -> LayeredChatMemory | None:
        """The cached memory of a thread, if any (for inspection; leases are the way to use it)."""
        with self._lock:
            slot = self._slots.get(thread_id)
            return slot.memory if slot is not None else None

    def forget(self, thread_id: str | None = None) -> None:
        """Drop one thread's cached memory (or all of them); the state rebuilds it when needed."""
        with self._lock:
            if thread_id is None:
                self._slots.clear()
            else:
                self._slots.pop(thread_id, None)

    def _slot(self, key: str) -> _Slot:
        with self._lock:
            slot = self._slots.get(key)
            if slot is None:
                slot = _Slot(self.new_memory())
                self._slots[key] = slot
                idle = [k for k, s in self._slots.items() if s.busy == 0 and k != key]
                for k in idle[: max(0, len(self._slots) - self.max_threads)]:
                    del self._slots[k]
            self._slots.move_to_end(key)
            return slot

    def _hold(self, slot: _Slot, delta: int) -> None:
        with self._lock:
            slot.busy += delta

    # ------------------------------------------------------------------ leases

    @contextmanager
    def lease(
        self, state: Mapping[str, Any], config: RunnableConfig | None = None
    ) -> Iterator[MemoryLease]:
        """Use the thread's memory, brought in line with ``state`` (its triggers run).

        Args:
            state: a graph state with ``messages`` and, optionally, the ``langctx`` channel.
            config: the run's config (default: the current run's).
        """
        key, raw, channel = _read(state, config)
        slot = self._slot(key)
        with slot.lock:  # held while adding, so concurrent threads append in order
            plan, messages = self._decide(slot, raw, channel)
            plan.archive = archive_record(channel)
            try:
                if plan.rebuilt:
                    plan.known, plan.reset = _rebuild(plan.memory, messages, channel)
                    if plan.memory.needs_compaction():
                        plan.memory.compact(trigger="proactive")
                elif plan.new:
                    plan.memory.add_messages(plan.new)
            except BaseException:
                self._discard(key, slot, plan)
                raise
        lease = MemoryLease(self, slot if plan.shared else None, plan, messages, key)
        try:
            yield lease
        finally:
            lease.close()

    @asynccontextmanager
    async def alease(
        self, state: Mapping[str, Any], config: RunnableConfig | None = None
    ) -> AsyncIterator[MemoryLease]:
        """Async version of `lease`."""
        key, raw, channel = _read(state, config)
        slot = self._slot(key)
        with slot.lock:  # no await inside: the decision and the log order stay atomic
            plan, messages = self._decide(slot, raw, channel)
            plan.archive = archive_record(channel)
            try:
                if plan.rebuilt:
                    plan.known, plan.reset = _rebuild(plan.memory, messages, channel)
            except BaseException:
                self._discard(key, slot, plan)
                raise
        lease = MemoryLease(self, slot if plan.shared else None, plan, messages, key)
        try:
            try:
                if plan.rebuilt and plan.memory.needs_compaction():
                    await plan.memory.acompact(trigger="proactive")
                elif plan.new:  # appended at once; a running compaction finishes first
                    await plan.memory.aadd_messages(plan.new)
            except BaseException:
                self._discard(key, slot, plan, release=False)  # close() below releases it
                raise
            yield lease
        finally:
            lease.close()

    @contextmanager
    def lease_for_input(
        self, messages: Sequence[BaseMessage], config: RunnableConfig | None = None
    ) -> Iterator[MemoryLease]:
        """A lease for a model call whose input already holds a projection (overflow recovery).

        When the thread's memory projects exactly the messages found in ``messages``, that memory
        is used, and what it compacts is written to the channel by the thread's next sync.
        Otherwise a private memory is built from ``messages`` themselves (nothing is persisted).
        """
        key = thread_id_of(ensure_config(config))
        with self._lock:
            slot = self._slots.get(key)
        plan: _Plan | None = None
        seen: list[BaseMessage] = []
        span = (0, len(messages))
        if slot is not None:
            with slot.lock:
                block = slot.memory.build_context()
                start = _find_block(messages, block)
                if start is not None:
                    seen, span = list(slot.seen), (start, len(block))
                    plan = _Plan(True, slot.memory, known=_counts(slot.memory))
                    self._hold(slot, 1)
        if plan is None:
            slot, memory = None, self.new_memory()
            memory.restore(list(messages))
            seen = memory.messages
            plan = _Plan(False, memory, known=_counts(memory))
        lease = MemoryLease(self, slot, plan, seen, key)
        lease.input_span = span
        try:
            yield lease
        finally:
            lease.close()

    def _discard(self, key: str, slot: _Slot, plan: _Plan, *, release: bool = True) -> None:
        """A sync failed half-way: forget the cached memory so the next lease rebuilds it."""
        with self._lock:
            if plan.shared:
                slot.busy -= release
                if self._slots.get(key) is slot:
                    del self._slots[key]

    def _decide(
        self, slot: _Slot, raw: list[BaseMessage], channel: Any
    ) -> tuple[_Plan, list[BaseMessage]]:
        mem, seen = slot.memory, slot.seen
        n, n_raw = len(seen), len(slot.raw)
        if n_raw and len(raw) >= n_raw and all(map(operator.is_, raw[:n_raw], slot.raw)):
            messages = [*seen, *state_messages(raw[n_raw:])]  # same objects: O(new)
            extends = True
        else:
            messages = state_messages(raw)
            extends = n <= len(messages) and _same_prefix(messages, seen, n)
        if extends and _entries_match(mem, channel):
            self._hold(slot, 1)
            slot.seen, slot.raw = messages, list(raw)
            return _Plan(True, mem, new=messages[n:], known=_channel_counts(channel)), messages
        if slot.busy:
            if len(messages) < n and _same_prefix(seen, messages, len(messages)):
                if _entries_match(mem, channel):  # an older state of a queued thread
                    self._hold(slot, 1)
                    return _Plan(True, mem, known=_channel_counts(channel)), messages
            return _Plan(False, self.new_memory(), rebuilt=True), messages  # diverged while in use
        self._hold(slot, 1)
        slot.seen, slot.raw = messages, list(raw)
        return _Plan(True, mem, rebuilt=True), messages


class MemoryLease:
    """One use of a thread's memory, in line with one graph state.

    Attributes:
        memory: the memory (shared with other leases of the thread, or private to this one).
        thread_id: the thread, or :data:`NO_THREAD`.
    """

    def __init__(
        self,
        owner: ThreadMemories,
        slot: _Slot | None,
        plan: _Plan,
        messages: list[BaseMessage],
        thread_id: str,
    ) -> None:
        self._owner = owner
        self._slot = slot
        self.memory = plan.memory
        self.thread_id = thread_id
        self._messages = messages
        self._id_index: dict[str, int] | None = None
        self._known_c, self._known_e, self._known_p = plan.known
        self._reset = plan.reset
        self._archive = plan.archive
        self._closed = False
        self.input_span: tuple[int, int] | None = None
        """Where the projection sits in a model input (set by `lease_for_input`)."""

    @property
    def _ids(self) -> dict[str, int]:
        if self._id_index is None:
            self._id_index = {str(m.id): i for i, m in enumerate(self._messages)}
        return self._id_index

    @property
    def shared(self) -> bool:
        """True when the memory is the thread's cached one (not a private rebuild)."""
        return self._slot is not None

    @property
    def current(self) -> bool:
        """True when the memory's log is exactly this lease's state (no later state queued)."""
        return self._slot is None or len(self._slot.seen) == len(self._messages)

    def close(self) -> None:
        """End the lease (idempotent). Called by the context manager."""
        if not self._closed and self._slot is not None:
            self._owner._hold(self._slot, -1)
        self._closed = True

    # ------------------------------------------------------------------ reading

    def projection(self) -> list[BaseMessage]:
        """What the model should see for this lease's state (pinned, summaries, recent)."""
        self._ensure_consistent()
        out = self.memory.build_context()
        if self._slot is None or len(self._slot.seen) == len(self._messages):
            return out
        while out and str(out[-1].id) not in self._ids:  # queued messages of a later state
            if str(out[-1].id).startswith(_SUMMARY_PREFIX):
                break
            out.pop()
        return out

    def context_tokens(self) -> int:
        """Tokens of the memory's projection, by its counter."""
        return self.memory.context_tokens()

    def update(self) -> LangctxChannel | None:
        """What to write to the ``langctx`` channel for this state (None: nothing new)."""
        comps = self.memory.compactions
        edits = self.memory.edits
        prio = _ledger(self.memory)
        if self._slot is not None and len(self._slot.seen) > len(self._messages):
            comps, edits = self._consistent(comps, edits)
        new_c, new_e = comps[self._known_c :], edits[self._known_e :]
        new_p = {k: v for k, v in prio.items() if self._known_p.get(k) != v}
        if self._reset:
            return channel_update(compactions=comps, edits=edits, priorities=prio, reset=True)
        if not (new_c or new_e or new_p):
            return None
        return channel_update(compactions=new_c, edits=new_e, priorities=new_p)

    def _consistent(
        self, comps: list[CompactionEntry], edits: list[Any]
    ) -> tuple[list[CompactionEntry], list[Any]]:
        kept: list[CompactionEntry] = []
        for e in comps:
            fk = e["first_kept_entry_id"]
            if e["trigger"] != "merge" and fk is not None and fk not in self._ids:
                break
            kept.append(e)
        return kept, [e for e in edits if e["message_id"] in self._ids]

    # ------------------------------------------------------------------ compaction

    def compact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Compact now (see :meth:`LayeredChatMemory.compact`).

        Args:
            instructions: focus instructions for the summary.
            trigger: recorded on the entry.
            keep_recent_tokens: keep fewer recent tokens than configured (overflow retries).
        """
        self._ensure_consistent(writing=True)
        with _keep_recent(self.memory, keep_recent_tokens):
            return self.memory.compact(instructions, trigger=trigger)

    async def acompact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Async version of `compact`."""
        self._ensure_consistent(writing=True)
        with _keep_recent(self.memory, keep_recent_tokens):
            return await self.memory.acompact(instructions, trigger=trigger)

    def _ensure_consistent(self, *, writing: bool = False) -> None:
        """Leave the shared memory for a private one if another lease moved it past our state.

        A lease whose state is older than the shared log (a later state was queued) may read the
        projection while the cut is still inside its state, but never compacts the shared memory.
        """
        slot = self._slot
        if slot is None or len(slot.seen) == len(self._messages):
            return
        first_kept = self.memory.first_kept_id
        if not writing and first_kept is not None and first_kept in self._ids:
            return
        private = self._owner.new_memory()
        channel = channel_update(
            compactions=self.memory.compactions[: self._known_c],
            edits=self.memory.edits[: self._known_e],
            priorities=self._known_p,
            archive=self._archive,
        )
        known, reset = _rebuild(private, self._messages, channel)
        self._owner._hold(slot, -1)
        self._slot = None
        self.memory = private
        self._known_c, self._known_e, self._known_p = known
        self._reset = self._reset or reset


# ---------------------------------------------------------------------- helpers


def _same(a: BaseMessage, b: BaseMessage) -> bool:
    return a is b or (
        a.id == b.id
        and a.type == b.type
        and a.content == b.content
        and getattr(a, "tool_calls", None) == getattr(b, "tool_calls", None)
    )


def _same_prefix(longer: Sequence[BaseMessage], shorter: Sequence[BaseMessage], n: int) -> bool:
    return all(_same(longer[i], shorter[i]) for i in range(n))


def _ledger(memory: LayeredChatMemory) -> dict[str, int]:
    return memory.priorities


def _ids(entries: Sequence[Mapping[str, Any]]) -> list[Any]:
    return [e.get("id") for e in entries]


def _entries_match(memory: LayeredChatMemory, channel: Any) -> bool:
    """The channel's entries are a prefix of the memory's (the memory may hold unsaved ones)."""
    channel = channel or {}
    if not isinstance(channel, Mapping):
        return False
    comps = _ids(channel.get("compactions") or [])
    edits = _ids(channel.get("edits") or [])
    mine_c, mine_e = _ids(memory.compactions), _ids(memory.edits)
    if mine_c[: len(comps)] != comps or mine_e[: len(edits)] != edits:
        return False
    ledger = _ledger(memory)
    return all(ledger.get(str(k)) == v for k, v in (channel.get("priorities") or {}).items())


def _channel_counts(channel: Any) -> tuple[int, int, dict[str, int]]:
    channel = channel or {}
    return (
        len(channel.get("compactions") or []),
        len(channel.get("edits") or []),
        {str(k): int(v) for k, v in (channel.get("priorities") or {}).items()},
    )


def _counts(memory: LayeredChatMemory) -> tuple[int, int, dict[str, int]]:
    return len(memory.compactions), len(memory.edits), _ledger(memory)


def _read(
    state: Mapping[str, Any], config: RunnableConfig | None
) -> tuple[str, list[BaseMessage], Any]:
    key = thread_id_of(ensure_config(config))
    return key, list(state.get("messages") or []), state.get("langctx")


def _rebuild(
    memory: LayeredChatMemory, messages: list[BaseMessage], channel: Any
) -> tuple[tuple[int, int, dict[str, int]], bool]:
    """Restore ``memory`` from state; drop channel entries that name messages no longer there.

    In archive mode the state holds only the live messages; entries whose cut was archived are
    restored with the archive's cut (see :func:`~langctx.integrations.archive_plan.restore_entries`).

    Returns the counts of the channel's entries kept (what the channel already holds) and whether
    any were dropped (then the channel must be reset to the kept ones).
    """
    comps, edits, prio = channel_entries(channel)
    present = {str(m.id) for m in messages}
    kept, restore = restore_entries(comps, present, archive_record(channel))
    kept_edits = [e for e in edits if e["message_id"] in present]
    kept_prio = {k: v for k, v in prio.items() if k in present}
    memory.restore(messages, compactions=restore, edits=kept_edits, priorities=kept_prio)
    dropped = len(kept) < len(comps) or len(kept_edits) < len(edits) or len(kept_prio) < len(prio)
    return (len(kept), len(kept_edits), kept_prio), dropped


@contextmanager
def _keep_recent(memory: LayeredChatMemory, tokens: int | None) -> Iterator[None]:
    """Temporarily keep fewer recent tokens (core gap: ``compact`` takes no such option)."""
    if tokens is None or tokens >= memory.config.keep_recent_tokens_resolved:
        yield
        return
    original = memory.config
    memory.config = replace(original, keep_recent_tokens=max(1, int(tokens)))
    try:
        yield
    finally:
        memory.config = original


def _find_block(messages: Sequence[BaseMessage], block: Sequence[BaseMessage]) -> int | None:
    """Start index of ``block`` inside ``messages`` (by ids), or None."""
    if not block:
        return None
    want = [str(m.id) for m in block]
    ids = [str(m.id) for m in messages]
    try:
        start = ids.index(want[0])
    except ValueError:
        return None
    return start if ids[start : start + len(want)] == want else None
