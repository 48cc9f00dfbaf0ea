"""One run of a thread in its own process: ``langctx.create_agent`` with a chat-model summarizer
on a ``SqliteSaver`` file, the memory's ``archive=`` given; writes every model request's texts.

Run: ``python -m tests.integration_tests._beside_worker DB ARCHIVE PART OUT``.
"""

from __future__ import annotations

import sys

from langchain_core.messages import BaseMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from langctx import LangctxMiddleware, create_agent
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests.integration_tests._agents import write_calls


def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(60))


def main(db: str, archive: str, part: int, out: str) -> None:
    written = [0]

    def summary(messages: list[BaseMessage]) -> str:
        written[0] += 1
        return f"MODEL SUMMARY {part}.{written[0]}: the agent read modules and goes on."

    calls = [ai_tool_call("read_file", {"path": f"src/p{part}_{k}.py"}) for k in range(14)]
    model = ScriptedChatModel(responses=[*calls, f"Done {part}."])
    summarizer = ScriptedChatModel(responses=[summary], cycle=True)
    memory = LangctxMiddleware(max_tokens=3000, summarizer=summarizer, archive=archive)  # type: ignore[arg-type]
    with SqliteSaver.from_conn_string(db) as saver:
        agent = create_agent(model, [read_file], memory=memory, checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t"}}
        ask = {"messages": [("user", f"Part {part}: read the modules.")]}
        for _ in agent.stream(ask, cfg, stream_mode="updates"):  # LangChain's documented loop
            pass
    write_calls(out, model.calls)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
