"""The examples of `langctx.facts.record`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.facts.record import stored_facts


def test_stored_facts() -> None:
    assert stored_facts(
        {
            "read_files": ["a.py", 3, ""],
            "commands": [{"command": "make", "ok": "yes"}, "rm -rf /"],
            "read_files_dropped": -2,
            "next_step": ["?"],
        }
    ) == {"read_files": ["a.py"], "commands": [{"command": "make"}], "read_files_dropped": 0}
