"""Entries do not grow with the thread: a merged entry lists the most recent modified files and
counts the others (issue 41, item 3)."""

from __future__ import annotations

import json
import re

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory
from langctx.facts.record import MAX_MODIFIED_FILES

TURNS = 1_500
EDIT_EVERY = 3  # 500 modified files, far more than an entry lists


def _turn(t: int) -> list[AIMessage | ToolMessage]:
    calls = [{"id": f"r{t}", "name": "read_file", "args": {"path": f"src/pkg_{t % 7}/m_{t}.py"}}]
    if t % EDIT_EVERY == 0:
        calls.append({"id": f"e{t}", "name": "edit_file", "args": {"path": f"src/changed_{t}.py"}})
    out: list[AIMessage | ToolMessage] = [AIMessage(f"Step {t}.", tool_calls=calls)]
    out += [ToolMessage("def f():\n    return 1\n" * 20, tool_call_id=c["id"]) for c in calls]
    return out


def test_entries_stay_under_8_kb_and_the_ledger_counts_the_earlier_modified_files() -> None:
    mem = LayeredChatMemory(max_tokens=8000)
    mem.add_messages([SystemMessage("You are a coding agent."), HumanMessage("Refactor it.")])
    for t in range(TURNS):
        mem.add_messages(_turn(t))
    entries = mem.compactions
    sizes = [len(json.dumps(e, ensure_ascii=False).encode()) for e in entries]
    assert max(sizes) <= 8_000
    assert max(len(e["modified_files"]) for e in entries) == MAX_MODIFIED_FILES
    block = next(str(m.content) for m in mem.build_context() if "<langctx:facts>" in str(m.content))
    shown = re.search(r"the (\d+) most recent; … and (\d+) earlier files", block)
    assert shown is not None
    folded = {p for e in entries for p in e["modified_files"]}
    dropped = max(e["facts"].get("modified_files_dropped", 0) for e in entries)
    assert int(shown[1]) + int(shown[2]) <= len(folded) + dropped
