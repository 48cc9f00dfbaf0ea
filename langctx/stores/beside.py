"""A LangGraph store in the checkpointer's own database, for the folded log of an agent given a
checkpointer and no store (``langctx.create_agent``).

Each folded batch is then written once, as a row, where the thread's checkpoints are; the state's
``langctx_archive`` channel, whose snapshots hold every batch, stays empty. Supported:
``InMemorySaver`` (an ``InMemoryStore``), ``SqliteSaver`` on a file (a ``SqliteStore`` on a
second connection to that file) and ``PostgresSaver`` (a ``PostgresStore`` on the saver's
pool, or a second connection to its database). Any other checkpointer gets None: the folded log
stays in the state. A second connection is the store's for as long as the agent lives.

Example:
    >>> from langgraph.checkpoint.memory import InMemorySaver
    >>> type(store_beside(InMemorySaver())).__name__
    'InMemoryStore'
    >>> store_beside(None) is None
    True
"""

from __future__ import annotations

import sqlite3
import weakref
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
    kind, name = type(checkpointer).__module__, type(checkpointer).__name__
    conn = getattr(checkpointer, "conn", None)
    if kind.startswith("langgraph.checkpoint.sqlite") and name == "SqliteSaver":
        return _sqlite_store(checkpointer, conn)
    if kind.startswith("langgraph.checkpoint.postgres") and name == "PostgresSaver":
        return _postgres_store(checkpointer, conn)
    return None


def _sqlite_store(saver: object, conn: Any) -> BaseStore | None:
    """A ``SqliteStore`` on a second connection to the file ``conn`` has open (None: in memory)."""
    if not isinstance(conn, sqlite3.Connection):
        return None
    rows = conn.execute("PRAGMA database_list").fetchall()
    path = next((row[2] for row in rows if row[1] == "main"), "")
    if not path:  # ":memory:" or a temporary database: no file to share
        return None
    from langgraph.store.sqlite import SqliteStore

    own = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    weakref.finalize(saver, own.close)  # the store's connection lives as long as the saver
    store = SqliteStore(own)
    store.setup()
    return store


def _postgres_store(saver: object, conn: Any) -> BaseStore | None:
    """A ``PostgresStore`` on the saver's pool, or on a second connection to its database (one
    connection cannot serve both: each runs its own pipelines on it)."""
    if conn is None:
        return None
    from langgraph.store.postgres import PostgresStore
    from psycopg import Connection
    from psycopg.rows import dict_row

    if isinstance(conn, Connection):
        password = conn.pgconn.password  # info.dsn leaves it out
        dsn = conn.info.dsn + (f" password='{_quoted(password.decode())}'" if password else "")
        conn = Connection.connect(dsn, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        weakref.finalize(saver, conn.close)  # the store's connection lives as long as the saver
    store = PostgresStore(conn)
    store.setup()
    return store


def _quoted(value: str) -> str:
    """``value`` for a single-quoted libpq connection parameter.

    Example:
        >>> print(_quoted("it's a\\\\b"))
        it\\'s a\\\\b
    """
    return value.replace("\\", "\\\\").replace("'", "\\'")
