"""``BaseChatMessageHistory`` adapter: langctx memory behind ``RunnableWithMessageHistory``.

Legacy API, deprecated by langchain-core (removal planned for 2.0): new code should use the
``create_agent`` middleware or the LangGraph node. :class:`LangctxChatMessageHistory` serves the
memory's projection as ``messages`` (cached until the next write) and the whole log as
``full_messages``, kept in-process, in a wrapped ``BaseChatMessageHistory`` with a ``state``
mapping, or in SQLite (:class:`SQLiteChatHistoryStore`). The memory knows each message by its
position in the log, so messages without ids (or with the same id twice) are accepted and read back
exactly as added.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> history = LangctxChatMessageHistory(max_tokens=1500)
    >>> history.add_messages([HumanMessage("Fix the parser."), AIMessage("On it.")])
    >>> history.messages == [HumanMessage("Fix the parser."), AIMessage("On it.")]
    True
    >>> for i in range(40):
    ...     history.add_messages([HumanMessage(f"step {i}: " + "details " * 30), AIMessage("done")])
    >>> len(history.full_messages), len(history.messages) < 82, len(history.memory.compactions) > 0
    (82, True, True)
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    BaseMessage,
    RemoveMessage,
    message_to_dict,
    messages_from_dict,
)

from langctx.channel import CHANNEL_VERSION, LangctxChannel
from langctx.entries import CompactionEntry
from langctx.errors import ConfigError, InvalidHistoryError, InvalidMessageError, StateVersionError
from langctx.markers import HISTORY_ID_PREFIX, LEGACY_HISTORY_ID_PREFIX
from langctx.memory import LayeredChatMemory

__all__ = ["STATE_KEY", "LangctxChatMessageHistory", "SQLiteChatHistoryStore"]

STATE_KEY = "langctx"
"""Default key of the langctx entries in the ``state`` mapping beside a wrapped history."""


_SCHEMA = """
CREATE TABLE IF NOT EXISTS langctx_history_messages (
    session_id TEXT NOT NULL,
    idx INTEGER NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (session_id, idx)
);
CREATE TABLE IF NOT EXISTS langctx_history_entries (
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    kind TEXT NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
"""


# ---------------------------------------------------------------------------------- entries


@dataclass(slots=True)
class _Entries:
    """The langctx entries of one history: compactions, edits, eviction records (plain dicts)."""

    compactions: list[dict[str, Any]] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    evictions: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.compactions or self.edits or self.evictions)

    def extend(self, other: _Entries) -> None:
        self.compactions.extend(other.compactions)
        self.edits.extend(other.edits)
        self.evictions.extend(other.evictions)

    def with_current_ids(self) -> _Entries:
        """The entries with ids stored under :data:`~langctx.markers.LEGACY_HISTORY_ID_PREFIX`
        renamed to :data:`~langctx.markers.HISTORY_ID_PREFIX` (a history saved by older langctx)."""
        return _Entries(
            [_current_ids(e) for e in self.compactions],
            [_current_ids(e) for e in self.edits],
            [_current_ids(e) for e in self.evictions],
        )

    def to_state(self) -> LangctxChannel:
        state = LangctxChannel(
            v=CHANNEL_VERSION,
            compactions=[dict(e) for e in self.compactions],
            edits=[dict(e) for e in self.edits],
        )
        state["eviction_log"] = [dict(e) for e in self.evictions]
        return state

    @classmethod
    def from_state(cls, state: object, where: str) -> _Entries:
        if state is None:
            return cls()
        if not isinstance(state, Mapping) or state.get("v") != CHANNEL_VERSION:
            version = state.get("v") if isinstance(state, Mapping) else type(state).__name__
            msg = (
                f"langctx state in {where} has version {version!r}, not {CHANNEL_VERSION}; "
                "upgrade langctx, or delete that key to rebuild the entries from the log."
            )
            raise StateVersionError(msg)
        return cls(
            [dict(e) for e in state.get("compactions", [])],
            [dict(e) for e in state.get("edits", [])],
            [dict(e) for e in state.get("eviction_log", [])],
        )


def _current_ids(value: Any) -> Any:
    """``value`` with every legacy positional id (a whole string, never text) renamed."""
    if isinstance(value, str):
        index = value.removeprefix(LEGACY_HISTORY_ID_PREFIX)
        return HISTORY_ID_PREFIX + index if index != value and index.isdigit() else value
    if isinstance(value, list):
        return [_current_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _current_ids(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------- backends


@dataclass(frozen=True)
class _Write:
    """One write to a backend: new messages from log index ``start`` and the new entries."""

    start: int
    messages: Sequence[BaseMessage]
    encoded: list[str]
    """``messages`` as the backend stores them (``encode``; empty when it keeps objects)."""
    new: _Entries
    total: _Entries
    """Every entry so far, ``new`` included (for backends that rewrite them whole)."""


@dataclass(frozen=True)
class _Batch:
    """Messages to append, as given and as the backend stores them (``encode``)."""

    messages: list[BaseMessage] = field(default_factory=list)
    encoded: list[str] = field(default_factory=list)


@dataclass
class _Step:
    """One write in progress: the batch under its log positions, then the entries it made."""

    start: int
    batch: _Batch
    tagged: list[BaseMessage]
    """The batch as the memory gets it (positional ids)."""
    new: _Entries = field(default_factory=_Entries)


class _Backend(Protocol):
    """Where a history's full log and langctx entries live (one writer per session)."""

    def describe(self) -> str: ...

    def load(self) -> tuple[list[BaseMessage], _Entries]: ...

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]: ...

    def write(self, w: _Write) -> None: ...

    async def awrite(self, w: _Write) -> None: ...

    def clear(self) -> None: ...

    async def aclear(self) -> None: ...


class _InProcess:
    """No persistence: the log lives in the history object only."""

    def describe(self) -> str:
        return "this process"

    def load(self) -> tuple[list[BaseMessage], _Entries]:
        return [], _Entries()

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]:
        return []

    def write(self, w: _Write) -> None:
        return None

    async def awrite(self, w: _Write) -> None:
        return None

    def clear(self) -> None:
        return None

    async def aclear(self) -> None:
        return None


class _Wrapped:
    """A user's ``BaseChatMessageHistory`` holds the full log; a mapping holds the entries."""

    def __init__(
        self,
        history: BaseChatMessageHistory,
        state: MutableMapping[str, Any] | None,
        key: str,
    ) -> None:
        self.history = history
        self.state = state
        self.key = key

    def describe(self) -> str:
        where = f" with state[{self.key!r}]" if self.state is not None else ""
        return f"the wrapped {type(self.history).__name__}{where}"

    def load(self) -> tuple[list[BaseMessage], _Entries]:
        raw = self.state.get(self.key) if self.state is not None else None
        return list(self.history.messages), _Entries.from_state(raw, self.describe())

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]:
        return []

    def _save(self, new: _Entries, total: _Entries) -> None:
        # the log first: entries that name messages missing from the log could not be restored
        if new and self.state is not None:
            self.state[self.key] = total.to_state()

    def write(self, w: _Write) -> None:
        if w.messages:
            self.history.add_messages(list(w.messages))
        self._save(w.new, w.total)

    async def awrite(self, w: _Write) -> None:
        if w.messages:
            await self.history.aadd_messages(list(w.messages))
        self._save(w.new, w.total)

    def clear(self) -> None:
        self.history.clear()
        if self.state is not None:
            self.state.pop(self.key, None)

    async def aclear(self) -> None:
        await self.history.aclear()
        if self.state is not None:
            self.state.pop(self.key, None)


class _SQLite:
    """One session's rows in a :class:`SQLiteChatHistoryStore` (inserts only, one transaction)."""

    def __init__(self, store: SQLiteChatHistoryStore, session_id: str) -> None:
        self.store = store
        self.session_id = session_id
        self.next_seq = 0

    def describe(self) -> str:
        return f"SQLite session {self.session_id!r}"

    def load(self) -> tuple[list[BaseMessage], _Entries]:
        conn, sid = self.store.conn, self.session_id
        with self.store.lock:
            self.store.setup()
            rows = conn.execute(
                "SELECT idx, message FROM langctx_history_messages WHERE session_id = ? "
                "ORDER BY idx",
                (sid,),
            ).fetchall()
            entry_rows = conn.execute(
                "SELECT seq, kind, entry FROM langctx_history_entries WHERE session_id = ? "
                "ORDER BY seq",
                (sid,),
            ).fetchall()
        messages: list[BaseMessage] = []
        for expected, (idx, text) in enumerate(rows):
            if idx != expected:
                msg = (
                    f"{self.describe()} lacks log row {expected}; the database was edited by hand."
                )
                raise StateVersionError(msg)
            try:
                messages.extend(messages_from_dict([json.loads(text)]))
            except (ValueError, KeyError, TypeError) as exc:
                msg = f"{self.describe()}: log row {idx} cannot be read ({exc}); it was not written by langctx."
                raise StateVersionError(msg) from exc
        entries = _Entries()
        buckets = {
            "compaction": entries.compactions,
            "edit": entries.edits,
            "eviction": entries.evictions,
        }
        for seq, kind, text in entry_rows:
            if kind not in buckets:
                msg = f"{self.describe()}: entry {seq} has unknown kind {kind!r}; upgrade langctx."
                raise StateVersionError(msg)
            buckets[kind].append(json.loads(text))
        self.next_seq = entry_rows[-1][0] + 1 if entry_rows else 0
        return messages, entries

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]:
        out = []
        for m in messages:
            try:
                out.append(json.dumps(message_to_dict(m), ensure_ascii=False))
            except (TypeError, ValueError) as exc:
                msg = (
                    f"message {m.id!r} cannot be stored as JSON ({exc}); keep its content and "
                    "additional_kwargs JSON-serialisable."
                )
                raise InvalidMessageError(msg) from exc
        return out

    def write(self, w: _Write) -> None:
        sid = self.session_id
        rows = [(sid, w.start + k, text) for k, text in enumerate(w.encoded)]
        tagged = [
            *(("compaction", e) for e in w.new.compactions),
            *(("edit", e) for e in w.new.edits),
            *(("eviction", e) for e in w.new.evictions),
        ]
        with self.store.lock:
            entry_rows = [
                (sid, self.next_seq + k, kind, json.dumps(e, ensure_ascii=False))
                for k, (kind, e) in enumerate(tagged)
            ]
            if not rows and not entry_rows:
                return
            self.store.setup()
            try:
                with self.store.conn:  # one transaction: all rows or none
                    self.store.conn.executemany(
                        "INSERT INTO langctx_history_messages (session_id, idx, message) "
                        "VALUES (?, ?, ?)",
                        rows,
                    )
                    self.store.conn.executemany(
                        "INSERT INTO langctx_history_entries (session_id, seq, kind, entry) "
                        "VALUES (?, ?, ?, ?)",
                        entry_rows,
                    )
            except sqlite3.IntegrityError as exc:
                msg = (
                    f"{self.describe()} was written by another history since this one was "
                    "opened; open it again (SQLiteChatHistoryStore.get_history) to continue from "
                    "the stored log."
                )
                raise InvalidHistoryError(msg) from exc
            self.next_seq += len(entry_rows)

    async def awrite(self, w: _Write) -> None:
        await asyncio.to_thread(self.write, w)

    def clear(self) -> None:
        with self.store.lock:
            self.store.setup()
            with self.store.conn:
                for table in ("langctx_history_messages", "langctx_history_entries"):
                    self.store.conn.execute(
                        f"DELETE FROM {table} WHERE session_id = ?", (self.session_id,)
                    )
            self.next_seq = 0

    async def aclear(self) -> None:
        await asyncio.to_thread(self.clear)


# ---------------------------------------------------------------------------------- the adapter


class LangctxChatMessageHistory(BaseChatMessageHistory):
    """A ``BaseChatMessageHistory`` whose ``messages`` is a compacted langctx projection.

    Legacy API: ``BaseChatMessageHistory`` is deprecated since langchain-core 1.6.4 and will be
    removed in 2.0; prefer the ``create_agent`` middleware or the LangGraph node, see
    https://docs.langchain.com/oss/python/langchain/short-term-memory. Using this class emits no
    deprecation warning (langchain-core warns only for ``InMemoryChatMessageHistory`` itself).

    ``messages`` is cached until the next write, so reading it is a list copy, not a rebuild.
    ``full_messages`` is the complete log, exactly as added. Write through the history (not
    through ``memory``) so the cache and the store stay in step. One writer per session: two
    histories appending to the same SQLite session fail loudly instead of interleaving.

    Args:
        memory: an empty :class:`~langctx.LayeredChatMemory` to use (its budget, summarizer,
            counter). Default: ``LayeredChatMemory(**memory_kwargs)``.
        history: a history that stores the full log (e.g. a SQL-backed history); it is loaded now
            and appended to on every write. Default: keep the log in this object only.
        state: a mapping that stores the langctx entries (compactions, edits, eviction log) of
            the wrapped ``history`` under ``state_key``, as one JSON-safe dict rewritten when the
            entries change (a ``dict``, a ``shelve``, a key-value store). Without it, entries are
            lost on restart and the next write compacts afresh.
        state_key: the key in ``state`` (use one key per session when sessions share a mapping).
        **memory_kwargs: options for a new :class:`~langctx.LayeredChatMemory` (e.g.
            ``max_tokens=8000``, ``summarizer=model``).

    Raises:
        ConfigError: conflicting or invalid options.
        StateVersionError: the stored entries do not match the stored log, or have an unknown
            version.

    Example:
        >>> history = LangctxChatMessageHistory(max_tokens=4000)
        >>> history.add_user_message("hello")
        >>> history.add_ai_message("hi!")
        >>> str(history)
        'Human: hello\\nAI: hi!'
        >>> history.clear()
        >>> history.messages
        []
    """

    def __init__(
        self,
        memory: LayeredChatMemory | None = None,
        *,
        history: BaseChatMessageHistory | None = None,
        state: MutableMapping[str, Any] | None = None,
        state_key: str = STATE_KEY,
        **memory_kwargs: Any,
    ) -> None:
        super().__init__()
        if isinstance(history, LangctxChatMessageHistory):
            msg = (
                "history= must store the full log, but a LangctxChatMessageHistory returns a "
                "projection; wrap the store it wraps, or use it directly."
            )
            raise ConfigError(msg)
        if history is not None and not isinstance(history, BaseChatMessageHistory):
            msg = f"history= must be a BaseChatMessageHistory, got {type(history).__name__}."
            raise ConfigError(msg)
        if state is not None and history is None:
            msg = "state= stores the entries beside a wrapped history; pass history= too."
            raise ConfigError(msg)
        if not isinstance(state_key, str) or not state_key:
            msg = f"state_key must be a non-empty string, got {state_key!r}."
            raise ConfigError(msg)
        backend: _Backend = _InProcess() if history is None else _Wrapped(history, state, state_key)
        self._open(_resolve_memory(memory, memory_kwargs), backend)

    @classmethod
    def _from_backend(
        cls, memory: LayeredChatMemory, backend: _Backend
    ) -> LangctxChatMessageHistory:
        self = cls.__new__(cls)
        BaseChatMessageHistory.__init__(self)
        self._open(memory, backend)
        return self

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        session_id: str,
        *,
        memory: LayeredChatMemory | None = None,
        **memory_kwargs: Any,
    ) -> Iterator[LangctxChatMessageHistory]:
        """Open one session of a SQLite database (a file path or ``":memory:"``); closes it after.

        Example:
            >>> from langchain_core.messages import HumanMessage
            >>> with LangctxChatMessageHistory.from_conn_string(":memory:", "s1") as history:
            ...     history.add_messages([HumanMessage("hello")])
            ...     [m.content for m in history.messages]
            ['hello']
        """
        mem = _resolve_memory(memory, memory_kwargs)
        with SQLiteChatHistoryStore.from_conn_string(conn_string) as store:
            yield cls._from_backend(mem, store._backend(session_id))

    def _open(self, memory: LayeredChatMemory, backend: _Backend) -> None:
        self._memory = memory
        self._backend = backend
        self._lock = threading.RLock()
        self._alock: asyncio.Lock | None = None
        self._cache: list[BaseMessage] | None = None
        messages, saved = backend.load()
        self._saved = saved = saved.with_current_ids()
        self._log: list[BaseMessage] = []  # exactly what was added
        self._memlog: list[BaseMessage] = []  # what the memory got (positional ids)
        self._tags: dict[str, int] = {}  # positional id -> index in the log
        self._commit(_Step(0, _Batch(messages), [self._tag(m, i) for i, m in enumerate(messages)]))
        if messages or saved:
            self._restore_memory(context=True)

    # ------------------------------------------------------------------ reading

    @property
    def memory(self) -> LayeredChatMemory:
        """The engine (read it for stats and entries; write through the history)."""
        return self._memory

    @property
    def messages(self) -> list[BaseMessage]:
        """The projection the model should see (cached until the next write).

        Example:
            >>> from langchain_core.messages import HumanMessage
            >>> history = LangctxChatMessageHistory()
            >>> history.add_messages([HumanMessage("hi")])
            >>> history.messages
            [HumanMessage(content='hi', additional_kwargs={}, response_metadata={})]
        """
        with self._lock:
            if self._cache is None:
                self._cache = self._project()
            return list(self._cache)

    @messages.setter
    def messages(self, value: list[BaseMessage]) -> None:
        msg = (
            "LangctxChatMessageHistory.messages is a read-only projection and the log is "
            "append-only; use clear() and add_messages() instead."
        )
        raise AttributeError(msg)

    async def aget_messages(self) -> list[BaseMessage]:
        """Async version of `messages` (no I/O: the projection is held in memory)."""
        return self.messages

    @property
    def full_messages(self) -> list[BaseMessage]:
        """The complete append-only log, exactly as added (compaction never removes from it).

        Example:
            >>> from langchain_core.messages import HumanMessage
            >>> history = LangctxChatMessageHistory()
            >>> history.add_messages([HumanMessage("one"), HumanMessage("two")])
            >>> [m.content for m in history.full_messages]
            ['one', 'two']
        """
        with self._lock:
            return list(self._log)

    def _project(self) -> list[BaseMessage]:
        out: list[BaseMessage] = []
        for m in self._memory.build_context():
            i = self._tags.get(m.id) if isinstance(m.id, str) else None
            if i is None:
                out.append(m)  # the summary block or a repaired tool result
            elif m is self._memlog[i]:
                out.append(self._log[i])  # unchanged: hand back the very message added
            else:  # an edited view (placeholder, truncation), under the message's own id
                out.append(m.model_copy(update={"id": self._log[i].id}))
        return out

    # ------------------------------------------------------------------ writing (twins)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages to the log and the store, then compact if a trigger fires.

        On any error nothing is kept: the memory is rebuilt from the committed log and entries.

        Raises:
            InvalidMessageError: something that is not a langchain-core message was given, or a
                message that cannot be stored as JSON (SQLite).
            InvalidHistoryError: another writer appended to the same SQLite session, or the memory
                refused the messages (e.g. an orphan tool result with ``orphan_policy="error"``).

        Example:
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> history = LangctxChatMessageHistory()
            >>> history.add_messages([HumanMessage("hi"), AIMessage("hello")])
            >>> len(history.messages)
            2
        """
        if (batch := self._batch(messages)) is None:
            return
        with self._lock:
            with self._rolled_back(batch) as step:
                self._memory.add_messages(step.tagged)
                self._backend.write(self._written(step))
            self._commit(step)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async version of `add_messages`."""
        if (batch := self._batch(messages)) is None:
            return
        async with self._async_lock():
            with self._rolled_back(batch) as step:
                await self._memory.aadd_messages(step.tagged)
                await self._backend.awrite(self._written(step))
            with self._lock:
                self._commit(step)

    def compact(self, instructions: str | None = None) -> CompactionEntry | None:
        """Compact now (e.g. after wrapping a long existing history) and persist the entries.

        Returns the new entry, or None when there is nothing to compact.
        """
        with self._lock:
            with self._rolled_back(_Batch()) as step:
                entry = self._memory.compact(instructions)
                self._backend.write(self._written(step))
            self._commit(step)
            return entry

    async def acompact(self, instructions: str | None = None) -> CompactionEntry | None:
        """Async version of `compact`."""
        async with self._async_lock():
            with self._rolled_back(_Batch()) as step:
                entry = await self._memory.acompact(instructions)
                await self._backend.awrite(self._written(step))
            with self._lock:
                self._commit(step)
            return entry

    def clear(self) -> None:
        """Forget everything: the log, the entries, and the stored rows of this session."""
        with self._lock:
            self._backend.clear()
            self._forget()

    async def aclear(self) -> None:
        """Async version of `clear`."""
        async with self._async_lock():
            await self._backend.aclear()
            with self._lock:
                self._forget()

    # ------------------------------------------------------------------ bookkeeping

    def _async_lock(self) -> asyncio.Lock:
        if self._alock is None:
            self._alock = asyncio.Lock()
        return self._alock

    def _tag(self, message: BaseMessage, index: int) -> BaseMessage:
        """The message as the memory gets it: under its position in the log."""
        return message.model_copy(update={"id": f"{HISTORY_ID_PREFIX}{index}"})

    def _batch(self, messages: Sequence[BaseMessage]) -> _Batch | None:
        """The messages checked and encoded (before any lock); None when there are none."""
        batch = _as_messages(messages)
        return _Batch(batch, self._backend.encode(batch)) if batch else None

    @contextmanager
    def _rolled_back(self, batch: _Batch) -> Iterator[_Step]:
        """A write of ``batch``: on any error inside, the memory is rebuilt from what is committed."""
        with self._lock:
            start = len(self._log)
            tagged = [self._tag(m, start + k) for k, m in enumerate(batch.messages)]
        try:
            yield _Step(start, batch, tagged)
        except BaseException:
            self._restore_memory()
            raise

    def _written(self, step: _Step) -> _Write:
        """The backend write of ``step``: its messages and the entries the memory made since."""
        step.new = new = self._new_entries()
        batch = step.batch
        return _Write(step.start, batch.messages, batch.encoded, new, self._total(new))

    def _commit(self, step: _Step) -> None:
        start = len(self._log)
        self._log.extend(step.batch.messages)
        self._memlog.extend(step.tagged)
        for k in range(len(step.tagged)):
            self._tags[f"{HISTORY_ID_PREFIX}{start + k}"] = start + k
        self._saved.extend(step.new)
        self._cache = None

    def _new_entries(self) -> _Entries:
        mem, saved = self._memory, self._saved
        return _Entries(
            [dict(e) for e in mem.compactions[len(saved.compactions) :]],
            [dict(e) for e in mem.edits[len(saved.edits) :]],
            [dict(r) for r in mem.eviction_log[len(saved.evictions) :]],
        )

    def _total(self, new: _Entries) -> _Entries:
        total = _Entries(
            list(self._saved.compactions), list(self._saved.edits), list(self._saved.evictions)
        )
        total.extend(new)
        return total

    def _restore_memory(self, *, context: bool = False) -> None:
        """Rebuild the memory from the committed log and entries (on open and after a failure)."""
        with self._lock:
            self._cache = None
            try:
                self._memory.restore(
                    self._memlog,
                    compactions=self._saved.compactions,
                    edits=self._saved.edits,
                    eviction_log=self._saved.evictions,
                )
            except StateVersionError as exc:
                if not context:
                    raise
                msg = (
                    f"{self._backend.describe()}: {exc} The stored log and the langctx entries "
                    "disagree (was one cleared or edited without the other?); delete the "
                    "entries to rebuild them from the log."
                )
                raise StateVersionError(msg) from exc

    def _forget(self) -> None:
        self._memory.clear()
        self._log.clear()
        self._memlog.clear()
        self._tags.clear()
        self._saved = _Entries()
        self._cache = None

    # ------------------------------------------------------------------ dunder

    def __eq__(self, other: object) -> bool:
        """Equal when both the full log and the projection are equal."""
        if not isinstance(other, LangctxChatMessageHistory):
            return NotImplemented
        return self.full_messages == other.full_messages and self.messages == other.messages

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(messages={self.messages!r}, "
            f"full_messages={len(self._log)}, compactions={len(self._saved.compactions)}, "
            f"store={self._backend.describe()!r})"
        )


# ---------------------------------------------------------------------------------- SQLite store


class SQLiteChatHistoryStore:
    """Langctx chat histories in SQLite (stdlib ``sqlite3``): one row per message, inserts only.

    Every session's full log is stored as message dicts (``message_to_dict`` as JSON) and its
    langctx entries as JSON rows, in two tables keyed by session id; a write inserts the new rows in
    one transaction and never rewrites the log. A history opened in a new process rebuilds the same
    projection. ``get_history`` returns one cached history per session id, so it can be passed
    straight to ``RunnableWithMessageHistory`` as ``get_session_history``.

    Args:
        conn: an open connection (opened with ``check_same_thread=False`` if histories are used
            from several threads or from async code). The store does not close it.
        memory: a factory of empty :class:`~langctx.LayeredChatMemory` objects, one per session.
            Default: ``LayeredChatMemory(**memory_kwargs)``.
        **memory_kwargs: options for each session's memory (e.g. ``max_tokens=8000``).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> with SQLiteChatHistoryStore.from_conn_string(":memory:", max_tokens=4000) as store:
        ...     store.get_history("s1").add_messages([HumanMessage("hello")])
        ...     store.get_history("s1") is store.get_history("s1")
        ...     [m.content for m in store.open_history("s1").messages]
        True
        ['hello']
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        memory: Callable[[], LayeredChatMemory] | None = None,
        **memory_kwargs: Any,
    ) -> None:
        if not isinstance(conn, sqlite3.Connection):
            msg = f"conn must be a sqlite3.Connection, got {type(conn).__name__}; or use from_conn_string(path)."
            raise ConfigError(msg)
        if memory is not None and memory_kwargs:
            msg = "pass either memory=<factory> or memory options, not both."
            raise ConfigError(msg)
        if memory is not None and not callable(memory):
            msg = "memory= must be a callable returning a new LayeredChatMemory."
            raise ConfigError(msg)
        if memory is None:
            _resolve_memory(None, memory_kwargs)  # validate the options now, not at first use
        self.conn = conn
        self.lock = threading.RLock()
        self.is_setup = False
        self._factory: Callable[[], LayeredChatMemory] = memory or (
            lambda: LayeredChatMemory(**memory_kwargs)
        )
        self._histories: dict[str, LangctxChatMessageHistory] = {}

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        *,
        memory: Callable[[], LayeredChatMemory] | None = None,
        **memory_kwargs: Any,
    ) -> Iterator[SQLiteChatHistoryStore]:
        """Open a database by path (or ``":memory:"``, or a ``file:`` URI); close it on exit.

        Example:
            >>> with SQLiteChatHistoryStore.from_conn_string(":memory:") as store:
            ...     store.get_history("a").messages
            []
        """
        try:
            conn = sqlite3.connect(
                conn_string, check_same_thread=False, uri=conn_string.startswith("file:")
            )
        except sqlite3.Error as exc:
            msg = f"cannot open SQLite database {conn_string!r}: {exc}. Check the path is writable."
            raise ConfigError(msg) from exc
        try:
            if conn_string != ":memory:" and not conn_string.startswith("file:"):
                conn.execute("PRAGMA journal_mode=WAL")
            yield cls(conn, memory=memory, **memory_kwargs)
        finally:
            conn.close()

    def setup(self) -> None:
        """Create the tables if needed (called lazily before the first read or write)."""
        with self.lock:
            if self.is_setup:
                return
            self.conn.executescript(_SCHEMA)
            self.is_setup = True

    def get_history(self, session_id: str) -> LangctxChatMessageHistory:
        """The history of ``session_id``, loaded once and cached (``get_session_history``)."""
        with self.lock:
            history = self._histories.get(session_id)
            if history is None:
                history = self.open_history(session_id)
                self._histories[session_id] = history
            return history

    def open_history(self, session_id: str) -> LangctxChatMessageHistory:
        """A new history of ``session_id`` loaded from the database (not cached)."""
        return LangctxChatMessageHistory._from_backend(
            _resolve_memory(self._factory(), {}), self._backend(session_id)
        )

    def _backend(self, session_id: str) -> _SQLite:
        if not isinstance(session_id, str) or not session_id:
            msg = f"session_id must be a non-empty string, got {session_id!r}."
            raise ConfigError(msg)
        return _SQLite(self, session_id)


# ---------------------------------------------------------------------------------- helpers


def _resolve_memory(
    memory: LayeredChatMemory | None, memory_kwargs: Mapping[str, Any]
) -> LayeredChatMemory:
    if memory is None:
        return LayeredChatMemory(**memory_kwargs)
    if memory_kwargs:
        msg = (
            f"pass either memory=LayeredChatMemory(...) or memory options "
            f"({', '.join(sorted(memory_kwargs))}), not both."
        )
        raise ConfigError(msg)
    if not isinstance(memory, LayeredChatMemory):
        msg = f"memory must be a LayeredChatMemory, got {type(memory).__name__}."
        raise ConfigError(msg)
    if memory.messages:
        msg = (
            "the memory already holds messages; give the history an empty LayeredChatMemory "
            "(the history owns the log and restores it from its store)."
        )
        raise ConfigError(msg)
    return memory


def _as_messages(messages: object) -> list[BaseMessage]:
    if isinstance(messages, BaseMessage):
        messages = [messages]
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        msg = (
            f"add_messages takes a sequence of langchain-core messages, got "
            f"{type(messages).__name__} {messages!r:.80}; use add_user_message(text) or "
            "langchain_core.messages.convert_to_messages(...)."
        )
        raise InvalidMessageError(msg)
    out = list(messages)
    for m in out:
        if not isinstance(m, BaseMessage):
            msg = (
                f"add_messages takes langchain-core messages, got {type(m).__name__} {m!r:.80}; "
                "convert it first, e.g. with langchain_core.messages.convert_to_messages."
            )
            raise InvalidMessageError(msg)
        if isinstance(m, RemoveMessage):
            msg = "a RemoveMessage cannot be added: the log is append-only. Use clear() to start over."
            raise InvalidMessageError(msg)
    return out
