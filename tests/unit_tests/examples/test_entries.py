"""The examples of `langctx.entries`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.entries import covered_count, entry_facts, read_entry


def test_entry_facts() -> None:
    assert entry_facts(
        {"facts": {"commands": []}, "read_files": ["a.py"], "modified_files": []}
    ) == {"commands": [], "read_files": ["a.py"], "modified_files": []}


def test_read_entry() -> None:
    e = read_entry(
        {
            "v": 3,
            "kind": "compaction",
            "id": "c-1",
            "level": 1,
            "summary": "",
            "covered_ids": [],
            "first_kept_id": None,
            "merged_from": [],
            "trigger": "manual",
            "read_files": ["./a.py", ""],
            "facts": {"commands": "ls", "next_step": "Go."},
        }
    )
    assert (e["read_files"], e["facts"]) == (["a.py"], {"next_step": "Go."})


def test_covered_count() -> None:
    # a version-1 shape
    assert covered_count({"covered_ids": ["m1", "m2"]}) == 2
