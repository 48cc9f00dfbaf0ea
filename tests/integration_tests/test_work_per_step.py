"""Work per model call is bounded by what is new, not by the thread's length.

A ``create_agent`` agent with ``ContextModeMiddleware`` and ``LangctxMiddleware`` (both orders)
runs 200 tool turns with large outputs (Context-mode references some, ``fetch_context`` reads one
back). Around each model call the test counts what langctx did for it: message token counts
asked of the token counter (messages it had never counted) and messages checked by the memory's
validator. Both must stay below a constant plus a multiple of the messages that are new since the
previous call, at call 10 as at call 200; a rebuild of the thread or a full re-validation would
grow with the history.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langctx.context_mode.middleware import ContextModeMiddleware
from langctx.context_mode.references import find_reference_ids
from langctx.engine import log
from langctx.engine.core import MemoryCore
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel, ai_tool_call
from langctx.tokens import ApproximateCounter
from tests.integration_tests._agents import every_compaction

TURNS = 200


class CountingCounter(ApproximateCounter):
    """The estimator, counting the messages it is asked to count."""

    cache_key = "counting-estimator"  # it counts as the estimator: its counts may be shared

    def __init__(self) -> None:
        super().__init__()
        self.messages = 0

    def count_message(self, message: BaseMessage) -> int:
        self.messages += 1
        return super().count_message(message)


@tool
def read_file(path: str) -> str:
    """Read a file."""
    n = int(path.split("_")[1].split(".")[0])
    size = 40 if n % 7 else 900  # every 7th file is large enough for Context-mode to reference
    return "\n".join(f"{path}:{i}: value_{n}_{i} = compute({i}, {n})" for i in range(size))


def script() -> list[Any]:
    steps: list[Any] = []
    for n in range(TURNS):
        steps.append(ai_tool_call("read_file", {"path": f"src/mod_{n}.py"}))
        if n == 21:
            steps.append(_fetch_latest_reference)
    steps.append("Done.")
    return steps


def _fetch_latest_reference(messages: list[BaseMessage]) -> AIMessage:
    for m in reversed(messages):
        if isinstance(m, ToolMessage) and (ids := find_reference_ids(m.text)):
            return ai_tool_call("fetch_context", {"ref_id": ids[0], "grep": "value_21_5 "})
    raise AssertionError("no Context-mode reference reached the model")


class Probe(AgentMiddleware[Any, Any, Any]):
    """Innermost middleware: a snapshot of the counters at each model call."""

    def __init__(self, counter: CountingCounter, checked: list[int]) -> None:
        super().__init__()
        self.counter, self.checked = counter, checked
        self.rows: list[tuple[int, int, int]] = []  # (logged messages, counted, checked)

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        logged = len(full_log(request.state))  # the state's window and its archived batches
        self.rows.append((logged, self.counter.messages, self.checked[0]))
        return handler(request)


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Messages passed to the memory's validator, summed over the run."""
    total = [0]
    original = log.validate_batch

    def counting(mem: MemoryCore, batch: Sequence[BaseMessage]) -> None:
        total[0] += len(batch)
        original(mem, batch)

    monkeypatch.setattr(log, "validate_batch", counting)
    return total


@pytest.mark.parametrize("context_mode_first", [True, False], ids=["cm-outer", "cm-inner"])
def test_work_per_model_call_is_bounded_by_new_messages(
    checked: list[int], context_mode_first: bool
) -> None:
    counter = CountingCounter()
    memory = LangctxMiddleware(max_tokens=4000, token_counter=counter)
    context_mode = ContextModeMiddleware()
    order = [context_mode, memory] if context_mode_first else [memory, context_mode]
    probe = Probe(counter, checked)
    model = ScriptedChatModel(responses=script())
    agent = create_agent(
        model, tools=[read_file], middleware=[*order, probe], checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": f"work-{context_mode_first}"}, "recursion_limit": 2000}
    out = agent.invoke({"messages": [HumanMessage("Read every module and report.")]}, cfg)

    assert out["messages"][-1].text == "Done."
    entries = every_compaction(out)
    assert len(entries) >= 10, "the run must compact many times to mean anything"
    fetched = [m for m in full_log(out) if isinstance(m, ToolMessage) and m.name == "fetch_context"]
    assert fetched and fetched[0].status != "error"
    rows = probe.rows
    assert len(rows) == TURNS + 2
    per_call = []
    for (n0, c0, v0), (n1, c1, v1) in itertools.pairwise(rows):
        new = n1 - n0
        per_call.append((new, c1 - c0, v1 - v0))
    for k, (new, counted, validated) in enumerate(per_call, 2):
        assert validated <= new + 1, f"call {k}: {validated} messages checked, {new} new"
        assert counted <= 3 * new + 12, f"call {k}: {counted} messages counted, {new} new"
    late = [c for _, c, _ in per_call[-50:]]
    early = [c for _, c, _ in per_call[10:60]]
    assert sum(late) <= 1.5 * sum(early) + 50, (sum(early), sum(late))
