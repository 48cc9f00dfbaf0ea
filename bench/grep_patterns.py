"""Time 30 catastrophic grep patterns against a stored megabyte through ``fetch_context``.

The patterns and the megabyte (lines of 30,000 ``a``, digits and dots, words, CSV, ``x``) are the
test's (``tests/unit_tests/context_mode/test_grep_hostile.py``); each is one ``fetch_context``
call of the real tool, reading the output from the store. Reports the slowest and every answer's
kind (matches shown, stopped at the timeout, refused before compiling).

Run: ``uv run python bench/grep_patterns.py`` (writes bench/results/grep_patterns.md).
"""

from __future__ import annotations

import sys
import time

from _common import ROOT, environment

sys.path.insert(0, str(ROOT))

from langctx.context_mode.grep import GREP_TIMEOUT_SECONDS
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.tools import fetch_context_tool
from tests.unit_tests.context_mode.test_grep_hostile import CATASTROPHIC, MEGABYTE

_KINDS = [
    ("refused", "repeats too much"),
    ("timed out", "took longer than"),
    ("matches, then stopped", "the search stopped"),
]
RESULTS = ROOT / "bench" / "results" / "grep_patterns.md"


def main() -> None:
    env = environment(["regex", "langchain-core"])
    processor = ContextModeProcessor()
    ref = processor.process(MEGABYTE, tool_name="dump", thread_id="bench").ref_id
    fetch = fetch_context_tool(processor, record_priority=False)
    config = {"configurable": {"thread_id": "bench"}}
    rows = []
    for i, pattern in enumerate(CATASTROPHIC):
        call = {"type": "tool_call", "id": f"c{i}", "name": "fetch_context"}
        started = time.perf_counter()
        out = fetch.invoke({**call, "args": {"ref_id": ref, "grep": pattern}}, config)
        seconds = time.perf_counter() - started
        text = out.text
        kind = next((k for k, said in _KINDS if said in text), "answered")
        shown = pattern if len(pattern) <= 40 else f"{pattern[:30]}… ({len(pattern)} chars)"
        shown = shown.replace("|", "\\|")  # a table cell
        rows.append((seconds, kind, shown))
    lines = [
        "# 30 catastrophic grep patterns on a stored megabyte",
        "",
        f"`uv run python bench/grep_patterns.py` · {env['machine']}, load {env['load_average_at_start']},"
        f" regex {env['versions']['regex']} · grep timeout {GREP_TIMEOUT_SECONDS} s",
        "",
        f"Slowest answer: **{max(r[0] for r in rows):.2f} s**; "
        + ", ".join(
            f"{sum(r[1] == k for r in rows)} {k}" for k in ("answered", *(k for k, _ in _KINDS))
        ),
        "",
        "| seconds | answer | pattern |",
        "|---:|---|---|",
        *(f"| {s:.3f} | {k} | `{p}` |" for s, k, p in rows),
    ]
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines[:6]))


if __name__ == "__main__":
    main()
