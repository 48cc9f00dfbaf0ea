"""The summary block gives up room the newest turn cannot (a budget honoured at any size).

At the smallest accepted budget (919 tokens) the head budget is 644 and the requests section
takes up to three shares of it. A newest turn of four or more tool calls, each cut to its marker,
can still be larger than the reserve; the block must then shrink (its requests, reports and files
first), as a function of the state alone so a restored memory sends the same request. The
property suite found the case (984 tokens at a 919 budget); these make it deterministic.
"""

from __future__ import annotations

import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langctx import LayeredChatMemory
from langctx.budgets import smallest_budget
from langctx.config import MemoryConfig
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel, ai_tool_call
from langctx.tokens import resolve_token_counter

_SMALLEST = smallest_budget(MemoryConfig())
assert _SMALLEST is not None
BUDGET: int = _SMALLEST
WORDS = "the parser flattens nested lists when the bracket depth changes so keep a stack".split()


def _words(n: int, seed: int) -> str:
    return " ".join(WORDS[(seed * 7 + i) % len(WORDS)] for i in range(n))


def _fan_out(calls: int, seed: int) -> AIMessage:
    """An AI turn asking for ``calls`` tool calls at once, each with a long argument."""
    return AIMessage(
        content=_words(60, seed),
        tool_calls=[
            {
                "id": f"c{seed}-{k}",
                "name": "grep",
                "args": {"query": _words(40, k)},
                "type": "tool_call",
            }
            for k in range(calls)
        ],
    )


def _session(calls: int) -> list[list[BaseMessage]]:
    """Chunks as an agent adds them: requests answered after tool turns, then a fan-out whose
    results arrive one by one."""
    chunks: list[list[BaseMessage]] = [[HumanMessage("Task: " + _words(90, 0), id="task")]]
    for r in range(6):
        chunks.append([HumanMessage(f"Request {r}: " + _words(70, r))])
        for t in range(3):
            cid = f"r{r}t{t}"
            chunks.append([ai_tool_call("read_file", {"path": f"src/m{r}{t}.py"}, call_id=cid)])
            chunks.append([ToolMessage(_words(300, t), tool_call_id=cid)])
        chunks.append([AIMessage(f"Done with request {r}.")])
    fan = _fan_out(calls, 99)
    chunks.append([fan])
    chunks += [
        [ToolMessage(_words(400, k), tool_call_id=c["id"])] for k, c in enumerate(fan.tool_calls)
    ]
    return chunks


@pytest.mark.parametrize("calls", [4, 6])
def test_a_fan_out_at_the_smallest_budget_stays_in_it_and_restores_the_same(calls: int) -> None:
    mem = LayeredChatMemory(max_tokens=BUDGET)
    yielded = False
    for chunk in _session(calls):
        mem.add_messages(chunk)
        sent = mem.build_context()
        assert mem.context_tokens() == mem.counter.count_messages(sent)
        assert mem.context_tokens() <= BUDGET
        yielded |= mem._full_tokens() > BUDGET  # the rendered block would not have fitted
        again = LayeredChatMemory.from_state(
            json.loads(json.dumps(mem.to_state())), max_tokens=BUDGET
        )
        assert again.build_context() == sent
    assert yielded, "the session must reach a newest turn the block gives room to"
    # the prefix changed without a fold or an edit: the eviction log says so
    assert any(r["action"] == "shrink_block" for r in mem.eviction_log)
    assert "Request 5:" in sent[1].text  # shrunk, the latest request still named


def test_a_turn_that_leaves_no_room_for_the_smallest_block_goes_without_it_once() -> None:
    """Eight calls cut to their markers leave less than the block's smallest form: that request
    goes without the block (the budget holds); once the turn is answered a fold brings it back."""
    mem = LayeredChatMemory(max_tokens=BUDGET)
    for chunk in _session(8):
        mem.add_messages(chunk)
        assert mem.context_tokens() <= BUDGET
    assert not any("<langctx:requests>" in m.text for m in mem.build_context())
    mem.add_messages([AIMessage("All eight searches ran."), HumanMessage("Request 6: go on")])
    assert mem.context_tokens() <= BUDGET
    assert any("Request 5:" in m.text for m in mem.build_context())


def test_a_turn_larger_than_the_budget_alone_is_sent_with_the_pinned_messages_only() -> None:
    """Twelve calls, each cut to its marker, take more than the pinned messages leave: the one
    documented overshoot; the request holds the pinned task and that turn, nothing else."""
    mem = LayeredChatMemory(max_tokens=BUDGET)
    for chunk in _session(12):
        mem.add_messages(chunk)
    sent = mem.build_context()
    assert [m.id for m in sent] == ["task", *(m.id for m in mem.messages[-13:])]
    assert mem.context_tokens() > BUDGET


def test_the_model_sees_no_request_over_the_budget_through_create_agent() -> None:
    """The same fan-out through ``create_agent`` + the middleware at its defaults."""
    fan = _fan_out(4, 7)
    responses: list[AIMessage | str] = []
    for r in range(5):
        responses += [ai_tool_call("read_file", {"path": f"src/m{r}.py"}, call_id=f"r{r}")]
        responses.append(f"Done with request {r}.")
    responses += [fan, "All four searches ran."]

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return _words(300, len(path))

    @tool
    def grep(query: str) -> str:
        """Search the sources."""
        return _words(400, len(query))

    model = ScriptedChatModel(responses=responses)
    agent = create_agent(
        model,
        tools=[read_file, grep],
        middleware=[LangctxMiddleware(max_tokens=BUDGET)],
        checkpointer=InMemorySaver(),
    )
    cfg: RunnableConfig = {"configurable": {"thread_id": "fan-out"}}
    for r in range(6):
        said = f"Request {r}: " + _words(70, r)
        for _ in agent.stream({"messages": [("user", said)]}, cfg, stream_mode="updates"):
            pass  # LangChain's documented loop
    count = resolve_token_counter("approximate").count_messages
    sizes = [count(call) for call in model.calls]
    assert max(sizes) <= BUDGET, sizes
    assert BUDGET - 40 < sizes[-1] <= BUDGET  # the block gave up what the newest turn needs
    assert any("Request 5:" in m.text for m in model.calls[-1])  # the latest request, folded
