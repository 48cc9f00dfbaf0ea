"""The SQLite store of chat histories: one file, one session per ``session_id``, inserts only."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, message_to_dict, messages_from_dict

from langctx.errors import ConfigError, InvalidHistoryError, InvalidMessageError, StateVersionError
from langctx.history.backends import Backend, Entries, Step
from langctx.history.chat_history import LangctxChatMessageHistory, resolve_memory
from langctx.memory import LayeredChatMemory

_KINDS = ("compaction", "edit", "eviction", "user")  # an entry row's kind, per list of Entries

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
_INSERT_MESSAGES = (
    "INSERT INTO langctx_history_messages (session_id, idx, message) VALUES (?, ?, ?)"
)
_INSERT_ENTRIES = (
    "INSERT INTO langctx_history_entries (session_id, seq, kind, entry) VALUES (?, ?, ?, ?)"
)


@dataclass(eq=False)
class SQLiteBackend(Backend):
    """One session's rows in a :class:`SQLiteChatHistoryStore` (inserts only, one transaction)."""

    store: SQLiteChatHistoryStore
    session_id: str
    next_seq: int = 0

    def describe(self) -> str:
        return f"SQLite session {self.session_id!r}"

    def _rows(self, table: str, columns: str) -> list[Any]:
        """This session's rows of ``table``, ordered by the first of ``columns``."""
        order = columns.partition(",")[0]
        query = f"SELECT {columns} FROM {table} WHERE session_id = ? ORDER BY {order}"
        return self.store.conn.execute(query, (self.session_id,)).fetchall()

    def load(self) -> tuple[list[BaseMessage], Entries]:
        with self.store.lock:
            self.store.setup()
            rows = self._rows("langctx_history_messages", "idx, message")
            entry_rows = self._rows("langctx_history_entries", "seq, kind, entry")
        where = self.describe()
        messages: list[BaseMessage] = []
        for expected, (idx, text) in enumerate(rows):
            if idx != expected:
                msg = f"{where} lacks log row {expected}; the database was edited by hand."
                raise StateVersionError(msg)
            try:
                messages.extend(messages_from_dict([json.loads(text)]))
            except (ValueError, KeyError, TypeError) as exc:
                msg = (
                    f"{where}: log row {idx} cannot be read ({exc}); it was not written by langctx."
                )
                raise StateVersionError(msg) from exc
        entries = Entries()
        buckets = dict(zip(_KINDS, entries.lists(), strict=True))
        for seq, kind, text in entry_rows:
            if kind not in buckets:
                msg = f"{where}: entry {seq} has unknown kind {kind!r}; upgrade langctx."
                raise StateVersionError(msg)
            try:
                entry = json.loads(text)
            except (ValueError, TypeError):
                entry = None
            if not isinstance(entry, dict):
                msg = f"{where}: entry {seq} is not a JSON object; it was not written by langctx."
                raise StateVersionError(msg)
            buckets[kind].append(entry)
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

    def write(self, step: Step) -> None:
        sid = self.session_id
        rows = [(sid, step.start + k, text) for k, text in enumerate(step.encoded)]
        entries = [
            (kind, json.dumps(e, ensure_ascii=False))
            for kind, part in zip(_KINDS, step.new.lists(), strict=True)
            for e in part
        ]
        if not rows and not entries:
            return
        with self.store.lock:
            entry_rows = [
                (sid, self.next_seq + k, kind, text) for k, (kind, text) in enumerate(entries)
            ]
            self.store.setup()
            try:
                with self.store.conn:  # one transaction: all rows or none
                    self.store.conn.executemany(_INSERT_MESSAGES, rows)
                    self.store.conn.executemany(_INSERT_ENTRIES, entry_rows)
            except sqlite3.IntegrityError as exc:
                msg = (
                    f"{self.describe()} was written by another history since this one was "
                    "opened; open it again (SQLiteChatHistoryStore.get_history) to continue from "
                    "the stored log."
                )
                raise InvalidHistoryError(msg) from exc
            self.next_seq += len(entry_rows)

    async def awrite(self, step: Step) -> None:
        await asyncio.to_thread(self.write, step)

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


class SQLiteChatHistoryStore:
    """Langctx chat histories in SQLite: one row per message and per entry, inserted in one
    transaction per write. ``get_history`` is a ``get_session_history`` for
    ``RunnableWithMessageHistory``.

    Args:
        conn: an open connection (``check_same_thread=False`` for threads or async code); the
            store does not close it.
        memory: a factory of empty :class:`~langctx.LayeredChatMemory` objects, one per session
            (default: ``LayeredChatMemory(**memory_kwargs)``).

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
        if memory is None:
            resolve_memory(None, memory_kwargs)  # validate the options now, not at first use
        elif memory_kwargs:
            msg = "pass either memory=<factory> or memory options, not both."
            raise ConfigError(msg)
        elif not callable(memory):
            msg = "memory= must be a callable returning a new LayeredChatMemory."
            raise ConfigError(msg)
        self.conn = conn
        self.lock = threading.RLock()
        self.is_setup = False
        self._factory: Callable[[], LayeredChatMemory] = (
            memory if memory is not None else lambda: LayeredChatMemory(**memory_kwargs)
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
        """Open a database by path (or ``":memory:"``, or a ``file:`` URI); close it on exit."""
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
            if not self.is_setup:
                self.conn.executescript(_SCHEMA)
                self.is_setup = True

    def get_history(self, session_id: str) -> LangctxChatMessageHistory:
        """The history of ``session_id``, loaded once and cached (``get_session_history``)."""
        with self.lock:
            if session_id not in self._histories:
                self._histories[session_id] = self.open_history(session_id)
            return self._histories[session_id]

    def open_history(self, session_id: str) -> LangctxChatMessageHistory:
        """A new history of ``session_id`` loaded from the database (not cached)."""
        return LangctxChatMessageHistory._from_backend(
            resolve_memory(self._factory(), {}), self._backend(session_id)
        )

    def _backend(self, session_id: str) -> SQLiteBackend:
        if not isinstance(session_id, str) or not session_id:
            msg = f"session_id must be a non-empty string, got {session_id!r}."
            raise ConfigError(msg)
        return SQLiteBackend(self, session_id)
