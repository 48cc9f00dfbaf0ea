"""Referenced tool outputs in a LangGraph ``BaseStore`` (InMemoryStore, SqliteStore, PostgresStore)."""

from __future__ import annotations

import base64
import threading
import warnings
from collections.abc import Callable, Generator, Sequence
from functools import partial
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config, get_store
from langgraph.constants import CONFIG_KEY_CHECKPOINTER
from langgraph.store.base import BaseStore, GetOp, PutOp

from langctx.context_mode.references import (
    ReferenceMeta,
    ReferenceStore,
    is_expired,
    not_found,
    process_reference_store,
)
from langctx.errors import ConfigError, LangctxWarning
from langctx.steps import adrive, drive

__all__ = [
    "CHUNK_BYTES",
    "NO_STORE_WARNING",
    "REFS_NAMESPACE",
    "BaseStoreReferenceStore",
    "GraphReferenceStore",
    "namespace_label",
]

REFS_NAMESPACE: tuple[str, ...] = ("langctx", "refs")
"""Prefix of the per-thread namespaces."""

CHUNK_BYTES = 1 << 20
"""Raw bytes per stored chunk."""


async def abatch(store: BaseStore, ops: Sequence[Any]) -> list[Any]:
    """``store.abatch(ops)``, or ``store.batch(ops)`` for a sync-only store (SqliteStore)."""
    try:
        return await store.abatch(ops)
    except NotImplementedError:  # a sync-only store: its calls are quick
        return store.batch(ops)


def refresh_on_read(store: BaseStore) -> bool:
    """Whether a read refreshes the item's TTL, as the store is configured (as ``store.get``)."""
    return (store.ttl_config or {}).get("refresh_on_read", True)


def namespace_label(value: str) -> str:
    """A thread id as a namespace label (no ``.``, no NUL, never empty), injectively.

    Example:
        >>> namespace_label("run.1"), namespace_label(""), namespace_label("50%")
        ('run%2E1', '%', '50%25')
    """
    if not value:
        return "%"
    return value.replace("%", "%25").replace(".", "%2E").replace("\x00", "%00")


class BaseStoreReferenceStore:
    """A :class:`~langctx.context_mode.references.ReferenceStore` over a LangGraph ``BaseStore``.

    One namespace per thread; item ``<ref_id>`` holds the meta, items ``<ref_id>/<n>`` the bytes in
    base64 chunks of 1 MiB. Expired references are not found (rows get the TTL where supported).

    Args:
        store: the LangGraph store (set it up first).
        clock: current Unix time, for expiry (tests pass a fake one).
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        namespace: Sequence[str] = REFS_NAMESPACE,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if not isinstance(store, BaseStore):
            msg = f"store must be a langgraph BaseStore, got {type(store).__name__}."
            raise ConfigError(msg)
        self.store = store
        self.namespace = tuple(namespace)
        self.clock = clock

    def _ns(self, thread_id: str) -> tuple[str, ...]:
        return (*self.namespace, namespace_label(str(thread_id)))

    def _put_ops(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> list[PutOp]:
        ns, ref, ttl = self._ns(thread_id), meta["ref_id"], None
        if (expires := meta.get("expires_at")) is not None and self.store.supports_ttl:
            ttl = max(1.0, (float(expires) - float(meta["created_at"])) / 60.0)
        chunks = [data[i : i + CHUNK_BYTES] for i in range(0, len(data), CHUNK_BYTES)]
        ops = [
            PutOp(ns, f"{ref}/{n}", {"b64": base64.b64encode(c).decode()}, index=False, ttl=ttl)
            for n, c in enumerate(chunks)
        ]
        value = {"meta": dict(meta), "chunks": len(chunks), "chunk_bytes": CHUNK_BYTES}
        ops.append(PutOp(ns, ref, value, index=False, ttl=ttl))  # the meta last: never without data
        return ops

    def _value(self, item: Any, ref_id: str) -> dict[str, Any]:
        value = item.value if item is not None else None
        if not isinstance(value, dict) or not isinstance(value.get("meta"), dict):
            raise not_found(ref_id)
        if is_expired(value["meta"], self.clock() if self.clock is not None else None):
            raise not_found(ref_id)
        return value

    def _get(self, thread_id: str, key: str) -> GetOp:
        return GetOp(self._ns(thread_id), key, refresh_ttl=refresh_on_read(self.store))

    # meta and read as the store batches they need, run by steps.drive / adrive
    def _meta(
        self, thread_id: str, ref_id: str
    ) -> Generator[tuple[GetOp, ...], Any, ReferenceMeta]:
        (item,) = yield (self._get(thread_id, ref_id),)
        return ReferenceMeta(**self._value(item, ref_id)["meta"])  # type: ignore[typeddict-item]

    def _read(
        self, thread_id: str, ref_id: str, start: int, end: int
    ) -> Generator[tuple[GetOp, ...], Any, bytes]:
        """The meta, then the chunks holding ``[start, end)``."""
        (item,) = yield (self._get(thread_id, ref_id),)
        value = self._value(item, ref_id)
        step = int(value.get("chunk_bytes") or CHUNK_BYTES)
        start, stop = max(0, start), min(int(value["meta"]["size"]), end)
        if stop <= start:
            return b""
        first, last = start // step, (stop - 1) // step
        items = yield tuple(self._get(thread_id, f"{ref_id}/{n}") for n in range(first, last + 1))
        if any(item is None or not isinstance(item.value, dict) for item in items):
            raise not_found(ref_id)
        data = b"".join(base64.b64decode(item.value["b64"]) for item in items)
        return data[start - first * step : max(0, end) - first * step]

    def put(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        self.store.batch(self._put_ops(thread_id, meta, data))

    def meta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        return drive(self._meta(thread_id, ref_id), self.store.batch)

    def read(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        return drive(self._read(thread_id, ref_id, start, end), self.store.batch)

    async def aput(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        await abatch(self.store, self._put_ops(thread_id, meta, data))

    async def ameta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        return await adrive(self._meta(thread_id, ref_id), partial(abatch, self.store))

    async def aread(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        return await adrive(self._read(thread_id, ref_id, start, end), partial(abatch, self.store))


NO_STORE_WARNING = (
    "langctx Context-mode: this graph has a checkpointer but no store, so the tool outputs it "
    "replaces by references are kept in this process's memory only: a thread resumed after a "
    "restart or by another worker gets 'no context reference' from fetch_context. Fix: give the "
    "graph a store (create_agent(..., store=SqliteStore(...) or PostgresStore(...)), "
    "compile(store=...)), or pass ContextModeMiddleware(store=...) / "
    "wrap_tools_with_context_mode(tools, store=...)."
)
"""Given once by :class:`GraphReferenceStore` when references cannot outlive the process."""


def _running_graph() -> tuple[BaseStore | None, Any]:
    """The store and checkpointer of the graph run this call is part of ((None, None) outside)."""
    try:
        config = get_config()
        store = get_store()
    except (RuntimeError, KeyError):  # not inside a graph run (maybe inside a plain Runnable)
        return None, None
    checkpointer = (config.get("configurable") or {}).get(CONFIG_KEY_CHECKPOINTER)
    return (store if isinstance(store, BaseStore) else None), checkpointer


class GraphReferenceStore:
    """References in the store of the graph that is running; without one, in ``fallback``
    (default: this process's memory), warning once (:data:`NO_STORE_WARNING`) when the graph's
    checkpointer outlives the process.

    Example:
        >>> from langctx.context_mode.processor import ContextModeProcessor
        >>> processor = ContextModeProcessor(store=GraphReferenceStore())
        >>> out = processor.process("lorem ipsum " * 5000, tool_name="read_file", thread_id="t1")
        >>> processor.fetch(out.ref_id, thread_id="t1", limit=11).data  # no graph: in memory
        b'lorem ipsum'
    """

    def __init__(
        self, *, namespace: Sequence[str] = REFS_NAMESPACE, fallback: ReferenceStore | None = None
    ) -> None:
        self.namespace = tuple(namespace)
        self.fallback: ReferenceStore = (
            fallback if fallback is not None else process_reference_store()
        )
        self._warned = False
        self._lock = threading.Lock()

    def current(self) -> ReferenceStore:
        """The store this call uses: the running graph's, else the fallback."""
        store, checkpointer = _running_graph()
        if store is not None:
            return BaseStoreReferenceStore(store, namespace=self.namespace)
        if checkpointer is not None and not isinstance(checkpointer, InMemorySaver):
            with self._lock:
                warn, self._warned = not self._warned, True
            if warn:
                warnings.warn(NO_STORE_WARNING, LangctxWarning, stacklevel=2)
        return self.fallback

    def put(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        self.current().put(thread_id, meta, data)

    def meta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        return self.current().meta(thread_id, ref_id)

    def read(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        return self.current().read(thread_id, ref_id, start, end)

    async def aput(self, thread_id: str, meta: ReferenceMeta, data: bytes) -> None:
        await self.current().aput(thread_id, meta, data)

    async def ameta(self, thread_id: str, ref_id: str) -> ReferenceMeta:
        return await self.current().ameta(thread_id, ref_id)

    async def aread(self, thread_id: str, ref_id: str, start: int, end: int) -> bytes:
        return await self.current().aread(thread_id, ref_id, start, end)
