"""No run reads another run's stored tool outputs, whatever thread id or message id it brings.

Each case stores a giant output holding :data:`SECRET` in one run (``create_agent`` with
``LangctxMiddleware`` and ``ContextModeMiddleware``, the references in the graph's store) and lets
a second run call ``fetch_context`` on its reference; the secret must never come back, while the
owner reads it back (the positive control). On InMemoryStore, SqliteStore and PostgresStore, and
with the owner in another process.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langctx.channel import run_update
from langctx.context_mode.references import find_reference_ids
from langctx.context_mode.tools import wrap_tools_with_context_mode
from langctx.delta_state import LangctxDeltaState
from langctx.markers import NO_THREAD
from tests.integration_tests._agents import require_postgres, run_worker
from tests.integration_tests._isolation import SECRET, read_log, run_agent

KINDS = ["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@contextmanager
def make_store(kind: str, tmp_path: Path) -> Iterator[BaseStore]:
    if kind == "memory":
        yield InMemoryStore()
    elif kind == "sqlite":
        with SqliteStore.from_conn_string(str(tmp_path / "store.sqlite")) as store:
            store.setup()
            yield store
    else:
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(require_postgres()) as store:
            store.setup()
            yield store


def owner_run(store: BaseStore, thread_id: str | None, first_id: str) -> dict[str, Any]:
    """The owner's run: its reference, which it can read itself."""
    out = run_agent(store, thread_id, first_id, None)
    assert out["refused"] is None and len(out["refs"]) == 1, out
    assert len(out["fetched"]) == 1 and SECRET in out["fetched"][0], out  # the owner reads it
    return out


def assert_denied(out: dict[str, Any]) -> None:
    """The attacker's run was refused, or its fetch said there is no such reference."""
    assert out["refused"] or (out["fetched"] and "no context reference" in out["fetched"][0]), out
    assert not any(SECRET in text for text in out["fetched"]), out


def attacker_threads(first_id: str, owner: str | None) -> list[str | None]:
    """Every thread id we could think of that might reach the owner's namespace."""
    names: list[str | None] = [
        None,  # another run without a thread, its first message sharing the owner's id
        NO_THREAD,
        f"{NO_THREAD}:{first_id}",
        f"{NO_THREAD}:",
        f"{NO_THREAD}%3A{first_id}",
        f"{NO_THREAD}:run:{first_id}",
        f" {NO_THREAD}",
        first_id,
        "",
        "%",
    ]
    if owner is not None:
        names += [
            owner.replace(".", "%2E"),
            owner.replace("%", "%25"),
            owner + "\x00",
            owner.upper(),
            f"{NO_THREAD}:{owner}",
        ]
    return [n for n in names if n != owner]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("owner", [None, "team.a%2E", "1"])
def test_no_run_reads_another_runs_references(kind: str, owner: str | None, tmp_path: Path) -> None:
    first_id = "1"  # clients do send such ids
    with make_store(kind, tmp_path) as store:
        if owner is not None and kind == "postgres":
            owner = f"{owner}-{uuid.uuid4().hex[:6]}"  # a shared database outlives the test
        (ref_id,) = owner_run(store, owner, first_id)["refs"]
        for thread in attacker_threads(first_id, owner):
            assert_denied(run_agent(store, thread, first_id, ref_id))


@pytest.mark.parametrize("kind", KINDS)
def test_outputs_of_tools_called_outside_a_graph_stay_out_of_every_run(
    kind: str, tmp_path: Path
) -> None:
    with make_store(kind, tmp_path) as store:
        wrapped, _fetch = wrap_tools_with_context_mode([read_log], store=store)
        call = {"type": "tool_call", "id": "c1", "name": "read_log", "args": {"path": "x"}}
        (ref_id,) = find_reference_ids(wrapped.invoke(call).text)  # no graph, no thread
        for thread in [NO_THREAD, f"{NO_THREAD}:1", None, "1"]:
            assert_denied(run_agent(store, thread, "1", ref_id))


def test_runs_in_two_processes_do_not_share_references(tmp_path: Path) -> None:
    db = str(tmp_path / "shared.sqlite")
    job = {"db": db, "thread_id": None, "first_id": "1", "ref_id": None}
    (owner,), _ = run_worker("tests.integration_tests._isolation_worker", [job])
    assert owner["refused"] is None and len(owner["fetched"]) == 1, owner
    assert SECRET in owner["fetched"][0]
    (ref_id,) = owner["refs"]
    attacks = [{**job, "thread_id": t, "ref_id": ref_id} for t in attacker_threads("1", None)]
    results, _ = run_worker("tests.integration_tests._isolation_worker", attacks)
    with SqliteStore.from_conn_string(db) as store:
        store.setup()
        results += [run_agent(store, a["thread_id"], "1", ref_id) for a in attacks]
    for out in results:
        assert_denied(out)


def test_a_custom_graph_without_thread_or_run_id_stores_nothing() -> None:
    """A ``ToolNode`` graph with wrapped tools, no thread and no run id in its state: the output
    is reduced, not stored (no namespace is its own); with ``langctx: run_update()`` in its
    input it is stored under that run id, and read back in the same run."""
    store = InMemoryStore()
    wrapped = wrap_tools_with_context_mode([read_log], store=store)
    call = {"id": "c1", "name": "read_log", "args": {"path": "x"}, "type": "tool_call"}
    graph = (
        StateGraph(LangctxDeltaState)
        .add_node("tools", ToolNode(wrapped))
        .add_edge(START, "tools")
        .compile(store=store)
    )
    start = [HumanMessage("go", id="1"), AIMessage("", tool_calls=[call], id="2")]
    plain = graph.invoke({"messages": start})["messages"][-1].text
    assert find_reference_ids(plain) == []
    assert not list(store.search(("langctx", "refs"), limit=5))
    own = graph.invoke({"messages": start, "langctx": run_update()})
    (ref_id,) = find_reference_ids(own["messages"][-1].text)
    fetch = {"id": "c2", "name": "fetch_context", "args": {"ref_id": ref_id, "grep": "SECRET"}}
    again = {**own, "messages": [AIMessage("", tool_calls=[{**fetch, "type": "tool_call"}])]}
    assert SECRET in graph.invoke(again)["messages"][-1].text
    other = {"messages": again["messages"], "langctx": run_update()}
    assert "no context reference" in graph.invoke(other)["messages"][-1].text
