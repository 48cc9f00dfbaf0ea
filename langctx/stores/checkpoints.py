"""Open a LangGraph checkpointer from one string: a SQLite path, ``:memory:``, or PostgreSQL.

The compaction entries live in graph state, so the checkpointer is all the persistence langctx
needs. Connection problems become :class:`CheckpointerConnectionError`, naming the connection
string (password hidden) and what to check; they happen on entering the context, before any graph
step, so a failed connection writes nothing.

Example:
    >>> with open_checkpointer(":memory:") as saver:
    ...     type(saver).__name__
    'SqliteSaver'
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langctx.errors import LangctxError

__all__ = ["CheckpointerConnectionError", "aopen_checkpointer", "open_checkpointer", "redact"]

_PG = ("postgresql://", "postgres://")
_SQLITE_PREFIX = "sqlite:///"


class CheckpointerConnectionError(LangctxError, ConnectionError):
    """The checkpoint database could not be opened.

    Attributes:
        uri: the connection string, with any password replaced by ``***``.
    """

    def __init__(self, message: str, *, uri: str) -> None:
        super().__init__(message)
        self.uri = uri


def redact(uri: str) -> str:
    """The connection string with its password hidden.

    Example:
        >>> redact("postgresql://bob:secret@db:5432/app")
        'postgresql://bob:***@db:5432/app'
    """
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", uri)


def _sqlite_path(uri: str) -> str:
    path = uri[len(_SQLITE_PREFIX) :] if uri.startswith(_SQLITE_PREFIX) else uri
    if path != ":memory:":
        parent = Path(path).expanduser().parent
        if not parent.is_dir():
            msg = (
                f"cannot open the SQLite checkpoint database {uri!r}: the folder {str(parent)!r} "
                "does not exist. Create it or pick another path."
            )
            raise CheckpointerConnectionError(msg, uri=uri)
    return path


def _pg_error(uri: str, exc: BaseException) -> CheckpointerConnectionError:
    shown = redact(uri)
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    msg = (
        f"cannot connect to the PostgreSQL checkpoint database {shown!r}: {first}. Check that the "
        "server is running and reachable, and that the user, password and database name are right."
    )
    return CheckpointerConnectionError(msg, uri=shown)


@contextmanager
def open_checkpointer(
    uri: str, *, setup: bool = True, connect_timeout: int = 10
) -> Iterator[BaseCheckpointSaver[Any]]:
    """A checkpointer for ``uri``, closed on exit.

    Args:
        uri: ``":memory:"``, a SQLite file path (or ``sqlite:///path``), or a
            ``postgresql://`` connection string.
        setup: create the checkpoint tables if they are missing (PostgreSQL; SQLite always does).
        connect_timeout: seconds to wait for a PostgreSQL server.

    Raises:
        CheckpointerConnectionError: the database cannot be opened or reached.
    """
    if uri.startswith(_PG):
        with _postgres(uri, setup=setup, connect_timeout=connect_timeout) as saver:
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = _sqlite_path(uri)
    try:
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("select 1")
    except sqlite3.Error as exc:
        msg = f"cannot open the SQLite checkpoint database {uri!r}: {exc}. Check the path and its permissions."
        raise CheckpointerConnectionError(msg, uri=uri) from exc
    try:
        yield SqliteSaver(conn)
    finally:
        conn.close()


@contextmanager
def _postgres(uri: str, *, setup: bool, connect_timeout: int) -> Iterator[BaseCheckpointSaver[Any]]:
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as exc:
        msg = "PostgreSQL checkpoints need the extra: pip install 'langctx[postgres]'."
        raise CheckpointerConnectionError(msg, uri=redact(uri)) from exc
    try:
        conn = psycopg.Connection.connect(
            uri,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            connect_timeout=connect_timeout,
        )
    except psycopg.Error as exc:
        raise _pg_error(uri, exc) from exc
    with conn:
        saver = PostgresSaver(conn)
        if setup:
            try:
                saver.setup()
            except psycopg.OperationalError as exc:
                raise _pg_error(uri, exc) from exc
        yield saver


@asynccontextmanager
async def aopen_checkpointer(
    uri: str, *, setup: bool = True, connect_timeout: int = 10
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Async version of `open_checkpointer` (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``)."""
    if uri.startswith(_PG):
        try:
            import psycopg
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
            from psycopg.rows import dict_row
        except ImportError as exc:
            msg = "PostgreSQL checkpoints need the extra: pip install 'langctx[postgres]'."
            raise CheckpointerConnectionError(msg, uri=redact(uri)) from exc
        try:
            conn = await psycopg.AsyncConnection.connect(
                uri,
                autocommit=True,
                prepare_threshold=0,
                row_factory=dict_row,
                connect_timeout=connect_timeout,
            )
        except psycopg.Error as exc:
            raise _pg_error(uri, exc) from exc
        async with conn:
            saver = AsyncPostgresSaver(conn)
            if setup:
                try:
                    await saver.setup()
                except psycopg.OperationalError as exc:
                    raise _pg_error(uri, exc) from exc
            yield saver
        return
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = _sqlite_path(uri)
    try:
        aconn = await aiosqlite.connect(path)
    except sqlite3.Error as exc:
        msg = f"cannot open the SQLite checkpoint database {uri!r}: {exc}. Check the path and its permissions."
        raise CheckpointerConnectionError(msg, uri=uri) from exc
    try:
        yield AsyncSqliteSaver(aconn)
    finally:
        await aconn.close()
