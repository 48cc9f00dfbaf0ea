"""The reference that stands for a stored tool output: its id, store, text, and fetch's answers."""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from langctx.errors import ReferenceNotFoundError
from langctx.markers import REF_MARKER, REFERENCE_ID_PREFIX, escape_delimiters
from langctx.tokens import TextCounter, TokenCounter, text_counter

_ID = re.escape(REFERENCE_ID_PREFIX) + "[0-9a-f]{8}"
REF_ID_RE = re.compile(_ID)
"""What a reference id looks like: ``ctx_`` and eight hex digits."""

SliceEncoding = Literal["utf-8", "utf-8+x", "base64"]
"""How the bytes of a slice are written as text (see :mod:`~langctx.context_mode.slices`)."""

DEFAULT_REFERENCE_MIN_TOKENS = 4_000
"""Outputs over this many tokens are stored and referenced (smaller ones are only reduced)."""

_FOUND = re.compile(re.escape(REF_MARKER) + f"({_ID})" + r"\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchResult:
    """One answer of ``fetch_context``: a slice, grep matches, or why there is nothing to show."""

    text: str
    """What the model sees (bounded by the token budget)."""
    ref_id: str
    kind: Literal["slice", "grep", "out_of_range", "invalid"]
    ok: bool = True
    """False when the request could not be served."""
    start: int = 0
    """First byte of the slice (or where the grep started)."""
    end: int = 0
    """Byte after the slice (or after the last line shown by grep)."""
    total: int = 0
    """Size of the stored output in bytes."""
    encoding: SliceEncoding | None = None
    data: bytes = b""
    """The raw bytes of the slice (empty for grep and errors)."""
    next_offset: int | None = None
    """Where the next slice (or the next grep page) starts; None at the end."""
    matches: int = 0
    """Matching lines shown (grep)."""
    message_id: str | None = None
    """Id of the message that showed the reference (set by the processor's fetch)."""


def reference_id(thread_id: str, tool_call_id: str | None, sha256: str, *, attempt: int = 0) -> str:
    """A stable reference id: the same thread, call, bytes and ``attempt`` give the same id."""
    seed = f"{thread_id}\0{tool_call_id or ''}\0{sha256}\0{attempt}".encode()
    return REFERENCE_ID_PREFIX + hashlib.sha256(seed).hexdigest()[:8]


def is_reference_id(value: object) -> bool:
    """Whether ``value`` has the shape of a reference id."""
    return isinstance(value, str) and REF_ID_RE.fullmatch(value) is not None


def find_reference_ids(text: str) -> list[str]:
    """Reference ids in genuine langctx markers of ``text`` (in order, no duplicates)."""
    return list(dict.fromkeys(_FOUND.findall(text)))


def fetch_call(ref_id: str, *, offset: int | None = None, grep: str | None = None) -> str:
    """How to call ``fetch_context`` for a reference, as shown to the model."""
    parts = [f'ref_id="{ref_id}"']
    if grep is not None:
        parts.append(f"grep={escape_delimiters(json.dumps(grep, ensure_ascii=False))}")
    if offset is not None:
        parts.append(f"offset={offset}")
    return f"fetch_context({', '.join(parts)})"


def _reference_head(ref_id: str, size: int, tokens: int) -> str:
    return (
        f"{REF_MARKER}{ref_id} · the full output ({size:,} bytes, ~{tokens:,} tokens) is stored; "
        "below is a reduced view]"
    )


def _reference_foot(ref_id: str, slice_tokens: int) -> str:
    return (
        f"{REF_MARKER}{ref_id} · {fetch_call(ref_id, offset=0)} reads it in slices of up to "
        f"~{slice_tokens:,} tokens (offsets are bytes); {fetch_call(ref_id, grep='<regex>')} lists "
        "the matching lines with their offsets]"
    )


def reference_frame_tokens(count_tokens: TokenCounter | TextCounter | None = None) -> int:
    """Tokens the reference's first and last lines take."""
    count = text_counter(count_tokens)
    head = _reference_head("ctx_00000000", 999_999_999, 999_999_999)
    return count(head) + count(_reference_foot("ctx_00000000", 999_999)) + 4


def render_reference(
    ref_id: str, description: str, *, size: int, tokens: int, slice_tokens: int
) -> str:
    """The text that replaces a referenced output: ``description`` (escaped) framed by two markers."""
    return "\n".join(
        [_reference_head(ref_id, size, tokens), description, _reference_foot(ref_id, slice_tokens)]
    )


def out_of_range(ref_id: str, *, offset: int, total: int, limit: int | None = None) -> FetchResult:
    """The answer to a slice request for bytes the output does not have."""
    if limit is not None and limit <= 0:
        why = f"limit {limit} is not a positive number of bytes; omit it to get as much as fits"
    elif total == 0:
        why = "the output is empty; there is nothing to fetch"
    else:
        why = (
            f"offset {offset} is out of range: the output has {total:,} bytes, so valid offsets "
            f"are 0 to {total - 1}"
        )
    return FetchResult(
        text=f"{REF_MARKER}{ref_id} · {why}]",
        ref_id=ref_id,
        kind="out_of_range",
        ok=False,
        start=offset,
        end=offset,
        total=total,
    )


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
    sha256: str | None = None,
) -> ReferenceMeta:
    """Build the :class:`ReferenceMeta` of ``data``."""
    created = time.time()
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
    """Whether a reference's ``expires_at`` has passed."""
    expires = meta.get("expires_at")
    return expires is not None and (time.time() if now is None else now) >= float(expires)


def not_found(ref_id: str) -> ReferenceNotFoundError:
    """The error for an unknown, expired or foreign reference id."""
    msg = (
        f"no context reference {ref_id!r} in this thread (unknown, expired, or another thread's); "
        "use a ref_id shown in this conversation, or run the tool again."
    )
    return ReferenceNotFoundError(msg)


@runtime_checkable
class ReferenceStore(Protocol):
    """Keeps referenced outputs per thread; a subclass inherits async methods calling the sync ones."""

    def put(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        """Store ``data`` under ``meta["ref_id"]`` in ``thread_id`` (replacing any previous)."""

    def meta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        """The meta of a live reference of ``thread_id``; raise ReferenceNotFoundError otherwise."""

    def read(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        """Bytes ``start:end`` of a live reference; raise ReferenceNotFoundError otherwise."""

    async def aput(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        """Async version of `put` (by default: `put`)."""
        self.put(thread_id, meta, data)

    async def ameta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        """Async version of `meta` (by default: `meta`)."""
        return self.meta(thread_id, ref_id)

    async def aread(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        """Async version of `read` (by default: `read`)."""
        return self.read(thread_id, ref_id, start, end)


class InMemoryReferenceStore(ReferenceStore):
    """A process-local :class:`ReferenceStore` with optional expiry.

    Args:
        max_bytes: total bytes kept; the oldest references are dropped beyond it.
        clock: returns the current Unix time.
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


_PROCESS_STORE = InMemoryReferenceStore()


def process_reference_store() -> InMemoryReferenceStore:
    """The one in-memory store of this process, shared by every integration that has no other."""
    return _PROCESS_STORE
