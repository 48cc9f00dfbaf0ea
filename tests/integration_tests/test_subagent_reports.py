"""Issue 44 (2): a sub-agent's report (deepagents' ``task``: a Command whose ToolMessage has no
name) stays in every model input after it is folded, through ``langctx.create_agent`` at its
defaults, until the same sub-agent reports again; resumed in a second process over SQLite."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langctx import create_agent
from langctx.middleware import LangctxMiddleware
from langctx.projection import REQUESTS_CLOSE, REQUESTS_OPEN
from langctx.subagent_reports import reports_text
from langctx.testing import ScriptedChatModel, ai_tool_call
from langctx.tokens import ApproximateCounter
from tests.integration_tests._reports_worker import first_line, last_line, play, report, tools

ROOT = Path(__file__).resolve().parents[2]


def _section(texts: Sequence[str]) -> str:
    found = re.search(
        r"<langctx:subagent-reports>\n.*?\n</langctx:subagent-reports>", "\n".join(texts), re.S
    )
    return found.group(0) if found else ""


def _check(calls: Sequence[Sequence[str]], reports: int) -> None:
    """Every input after report ``n`` holds its first and last lines until report ``n + 1``;
    once report ``n + 1`` is folded, report ``n`` is no longer in the reports section."""
    latest, carried = None, 0
    for n, texts in enumerate(calls):
        seen = "\n".join(texts)
        for r in range(reports):
            if first_line(r) in seen and (latest is None or r > latest):
                latest = r  # its report arrived (verbatim in this input)
        if latest is None:
            continue
        assert first_line(latest) in seen and last_line(latest) in seen, (n, latest)
        section = _section(texts)
        if f"evidence {latest}.30:" not in seen.replace(section, ""):  # folded: the block has it
            carried += 1
            assert first_line(latest) in section and last_line(latest) in section, (n, latest)
            assert all(first_line(r) not in section for r in range(latest)), (n, latest)
    assert carried >= 10 * reports


def _texts(calls: Sequence[Sequence[BaseMessage]]) -> list[list[str]]:
    return [[m.text for m in call] for call in calls]


def test_a_report_folded_at_the_default_budget_stays_until_the_subagent_reports_again() -> None:
    model = play(InMemorySaver(), [0, 1], [report(0), report(1)])
    _check(_texts(model.calls), 2)
    requests = [
        re.search(f"{REQUESTS_OPEN}(.*?){REQUESTS_CLOSE}", "\n".join(t), re.S)
        for t in _texts(model.calls)
    ]
    assert not any(r and "FINDING" in r.group(1) for r in requests)  # a report is no request


def test_a_50k_token_report_at_4k_is_cut_marked_and_under_budget() -> None:
    huge = report(0, lines=3_300)
    counter = ApproximateCounter()
    assert counter.count_text(huge) > 50_000
    model = play(InMemorySaver(), [0], [huge], LangctxMiddleware(max_context_tokens=4000))
    shown = 0
    for call in model.calls:
        assert counter.count_messages(call) <= 4000
        assert not any(isinstance(m, ToolMessage) and m.text == huge for m in call)
        section = reports_text(call)
        if section:
            shown += 1
            assert first_line(0) in section and last_line(0) in section
            assert re.search(r"\[langctx: [\d,]+ characters cut here to fit the budget", section)
            assert counter.count_text(section) <= 200  # reports_share 0.05 of 4k
    assert shown >= 10


def _run(db: Path, out: Path, first: int, last: int) -> list[list[str]]:
    cmd = [sys.executable, "-m", "tests.integration_tests._reports_worker", str(db), str(out)]
    subprocess.run([*cmd, str(first), str(last)], cwd=ROOT, check=True, timeout=300)
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_the_report_survives_a_second_process(tmp_path: Path) -> None:
    db = tmp_path / "thread.sqlite"
    first = _run(db, tmp_path / "a.jsonl", 0, 0)
    second = _run(db, tmp_path / "b.jsonl", 1, 1)
    assert first_line(0) in _section(second[0]) and last_line(0) in _section(second[0])
    _check([*first, *second], 2)


def test_a_create_agent_used_as_a_tool_is_a_subagent_when_named_in_subagent_tools() -> None:
    sub_model = ScriptedChatModel(responses=[report(0)], cycle=True)
    sub_agent = create_agent(sub_model, [])

    @tool
    def researcher(query: str) -> str:
        """Ask the research sub-agent."""
        return sub_agent.invoke({"messages": [("user", query)]})["messages"][-1].text

    def run(**options: Any) -> list[list[str]]:
        calls = [ai_tool_call("researcher", {"query": "Why do the tests flake?"})]
        reads = [ai_tool_call("read_file", {"path": f"src/m{k}.py"}) for k in range(24)]
        model = ScriptedChatModel(responses=[*calls, *reads, "Done."])
        read_file = tools({})[1]
        agent = create_agent(
            model,
            [researcher, read_file],
            memory=LangctxMiddleware(**options),
            checkpointer=InMemorySaver(),
        )
        agent.invoke(
            {"messages": [("user", "Make the suite reliable.")]},
            {"configurable": {"thread_id": "t"}},
        )
        return _texts(model.calls)

    _check(run(subagent_tools=["task", "researcher"]), 1)
    assert not any(_section(texts) for texts in run())  # not named: an ordinary tool result


@tool("task")
def _task_none(description: str, subagent_type: str) -> None:
    """Run a sub-agent that returns nothing (ToolNode sends ``null``)."""


@tool("task")
def _task_image(description: str, subagent_type: str) -> list[dict[str, str]]:
    """Run a sub-agent that returns an image block only."""
    return [{"type": "image", "base64": "iVBORw0KGgo=", "mime_type": "image/png"}]


@pytest.mark.parametrize(
    ("task", "said"),
    [
        (_task_none, "> null"),
        (_task_image, "(no text: the sub-agent returned nothing to read)\n(1 content block(s)"),
    ],
)
def test_a_subagent_returning_none_or_no_text_is_said_as_such(task: Any, said: str) -> None:
    calls = [ai_tool_call("task", {"description": "Look.", "subagent_type": "looker"})]
    reads = [ai_tool_call("read_file", {"path": f"src/m{k}.py"}) for k in range(24)]
    model = ScriptedChatModel(responses=[*calls, *reads, "Done."])
    agent = create_agent(model, [task, tools({})[1]], checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", "Look at it.")]}, {"configurable": {"thread_id": "t"}})
    sections = [reports_text(call) for call in model.calls]
    assert sum(bool(s) for s in sections) >= 10
    assert all(said in s and "Report of sub-agent task · looker" in s for s in sections if s)
