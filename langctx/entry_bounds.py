"""How large one compaction entry may grow: its read paths, then its constraints give way.

Example:
    >>> from langctx.entries import new_compaction_entry
    >>> e = new_compaction_entry(summary="s", level=1, covered_ids=[], first_kept_id=None,
    ...     tokens_before=0, tokens_after=0, trigger="manual", quality="local",
    ...     read_files=[f"src/module_{i}.py" for i in range(40)], modified_files=[])
    >>> within_bytes(e, 600)
    >>> e["read_files"][-1], e["facts"]["read_files_dropped"] + len(e["read_files"])
    ('src/module_39.py', 40)
"""

from __future__ import annotations

import json
from typing import Any

from langctx.entries import CompactionEntry

MAX_ENTRY_BYTES = 8_000
"""The JSON size a compaction entry gives way to when it is written (its ``tokens_after`` is
stamped later): its oldest read paths first, then its oldest constraints (those are the user's
words, quoted from the ledger of user messages too), each counted (``read_files_dropped``,
``constraints_dropped``); the newest of each always stays. Its other parts are bounded on their
own: modified paths, summary and the rest of the facts by their caps, files in hand and reports by
their shares of the budget, covered ids by one fold's messages."""


def within_bytes(entry: CompactionEntry, max_bytes: int) -> None:
    """Count instead of list what ``entry`` gives way while its JSON is over ``max_bytes``."""
    facts = entry["facts"]
    _give_way(entry, entry, "read_files", "read_files_dropped", max_bytes)
    if facts.get("constraints"):
        _give_way(entry, facts, "constraints", "constraints_dropped", max_bytes)


def _give_way(entry: CompactionEntry, holder: Any, key: str, counter: str, max_bytes: int) -> None:
    """The oldest items of ``holder[key]`` counted in ``entry``'s facts' ``counter`` instead of
    listed while ``entry`` is over ``max_bytes`` (the newest item always stays)."""
    items, facts = holder[key], entry["facts"]
    given, keep = facts.get(counter, 0), len(items)
    over = _json_bytes(entry) - max_bytes
    while keep > 1 and over > 0:
        keep -= 1
        over -= _json_bytes(items[len(items) - keep - 1]) + 2  # the item, its comma and space
        if over <= 0 or keep == 1:  # counting them may take more room: measure again
            facts[counter] = given + len(items) - keep
            holder[key] = items[len(items) - keep :]
            over = _json_bytes(entry) - max_bytes


def _json_bytes(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode())
