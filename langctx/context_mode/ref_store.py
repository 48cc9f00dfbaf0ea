"""Where referenced tool outputs are kept: the :class:`ReferenceStore` protocol and an in-memory store.

A store keeps, per thread, each referenced output's raw bytes and :class:`ReferenceMeta`. Every
method takes the ``thread_id``, so another thread's or an expired reference is simply not found
(:class:`~langctx.errors.ReferenceNotFoundError`). The LangGraph ``BaseStore`` implementation is
:class:`langctx.stores.references.BaseStoreReferenceStore`.

Example:
    >>> store = InMemoryReferenceStore()
    >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t1", data=b"hello world", source="str")
    >>> store.put("t1", meta, b"hello world")
    >>> store.read("t1", "ctx_0123abcd", 6, 11)
    b'world'
    >>> store.meta("t2", "ctx_0123abcd")
    Traceback (most recent call last):
    ...
    langctx.errors.ReferenceNotFoundError: no context reference 'ctx_0123abcd' in this thread ...
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from langctx.errors import ReferenceNotFoundError

__all__ = [
    "REFERENCE_VERSION",
    "InMemoryReferenceStore",
    "ReferenceMeta",
    "ReferenceStore",
    "is_expired",
    "new_meta",
    "not_found",
    "process_reference_store",
]

REFERENCE_VERSION = 1
"""Version of :class:`ReferenceMeta`."""


class ReferenceMeta(TypedDict):
    """What is stored beside a referenced output's bytes (version 1; JSON values only)."""

    v: int
    ref_id: str
    thread_id: str
    source: Literal["str", "bytes"]
    """Whether the tool returned text (stored as UTF-8, ``surrogatepass``) or bytes."""
    size: int
    """Length of the stored bytes."""
    sha256: str
    tool_name: str | None
    tool_call_id: str | None
    message_id: str | None
    """Id of the message that shows the reference (its priority drops once it is fetched)."""
    kind: str | None
    """Content kind the output was reduced as."""
    tokens: int
    """Tokens of the original output."""
    created_at: float
    expires_at: float | None
    """Unix time after which the reference is gone (None: never)."""


def new_meta(
    *,
    ref_id: str,
    thread_id: str,
    data: bytes,
    source: Literal["str", "bytes"],
    tool_name: str | None = None,
    tool_call_id: str | None = None,
    message_id: str | None = None,
    kind: str | None = None,
    tokens: int = 0,
    ttl_seconds: float | None = None,
    now: float | None = None,
    sha256: str | None = None,
) -> ReferenceMeta:
    """Build the :class:`ReferenceMeta` of ``data``.

    Example:
        >>> new_meta(ref_id="ctx_1", thread_id="t", data=b"abc", source="bytes")["size"]
        3
    """
    created = time.time() if now is None else now
    return ReferenceMeta(
        v=REFERENCE_VERSION,
        ref_id=ref_id,
        thread_id=thread_id,
        source=source,
        size=len(data),
        sha256=sha256 or hashlib.sha256(data).hexdigest(),
        tool_name=tool_name,
        tool_call_id=tool_call_id,
        message_id=message_id,
        kind=kind,
        tokens=tokens,
        created_at=created,
        expires_at=None if ttl_seconds is None else created + ttl_seconds,
    )


def is_expired(meta: Mapping[str, Any], now: float | None = None) -> bool:
    """Whether a reference's ``expires_at`` has passed.

    Example:
        >>> is_expired({"expires_at": 10.0}, now=11.0), is_expired({"expires_at": None})
        (True, False)
    """
    expires = meta.get("expires_at")
    return expires is not None and (time.time() if now is None else now) >= float(expires)


def not_found(ref_id: str) -> ReferenceNotFoundError:
    """The error for a reference id that is unknown, expired or another thread's.

    Example:
        >>> str(not_found("ctx_x")).startswith("no context reference 'ctx_x'")
        True
    """
    msg = (
        f"no context reference {ref_id!r} in this thread (unknown, expired, or another thread's); "
        "use a ref_id shown in this conversation, or run the tool again."
    )
    return ReferenceNotFoundError(msg)


@runtime_checkable
class ReferenceStore(Protocol):
    """Keeps referenced outputs per thread. Sync and async methods; the async ones may call the
    sync ones when the backend has no async API."""

    def put(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        """Store ``data`` under ``meta["ref_id"]`` in ``thread_id`` (replacing any previous)."""
        ...

    def meta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        """The meta of a live reference of ``thread_id``; raise ReferenceNotFoundError otherwise."""
        ...

    def read(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        """Bytes ``start:end`` of a live reference; raise ReferenceNotFoundError otherwise."""
        ...

    async def aput(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        """Async version of `put`."""
        ...

    async def ameta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        """Async version of `meta`."""
        ...

    async def aread(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        """Async version of `read`."""
        ...


class InMemoryReferenceStore:
    """A process-local :class:`ReferenceStore` (a dict per thread), with optional expiry.

    Args:
        max_bytes: total bytes kept; the oldest references are dropped beyond it.
        clock: returns the current Unix time (tests pass a fake one).

    Example:
        >>> store = InMemoryReferenceStore()
        >>> m = new_meta(ref_id="ctx_1", thread_id="t", data=b"x", source="bytes",
        ...              ttl_seconds=60, now=0.0)
        >>> store.put("t", m, b"x")
        >>> store.clock = lambda: 61.0
        >>> store.meta("t", "ctx_1")
        Traceback (most recent call last):
        ...
        langctx.errors.ReferenceNotFoundError: no context reference 'ctx_1' in this thread ...
    """

    def __init__(self, *, max_bytes: int = 1 << 30, clock: Callable[[], float] = time.time) -> None:
        self.max_bytes = max_bytes
        self.clock = clock
        self._data: dict[tuple[str, str], tuple[ReferenceMeta, bytes]] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def put(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        key = (str(thread_id), meta["ref_id"])
        with self._lock:
            old = self._data.pop(key, None)
            if old is not None:
                self._bytes -= len(old[1])
            self._data[key] = (dict(meta), bytes(data))  # type: ignore[assignment]
            self._bytes += len(data)
            while self._bytes > self.max_bytes and len(self._data) > 1:
                first = next(iter(self._data))
                self._bytes -= len(self._data.pop(first)[1])

    def _entry(self, thread_id: str, ref_id: str) -> tuple[ReferenceMeta, bytes]:
        key = (str(thread_id), str(ref_id))
        with self._lock:
            entry = self._data.get(key)
            if entry is not None and is_expired(entry[0], self.clock()):
                self._bytes -= len(self._data.pop(key)[1])
                entry = None
        if entry is None:
            raise not_found(ref_id)
        return entry

    def meta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        return ReferenceMeta(**self._entry(thread_id, ref_id)[0])

    def read(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        return self._entry(thread_id, ref_id)[1][max(0, start) : max(0, end)]

    async def aput(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        """Async version of `put`."""
        self.put(thread_id, meta, data)

    async def ameta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        """Async version of `meta`."""
        return self.meta(thread_id, ref_id)

    async def aread(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        """Async version of `read`."""
        return self.read(thread_id, ref_id, start, end)


_PROCESS_STORE: InMemoryReferenceStore | None = None
_PROCESS_LOCK = threading.Lock()


def process_reference_store() -> InMemoryReferenceStore:
    """The one in-memory store of this process, shared by every integration that has no other.

    Agents or middleware built again in the same process (a server that builds its agent per
    request) still find the references their threads made; a restart loses them.

    Example:
        >>> process_reference_store() is process_reference_store()
        True
    """
    global _PROCESS_STORE
    with _PROCESS_LOCK:
        if _PROCESS_STORE is None:
            _PROCESS_STORE = InMemoryReferenceStore()
        return _PROCESS_STORE
