"""References in real LangGraph stores (InMemoryStore, SqliteStore, PostgresStore); long-term memory.

Per store: the byte-identical round trip of a multi-chunk output, thread isolation (API and the
``fetch_context`` tool with two thread configs), expiry, and the async twins.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from langgraph.store.base import BaseStore, GetOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.slices import reassemble
from langctx.context_mode.tools import fetch_context_tool, remember_tool
from langctx.errors import ReferenceNotFoundError
from langctx.stores.long_term import LongTermMemory
from langctx.stores.references import CHUNK_BYTES, BaseStoreReferenceStore
from tests.integration_tests._agents import require_postgres


@contextmanager
def make_store(kind: str) -> Iterator[BaseStore]:
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        with SqliteStore.from_conn_string(":memory:") as store:
            store.setup()
            yield store
    else:
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(require_postgres()) as store:
            store.setup()
            yield store


KINDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def fetch_all(processor: ContextModeProcessor, ref_id: str, thread_id: str) -> bytes:
    texts: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = processor.fetch(ref_id, thread_id=thread_id, offset=offset)
        texts.append(page.text)
        offset = page.next_offset
    return reassemble(texts)


def tool_call(ref_id: str, **args: Any) -> dict[str, Any]:
    return {
        "type": "tool_call",
        "id": "c1",
        "name": "fetch_context",
        "args": {"ref_id": ref_id, **args},
    }


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip_and_thread_isolation(kind: str) -> None:
    with make_store(kind) as store:
        processor = ContextModeProcessor(
            store=BaseStoreReferenceStore(store), max_inline_tokens=4000, reference_min_tokens=4000
        )
        a, b = f"a-{uuid.uuid4().hex}", f"b.{uuid.uuid4().hex}"  # a "." in a thread id is fine
        data = random.Random(7).randbytes(CHUNK_BYTES // 4) + "ünïcode line\n".encode() * 120_000
        assert len(data) > CHUNK_BYTES  # several chunks
        out = processor.process(data, tool_name="download", thread_id=a)
        assert out.action == "referenced" and out.ref_id is not None
        assert fetch_all(processor, out.ref_id, a) == data
        tail = processor.fetch(out.ref_id, thread_id=a, offset=len(data) - 13)
        assert tail.data == data[-13:] and tail.next_offset is None
        with pytest.raises(ReferenceNotFoundError):
            processor.fetch(out.ref_id, thread_id=b)
        tool = fetch_context_tool(processor)
        ok = tool.invoke(tool_call(out.ref_id, limit=100), {"configurable": {"thread_id": a}})
        foreign = tool.invoke(tool_call(out.ref_id), {"configurable": {"thread_id": b}})
        assert ok.update["messages"][0].status == "success"
        assert foreign.status == "error" and "another thread" in foreign.content
        no_thread = tool.invoke(tool_call(out.ref_id), {})
        assert no_thread.status == "error"


@pytest.mark.parametrize("kind", KINDS)
async def test_async_twins(kind: str) -> None:
    with make_store(kind) as store:
        processor = ContextModeProcessor(store=BaseStoreReferenceStore(store))
        tid = f"t-{uuid.uuid4().hex}"
        text = "".join(f"line {i}: ok\n" for i in range(30_000)) + "ZeroDivisionError: boom\n"
        out = await processor.aprocess(text, tool_name="bash", thread_id=tid)
        hits = await processor.afetch(out.ref_id or "", thread_id=tid, grep="ZeroDivision")
        assert hits.matches == 1 and "L30001 @" in hits.text
        page = await processor.afetch(out.ref_id or "", thread_id=tid, offset=0, limit=12)
        assert page.data == b"line 0: ok\nl"
        with pytest.raises(ReferenceNotFoundError):
            await processor.afetch(out.ref_id or "", thread_id="other")


@pytest.mark.parametrize("kind", KINDS)
def test_expired_references_are_not_found(kind: str) -> None:
    with make_store(kind) as store:
        now = [0.0]
        rstore = BaseStoreReferenceStore(store, clock=lambda: now[0])
        processor = ContextModeProcessor(store=rstore, ttl_seconds=3600)
        tid = f"t-{uuid.uuid4().hex}"
        out = processor.process("entry\n" * 20_000, thread_id=tid)
        now[0] = 1e11  # far in the future
        with pytest.raises(ReferenceNotFoundError):
            processor.fetch(out.ref_id or "", thread_id=tid)
        expired = fetch_context_tool(processor).invoke(
            tool_call(out.ref_id or ""), {"configurable": {"thread_id": tid}}
        )
        assert expired.status == "error" and "expired" in expired.content


def test_stores_with_ttl_get_it_on_the_rows() -> None:
    with make_store("sqlite") as store:
        processor = ContextModeProcessor(store=BaseStoreReferenceStore(store), ttl_seconds=7200)
        out = processor.process("entry\n" * 20_000, thread_id="t")
        row = store.conn.execute(
            "SELECT ttl_minutes FROM store WHERE key = ?", (out.ref_id,)
        ).fetchone()
        assert row is not None and float(row[0]) == pytest.approx(120.0)


def test_refs_are_never_embedded_in_an_indexed_store() -> None:
    calls: list[int] = []

    class CountingEmbedding(DeterministicFakeEmbedding):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            calls.append(len(texts))
            return super().embed_documents(texts)

    store = InMemoryStore(index={"dims": 8, "embed": CountingEmbedding(size=8)})
    ContextModeProcessor(store=BaseStoreReferenceStore(store)).process(
        "entry\n" * 20_000, thread_id="t"
    )
    assert calls == []


# ------------------------------------------------------------------------------ long-term memory


@pytest.mark.parametrize("kind", KINDS)
def test_long_term_memory_keyword_search_per_user(kind: str) -> None:
    with make_store(kind) as store:
        ltm = LongTermMemory(store, max_tokens=60)
        ada, bob = (
            {"configurable": {"user_id": f"{n}-{uuid.uuid4().hex}"}} for n in ("ada", "bob")
        )
        for fact in [
            "Deployments go through staging first.",
            "CI runs Python 3.11.",
            "The user prefers tabs.",
            "Deployments go through staging first.",
        ]:
            ltm.remember(fact, config=ada)
        assert ltm.search("python version in CI", config=ada) == ["CI runs Python 3.11."]
        assert ltm.search("python", config=bob) == []
        block = ltm.context_block("how do deployments work?", config=ada)
        assert block is not None and "staging" in block and block.count("staging") == 1
        assert remember_tool(ltm).invoke({"fact": ""}, ada).startswith("Not remembered")


async def test_long_term_memory_semantic_search_with_an_index() -> None:
    store = InMemoryStore(index={"dims": 16, "embed": DeterministicFakeEmbedding(size=16)})
    ltm = LongTermMemory(store)
    assert ltm.semantic
    await ltm.aremember("exact sentence")
    assert (await ltm.asearch("exact sentence"))[0] == "exact sentence"
    assert await ltm.acontext_block("exact sentence") is not None


class _RecordingStore(InMemoryStore):
    """An InMemoryStore that records the ``refresh_ttl`` of every read it is given."""

    def __init__(self, refresh_on_read: bool) -> None:
        super().__init__()
        self.ttl_config = {"refresh_on_read": refresh_on_read}
        self.refreshes: list[bool] = []

    def batch(self, ops: Any) -> Any:
        ops = list(ops)
        self.refreshes += [op.refresh_ttl for op in ops if isinstance(op, GetOp)]
        return super().batch(ops)

    async def abatch(self, ops: Any) -> Any:
        ops = list(ops)
        self.refreshes += [op.refresh_ttl for op in ops if isinstance(op, GetOp)]
        return await super().abatch(ops)


@pytest.mark.parametrize("refresh_on_read", [True, False])
async def test_sync_and_async_reads_refresh_ttls_as_the_store_says(refresh_on_read: bool) -> None:
    stores = [_RecordingStore(refresh_on_read) for _ in range(2)]
    for store in stores:
        processor = ContextModeProcessor(store=BaseStoreReferenceStore(store))
        out = processor.process("entry\n" * 20_000, thread_id="t")
        store.refreshes.clear()
        if store is stores[0]:
            processor.fetch(out.ref_id or "", thread_id="t", offset=0, limit=50)
        else:
            await processor.afetch(out.ref_id or "", thread_id="t", offset=0, limit=50)
    assert stores[0].refreshes == stores[1].refreshes
    assert stores[0].refreshes and set(stores[0].refreshes) == {refresh_on_read}
