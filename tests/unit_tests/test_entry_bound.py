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


def test_constraints_past_the_cap_are_counted_through_merges_and_in_the_ledger() -> None:
    from langctx.facts.record import stored_facts
    from langctx.projection import render_read_facts
    from langctx.summarize.text import merge_summary_facts

    said = [f"Never touch module_{i}.py." for i in range(40)]
    merged = merge_summary_facts({"constraints": said[:20]}, {"constraints": said[20:]})
    assert merged["constraints"] == said[-32:]
    assert merged["constraints_dropped"] == 8
    again = merge_summary_facts(merged, {"constraints": ["Always run the tests."]})
    assert again["constraints_dropped"] == 9  # carried forward, plus the one the cap pushed out
    ledger = render_read_facts(again, max_tokens=40, count=lambda t: len(t.split()))
    assert "most recent of 41):" in ledger
    assert "constraints_dropped" not in stored_facts({"constraints_dropped": "8"})


def test_an_entry_over_its_bytes_counts_its_oldest_reads_then_its_oldest_constraints() -> None:
    from langctx.entries import new_compaction_entry
    from langctx.entry_bounds import within_bytes

    root = "/home/dev/projects/webshop/services/checkout/src"
    entry = new_compaction_entry(
        summary="s",
        level=2,
        covered_ids=[],
        first_kept_id=None,
        tokens_before=0,
        tokens_after=0,
        trigger="merge",
        quality="merged",
        read_files=[f"{root}/read_{i}.py" for i in range(50)],
        modified_files=[f"{root}/changed_{i}.py" for i in range(64)],
        facts={
            "constraints": [f"Keep the public API of {root}/m_{i}.py stable." for i in range(32)]
        },
    )
    within_bytes(entry, 7_000)
    facts = entry["facts"]
    assert len(json.dumps(entry, ensure_ascii=False).encode()) <= 7_000
    assert entry["read_files"] == [f"{root}/read_49.py"]  # the newest read always stays
    assert facts["read_files_dropped"] == 49
    assert 0 < facts["constraints_dropped"] < 32
    assert facts["constraints"][-1].endswith("m_31.py stable.")
    assert len(entry["modified_files"]) == 64  # never given up
