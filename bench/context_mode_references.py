"""Measure Context-mode with references on the recorded sessions (issue 4 acceptance).

For every ToolMessage over 1,500 tokens in ``../shared/data/trajectories/*/*.messages.jsonl``:
process it with :class:`~langctx.context_mode.processor.ContextModeProcessor` (defaults: inline up
to 1,500 tokens, references above 4,000 or when the reduction dropped a fact), then report per
content kind:

- tokens before and after (what the context holds after Context-mode, references included);
- how many outputs were referenced;
- the exit codes, error/exception type names and file:line locations of the original: how many
  are in the text the model sees, how many are one ``fetch_context`` call away (the output is
  referenced, and a ``grep`` fetch for the fact's exact text finds it; checked, not assumed), and
  how many are neither (lost);
- the round trip: fetching every slice and reassembling gives the original bytes.

The fact patterns (``bench/_common.py``) are written independently of the reducers' own. Tokens are exact
``o200k_base`` counts when tiktoken loads its vocabulary offline, else langctx's estimator.

Run: ``uv run python bench/context_mode_references.py`` (writes
bench/results/context_mode_references.md).
"""

from __future__ import annotations

import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from _common import DATA, ROOT, exact_counter, facts_of, tool_outputs

from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.slices import from_raw, reassemble

THRESHOLD = 1_500
RESULTS = ROOT / "bench" / "results" / "context_mode_references.md"


@dataclass
class Row:
    count: int = 0
    referenced: int = 0
    before: int = 0
    after: int = 0
    found: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    inline: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    fetch: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    lost: list[str] = field(default_factory=list)
    round_trips: int = 0


def measure(root: Path) -> tuple[dict[str, Row], str, float]:
    count, how = exact_counter()
    processor = ContextModeProcessor()
    rows: dict[str, Row] = defaultdict(Row)
    started = time.perf_counter()
    for out in tool_outputs(root):
        if count(out.text) <= THRESHOLD:
            continue
        result = processor.process(
            out.text,
            tool_name=out.tool,
            args=out.args,
            thread_id=out.session,
            tool_call_id=out.call_id,
        )
        kind = result.kind or "inline"
        for row in (rows[kind], rows["all"]):
            row.count += 1
            row.before += count(out.text)
            row.after += count(result.text)
            row.referenced += result.ref_id is not None
        seen = facts_of(result.text)
        for fact_kind, facts in facts_of(out.text).items():
            for fact, raw in facts.items():
                where = "inline" if fact in seen[fact_kind] else None
                if where is None and result.ref_id is not None:
                    hit = processor.fetch(result.ref_id, thread_id=out.session, grep=re.escape(raw))
                    where = "fetch" if hit.matches else None
                for row in (rows[kind], rows["all"]):
                    row.found[fact_kind] += 1
                    if where == "inline":
                        row.inline[fact_kind] += 1
                    elif where == "fetch":
                        row.fetch[fact_kind] += 1
                    else:
                        row.lost.append(f"{out.session}: {fact}")
        if result.ref_id is not None:
            texts, offset = [], 0
            while offset is not None:
                page = processor.fetch(result.ref_id, thread_id=out.session, offset=offset)
                texts.append(page.text)
                offset = page.next_offset
            ok = from_raw(reassemble(texts), "str") == out.text
            rows[kind].round_trips += ok
            rows["all"].round_trips += ok
    return rows, how, time.perf_counter() - started


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "n/a"


def report(rows: dict[str, Row], how: str, seconds: float) -> str:
    total = rows["all"]
    lines = [
        "# Context-mode with references on the recorded sessions",
        "",
        f"Every ToolMessage over {THRESHOLD:,} tokens in `../shared/data/trajectories` "
        f"({total.count} outputs), processed by `ContextModeProcessor()` with its defaults "
        "(inline up to 1,500 tokens; stored and referenced over 4,000 tokens or when the reduction "
        "dropped a fact). Tokens: " + how + f". Run time {seconds:.1f} s.",
        "",
        "A fact counts as *one fetch away* only when the output is referenced and a "
        "`fetch_context(ref_id, grep=<the fact's exact text>)` call actually returns it.",
        "",
        "| kind | outputs | referenced | tokens before | tokens in context | reduction | "
        "exit codes (inline + fetch / found) | error types | file:line | round trips |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for kind in [*sorted(k for k in rows if k != "all"), "all"]:
        r = rows[kind]

        def cell(fk: str, r: Row = r) -> str:
            ok = r.inline[fk] + r.fetch[fk]
            return f"{r.inline[fk]} + {r.fetch[fk]} / {r.found[fk]} ({_pct(ok, r.found[fk])})"

        name = f"**{kind}**" if kind == "all" else kind
        lines.append(
            f"| {name} | {r.count} | {r.referenced} | {r.before:,} | {r.after:,} | "
            f"{_pct(r.before - r.after, r.before)} | {cell('exit')} | {cell('error')} | "
            f"{cell('location')} | {r.round_trips}/{r.referenced} |"
        )
    found = sum(total.found.values())
    kept = sum(total.inline.values()) + sum(total.fetch.values())
    lines += [
        "",
        f"Facts in the text or one fetch away: {kept:,} of {found:,} ({_pct(kept, found)}). "
        f"Total tokens in context after Context-mode: {total.after:,} (from {total.before:,}, "
        f"{_pct(total.before - total.after, total.before)} less).",
        f"Byte-identical round trips: {total.round_trips} of {total.referenced} referenced outputs.",
    ]
    if total.lost:
        lines += ["", "Lost facts:", *(f"- {x}" for x in total.lost[:50])]
    return "\n".join(lines) + "\n"


def main() -> None:
    if not DATA.is_dir():
        sys.exit(f"no recorded sessions at {DATA}")
    rows, how, seconds = measure(DATA)
    text = report(rows, how, seconds)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
