"""A background summary of messages a user edits or removes with ``update_state`` is never applied.

``create_agent`` + ``LangctxMiddleware`` (background summaries on) runs until a fold leaves a
model summary pending; the test then edits (same id) or removes (``RemoveMessage``) one of the
messages it covers, lets the summarizer answer and goes on: the entry keeps its local summary
(no upgrade names it) and the next model summary reads the edited history.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx.engine import background
from langctx.middleware import LangctxMiddleware
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    config,
    first_input,
    middleware_agent,
    session_script,
    session_tools,
)

EDITED = "edited by the user: the parser lives in src/calc/grammar.py now"


@pytest.mark.parametrize("change", ["edited", "removed"])
def test_a_pending_summary_of_changed_messages_is_never_applied(change: str) -> None:
    background.clear()
    release = threading.Event()
    asked: list[SummaryRequest] = []

    def summarize(request: SummaryRequest) -> str:
        asked.append(request)
        assert release.wait(30)
        return f"Goal:\n- fix the parser\nCurrent status:\n- model summary {len(asked)}"

    script = session_script(60, seed=4, final=False)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(  # the whole log in messages: update_state can edit any
        max_tokens=3000, summarizer=summarize, summary_threshold_tokens=0, archive=None
    )
    graph = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg = config()
    pending: dict[str, Any] | None = None
    for chunk in graph.stream(first_input(with_system=False), cfg, stream_mode="values"):
        entries = (chunk.get("langctx") or {}).get("compactions") or []
        if entries and entries[-1].get("upgrade_input"):
            pending = entries[-1]
            break
    assert pending is not None, "no model summary was left pending"
    state = graph.get_state(cfg)
    target = pending["covered_ids"][len(pending["covered_ids"]) // 2]
    old = next(m for m in state.values["messages"] if m.id == target)
    update = (
        old.model_copy(update={"content": EDITED}) if change == "edited" else RemoveMessage(target)
    )
    graph.update_state(cfg, {"messages": [update]})
    release.set()
    graph.invoke({"messages": [HumanMessage("Go on.", id="go-on")]}, cfg)
    for n in range(1, 20):  # on to the next model summary
        if len(asked) > 1 or model._index >= len(model.responses):
            break
        graph.invoke({"messages": [HumanMessage(f"Go on ({n}).", id=f"go-on-{n}")]}, cfg)
    entries = graph.get_state(cfg).values["langctx"]["compactions"]
    upgrades = [
        e for e in entries if e["trigger"] == "merge" and e["merged_from"] == [pending["id"]]
    ]
    assert upgrades == [], "a summary of the old messages was applied"
    if change == "edited":  # the next model summary read the edited message, not the old one
        later = [m for r in asked[1:] for m in r.messages if m.id == target]
        assert later and all(m.content == EDITED for m in later)
