"""Run in a NEW process by the resume tests: reopen a thread, report its projection, keep going.

Usage: ``python -m tests.integration_tests._resume_worker JOBS_JSON``: a list of jobs, each with
``uri``, ``thread_id``, ``kind`` ("middleware" | "node"), ``budget``, ``seed``, ``start`` (turns
already run) and ``turns`` (where to stop). Prints one JSON line: per job, the projection rebuilt
from the checkpoint, the channel's compaction count before and after, and the report over every
model input. One process serves every job, so the imports are paid once.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from typing import Any

from langchain_core.messages import messages_to_dict

from langctx.langgraph import LangctxNode
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import view_state
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    check_calls,
    drive,
    every_compaction,
    middleware_agent,
    node_agent,
    session_script,
    session_tools,
)


def main(args: dict[str, Any]) -> dict[str, Any]:
    script = session_script(args["turns"], seed=args["seed"], start=args["start"])
    model = ScriptedChatModel(responses=script.responses)
    tools = session_tools(script.outputs)
    cfg = {"configurable": {"thread_id": args["thread_id"]}, "recursion_limit": 5000}
    with open_checkpointer(args["uri"]) as saver:
        if args["kind"] == "middleware":
            middleware = LangctxMiddleware(max_tokens=args["budget"])
            settings = middleware.settings
            graph = middleware_agent(model, tools, middleware, saver)
        else:
            node = LangctxNode(max_tokens=args["budget"])
            settings = node.settings
            graph = node_agent(model, tools, node, saver)
        state = graph.get_state(cfg).values
        view = view_state(state, settings, thread_id=args["thread_id"])
        view.compact_if_due()  # what the next model call would do first
        projection = messages_to_dict(view.projection())
        pending = view.update()
        before = len(every_compaction(state))
        out, _ = drive(lambda x: graph.invoke(x, cfg), model, None)
        report = check_calls(
            model.calls,
            settings.counter,
            args["budget"],
            skip_system_prompt=args["kind"] == "middleware",
        )
    return {
        "projection": projection,
        "pending_update": pending,
        "compactions_before": before,
        "compactions_after": len(every_compaction(out)),
        "report": asdict(report),
        "last": out["messages"][-1].content,
    }


if __name__ == "__main__":
    print(json.dumps([main(job) for job in json.loads(sys.argv[1])]))
