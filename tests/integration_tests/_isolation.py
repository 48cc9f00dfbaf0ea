"""A ``create_agent`` + ``LangctxMiddleware`` + ``ContextModeMiddleware`` run that either reads a
giant output holding a secret line (the victim) or fetches a reference by id (the attacker), for
the isolation tests and their worker process."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.store.base import BaseStore

from langctx.context_mode.middleware import ContextModeMiddleware
from langctx.context_mode.references import find_reference_ids
from langctx.errors import LangctxError
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel, ai_tool_call

SECRET = "SECRET-7f3a: the deploy key is hunter2"
LOG = "\n".join([f"[{i:05d}] step {i} ... ok" for i in range(4000)] + [SECRET, "exit code 0"])


@tool
def read_log(path: str) -> str:
    """Read a log file."""
    return LOG


def config_of(thread_id: str | None) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}} if thread_id is not None else {}


def run_agent(
    store: BaseStore, thread_id: str | None, first_id: str, ref_id: str | None
) -> dict[str, Any]:
    """One run: without ``ref_id`` it reads the log (and fetches its own reference back);
    with it, it calls ``fetch_context(ref_id, grep="SECRET")``. What the fetches returned."""
    if ref_id is None:
        script = [ai_tool_call("read_log", {"path": "app.log"}), _fetch_own, "Done."]
    else:
        script = [ai_tool_call("fetch_context", {"ref_id": ref_id, "grep": "SECRET"}), "Done."]
    model = ScriptedChatModel(responses=script)
    agent = create_agent(
        model,
        tools=[read_log],
        middleware=[LangctxMiddleware(max_tokens=6000), ContextModeMiddleware()],
        store=store,
    )
    try:
        out = agent.invoke(
            {"messages": [HumanMessage("Check the log.", id=first_id)]}, config_of(thread_id)
        )
    except LangctxError as exc:
        return {"refused": str(exc), "refs": [], "fetched": []}
    tools = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    refs = [r for m in tools if m.name == "read_log" for r in find_reference_ids(m.text)]
    fetched = [m.text for m in tools if m.name == "fetch_context"]
    return {"refused": None, "refs": refs, "fetched": fetched}


def _fetch_own(messages: list[Any]) -> Any:
    """The victim's second step: fetch its own reference (the positive control)."""
    (ref_id,) = find_reference_ids(messages[-1].text)
    return ai_tool_call("fetch_context", {"ref_id": ref_id, "grep": "SECRET"})
