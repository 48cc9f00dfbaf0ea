"""Run in a NEW process by the kill-and-resume test: play a scripted agent session, or resume it.

Usage: ``python -m tests.integration_tests._kill_resume_worker URI LOG [KILL_AT]``. The agent
(``create_agent`` + ``LangctxMiddleware`` with a model summarizer and background summaries on, a
SqliteSaver at ``URI``) starts the session, or resumes the run the checkpoint holds. Every model
input is appended to ``LOG`` as one JSON line ``{"i": call index, "input": [...]}`` before the
model answers, so a process killed at any point has logged what it sent. With ``KILL_AT`` the
process SIGKILLs itself when the model is called for the ``KILL_AT``-th time in the session
(after logging the input): a background summary started by that call's fold is still running.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage

from langctx.cli.demo.session import SYSTEM_PROMPT
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import first_input, session_script, session_tools
from tests.integration_tests._turn_worker import ToolMessageIds, model_summary, plain

BUDGET = 3000
TURNS = 60
SEED = 11
THREAD = "killed-and-resumed"


def main(uri: str, log_path: str, kill_at: int | None = None) -> None:
    script = session_script(TURNS, seed=SEED)
    cfg: Any = {"configurable": {"thread_id": THREAD}, "recursion_limit": 5000}
    with open_checkpointer(uri) as saver, open(log_path, "a", encoding="utf-8") as log:

        def respond(inputs: list[BaseMessage]) -> Any:
            i = done + len(model.calls) - 1
            log.write(json.dumps({"i": i, "input": plain(inputs)}) + "\n")
            log.flush()
            if i == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return script.responses[i]

        model = ScriptedChatModel(responses=[respond], cycle=True)
        middleware = LangctxMiddleware(
            max_tokens=BUDGET, summarizer=model_summary, summary_threshold_tokens=0
        )
        agent = create_agent(
            model,
            tools=session_tools(script.outputs),
            system_prompt=SYSTEM_PROMPT,
            middleware=[middleware, ToolMessageIds()],
            checkpointer=saver,
        )
        state = agent.get_state(cfg)
        messages = full_log(state.values)  # the window in messages, the rest archived
        done = sum(1 for m in messages if m.type == "ai")
        if not messages:
            agent.invoke(first_input(with_system=False), cfg, durability="sync")
        elif state.next:  # killed inside a run: finish it from its checkpoint (each step's
            agent.invoke(None, cfg, durability="sync")  # checkpoint is written before the next)
        while done + len(model.calls) < len(script.responses):  # the user says "go on"
            n = sum(1 for m in full_log(agent.get_state(cfg).values) if m.type == "human")
            agent.invoke(
                {"messages": [HumanMessage(f"Go on ({n}).", id=f"go-on-{n}")]},
                cfg,
                durability="sync",
            )
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else None)
