"""Context-mode references default to the graph's store, so they survive a restart.

A ``create_agent`` with ``ContextModeMiddleware()`` (no ``store=`` of its own) over a
``SqliteSaver`` and a ``SqliteStore`` turns a giant tool output into a reference; a NEW process
(fresh agent, fresh middleware, fresh connections to the same SQLite file) resumes the thread and
fetches it. A graph with a persistent checkpointer and no store warns once that its references
stay in this process; ``InMemorySaver`` (the thread dies with the process too) does not warn.
"""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langctx.context_mode.middleware import ContextModeMiddleware
from langctx.context_mode.references import find_reference_ids, process_reference_store
from langctx.context_mode.tools import wrap_tools_with_context_mode
from langctx.errors import LangctxWarning, ReferenceNotFoundError
from langctx.middleware import LangctxMiddleware
from langctx.stores.checkpoints import open_checkpointer
from langctx.stores.references import (
    NO_STORE_WARNING,
    REFS_NAMESPACE,
    BaseStoreReferenceStore,
    GraphReferenceStore,
    namespace_label,
)
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests.integration_tests._agents import run_worker

ERROR_LINE = "OSError: [Errno 28] No space left on device: '/tmp/build/obj/parser.o'"
LOG = "\n".join(
    [f"[{i:06d}] cc -O2 -c src/unit_{i}.c -o obj/unit_{i}.o ... ok" for i in range(3000)]
    + [ERROR_LINE, "make: *** [Makefile:42: all] Error 2", "exit code 2"]
)


@tool
def read_log(path: str) -> str:
    """Read a build log."""
    return LOG


def _first_run(saver: Any, store: Any, thread: str) -> str:
    """Run the agent until the log is referenced; the reference id the model saw."""
    model = ScriptedChatModel(responses=[ai_tool_call("read_log", {"path": "build.log"}), "Ok."])
    agent = create_agent(
        model,
        tools=[read_log],
        middleware=[LangctxMiddleware(max_tokens=6000), ContextModeMiddleware()],
        checkpointer=saver,
        store=store,
    )
    out = agent.invoke(
        {"messages": [HumanMessage("Why did the build fail?")]},
        {"configurable": {"thread_id": thread}},
    )
    reference = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    (ref_id,) = find_reference_ids(reference.text)
    return ref_id


def test_a_reference_made_in_one_process_is_fetched_in_another(tmp_path: Path) -> None:
    db = str(tmp_path / "agent.sqlite")
    thread = "resumed-thread"
    with open_checkpointer(db) as saver, SqliteStore.from_conn_string(db) as store:
        store.setup()
        ref_id = _first_run(saver, store, thread)
        # the reference is in the graph's store, not in this process's memory
        stored = BaseStoreReferenceStore(store).meta(thread, ref_id)
        assert stored["size"] == len(LOG.encode())
        with pytest.raises(ReferenceNotFoundError):
            process_reference_store().meta(thread, ref_id)
        assert store.get((*REFS_NAMESPACE, namespace_label(thread)), ref_id) is not None
    (result,), _ = run_worker(
        "tests.integration_tests._refs_worker",
        [{"db": db, "thread_id": thread, "ref_id": ref_id, "grep": "No space left"}],
    )
    assert result["resumed"] >= 4  # the second process resumed the thread from the checkpoint
    (fetched,) = result["fetched"]
    assert fetched["status"] == "success", fetched["text"]
    assert ERROR_LINE in fetched["text"]


def test_the_graph_store_serves_a_fresh_agent_and_other_threads_stay_out(tmp_path: Path) -> None:
    db = str(tmp_path / "agent.sqlite")
    with open_checkpointer(db) as saver, SqliteStore.from_conn_string(db) as store:
        store.setup()
        ref_id = _first_run(saver, store, "owner")
        for thread, ok in (("owner", True), ("thief", False)):
            model = ScriptedChatModel(
                responses=[ai_tool_call("fetch_context", {"ref_id": ref_id}), "done"]
            )
            agent = create_agent(  # a fresh agent and middleware over the same saver and store
                model,
                tools=[],
                middleware=[ContextModeMiddleware()],
                checkpointer=saver,
                store=store,
            )
            out = agent.invoke(
                {"messages": [HumanMessage("again")]}, {"configurable": {"thread_id": thread}}
            )
            fetched = [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]
            assert (fetched.status == "success") is ok, fetched.text
            if not ok:
                assert "another thread" in fetched.text


async def test_async_runs_use_the_graph_store_too() -> None:
    store = InMemoryStore()
    model = ScriptedChatModel(responses=[ai_tool_call("read_log", {"path": "b.log"}), "Ok."])
    agent = create_agent(
        model,
        tools=[read_log],
        middleware=[ContextModeMiddleware()],
        checkpointer=InMemorySaver(),
        store=store,
    )
    out = await agent.ainvoke(
        {"messages": [HumanMessage("Why?")]}, {"configurable": {"thread_id": "async-refs"}}
    )
    (ref_id,) = find_reference_ids(
        next(m for m in out["messages"] if isinstance(m, ToolMessage)).text
    )
    meta = await BaseStoreReferenceStore(store).ameta("async-refs", ref_id)
    assert meta["ref_id"] == ref_id


def test_wrapped_tools_in_a_custom_graph_use_the_graph_store() -> None:
    store = InMemoryStore()
    model = ScriptedChatModel(responses=[ai_tool_call("read_log", {"path": "b.log"}), "Ok."])
    tools = wrap_tools_with_context_mode([read_log])
    llm = model.bind_tools(tools)
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda state: {"messages": [llm.invoke(state["messages"])]})
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "model")
    graph = builder.compile(checkpointer=InMemorySaver(), store=store)
    out = graph.invoke(
        {"messages": [HumanMessage("Why?")]}, {"configurable": {"thread_id": "custom-graph"}}
    )
    (ref_id,) = find_reference_ids(
        next(m for m in out["messages"] if isinstance(m, ToolMessage)).text
    )
    assert BaseStoreReferenceStore(store).meta("custom-graph", ref_id)["ref_id"] == ref_id


def test_a_persistent_checkpointer_without_a_store_warns_once(tmp_path: Path) -> None:
    db = str(tmp_path / "no-store.sqlite")
    with open_checkpointer(db) as saver:
        with pytest.warns(LangctxWarning, match="checkpointer but no store") as caught:
            ref_id = _first_run(saver, None, "t-warn")  # one middleware: one warning
            model = ScriptedChatModel(
                responses=[ai_tool_call("read_log", {"path": "c.log"}), "Ok."], cycle=True
            )
            agent = create_agent(  # another middleware, used twice: one more warning
                model, tools=[read_log], middleware=[ContextModeMiddleware()], checkpointer=saver
            )
            for i in range(2):
                agent.invoke(
                    {"messages": [HumanMessage("again")]},
                    {"configurable": {"thread_id": f"t-warn-{i}"}},
                )
        ours = [w for w in caught if issubclass(w.category, LangctxWarning)]
        assert len(ours) == 2  # once per middleware, not per call
        assert str(ours[0].message) == NO_STORE_WARNING
        assert "store=" in NO_STORE_WARNING  # it says how to fix it
        # still served from this process's memory
        assert process_reference_store().meta("t-warn", ref_id)["ref_id"] == ref_id


def test_no_warning_without_a_persistent_checkpointer() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _first_run(InMemorySaver(), None, "in-memory-thread")  # dies with the process anyway
        _first_run(None, None, "no-checkpointer")


def test_outside_a_graph_run_references_stay_in_this_process() -> None:
    store = GraphReferenceStore()
    assert store.current() is process_reference_store()
    assert asyncio.run(_current_async(store)) is process_reference_store()


async def _current_async(store: GraphReferenceStore) -> Any:
    return store.current()
