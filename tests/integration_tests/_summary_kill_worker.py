"""Run in a NEW process by the kill test: an agent whose background summarizer hangs.

Usage: ``python -m tests.integration_tests._summary_kill_worker URI MARKER``. The agent (create_agent
+ LangctxMiddleware on the SQLite checkpoint ``URI``) plays the scripted session; its summarizer
touches ``MARKER`` and then never returns, so the process is killed while a model summary runs in
the background and the agent goes on without it.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from langctx.middleware import LangctxMiddleware
from langctx.stores.checkpoints import open_checkpointer
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    drive,
    first_input,
    middleware_agent,
    session_script,
    session_tools,
)

BUDGET = 3000
TURNS = 80


def main(uri: str, marker: str) -> None:
    def hanging(request: SummaryRequest) -> str:
        Path(marker).write_text(str(len(request.messages)))
        while True:
            time.sleep(1)

    script = session_script(TURNS, seed=5)

    def slow(response: Any) -> Any:  # a model takes a while: the kill lands mid-session
        def respond(_: Any) -> Any:
            time.sleep(0.05)
            return response

        return respond

    model = ScriptedChatModel(responses=[slow(r) for r in script.responses])
    middleware = LangctxMiddleware(
        max_tokens=BUDGET, summarizer=hanging, summary_threshold_tokens=0
    )
    cfg = {"configurable": {"thread_id": "killed"}, "recursion_limit": 5000}
    with open_checkpointer(uri) as saver:
        graph = middleware_agent(model, session_tools(script.outputs), middleware, saver)
        drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=False))
    print("finished without being killed", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
