"""One process of a thread whose agent asks a deepagents-style ``task`` sub-agent:
``langctx.create_agent`` at its defaults over SQLite.

Run as ``python -m tests.integration_tests._reports_worker DB OUT FIRST LAST``: it plays the user
requests ``FIRST..LAST`` (indices into :data:`REQUESTS`) on thread ``t``; each asks the
``debugger`` sub-agent once (its report: :func:`report`), then runs :data:`READS` tool turns and
answers. It writes the text of every model input (one JSON list of strings per line) to ``OUT``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated, Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from langctx import create_agent
from langctx.middleware import LangctxMiddleware
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import write_calls

REQUESTS = [
    "Find out why the test suite is flaky and fix it.",
    "The flake is back on CI; find the cause again.",
]
READS = 24


def report(n: int, lines: int = 60) -> str:
    """The ``n``-th report of the debugger sub-agent: its first and last lines are unique."""
    body = [f"evidence {n}.{k}: worker {k} wrote /tmp/shared/{k}.lock first" for k in range(lines)]
    return "\n".join([first_line(n), *body, last_line(n)])


def first_line(n: int) -> str:
    return f"FINDING {n}: the flake comes from a shared tmp dir in tests/conftest.py"


def last_line(n: int) -> str:
    return f"RECOMMENDATION {n}: give each test its own tmp_path."


def tools(reports: dict[str, str]) -> list[BaseTool]:
    @tool
    def task(
        description: str, subagent_type: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Command[Any]:
        """Run a sub-agent on a task (deepagents' shape: a Command, a ToolMessage with no name)."""
        content = reports[tool_call_id]
        return Command(update={"messages": [ToolMessage(content, tool_call_id=tool_call_id)]})

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return "\n".join(f"{path}:{k}: def f_{k}(x): return x * {k}  # body" for k in range(40))

    return [task, read_file]


def script(request: int, content: str) -> tuple[list[Any], dict[str, str]]:
    """The model's responses for ``request`` and the sub-agent's report by call id."""
    call_id = f"task{request}"
    args = {"description": "Find why the tests flake.", "subagent_type": "debugger"}
    steps: list[Any] = [
        AIMessage("", tool_calls=[{"id": call_id, "name": "task", "args": args}], id=f"q{request}")
    ]
    for k in range(READS):
        call = {"id": f"r{request}c{k}", "name": "read_file", "args": {"path": f"src/m{k}.py"}}
        steps.append(AIMessage("", tool_calls=[call], id=f"r{request}a{k}"))
    steps.append(AIMessage(f"Done with request {request + 1}.", id=f"done{request}"))
    return steps, {call_id: content}


def play(
    saver: BaseCheckpointSaver[Any] | None,
    requests: Sequence[int],
    contents: Sequence[str],
    memory: LangctxMiddleware | None = None,
) -> ScriptedChatModel:
    """Play ``requests`` (their reports: ``contents``) on thread ``t``; the scripted model."""
    steps: list[Any] = []
    reports: dict[str, str] = {}
    for r, content in zip(requests, contents, strict=True):
        more, said = script(r, content)
        steps += more
        reports.update(said)
    model = ScriptedChatModel(responses=steps)
    agent = create_agent(model, tools(reports), checkpointer=saver, memory=memory)
    config: Any = {"configurable": {"thread_id": "t"}, "recursion_limit": 500}
    for r in requests:
        agent.invoke({"messages": [HumanMessage(REQUESTS[r], id=f"u{r}")]}, config)
    return model


def main(db: str, out: str, first: int, last: int) -> None:
    requests = list(range(first, last + 1))
    with open_checkpointer(db) as saver:
        model = play(saver, requests, [report(r) for r in requests])
    write_calls(out, model.calls)


if __name__ == "__main__":
    db, out, first, last = sys.argv[1:5]
    main(db, out, int(first), int(last))
