"""Read a LangGraph checkpoint database without changing it: threads, checkpoints, state values.

:func:`open_store` opens a SQLite file (``mode=ro``) or a PostgreSQL database (a read-only
session) and checks for the checkpoint tables *before* a checkpointer touches it, so the wrong
file creates nothing. The :class:`CheckpointStore` it yields lists threads and loads checkpoints.

Example:
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "missing.sqlite")
    >>> with open_store(db=path) as store:  # doctest: +ELLIPSIS
    ...     pass
    Traceback (most recent call last):
    ...
    langctx.cli.inspect.errors.DatabaseNotFoundError: no such file: '...missing.sqlite'. Check the path; ...
    >>> os.path.exists(path)
    False
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

# LangGraph's snapshot blob of a DeltaChannel (its own channel code imports it from here)
from langgraph.checkpoint.serde.types import _DeltaSnapshot

from langctx.cli.inspect.errors import (
    CheckpointNotFoundError,
    CorruptCheckpointError,
    DatabaseNotFoundError,
    InspectError,
    NotACheckpointDatabaseError,
    ThreadNotFoundError,
)
from langctx.errors import ConfigError
from langctx.stores.checkpoints import (
    CheckpointerConnectionError,
    open_checkpointer,
    redact,
)

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "CheckpointStore", "ThreadInfo", "open_store"]

DEFAULT_CONNECT_TIMEOUT = 5
"""Seconds to wait for a PostgreSQL server before giving up."""

_PG = ("postgresql://", "postgres://")
_SQLITE_PREFIX = "sqlite:///"
_KNOWN_SHOWN = 5
_UNDECODABLE = (ValueError, TypeError, KeyError, AttributeError, EOFError, NotImplementedError)
"""What LangGraph's serializer raises on a blob it cannot decode (an unknown type: NotImplemented)."""

_SQLITE_COLUMNS = {
    "checkpoints": {
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "parent_checkpoint_id",
        "type",
        "checkpoint",
        "metadata",
    },
    "writes": {"thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx", "channel", "value"},
}
_PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")
_UUID_EPOCH = 0x01B21DD213814000  # 100-ns intervals between 1582-10-15 and 1970-01-01

Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]
"""Runs one SQL statement (``?`` placeholders) and returns its rows as tuples."""


@dataclass(frozen=True, slots=True)
class ThreadInfo:
    """One thread of a checkpoint database (root namespace only; subgraph checkpoints aside).

    Example:
        >>> ThreadInfo("t1", 3, "1f0a", None).to_dict()["checkpoints"]
        3
    """

    thread_id: str
    """The ``thread_id`` of the graph's config."""
    checkpoints: int
    """How many checkpoints the thread has."""
    latest_checkpoint_id: str
    """Id of its newest checkpoint."""
    updated_at: str | None
    """When the newest checkpoint was written (ISO 8601, UTC), read from its time-ordered id."""

    def to_dict(self) -> dict[str, Any]:
        """The thread as a JSON-ready dict."""
        return asdict(self)


def checkpoint_time(checkpoint_id: str) -> str | None:
    """When a checkpoint was written, from its UUIDv6 id (LangGraph's ids are time-ordered).

    Example:
        >>> checkpoint_time("1f1ec5ba-1825-6d5a-8001-f3781c633ffd")
        '2026-11-30T01:16:12.105+00:00'
        >>> checkpoint_time("not-a-uuid") is None
        True
    """
    try:
        u = uuid.UUID(checkpoint_id)
    except (ValueError, TypeError, AttributeError):
        return None
    if u.version != 6:
        return None
    ticks = ((u.int >> 80) << 12) | ((u.int >> 64) & 0x0FFF)
    moment = datetime.fromtimestamp((ticks - _UUID_EPOCH) / 1e7, UTC)
    return moment.isoformat(timespec="milliseconds")


class CheckpointStore:
    """A read-only view of a LangGraph checkpoint database. Made by :func:`open_store`.

    Attributes:
        saver: the checkpointer (``SqliteSaver`` or ``PostgresSaver``) used to deserialize.
        kind: ``"sqlite"`` or ``"postgres"``.
        location: the file path, or the connection string with its password hidden.
    """

    def __init__(
        self,
        saver: BaseCheckpointSaver[Any],
        *,
        kind: Literal["sqlite", "postgres"],
        location: str,
        query: Query,
        errors: tuple[type[BaseException], ...],
    ) -> None:
        self.saver = saver
        self.kind = kind
        self.location = location
        self._query = query
        self._errors = errors

    @property
    def source(self) -> dict[str, str]:
        """``{"kind": ..., "location": ...}``, as reports show it."""
        return {"kind": self.kind, "location": self.location}

    @contextmanager
    def _reading(self) -> Iterator[None]:
        try:
            yield
        except self._errors as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            msg = (
                f"cannot read the checkpoint database {self.location!r}: {first}. Check that it "
                "is still reachable and was written by a compatible langgraph-checkpoint version."
            )
            raise InspectError(msg) from exc

    def threads(self) -> list[ThreadInfo]:
        """Every thread, most recently updated first."""
        with self._reading():
            rows = self._query(
                "SELECT thread_id, COUNT(*), MAX(checkpoint_id) FROM checkpoints "
                "WHERE checkpoint_ns = '' GROUP BY thread_id "
                "ORDER BY MAX(checkpoint_id) DESC, thread_id",
                (),
            )
        return [ThreadInfo(str(t), int(n), str(c), checkpoint_time(str(c))) for t, n, c in rows]

    def thread(self, thread_id: str) -> ThreadInfo:
        """One thread's figures.

        Raises:
            ThreadNotFoundError: the database has no checkpoint for ``thread_id``.
        """
        with self._reading():
            rows = self._query(
                "SELECT COUNT(*), MAX(checkpoint_id) FROM checkpoints "
                "WHERE thread_id = ? AND checkpoint_ns = ''",
                (thread_id,),
            )
        count, latest = rows[0] if rows else (0, None)
        if not count:
            known = self.threads()
            raise ThreadNotFoundError(
                thread_id,
                known=[t.thread_id for t in known[:_KNOWN_SHOWN]],
                total=len(known),
                location=self.location,
            )
        return ThreadInfo(thread_id, int(count), str(latest), checkpoint_time(str(latest)))

    def checkpoint_ids(self, thread_id: str, *, limit: int | None = None) -> list[str]:
        """The thread's checkpoint ids, newest first (at most ``limit``)."""
        sql = (
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
            "ORDER BY checkpoint_id DESC"
        )
        params: tuple[Any, ...] = (thread_id,)
        if limit is not None:
            sql += " LIMIT ?"
            params = (thread_id, int(limit))
        with self._reading():
            return [str(r[0]) for r in self._query(sql, params)]

    def delta_value(self, found: CheckpointTuple, channel: str, reducer: Any) -> Any:
        """A ``DeltaChannel``'s value at ``found`` (its checkpoint stores no value): the
        nearest snapshot and the writes since, replayed through ``reducer``; None when the
        thread never wrote it."""
        with self._reading():
            try:
                history = self.saver.get_delta_channel_history(
                    config=found.config, channels=[channel]
                )[channel]
            except _UNDECODABLE as exc:
                raise CorruptCheckpointError(
                    str(found.config["configurable"].get("thread_id")), None, exc
                ) from exc
        seed = unwrapped(history.get("seed"))
        writes = [w[2] for w in history.get("writes") or []]
        if seed is None and not writes:
            return None
        return reducer(seed, writes)

    def checkpoint(self, thread_id: str, checkpoint_id: str | None = None) -> CheckpointTuple:
        """The thread's latest checkpoint, or the one with ``checkpoint_id``.

        Raises:
            ThreadNotFoundError: no checkpoint belongs to ``thread_id``.
            CheckpointNotFoundError: the thread has no checkpoint ``checkpoint_id``.
        """
        info = self.thread(thread_id)
        configurable: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ""}
        if checkpoint_id:
            configurable["checkpoint_id"] = checkpoint_id
        with self._reading():
            try:
                found = self.saver.get_tuple({"configurable": configurable})
            except _UNDECODABLE as exc:
                raise CorruptCheckpointError(thread_id, checkpoint_id, exc) from exc
        if found is None:
            raise CheckpointNotFoundError(
                thread_id,
                str(checkpoint_id),
                recent=self.checkpoint_ids(thread_id, limit=_KNOWN_SHOWN),
                total=info.checkpoints,
            )
        if (shape := _shape_problem(found)) is not None:
            raise CorruptCheckpointError(thread_id, checkpoint_id, TypeError(shape))
        return found


def _shape_problem(found: CheckpointTuple) -> str | None:
    """What in a decoded checkpoint is not the shape LangGraph writes, or None."""
    cp: Any = found.checkpoint
    if not isinstance(cp, Mapping):
        return f"the checkpoint is {type(cp).__name__}, not a map"
    for key in ("channel_values", "channel_versions"):
        if not isinstance(cp.get(key) or {}, Mapping):
            return f"its {key} is {type(cp[key]).__name__}, not a map"
    if not isinstance(found.metadata or {}, Mapping):
        return f"its metadata is {type(found.metadata).__name__}, not a map"
    return None


@contextmanager
def open_store(
    *,
    db: str | os.PathLike[str] | None = None,
    postgres: str | None = None,
    connect_timeout: int = DEFAULT_CONNECT_TIMEOUT,
) -> Iterator[CheckpointStore]:
    """Open a checkpoint database read-only; closed on exit.

    SQLite files are opened with ``mode=ro``; for a database in WAL mode (SqliteSaver's) SQLite
    itself may create the empty ``-wal`` / ``-shm`` companion files that readers need, and leaves
    the database file untouched. PostgreSQL sessions are set to read-only transactions.

    Args:
        db: a SQLite file written by ``SqliteSaver`` / ``AsyncSqliteSaver`` (``sqlite:///path``
            works too). It must exist: nothing is created.
        postgres: a ``postgresql://`` connection string of a database written by ``PostgresSaver``.
        connect_timeout: seconds to wait for the PostgreSQL server.

    Example:
        >>> with open_store(db="x.sqlite", postgres="postgresql://h/db"):  # doctest: +ELLIPSIS
        ...     pass
        Traceback (most recent call last):
        ...
        langctx.errors.ConfigError: give one checkpoint database: ...

    Raises:
        ConfigError: neither or both of ``db`` and ``postgres`` were given, or ``postgres`` is not a
            ``postgresql://`` URI.
        DatabaseNotFoundError: ``db`` names no file.
        NotACheckpointDatabaseError: the file or database has no LangGraph checkpoint tables.
        CheckpointerConnectionError: the database cannot be opened or the server does not answer.
    """
    if (db is None) == (postgres is None):
        msg = "give one checkpoint database: db=PATH (SQLite) or postgres=URI, not both or neither."
        raise ConfigError(msg)
    if postgres is not None:
        if not postgres.startswith(_PG):
            msg = (
                f"--postgres expects a postgresql:// connection string, got {redact(postgres)!r}; "
                "for a SQLite file use --db PATH."
            )
            raise ConfigError(msg)
        with _open_postgres(postgres, connect_timeout=connect_timeout) as store:
            yield store
        return
    with _open_sqlite(os.fspath(db or "")) as store:
        yield store


def _sqlite_file(given: str) -> Path:
    path = given[len(_SQLITE_PREFIX) :] if given.startswith(_SQLITE_PREFIX) else given
    if path in ("", ":memory:"):
        msg = (
            f"{given!r} is not a file: an in-memory database holds no checkpoints of another "
            "process. Give the path of the file your SqliteSaver writes."
        )
        raise NotACheckpointDatabaseError(msg, location=given)
    file = Path(path).expanduser()
    if not file.exists():
        msg = (
            f"no such file: {path!r}. Check the path; langctx inspect reads an existing "
            "checkpoint database and never creates one."
        )
        raise DatabaseNotFoundError(msg, path=path)
    if not file.is_file():
        msg = f"{path!r} is a directory, not a SQLite checkpoint database. Give the database file."
        raise NotACheckpointDatabaseError(msg, location=path)
    return file


@contextmanager
def _open_sqlite(given: str) -> Iterator[CheckpointStore]:
    from langgraph.checkpoint.sqlite import SqliteSaver

    file = _sqlite_file(given)
    location = str(file)
    try:
        conn = sqlite3.connect(
            f"{file.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
        )
    except sqlite3.Error as exc:
        msg = f"cannot open the SQLite checkpoint database {location!r}: {exc}. Check its permissions."
        raise CheckpointerConnectionError(msg, uri=location) from exc
    try:
        columns = sqlite_columns(conn, location)
        saver = SqliteSaver(conn)
        # The tables were checked above. SqliteSaver.setup() would write (journal mode, CREATE
        # TABLE IF NOT EXISTS), which a read-only connection refuses: mark it done instead.
        saver.is_setup = True
        if "task_path" not in columns["writes"] and hasattr(saver, "_has_task_path"):
            saver._has_task_path = False  # a database from before `task_path`, read as ''

        def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            return [tuple(r) for r in conn.execute(sql, tuple(params)).fetchall()]

        yield CheckpointStore(
            saver, kind="sqlite", location=location, query=query, errors=(sqlite3.Error,)
        )
    finally:
        conn.close()


def _not_sqlite(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc)
    return any(sign in text for sign in ("not a database", "malformed", "Could not decode"))


def sqlite_columns(conn: sqlite3.Connection, location: str) -> dict[str, set[str]]:
    """The columns of the checkpoint tables; raises when the file is not a checkpoint database."""
    try:
        tables = {
            str(r[0])
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        }
    except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # a name that is not UTF-8
        if not isinstance(exc, sqlite3.DatabaseError) or _not_sqlite(exc):
            msg = (
                f"{location!r} is not a SQLite database ({exc}), so not a LangGraph checkpoint "
                "database. Give the file your SqliteSaver writes (--db), or use --postgres URI."
            )
            raise NotACheckpointDatabaseError(msg, location=location) from exc
        msg = f"cannot read the SQLite checkpoint database {location!r}: {exc}. Check its permissions."
        raise CheckpointerConnectionError(msg, uri=location) from exc
    columns: dict[str, set[str]] = {}
    for table, required in _SQLITE_COLUMNS.items():
        if table not in tables:
            found = ", ".join(sorted(tables)[:8]) if tables else "none, the database is empty"
            msg = (
                f"{location!r} is a SQLite database but not a LangGraph checkpoint database: it "
                f"has no {table!r} table (tables: {found}). Give the file your SqliteSaver writes; "
                "nothing was changed."
            )
            raise NotACheckpointDatabaseError(msg, location=location)
        try:
            have = {str(r[1]) for r in conn.execute(f"PRAGMA table_info({table})").fetchall()}
        except (sqlite3.DatabaseError, UnicodeDecodeError) as exc:  # its schema is corrupt
            msg = f"{location!r} is a damaged SQLite database ({exc}); it cannot be read."
            raise NotACheckpointDatabaseError(msg, location=location) from exc
        missing = sorted(required - have)
        if missing:
            msg = (
                f"{location!r} has a {table!r} table without the columns LangGraph's SqliteSaver "
                f"writes (missing: {', '.join(missing)}); it is not a LangGraph checkpoint database."
            )
            raise NotACheckpointDatabaseError(msg, location=location)
        columns[table] = have
    return columns


@contextmanager
def _open_postgres(uri: str, *, connect_timeout: int) -> Iterator[CheckpointStore]:
    shown = redact(uri)
    with open_checkpointer(uri, setup=False, connect_timeout=connect_timeout) as saver:
        import psycopg  # installed: open_checkpointer names the extra otherwise

        conn = getattr(saver, "conn", None)
        if not isinstance(conn, psycopg.Connection):  # pragma: no cover - open_checkpointer's shape
            msg = f"unexpected PostgreSQL checkpointer connection {type(conn).__name__}."
            raise InspectError(msg)
        try:
            conn.execute("SET default_transaction_read_only = on")
            row = conn.execute(
                "SELECT " + ", ".join(f"to_regclass('{t}') IS NOT NULL" for t in _PG_TABLES)
            ).fetchone()
        except psycopg.Error as exc:
            msg = f"cannot read the PostgreSQL checkpoint database {shown!r}: {exc}"
            raise CheckpointerConnectionError(msg, uri=shown) from exc
        present = list(row.values()) if isinstance(row, dict) else list(row or ())
        missing = [t for t, ok in zip(_PG_TABLES, present, strict=False) if not ok]
        if missing or not present:
            msg = (
                f"the PostgreSQL database {shown!r} is not a LangGraph checkpoint database: it has "
                f"no {', '.join(missing or _PG_TABLES)} table in its search path. Give the database "
                "your PostgresSaver writes (after PostgresSaver.setup()); nothing was changed."
            )
            raise NotACheckpointDatabaseError(msg, location=shown)

        def query(sql: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
            rows = conn.execute(sql.replace("?", "%s"), tuple(params)).fetchall()
            return [tuple(r.values()) if isinstance(r, dict) else tuple(r) for r in rows]

        yield CheckpointStore(
            saver, kind="postgres", location=shown, query=query, errors=(psycopg.Error,)
        )


def unwrapped(value: Any) -> Any:
    """A stored channel value: a ``DeltaChannel``'s snapshot blob gives the value it holds."""
    return value.value if isinstance(value, _DeltaSnapshot) else value
