"""200-turn scripted coding sessions through real agents: create_agent + middleware, StateGraph + node.

Every model input is checked: no orphan tool result, no unanswered call, within the budget by the
memory's own counter, and the task is there.
"""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from langctx.langgraph import LangctxNode
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log, read_batches, thread_entries
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    FINAL,
    check_calls,
    cold_settings,
    config,
    drive,
    every_compaction,
    first_input,
    middleware_agent,
    node_agent,
    session_script,
    session_tools,
    thread_view,
)

TURNS = 200
BUDGET = 6000


def _assert_clean(report: Any, calls: int) -> None:
    assert report.calls == calls
    assert report.orphans == 0
    assert report.unanswered == 0
    assert report.violations == 0, f"max {report.max_tokens} > {BUDGET}"
    assert report.missing_task == 0


def test_create_agent_with_middleware_runs_200_turns() -> None:
    script = session_script(TURNS)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(max_tokens=BUDGET)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg = config()
    out, _ = drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))

    assert out["messages"][-1].content == FINAL
    report = check_calls(model.calls, middleware.settings.counter, BUDGET, skip_system_prompt=True)
    _assert_clean(report, TURNS + 1)
    channel = out["langctx"]
    assert len(every_compaction(out)) >= 20
    # the system prompt travels apart; the pinned layer still leads with the task, then summaries
    compacted = [c for c in model.calls if any(str(m.id).startswith("langctx-summary-") for m in c)]
    assert len(compacted) > TURNS // 2
    for call in compacted:
        assert [m.type for m in call[:3]] == ["system", "human", "human"]
        assert call[1].id == "task" and str(call[2].id).startswith("langctx-summary-")
        assert sum(m.type == "system" for m in call) == 1
    # the channel holds every entry the run made: the final state alone projects what the last
    # call saw, plus the answer, and nothing is due or missing
    view = thread_view(agent, cfg, middleware.settings)
    assert [e["id"] for e in channel["compactions"]] == [e["id"] for e in view.memory.compactions]
    assert view.compact_if_due() is None and view.update() is None
    assert [m.id for m in view.projection()] == [m.id for m in model.calls[-1][1:]] + [
        out["messages"][-1].id
    ]
    _, edits, _ = thread_entries(read_batches(None, None, out), channel)
    logged = {m.id for m in full_log(out)}
    assert edits and all(e["message_id"] in logged for e in edits)
    # the state keeps the window; the whole log is the archived batches and the window
    assert len(full_log(out)) > 400 > len(out["messages"])


async def test_state_graph_with_memory_node_runs_200_turns_async() -> None:
    script = session_script(TURNS, seed=1)
    model = ScriptedChatModel(responses=script.responses)
    node = LangctxNode(max_tokens=BUDGET)
    graph = node_agent(model, session_tools(script.outputs), node, InMemorySaver())
    cfg = config()
    state: dict[str, Any] = {}

    async def run(x: dict[str, Any]) -> dict[str, Any]:
        return await graph.ainvoke(x, cfg)

    # drive() is sync; step it by hand for the async graph
    state = await run(first_input(with_system=True))
    turns = 1
    while model._index < len(model.responses):
        state = await run({"messages": [("user", f"Go on ({turns}).")]})
        turns += 1

    assert state["messages"][-1].content == FINAL
    report = check_calls(model.calls, node.settings.counter, BUDGET, skip_system_prompt=False)
    _assert_clean(report, TURNS + 1)
    assert len(every_compaction(state)) >= 20
    assert "llm_input_messages" not in state  # ephemeral: not kept after the model step


def test_state_graph_projects_like_a_fresh_process() -> None:
    script = session_script(60, seed=2)
    model = ScriptedChatModel(responses=script.responses)
    node = LangctxNode(max_tokens=BUDGET)
    graph = node_agent(model, session_tools(script.outputs), node, InMemorySaver())
    cfg = config()
    out, _ = drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=True))

    assert len(every_compaction(out)) >= 3
    warm = thread_view(graph, cfg, node.settings)  # this process's counts and blocks cached
    cold = thread_view(graph, cfg, cold_settings(max_tokens=BUDGET))  # nothing cached
    pa, pb = warm.projection(), cold.projection()
    assert [m.id for m in pa] == [m.id for m in pb]
    assert [m.content for m in pa] == [m.content for m in pb]
    assert warm.context_tokens() == cold.context_tokens()
    assert warm.update() is None and cold.update() is None
    # and it is what the last model call saw, plus the final answer
    assert [m.id for m in pa] == [m.id for m in model.calls[-1]] + [out["messages"][-1].id]
