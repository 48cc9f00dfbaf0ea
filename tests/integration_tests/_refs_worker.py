"""Run in a NEW process by the reference resume tests: fetch a reference another process made.

Usage: ``python -m tests.integration_tests._refs_worker JOBS_JSON``: a list of jobs, each with
``db`` (the SQLite file of the checkpointer and the store), ``thread_id``, ``ref_id`` and
``grep``. Each job builds a fresh agent (fresh middleware, fresh connections) over that thread
and lets a scripted model call ``fetch_context``; it prints one JSON line: per job, the status
and text of the fetch result.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.sqlite import SqliteStore

from langctx.context_mode.middleware import ContextModeMiddleware
from langctx.middleware import LangctxMiddleware
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel, ai_tool_call


def main(job: dict[str, Any]) -> dict[str, Any]:
    fetch = ai_tool_call("fetch_context", {"ref_id": job["ref_id"], "grep": job["grep"]})
    model = ScriptedChatModel(responses=[fetch, "Found it."])
    cfg: RunnableConfig = {"configurable": {"thread_id": job["thread_id"]}}
    with (
        open_checkpointer(job["db"]) as saver,
        SqliteStore.from_conn_string(job["db"]) as store,
    ):
        store.setup()
        agent = create_agent(
            model,
            tools=[],
            middleware=[LangctxMiddleware(max_tokens=6000), ContextModeMiddleware()],
            checkpointer=saver,
            store=store,
        )
        before = len(agent.get_state(cfg).values["messages"])
        out = agent.invoke({"messages": [HumanMessage("Show me the error again.")]}, cfg)
    fetched = [m for m in out["messages"][before:] if isinstance(m, ToolMessage)]
    return {
        "resumed": before,
        "fetched": [{"status": m.status, "text": m.text} for m in fetched],
    }


if __name__ == "__main__":
    print(json.dumps([main(job) for job in json.loads(sys.argv[1])]))
