"""A LangGraph store in the checkpointer's own database, for the folded log of an agent given a
checkpointer and no store (``langctx.create_agent``).

Each folded batch is then written once, as a row, where the thread's checkpoints are; the state's
``langctx_archive`` channel, whose snapshots hold every batch, stays empty. Supported:
``InMemorySaver`` (an ``InMemoryStore``), ``SqliteSaver`` on a file (a ``SqliteStore`` on a
second connection to that file) and ``PostgresSaver`` (a ``PostgresStore`` on the saver's
connection or pool). Any other checkpointer gets None: the folded log stays in the state.

Example:
    >>> from langgraph.checkpoint.memory import InMemorySaver
    >>> type(store_beside(InMemorySaver())).__name__
    'InMemoryStore'
    >>> store_beside(None) is None
    True
"""

from __future__ import annotations

import sqlite3
from typing import Any

from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

__all__ = ["store_beside"]


def store_beside(checkpointer: object) -> BaseStore | None:
    """A set-up store in ``checkpointer``'s database (None: no such store for it)."""
    if checkpointer is None:
        return None
    from langgraph.checkpoint.memory import InMemorySaver

    if isinstance(checkpointer, InMemorySaver):
        return InMemoryStore()
    kind = type(checkpointer).__module__
    if (
        kind.startswith("langgraph.checkpoint.sqlite")
        and type(checkpointer).__name__ == "SqliteSaver"
    ):
        return _sqlite_store(getattr(checkpointer, "conn", None))
    if (
        kind.startswith("langgraph.checkpoint.postgres")
        and type(checkpointer).__name__ == "PostgresSaver"
    ):
        return _postgres_store(getattr(checkpointer, "conn", None))
    return None


def _sqlite_store(conn: Any) -> BaseStore | None:
    """A ``SqliteStore`` on a second connection to the file ``conn`` has open (None: in memory)."""
    if not isinstance(conn, sqlite3.Connection):
        return None
    rows = conn.execute("PRAGMA database_list").fetchall()
    path = next((row[2] for row in rows if row[1] == "main"), "")
    if not path:  # ":memory:" or a temporary database: no file to share
        return None
    from langgraph.store.sqlite import SqliteStore

    store = SqliteStore(sqlite3.connect(path, check_same_thread=False, isolation_level=None))
    store.setup()
    return store


def _postgres_store(conn: Any) -> BaseStore | None:
    """A ``PostgresStore`` on the saver's connection or pool."""
    if conn is None:
        return None
    from langgraph.store.postgres import PostgresStore

    store = PostgresStore(conn)
    store.setup()
    return store
