"""Resume a thread in a NEW process from SqliteSaver (file) and PostgresSaver.

The first part of each session runs here; one subprocess then reopens each checkpointer, rebuilds
the projection from the checkpoint alone (it must equal the one this process holds), runs more
turns and keeps compacting. The subprocess runs with ``LANGGRAPH_STRICT_MSGPACK=true``: nothing
may be blocked and no "unregistered type" warning may appear.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import messages_to_dict

from langctx.langgraph import LangctxNode
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import view_state
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    FINAL,
    PG_URI,
    check_calls,
    drive,
    every_compaction,
    first_input,
    middleware_agent,
    node_agent,
    postgres_available,
    require_postgres,
    run_worker,
    session_script,
    session_tools,
)

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 5000
FIRST, TOTAL = 30, 70
Case = tuple[str, str]  # (backend, agent kind)


def _first_process(uri: str, kind: str, thread_id: str, seed: int) -> dict[str, Any]:
    script = session_script(FIRST, seed=seed)
    model = ScriptedChatModel(responses=script.responses)
    tools = session_tools(script.outputs)
    cfg = {"configurable": {"thread_id": thread_id}, "recursion_limit": 5000}
    with open_checkpointer(uri) as saver:
        if kind == "middleware":
            middleware = LangctxMiddleware(max_tokens=BUDGET)
            settings = middleware.settings
            graph = middleware_agent(model, tools, middleware, saver)
        else:
            node = LangctxNode(max_tokens=BUDGET)
            settings = node.settings
            graph = node_agent(model, tools, node, saver)
        first = first_input(with_system=kind == "node")
        out, _ = drive(lambda x: graph.invoke(x, cfg), model, first)
        assert out["messages"][-1].content == FINAL
        state = graph.get_state(cfg).values
        view = view_state(state, settings, thread_id=thread_id)  # this process: counts cached
        assert view.compact_if_due() is None and view.update() is None
        projection = messages_to_dict(view.projection())
        report = check_calls(
            model.calls, settings.counter, BUDGET, skip_system_prompt=kind == "middleware"
        )
    assert report.orphans == report.violations == report.missing_task == 0
    return {"projection": projection, "compactions": len(every_compaction(state))}


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> dict[Case, Any]:
    """Run the first half of every case here, the second half of all of them in one subprocess."""
    cases: list[Case] = [("sqlite", "middleware"), ("sqlite", "node")]
    if postgres_available():
        cases.append(("postgres", "node"))
    jobs, firsts = [], {}
    for n, (backend, kind) in enumerate(cases):
        uri = PG_URI if backend == "postgres" else str(tmp_path_factory.mktemp(kind) / "cp.sqlite")
        thread_id = f"resume-{backend}-{kind}-{uuid.uuid4().hex[:8]}"
        firsts[(backend, kind)] = _first_process(uri, kind, thread_id, seed=20 + n)
        jobs.append(
            {
                "uri": uri,
                "thread_id": thread_id,
                "kind": kind,
                "budget": BUDGET,
                "seed": 20 + n,
                "start": FIRST,
                "turns": TOTAL,
            }
        )
    seconds, stderr = run_worker("tests.integration_tests._resume_worker", jobs)
    return {
        case: (firsts[case], second, stderr) for case, second in zip(cases, seconds, strict=True)
    }


def _check(first: dict[str, Any], second: dict[str, Any], stderr: str) -> None:
    assert first["compactions"] >= 5
    assert second["projection"] == first["projection"]  # exactly the same context after restart
    assert second["pending_update"] is None  # the channel was complete: nothing to rewrite
    assert second["compactions_before"] == first["compactions"]
    assert second["compactions_after"] > second["compactions_before"] + 5  # compaction goes on
    report = second["report"]
    assert report["calls"] == TOTAL - FIRST + 1
    assert report["orphans"] == report["unanswered"] == 0
    assert report["violations"] == 0 and report["max_tokens"] <= BUDGET
    assert report["missing_task"] == 0
    assert second["last"] == FINAL
    lowered = stderr.lower()
    assert "unregistered" not in lowered and "blocked deserialization" not in lowered, stderr
    assert "traceback" not in lowered, stderr


@pytest.mark.slow  # the `resumed` fixture: worker processes, ~10 s
@pytest.mark.parametrize("kind", ["middleware", "node"])
def test_resume_from_sqlite_file_in_a_new_process(resumed: dict[Case, Any], kind: str) -> None:
    _check(*resumed[("sqlite", kind)])


@pytest.mark.slow
@pytest.mark.postgres
def test_resume_from_postgres_in_a_new_process(resumed: dict[Case, Any]) -> None:
    require_postgres()
    _check(*resumed[("postgres", "node")])


@pytest.mark.slow
def test_strict_msgpack_run_has_no_unregistered_types(resumed: dict[Case, Any]) -> None:
    """The worker ran every job with LANGGRAPH_STRICT_MSGPACK=true, reading and writing."""
    for _first, second, stderr in resumed.values():
        assert second["last"] == FINAL
        assert "unregistered" not in stderr.lower()
