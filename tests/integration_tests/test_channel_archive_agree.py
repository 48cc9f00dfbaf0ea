"""A ``langctx`` channel that no longer describes the thread's archive is repaired from the archive.

``create_agent`` + ``LangctxMiddleware`` at its defaults (the in-state archive) for a dozen turns;
then the channel is emptied, replaced by an older checkpoint's (truncated) or by another thread's
(``graph.update_state(cfg, {"langctx": Overwrite(...)})``). ``full_log`` still returns every
message, the memory projects what it projected before, and the next turn's model input still
carries the summaries of the archived batches (docs/persistence.md, "When the channel and the
archive disagree").
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Overwrite

from langctx.archive_repair import agrees, state_batches
from langctx.channel import ARCHIVE_KEY, archive_record
from langctx.errors import LangctxError
from langctx.markers import SUMMARY_CLOSE
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import view_state
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    config,
    drive,
    first_input,
    middleware_agent,
    session_script,
)
from tests.integration_tests._archive_agents import tools

TURNS = 60


def _thread(thread_id: str) -> tuple[Any, LangctxMiddleware, dict[str, Any], ScriptedChatModel]:
    script = session_script(TURNS, seed=3)
    model = ScriptedChatModel(responses=script.responses)
    mw = LangctxMiddleware()
    agent = middleware_agent(model, tools(script.outputs), mw, InMemorySaver())
    cfg = config(thread_id)
    drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))
    return agent, mw, cfg, model


def _ids(messages: list[Any]) -> list[str]:
    return [str(m.id) for m in messages]


@pytest.fixture(scope="module")
def threads() -> tuple[Any, Any]:
    return _thread("archive-a"), _thread("archive-b")


@pytest.mark.parametrize("edit", ["emptied", "truncated", "another thread's"])
def test_a_hand_edited_channel_is_repaired_from_the_archive(
    threads: tuple[Any, Any], edit: str
) -> None:
    (agent, mw, cfg, model), (other, _, other_cfg, _) = threads
    state = agent.get_state(cfg).values
    assert len(state[ARCHIVE_KEY]) >= 3, "the session must archive several batches"
    before_log = _ids(full_log(state))
    before = view_state(state, mw.settings, thread_id="archive-a")
    before_view, before_summaries = _ids(before.projection()), before.memory.summaries
    history = [s.values for s in agent.get_state_history(cfg) if s.values.get("langctx")]
    older = next(v["langctx"] for v in history if len(v[ARCHIVE_KEY]) < len(state[ARCHIVE_KEY]))
    channel = {
        "emptied": {},
        "truncated": older,
        "another thread's": other.get_state(other_cfg).values["langctx"],
    }[edit]
    forked = agent.update_state(cfg, {"langctx": Overwrite(channel)})
    edited = agent.get_state(forked).values
    assert _ids(full_log(edited)) == before_log  # never less than was stored
    after = view_state(edited, mw.settings, thread_id="archive-a")
    # the same messages and summaries; edits of live messages, which only the channel held, are
    # made again by the memory's next step: until then those messages are whole, and the summary
    # block shrinks or stays out to keep the budget (it is back in the next request, below)
    assert before_summaries == after.memory.summaries
    assert [i for i in _ids(after.projection()) if i not in before_view] == []
    assert [i for i in before_view if i not in _ids(after.projection())] in ([], [before_view[1]])
    calls = len(model.calls)
    model.responses.append("Noted.")  # the answer to the turn after the hand edit
    out = agent.invoke({"messages": [HumanMessage("Thanks.", id=f"thanks-{edit}")]}, forked)
    sent = model.calls[calls]
    assert any(SUMMARY_CLOSE in m.text for m in sent), "the model gets the archived summaries"
    assert _ids(full_log(out))[: len(before_log)] == before_log
    newest = max(state_batches(out[ARCHIVE_KEY]), key=lambda b: b["seq"])
    assert agrees(archive_record(out["langctx"]), newest)  # the repair was written back
    assert _ids(full_log(out))[-2:] == [f"thanks-{edit}", str(out["messages"][-1].id)]


def test_an_archive_that_lost_a_batch_is_refused_in_one_line(threads: tuple[Any, Any]) -> None:
    (agent, _, cfg, _), _ = threads
    state = agent.get_state(cfg).values
    held = state[ARCHIVE_KEY]
    broken = {**state, ARCHIVE_KEY: [held[0], *held[2:]], "langctx": {}}  # batch 1 is gone
    with pytest.raises(LangctxError) as info:
        full_log(broken)
    assert "\n" not in str(info.value)
