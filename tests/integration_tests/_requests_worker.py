"""One process of a multi-request thread: ``create_agent`` + ``LangctxMiddleware`` over SQLite.

Run as ``python -m tests.integration_tests._requests_worker DB OUT FIRST LAST BUDGET``: it plays
the user requests ``FIRST..LAST`` (indices into :data:`REQUESTS`) on thread ``t``, each followed
by 12 tool turns with ~2 KB outputs and a final answer, and writes the text of every model input
(one JSON list of strings per line) to ``OUT``.
"""

from __future__ import annotations

import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from langctx.middleware import LangctxMiddleware
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import write_calls

REQUESTS = [
    "Fix the failing parser test in tests/test_parser.py.",
    "Now the lexer: rename tokenize() to lex() in src/lexer.py. Keep the old name as an alias.",
    "Now add a --strict flag to the CLI that makes unknown tokens an error.",
    "Finally update the changelog and bump the version to 2.1.0.",
]
TOOL_TURNS = 12


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return "\n".join(f"{path}:{k}: def function_{k}(x): return x * {k}  # body" for k in range(40))


def _script(request: int) -> list[Any]:
    steps: list[Any] = []
    for k in range(TOOL_TURNS):
        call = {
            "id": f"r{request}c{k}",
            "name": "read_file",
            "args": {"path": f"src/r{request}_{k}.py"},
        }
        steps.append(AIMessage("", tool_calls=[call], id=f"r{request}a{k}"))
    steps.append(AIMessage(f"Done with request {request + 1}.", id=f"r{request}done"))
    return steps


def main(db: str, out: str, first: int, last: int, budget: int) -> None:
    script = [s for r in range(first, last + 1) for s in _script(r)]
    model = ScriptedChatModel(responses=script)
    with open_checkpointer(db) as saver:
        agent = create_agent(
            model,
            tools=[read_file],
            middleware=[LangctxMiddleware(max_tokens=budget)],
            checkpointer=saver,
            system_prompt="You are a coding agent.",
        )
        config: Any = {"configurable": {"thread_id": "t"}}
        for r in range(first, last + 1):
            agent.invoke({"messages": [HumanMessage(REQUESTS[r], id=f"u{r}")]}, config)
    write_calls(out, model.calls)


if __name__ == "__main__":
    db, out, first, last, budget = sys.argv[1:6]
    main(db, out, int(first), int(last), int(budget))
