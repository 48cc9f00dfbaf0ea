"""Background summaries slower than the agent, through ``create_agent`` + ``LangctxMiddleware`` at
its defaults, with two workers taking turns on one thread.

The summarizer is a chat model whose every call blocks until the agent's model has been called
once more after it: at the next fold it is still running, so the fold goes on (within
``summary_wait``) with the local summary and a later fold applies it. The two workers share the
checkpointer and nothing else: each has its own table of background jobs (as two processes do),
so a worker that finds a summary pending that it never started starts its own. Whatever was ready
at which fold, every request of the agent's model must be what a fresh process projects from the
state the request was made from (the projection is a function of the state), and the model
summaries must reach the model.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx.cli.demo.session import SYSTEM_PROMPT
from langctx.engine import background
from langctx.lru import LRU
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import view_state
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    cold_settings,
    config,
    every_compaction,
    first_input,
    session_script,
    session_tools,
)


class LateSummaries:
    """A summarizer's answers, each held until :meth:`release_older` lets the older ones go."""

    def __init__(self) -> None:
        self.gates: list[threading.Event] = []
        self.lock = threading.Lock()

    def answer(self, _: list[BaseMessage]) -> str:
        with self.lock:
            n = len(self.gates)
            self.gates.append(gate := threading.Event())
        assert gate.wait(30), "never released"
        return f"Goal:\n- fix the parser\nCurrent status:\n- LATE-SUMMARY-{n:03d} written"

    def release_older(self) -> None:
        """Let every call but the newest answer."""
        with self.lock:
            for gate in self.gates[:-1]:
                gate.set()

    def release_all(self) -> None:
        with self.lock:
            for gate in self.gates:
                gate.set()


@pytest.fixture
def late() -> Iterator[LateSummaries]:
    background.clear()
    late = LateSummaries()
    yield late
    late.release_all()
    assert background.wait_idle(30)
    background.clear()


def _requests_and_projections(
    graph: Any, cfg: dict[str, Any], calls: list[list[BaseMessage]]
) -> tuple[list[list[Any]], list[list[Any]]]:
    """Each model request (system prompt aside), and what a fresh process projects from the
    state it was made from: the state after the model step, less the answer."""
    tid = cfg["configurable"]["thread_id"]
    history = [s.values for s in reversed(list(graph.get_state_history(cfg)))]
    answered: dict[str, dict[str, Any]] = {}
    for values in history:
        messages = values.get("messages") or []
        if messages and isinstance(messages[-1], AIMessage):
            answered.setdefault(str(messages[-1].id), values)
    projections = []
    for values in answered.values():
        state = {**values, "messages": values["messages"][:-1]}
        view = view_state(state, cold_settings(), thread_id=tid)
        projections.append([(m.type, m.id, m.content) for m in view.projection()])
    requests = [[(m.type, m.id, m.content) for m in call[1:]] for call in calls]
    return requests, projections


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_two_workers_send_what_a_fresh_process_projects_while_summaries_run_late(
    mode: str, late: LateSummaries, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = session_script(50, seed=3)
    steps = iter(script.responses)

    def respond(_: list[BaseMessage]) -> Any:
        late.release_older()
        return next(steps)

    model = ScriptedChatModel(responses=[respond], cycle=True)
    summarizer = ScriptedChatModel(responses=[late.answer], cycle=True)
    saver = InMemorySaver()
    workers = [
        create_agent(
            model,
            tools=session_tools(script.outputs),
            system_prompt=SYSTEM_PROMPT,
            middleware=[LangctxMiddleware(summarizer=summarizer)],  # the defaults
            checkpointer=saver,
        )
        for _ in range(2)
    ]
    jobs: list[LRU[str, Any]] = [LRU(maxsize=64), LRU(maxsize=64)]  # one table per worker
    cfg = config()

    def turn(k: int, inp: dict[str, Any]) -> None:
        monkeypatch.setattr(background, "_jobs", jobs[k % 2])
        if mode == "sync":
            workers[k % 2].invoke(inp, cfg)
        else:
            asyncio.run(workers[k % 2].ainvoke(inp, cfg))

    turn(0, first_input(with_system=False))
    k = 1
    while len(model.calls) < len(script.responses):
        turn(k, {"messages": [HumanMessage(f"Go on ({k}).", id=f"user-{k}")]})
        k += 1

    requests, projections = _requests_and_projections(workers[0], cfg, model.calls)
    assert len(requests) == len(projections) == len(script.responses)
    differ = [n for n, (a, b) in enumerate(zip(requests, projections, strict=True)) if a != b]
    assert not differ, f"requests {differ[:5]} differ from a fresh process's projection"
    # summaries ran late, and still reached the model, applied in place of the local ones
    state = workers[0].get_state(cfg).values
    entries = every_compaction(state)
    upgrades = [e for e in entries if e["trigger"] == "merge" and e["level"] == 1]
    assert len([e for e in entries if e["trigger"] != "merge"]) >= 5
    assert upgrades, "no model summary was applied"
    seen = "\n".join(str(m[2]) for call in requests for m in call)
    assert "LATE-SUMMARY-" in seen
    # a fold found an older summary still running and went on; a later fold applied it
    order = {e["id"]: n for n, e in enumerate(entries)}
    folds = [order[e["id"]] for e in entries if e["trigger"] != "merge"]
    late_ones = [
        u for u in upgrades if any(order[u["merged_from"][0]] < f < order[u["id"]] for f in folds)
    ]
    assert late_ones, "every summary was ready at the next fold: nothing ran late"
    assert k > 2 and all(len(table) for table in jobs)  # both workers ran background jobs
