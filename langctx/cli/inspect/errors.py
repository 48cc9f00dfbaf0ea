"""Errors of ``langctx inspect``: what it was pointed at cannot be read as a thread's memory.

Every class derives from :class:`InspectError`, a :class:`~langctx.errors.LangctxError` (the CLI
prints one line and exits with status 2); the tree is drawn in :mod:`langctx.errors`. A PostgreSQL
server that does not answer raises
:class:`~langctx.stores.checkpoints.CheckpointerConnectionError` instead.

Example:
    >>> from langctx.errors import LangctxError
    >>> err = ThreadNotFoundError("t9", known=["t1", "t2"], total=2)
    >>> isinstance(err, LangctxError), err.known
    (True, ['t1', 't2'])
    >>> print(err)
    no thread 't9' in the database; existing threads: 't1', 't2'. Run without --thread to list them.
"""

from __future__ import annotations

from collections.abc import Sequence

from langctx.errors import LangctxError

__all__ = [
    "CheckpointNotFoundError",
    "CorruptCheckpointError",
    "DatabaseNotFoundError",
    "InspectError",
    "NotACheckpointDatabaseError",
    "ThreadNotFoundError",
]


class InspectError(LangctxError):
    """Root of the errors raised while opening or reading a checkpoint database."""


class DatabaseNotFoundError(InspectError, FileNotFoundError):
    """The SQLite file does not exist (inspect never creates one).

    Attributes:
        path: the path that was given.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path

    def __str__(self) -> str:  # OSError would format (errno, strerror) when given two args
        return str(self.args[0]) if self.args else ""


class NotACheckpointDatabaseError(InspectError, ValueError):
    """The file or database exists but holds no LangGraph checkpoint tables.

    Attributes:
        location: the path, or the connection string with its password hidden.
    """

    def __init__(self, message: str, *, location: str) -> None:
        super().__init__(message)
        self.location = location


def _quoted(ids: Sequence[str], total: int) -> str:
    shown = ", ".join(repr(i) for i in ids)
    more = total - len(ids)
    return shown + (f" (and {more} more)" if more > 0 else "")


class ThreadNotFoundError(InspectError, LookupError):
    """No checkpoint of the database belongs to the thread id.

    Attributes:
        thread_id: the id that was asked for.
        known: a few existing thread ids, most recently updated first.
        total: how many threads the database holds.

    Args:
        thread_id: the id that was asked for.
        known: a few existing thread ids.
        total: how many threads the database holds.
        location: the database, as shown in the message.
    """

    def __init__(
        self, thread_id: str, *, known: Sequence[str], total: int, location: str | None = None
    ) -> None:
        where = f"in {location}" if location else "in the database"
        if total:
            msg = (
                f"no thread {thread_id!r} {where}; existing threads: "
                f"{_quoted(known, total)}. Run without --thread to list them."
            )
        else:
            msg = (
                f"no thread {thread_id!r}: there are no checkpoints {where} yet. Run the graph "
                "with this checkpointer first, or check --db / --postgres."
            )
        super().__init__(msg)
        self.thread_id = thread_id
        self.known = list(known)
        self.total = total


class CheckpointNotFoundError(InspectError, LookupError):
    """The thread has no checkpoint with that id.

    Attributes:
        thread_id: the thread.
        checkpoint_id: the id that was asked for.
        recent: the thread's newest checkpoint ids.
        total: how many checkpoints the thread has.
    """

    def __init__(
        self, thread_id: str, checkpoint_id: str, *, recent: Sequence[str], total: int
    ) -> None:
        msg = (
            f"thread {thread_id!r} has no checkpoint {checkpoint_id!r}; its newest checkpoints: "
            f"{_quoted(recent, total)}. Omit --checkpoint to read the latest one."
        )
        super().__init__(msg)
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
        self.recent = list(recent)
        self.total = total


class CorruptCheckpointError(InspectError, ValueError):
    """A checkpoint of the thread is in the database but cannot be decoded.

    Attributes:
        thread_id: the thread.
        checkpoint_id: the checkpoint asked for (None: the latest).
    """

    def __init__(self, thread_id: str, checkpoint_id: str | None, cause: BaseException) -> None:
        which = f"checkpoint {checkpoint_id!r}" if checkpoint_id else "the latest checkpoint"
        msg = (
            f"{which} of thread {thread_id!r} cannot be decoded ({type(cause).__name__}: "
            f"{cause}); the database may be damaged or written by another serializer. Try an "
            "earlier one with --checkpoint ID."
        )
        super().__init__(msg)
        self.thread_id = thread_id
        self.checkpoint_id = checkpoint_id
