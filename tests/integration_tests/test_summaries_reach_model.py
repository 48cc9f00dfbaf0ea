"""Every summary a configured summarizer returns reaches a later model request.

``create_agent`` + ``LangctxMiddleware(summarizer=...)`` at its defaults (background summaries,
archive mode) runs 40 tool turns; each summary the summarizer wrote (but the last two, which no
later fold takes) must appear in a later request of the main model, and the summarizer is called
at most once per fold.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langctx.engine import background
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel, ai_tool_call

TURNS = 40


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    n = path.rsplit("_", 1)[-1].removesuffix(".py")
    return "\n".join(f"def f_{n}_{i}(x):  return x * {i} + {n}  # line {i}" for i in range(90))


def _summarizer() -> tuple[ScriptedChatModel, list[str]]:
    """A summarizer whose every answer is a distinct, recognisable summary (recorded)."""
    written: list[str] = []

    def answer(_: list[BaseMessage]) -> str:
        text = f"SUMMARY-{len(written) + 1:03d}: the agent read modules, all clean."
        written.append(text)
        return text

    return ScriptedChatModel(responses=[answer], cycle=True), written


def _agent(
    budget: int, archive: str, turns: int = TURNS
) -> tuple[Any, ScriptedChatModel, list[str]]:
    summarizer, written = _summarizer()
    script: list[Any] = [
        ai_tool_call("read_file", {"path": f"src/mod_{i}.py"}) for i in range(turns)
    ]
    model = ScriptedChatModel(responses=[*script, "Read them all."])
    store = InMemoryStore() if archive == "store" else None
    options: dict[str, Any] = {} if store is None else {"archive": store}
    middleware = LangctxMiddleware(max_tokens=budget, summarizer=summarizer, **options)
    graph = create_agent(
        model,
        tools=[read_file],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
        store=store,
    )
    return graph, model, written


def _run(graph: Any, mode: str) -> dict[str, Any]:
    cfg = {"configurable": {"thread_id": "t-summaries"}, "recursion_limit": 500}
    first = {"messages": [HumanMessage("Read every module and report.", id="task")]}
    if mode == "async":
        asyncio.run(graph.ainvoke(first, cfg))
    else:
        graph.invoke(first, cfg)
    return cfg


@pytest.mark.parametrize("archive", ["state", "store"])
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("budget", [3000, 8000])
def test_every_summary_reaches_a_later_model_request(budget: int, mode: str, archive: str) -> None:
    background.clear()
    graph, model, written = _agent(budget, archive)
    cfg = _run(graph, mode)
    assert background.wait_idle(30)
    requests = ["\n".join(m.text for m in call) for call in model.calls]
    seen = [n for n, text in enumerate(written) if any(text in r for r in requests)]
    unseen = [text for n, text in enumerate(written) if n not in seen]
    assert written, "the summarizer was never called"
    assert len(unseen) <= 2, f"{len(unseen)} of {len(written)} summaries never reached the model"
    assert all(text in written[-2:] for text in unseen), "an early summary never reached the model"
    # calls <= folds: each fold's entry (its cut) is in the archive's copy or the channel
    state = graph.get_state(cfg).values
    folds = _folds(graph, cfg)
    assert len(written) <= len(folds), f"{len(written)} summarizer calls for {len(folds)} folds"
    assert folds[0].get("upgrade_input"), "the first fold asked no model summary"
    # nothing lost: the whole conversation is still there
    store = graph.store if archive == "store" else None
    log = full_log(store, "t-summaries", state) if store is not None else full_log(state)
    assert sum(1 for m in log if m.type == "tool") == TURNS


@pytest.mark.parametrize("budget", [3000, 8000])
def test_a_summarizer_summarizes_from_the_first_fold(budget: int) -> None:
    background.clear()
    graph, _, written = _agent(budget, "state", turns=10 if budget == 3000 else 20)
    cfg = _run(graph, "sync")
    folds = _folds(graph, cfg)
    assert folds and written, "no fold, or the summarizer was never called"
    assert all(f.get("upgrade_input") for f in folds)  # each fold asked for one model summary
    assert len(written) <= len(folds)


def _folds(graph: Any, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """Every fold's entry the thread ever wrote, oldest first (the channel drops archived ones)."""
    seen: dict[str, dict[str, Any]] = {}
    for snapshot in reversed(list(graph.get_state_history(cfg))):
        for e in (snapshot.values.get("langctx") or {}).get("compactions") or []:
            if e["trigger"] in ("proactive", "threshold"):
                seen.setdefault(e["id"], e)
    return list(seen.values())
