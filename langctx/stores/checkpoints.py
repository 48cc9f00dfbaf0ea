"""Open a LangGraph checkpointer from one string: a SQLite path, ``:memory:``, or PostgreSQL.

Example:
    >>> with open_checkpointer(":memory:") as saver:
    ...     type(saver).__name__
    'SqliteSaver'
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, closing, contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from langctx.errors import LangctxError

__all__ = ["CheckpointerConnectionError", "aopen_checkpointer", "open_checkpointer", "redact"]

_PG = ("postgresql://", "postgres://")
_SQLITE_PREFIX = "sqlite:///"


class CheckpointerConnectionError(LangctxError, ConnectionError):
    """The checkpoint database could not be opened (``uri``: its string, password hidden)."""

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
    path = uri.removeprefix(_SQLITE_PREFIX)
    if path != ":memory:":
        parent = Path(path).expanduser().parent
        if not parent.is_dir():
            msg = (
                f"cannot open the SQLite checkpoint database {uri!r}: the folder {str(parent)!r} "
                "does not exist. Create it or pick another path."
            )
            raise CheckpointerConnectionError(msg, uri=uri)
    return path


@contextmanager
def open_checkpointer(
    uri: str, *, setup: bool = True, connect_timeout: int = 10
) -> Iterator[BaseCheckpointSaver[Any]]:
    """A checkpointer for ``uri``, closed on exit.

    Args:
        uri: ``":memory:"``, a SQLite file path (or ``sqlite:///path``), or ``postgresql://...``.
        setup: create the checkpoint tables if they are missing (PostgreSQL; SQLite always does).
        connect_timeout: seconds to wait for a PostgreSQL server.

    Raises:
        CheckpointerConnectionError: on entering, the database cannot be opened or reached.
    """
    if uri.startswith(_PG):
        psycopg, options = _psycopg(uri, connect_timeout)
        from langgraph.checkpoint.postgres import PostgresSaver

        with _reraised(uri, psycopg.Error):
            conn = psycopg.Connection.connect(uri, **options)
        with conn:
            saver = PostgresSaver(conn)
            if setup:
                with _reraised(uri, psycopg.OperationalError):
                    saver.setup()
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = _sqlite_path(uri)
    with _reraised(uri, sqlite3.Error):
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("select 1")
    with closing(conn):
        yield SqliteSaver(conn)


@asynccontextmanager
async def aopen_checkpointer(
    uri: str, *, setup: bool = True, connect_timeout: int = 10
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """Async version of `open_checkpointer` (``AsyncSqliteSaver`` / ``AsyncPostgresSaver``)."""
    if uri.startswith(_PG):
        psycopg, options = _psycopg(uri, connect_timeout)
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        with _reraised(uri, psycopg.Error):
            aconn = await psycopg.AsyncConnection.connect(uri, **options)
        async with aconn:
            asaver = AsyncPostgresSaver(aconn)
            if setup:
                with _reraised(uri, psycopg.OperationalError):
                    await asaver.setup()
            yield asaver
        return
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path = _sqlite_path(uri)
    with _reraised(uri, sqlite3.Error):
        aconn = await aiosqlite.connect(path)
    try:
        yield AsyncSqliteSaver(aconn)
    finally:
        await aconn.close()


def _psycopg(uri: str, connect_timeout: int) -> tuple[ModuleType, dict[str, Any]]:
    """psycopg and the connection options (raises without the ``postgres`` extra)."""
    try:
        import langgraph.checkpoint.postgres  # noqa: F401  (the extra's other half)
        import psycopg
        from psycopg.rows import dict_row
    except ImportError as exc:
        msg = "PostgreSQL checkpoints need the extra: pip install 'langctx[postgres]'."
        raise CheckpointerConnectionError(msg, uri=redact(uri)) from exc
    options = {
        "autocommit": True,
        "prepare_threshold": 0,
        "row_factory": dict_row,
        "connect_timeout": connect_timeout,
    }
    return psycopg, options


@contextmanager
def _reraised(uri: str, error: type[Exception]) -> Iterator[None]:
    """Raise ``error`` inside as a :class:`CheckpointerConnectionError` (password hidden)."""
    try:
        yield
    except error as exc:
        if not uri.startswith(_PG):
            msg = (
                f"cannot open the SQLite checkpoint database {uri!r}: {exc}. Check the path and "
                "its permissions."
            )
            raise CheckpointerConnectionError(msg, uri=uri) from exc
        shown = redact(uri)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = (
            f"cannot connect to the PostgreSQL checkpoint database {shown!r}: {first}. Check that "
            "the server is running and reachable, and that the user, password and database name "
            "are right."
        )
        raise CheckpointerConnectionError(msg, uri=shown) from exc
