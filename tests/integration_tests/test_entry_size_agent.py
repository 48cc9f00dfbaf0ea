"""A compaction entry stays near 8 KB on the users' path however many files the thread reads
(issue 41, item 3): ``langctx.create_agent`` at its defaults, long paths, a user every 10
turns, each with a constraint."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from langctx import create_agent
from langctx.entry_bounds import MAX_ENTRY_BYTES
from langctx.testing import ScriptedChatModel

ROOT = "/home/dev/projects/webshop/services/checkout/src"
TURNS = 400
SLACK = 16  # tokens_after is stamped after the bound is applied


def _path(t: int) -> str:
    return f"{ROOT}/area_{t % 37}/pkg_{t % 5}/module_{t}.py"


def _responses() -> list[AIMessage]:
    out: list[AIMessage] = []
    for t in range(TURNS):
        calls: list[dict[str, Any]] = [
            {"id": f"r{t}", "name": "read_file", "args": {"path": _path(t)}}
        ]
        if t % 4 == 0:
            calls.append({"id": f"e{t}", "name": "edit_file", "args": {"path": _path(t) + "x"}})
        out.append(AIMessage(f"Step {t}: reading the next module.", tool_calls=calls))
        if t % 10 == 9:
            out.append(AIMessage(f"Done with modules up to {t}."))
    return out


@tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\ndef handler(request):\n    return service.dispatch(request.json())\n" * 3


@tool
def edit_file(path: str) -> str:
    """Edit a file."""
    return f"edited {path}"


def test_every_entry_of_a_long_thread_stays_within_the_bound_and_counts_what_it_leaves_out() -> (
    None
):
    agent = create_agent(
        ScriptedChatModel(responses=_responses()),
        [read_file, edit_file],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "long"}}
    seen: dict[str, dict[str, Any]] = {}
    for k in range(TURNS // 10):
        ask = f"Go on with the next ten modules; keep the public API of module_{10 * k}.py stable."
        agent.invoke({"messages": [HumanMessage(ask)]}, cfg)
        for e in agent.get_state(cfg).values.get("langctx", {}).get("compactions", []):
            seen[e["id"]] = e
    merged = [e for e in seen.values() if e["trigger"] == "merge"]
    assert merged, "the thread must be long enough to merge summaries"
    sizes = {e["id"]: len(json.dumps(e, ensure_ascii=False).encode()) for e in seen.values()}
    assert max(sizes.values()) <= MAX_ENTRY_BYTES + SLACK, sorted(sizes.values())[-3:]
    # the bound bit: a merged entry counts the read paths it no longer lists
    counted = [e for e in merged if e["facts"].get("read_files_dropped", 0) > 0]
    assert counted
    newest = max(counted, key=lambda e: e["covered_count"])
    assert newest["read_files"], "the newest read path always stays"
    # then the oldest constraints (the user's words, in the ledger of user messages too)
    assert any(e["facts"].get("constraints_dropped", 0) > 0 for e in merged)
    assert all(e["facts"].get("constraints") for e in merged if "constraints_dropped" in e["facts"])
