"""A background summary that cannot be used is dropped once, said once, and loses nothing.

``create_agent`` + ``LangctxMiddleware`` (defaults: background summaries, archive mode): the
summarizer's first answer is empty, 200 KB, an error after a hang, or the thread is forked with a
folded message edited; the fold keeps its local summary, one ``"dropped"`` event and one warning
say why, later summaries still reach the model and ``full_log`` still has every message.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langctx import CompactionEvent
from langctx.engine import background
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.summarize import calls as summarizer_calls
from langctx.testing import ScriptedChatModel, ai_tool_call

TURNS = 16
HUGE = ("Current status:\n- the agent read src/calc/mod.py and found it clean. " * 3000)[:200_000]
THREAD = "t-bad"


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    n = path.rsplit("_", 1)[-1].removesuffix(".py")
    return "\n".join(f"def f_{n}_{i}(x):  return x * {i} + {n}  # line {i}" for i in range(90))


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    background.clear()
    monkeypatch.setattr(summarizer_calls, "_warned", set())  # each test sees its first warning
    hang = threading.Event()
    yield hang
    hang.set()  # a hung summarizer returns
    background.clear()


class Agent:
    """A main model reading modules until ``turns`` tool calls, a summarizer bad at its first call."""

    def __init__(self, first: Any, *, archive: Any = "state", timeout: float = 5.0) -> None:
        self.written: list[str] = []
        self.events: list[CompactionEvent] = []
        self.turns = TURNS
        self.calls = 0
        summarizer = ScriptedChatModel(responses=[self._answer(first)], cycle=True)
        self.model = ScriptedChatModel(responses=[self._next], cycle=True)
        middleware = LangctxMiddleware(
            max_tokens=3000,
            summarizer=summarizer,
            archive=archive,
            summary_timeout=timeout,
            on_compaction=self.events.append,
        )
        self.graph = create_agent(
            self.model, tools=[read_file], middleware=[middleware], checkpointer=InMemorySaver()
        )

    def _next(self, messages: list[BaseMessage]) -> Any:
        self.calls += 1
        if self.calls > self.turns:
            return "Read them all."
        return ai_tool_call("read_file", {"path": f"src/mod_{self.calls}.py"})

    def _answer(self, first: Any) -> Any:
        def answer(messages: list[BaseMessage]) -> str:
            if not self.written:
                self.written.append("<bad>")
                return first() if callable(first) else first
            text = f"Goal:\n- read the modules\nCurrent status:\n- SUMMARY-{len(self.written):03d}"
            self.written.append(text)
            return text

        return answer

    def run(self, cfg: dict[str, Any] | None = None) -> dict[str, Any]:
        cfg = cfg or {"configurable": {"thread_id": THREAD}, "recursion_limit": 500}
        self.graph.invoke({"messages": [HumanMessage("Read every module.", id="task")]}, cfg)
        return cfg

    def dropped(self) -> list[CompactionEvent]:
        return [e for e in self.events if e.phase == "dropped"]

    def seen(self) -> list[str]:
        requests = ["\n".join(m.text for m in call) for call in self.model.calls]
        return [t for t in self.written[1:] if any(t in r for r in requests)]


def _warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "langctx" and r.levelno >= logging.WARNING and "summar" in r.getMessage()
    ]


def _hangs_then_raises(hang: threading.Event) -> Any:
    def call() -> str:
        hang.wait(3)
        raise RuntimeError("provider down after 3 s")

    return call


@pytest.mark.parametrize("bad", ["empty", "huge", "hangs"])
def test_a_bad_summary_falls_back_once_and_says_why_once(
    bad: str, caplog: pytest.LogCaptureFixture, _fresh: threading.Event
) -> None:
    first = {"empty": "   ", "huge": HUGE, "hangs": _hangs_then_raises(_fresh)}[bad]
    agent = Agent(first, timeout=0.5 if bad == "hangs" else 5.0)
    with caplog.at_level(logging.WARNING, logger="langctx"):
        cfg = agent.run()
    (dropped,) = agent.dropped()
    why = {"empty": "no text", "huge": "times its cap", "hangs": "timed out"}[bad]
    assert why in dropped.detail
    assert dropped.entry is not None and dropped.entry["quality"] == "mechanical"
    (line,) = _warnings(caplog)
    assert why in line or (bad == "empty" and "SummarizerError" in line)
    # the next summaries still reach the model; nothing is lost
    assert len(agent.seen()) >= len(agent.written) - 3 > 0
    state = agent.graph.get_state(cfg).values
    assert sum(m.type == "tool" for m in full_log(state)) == TURNS


def test_a_summary_of_a_thread_forked_since_is_dropped_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = Agent("Goal:\n- read the modules\nCurrent status:\n- SUMMARY-000", archive=None)
    cfg = {"configurable": {"thread_id": THREAD}, "recursion_limit": 500}
    first = {"messages": [HumanMessage("Read every module.", id="task")]}
    pending: dict[str, Any] | None = None
    for chunk in agent.graph.stream(first, cfg, stream_mode="values"):
        entries = (chunk.get("langctx") or {}).get("compactions") or []
        if entries and entries[-1].get("upgrade_input"):
            pending = entries[-1]
            break
    assert pending is not None, "no model summary was left pending"
    old, at = agent.graph.get_state(cfg), agent.calls
    agent.graph.invoke(None, cfg)  # the thread goes on: its summary is applied there
    assert any(e["merged_from"] == [pending["id"]] for e in _entries(agent, cfg))
    agent.calls = at  # the fork replays the model from the old checkpoint on
    target = pending["covered_ids"][len(pending["covered_ids"]) // 2]
    message = next(m for m in old.values["messages"] if m.id == target)
    edited = message.model_copy(update={"content": "edited on the fork"})
    fork = agent.graph.update_state(old.config, {"messages": [edited]})
    with caplog.at_level(logging.WARNING, logger="langctx"):
        agent.graph.invoke(None, {**cfg, "configurable": fork["configurable"]})
    (dropped,) = agent.dropped()
    assert dropped.entry is not None and dropped.entry["id"] == pending["id"]
    assert "changed" in dropped.detail
    (line,) = _warnings(caplog)
    assert pending["id"] in line
    state = agent.graph.get_state(cfg).values
    entries = state["langctx"]["compactions"]
    upgrades = [
        e for e in entries if e["trigger"] == "merge" and e["merged_from"] == [pending["id"]]
    ]
    assert not upgrades  # not on the fork
    log = full_log(state)
    assert sum(m.type == "tool" for m in log) == TURNS
    assert any(m.content == "edited on the fork" for m in log)


def _entries(agent: Agent, cfg: dict[str, Any]) -> list[dict[str, Any]]:
    return agent.graph.get_state(cfg).values["langctx"]["compactions"]
