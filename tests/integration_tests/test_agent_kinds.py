"""Summaries carry any agent's work, not only a coding agent's files and commands.

A research, a data and an operations agent run through ``create_agent`` + ``LangctxMiddleware``
(local summarizer, defaults). Every request the main model receives after a fold must still hold
the agent's earlier conclusions and each folded tool call's name with its key argument, and no
summary without content.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agent_kinds import AGENT_KINDS, AgentKind, Call

_SUMMARY = re.compile(r"<langctx:summary[^>]*>(.*?)</langctx:summary>", re.S)
KEY_HEAD = 20
"""Characters of a call's key argument the projection must name (a long query: its start)."""
CONCLUSION_HEAD = 40
"""Characters of a conclusion the projection must hold (a summary trims the rest)."""


def run(
    kind: AgentKind, *, rounds: int = 1, **options: Any
) -> tuple[ScriptedChatModel, list[AIMessage]]:
    """Play ``kind``'s turns (``rounds`` times) in one thread; the model and its responses."""
    turns = [t for _ in range(rounds) for t in kind.turns]
    responses = [r for _ in range(rounds) for r in kind.responses()]
    for k, r in enumerate(responses):  # every round's calls get their own ids (the tools know)
        for tc in r.tool_calls:
            tc["id"] = f"{tc['id']}-{k}"
    model = ScriptedChatModel(responses=responses)
    agent = create_agent(
        model,
        tools=kind.tools,
        system_prompt=kind.system_prompt,
        middleware=[LangctxMiddleware(**options)],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:8]}"}}
    for turn in turns:
        agent.invoke({"messages": [HumanMessage(turn.user)]}, cfg)
    assert model._index == len(responses)  # the script was played to its end
    return model, responses


def request_text(request: Sequence[BaseMessage]) -> str:
    """What a request shows the model: every message's text and tool calls."""
    return "\n".join(m.text + json.dumps(getattr(m, "tool_calls", [])) for m in request)


def key_head(call: Call) -> str:
    value = call.args[call.key]
    return json.dumps(value)[1 : KEY_HEAD + 1] if isinstance(value, str) else str(value)


def check_requests(kind: AgentKind, model: ScriptedChatModel, responses: list[AIMessage]) -> int:
    """Check every request after a fold; the number of such requests."""
    by_id = {c.call_id: c for c in kind.calls}
    folded = 0
    for k, request in enumerate(model.calls):
        text = request_text(request)
        blocks = _SUMMARY.findall(text)
        if not blocks:
            continue
        folded += 1
        assert all(b.strip() for b in blocks), "a summary without content"
        assert "(none)" not in text and "verbatim in the context" not in text
        missing: list[str] = []
        for said in responses[:k]:  # what the agent did before this request
            for tc in said.tool_calls:
                call = by_id[tc["id"].rsplit("-", 1)[0]]
                if call.name not in text or key_head(call) not in text:
                    missing.append(f"{call.name}({key_head(call)})")
            if not said.tool_calls and said.text[:CONCLUSION_HEAD] not in text:
                missing.append(said.text[:CONCLUSION_HEAD])
        assert not missing, f"request {k} lost {missing}:\n{text}"
    return folded


@pytest.mark.parametrize("budget", [3000, 8000])
@pytest.mark.parametrize("name", sorted(AGENT_KINDS))
def test_folds_keep_conclusions_and_tool_calls(name: str, budget: int) -> None:
    kind = AGENT_KINDS[name]()
    model, responses = run(kind, max_tokens=budget)
    assert check_requests(kind, model, responses) > 0  # the session did fold


@pytest.mark.parametrize("name", sorted(AGENT_KINDS))
def test_local_summary_states_what_was_done(name: str) -> None:
    """A fold's summary names the calls with their results (an error as the error) and the
    agent's words; its next step quotes an open request, never the agent's narration."""
    kind = AGENT_KINDS[name]()
    model, _ = run(kind, max_tokens=8000)
    summaries = [b for call in model.calls for b in _SUMMARY.findall(request_text(call))]
    assert summaries
    text = "\n".join(summaries)
    assert "Tool calls:" in text and " -> " in text  # with what they returned
    assert "Conclusions:" in text
    assert "Goal:" not in text and "earlier messages compacted" not in text
    for step in re.findall(r"Next step:\n- (.*)", text):
        assert step.startswith('Act on the latest request: "') or "next" in step.lower()


def test_a_failed_call_shows_its_error() -> None:
    kind = AGENT_KINDS["data"]()
    model, _ = run(kind, max_tokens=8000)
    summaries = "\n".join(b for call in model.calls for b in _SUMMARY.findall(request_text(call)))
    assert 'run_sql(query="SELECT region, SUM(revenue) FROM' in summaries
    assert 'error: ERROR: column "revenue" does not' in summaries


@pytest.mark.parametrize("name", sorted(AGENT_KINDS))
def test_merged_summaries_keep_the_work_bounded(name: str) -> None:
    """Three rounds of a session at 3000 tokens merge summaries of summaries: the newest work
    stays named and no summary grows past its cap."""
    kind = AGENT_KINDS[name]()
    model, responses = run(kind, rounds=3, max_tokens=3000)
    last = request_text(model.calls[-1])
    assert 'level="2"' in last or 'level="3"' in last  # merged
    for block in _SUMMARY.findall(last):
        assert block.strip()
        assert len(block) // 4 <= 160  # the cap at 3000 tokens (147) with the estimator's slack
    names = {c.name for c in kind.calls}
    assert all(f"{n}(" in last for n in names)
    assert any(r.text[:CONCLUSION_HEAD] in last for r in responses[:-1] if not r.tool_calls)


def test_a_fold_with_nothing_to_say_shows_no_summary() -> None:
    """A chat whose agent only says "OK." folds into no summary (the user's words stay quoted)."""
    model = ScriptedChatModel(responses=["OK."] * 12)
    agent = create_agent(model, tools=[], middleware=[LangctxMiddleware(max_tokens=3000)])
    messages: list[BaseMessage] = []
    for i in range(12):
        note = f"Note {i}: the quarterly numbers for region {i} arrive on day {i}. " * 25
        messages = agent.invoke({"messages": [*messages, HumanMessage(note)]})["messages"]
    texts = [request_text(call) for call in model.calls]
    assert any("[langctx]" in t for t in texts)  # it did fold
    for text in texts:
        assert "Goal:" not in text and "(none)" not in text
        assert all(b.strip() for b in _SUMMARY.findall(text))
        assert "Note 0:" in text  # the user's words, quoted or verbatim
