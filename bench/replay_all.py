"""Replay all 38 recorded sessions through LayeredChatMemory at 32k and 8k budgets (issue 5).

For every session in ``../shared/data/trajectories`` and each budget, ``langctx.cli.replay`` feeds the
session call by call (local summarizer, exact ``o200k_base`` counting offline through the seeded
tiktoken cache) and the table reports: model calls, compactions (folds + merges), the largest
request, input tokens summed over all calls with langctx and with the full history, the reduction,
the mean share of each request that is an unchanged prefix of the previous one (prompt caching),
the amnesia probes (share of requests from the first compaction on in which each held, by the
independent parser of ``langctx/replay/truth.py``) and the
integrity checks (over-budget calls, orphan tool messages in projections, calls without the task).

For context on the reduction it also reports, per session, the reduction of two reference
memories that keep every request as full as allowed: ``min(full history, budget)`` and
``min(full history, compaction mark)`` at every call. langctx beats both, because a compaction
drops the request well below the mark; they show how much of the figure the budget alone decides.

Writes ``bench/results/replay_all.md`` (the table), ``bench/results/replay_all.json`` (the totals
and probe shares of every replay) and ``bench/results/replay_pi_large.png`` /
``replay_pi_before_compaction.png`` (tokens per call for the two pi sessions at 32k).

Run: ``uv run --extra cli python bench/replay_all.py`` (about a minute; the plots need matplotlib).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trajectories"
RESULTS = ROOT / "bench" / "results"
BUDGETS = (32_000, 8_000)
PROBE_LETTERS = {
    "task": "T",
    "constraints": "C",
    "files_modified": "F",
    "latest_failure": "L",
    "next_step": "N",
    "request_status": "S",
}
PLOTS = {
    "pi-mono/large-session": "replay_pi_large.png",
    "pi-mono/before-compaction": "replay_pi_before_compaction.png",
}


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _k(n: int) -> str:
    return f"{n / 1000:,.1f}k" if n < 1_000_000 else f"{n / 1_000_000:,.2f}M"


def _bounds(report: Any, budget: int, mark: int) -> tuple[float, float]:
    full = [c.full_tokens for c in report.calls]
    total = sum(full) or 1
    return (
        1 - sum(min(f, budget) for f in full) / total,
        1 - sum(min(f, mark) for f in full) / total,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="trajectories folder")
    parser.add_argument("--counter", default="tiktoken", help="token counter (default tiktoken)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from langctx._tiktoken_offline import seed_tiktoken_cache
    from langctx.cli.replay import read_session, replay_session
    from langctx.cli.replay.plot import plot_report

    seed_tiktoken_cache()
    logging.getLogger("langctx").addHandler(logging.NullHandler())  # the report counts them
    paths = sorted(args.data.glob("*/*.messages.jsonl"))
    if not paths:
        print(f"no sessions under {args.data}", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    rows: dict[int, list[dict[str, Any]]] = {b: [] for b in BUDGETS}
    counter_name = "?"
    started = time.perf_counter()
    for path in paths:
        sid = f"{path.parent.name}/{path.name.removesuffix('.messages.jsonl')}"
        session = read_session(path)
        for budget in BUDGETS:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = replay_session(session, max_tokens=budget, token_counter=args.counter)
            counter_name = str(report.settings["token_counter"])
            cap, mark = _bounds(report, budget, int(report.settings["high_mark"]))
            rows[budget].append(
                {
                    "session": sid,
                    "totals": report.totals(),
                    "probes": report.probe_shares(),
                    "request_status": report.request_status(),
                    "bound_budget": cap,
                    "bound_mark": mark,
                    "seconds": report.seconds,
                    "warnings": list(report.warnings),
                }
            )
            if budget == 32_000 and sid in PLOTS:
                plot_report(report, args.out / PLOTS[sid])
            t = report.totals()
            print(
                f"{sid[:60]:60s} {budget:>6} calls {t['calls']:4d} "
                f"reduction {100 * t['reduction']:5.1f}%  {report.seconds:5.2f}s",
                flush=True,
            )
    elapsed = time.perf_counter() - started
    (args.out / "replay_all.json").write_text(
        json.dumps(
            {"counter": counter_name, "budgets": {str(b): r for b, r in rows.items()}}, indent=1
        ),
        encoding="utf-8",
    )
    (args.out / "replay_all.md").write_text(
        _markdown(rows, counter_name, elapsed, len(paths)), encoding="utf-8"
    )
    print(f"wrote {args.out / 'replay_all.md'} in {elapsed:.0f} s")
    return 0


def _status_line(items: list[dict[str, Any]]) -> str:
    """The ``request_status`` probe pooled over the sessions (requests after the first cut)."""
    n = {k: sum(r["request_status"][k] for r in items) for k in items[0]["request_status"]}
    if not n["requests"]:
        return "Request status (S): no request held a `<langctx:requests>` section."
    return (
        f"Request status (S), pooled over {n['requests']:,} requests after a cut: "
        f"{n['right']:,} of {n['graded']:,} user requests shown with the right status "
        f"({100 * n['right'] / max(n['graded'], 1):.1f}%); answered shown as open "
        f"{n['answered_shown_open']}, open shown as answered {n['open_shown_answered']}, "
        f"not matched to a user message {n['unmatched']}."
    )


def _markdown(rows: dict[int, list[dict[str, Any]]], counter: str, elapsed: float, n: int) -> str:
    lines = [
        "# `langctx replay` on the recorded sessions",
        "",
        f"Generated by `uv run python bench/replay_all.py`: {n} sessions from `../shared/data/trajectories`,",
        f"local summarizer, token counter `{counter}`, {elapsed:.0f} s in all. Each AI message is one model call;",
        "*input tokens* sums the request of every call (langctx: the projected context; full: the whole",
        "history so far). *prefix* is the mean share of a request that is an unchanged prefix of the",
        "previous request (what provider prompt caching can reuse; the full history's is ~100% by",
        "construction); *cached* the same weighted by tokens: the share of all input tokens a prefix",
        "cache reads. *probes* are the shares of requests, from the first compaction on, that still",
        "held the task (T), every user constraint so far verbatim (C), every modified file as a whole",
        "path (F), an error line of the latest failure (L), the last informative next step (N) and the",
        "right status for every user request the summary's `<langctx:requests>` section lists (S: answered",
        "when the transcript shows a final answer, text and no tool call, before the next request), by",
        "the independent parser of `langctx/cli/replay/truth.py`; – means nothing to check. *fill ref* is the reduction of",
        "a reference memory that keeps every request as full as allowed: min(history, budget) /",
        "min(history, compaction mark) at every call. A task counts as missing when it is not in the",
        "request verbatim (at 8k the two SWE-agent sessions whose task is a whole demonstration",
        'trajectory get it truncated under `oversize_policy="truncate"`).',
        "",
    ]
    for budget, items in rows.items():
        tot_in = sum(r["totals"]["input_tokens"] for r in items)
        tot_full = sum(r["totals"]["input_tokens_full"] for r in items)
        lines += [
            f"## Budget {budget:,} tokens",
            "",
            f"All sessions: {_k(tot_in)} input tokens with langctx vs {_k(tot_full)} with the full history "
            f"({100 * (1 - tot_in / tot_full):.1f}% fewer); "
            f"{sum(r['totals']['compactions'] for r in items)} compactions, "
            f"{sum(r['totals']['merges'] for r in items)} merges; "
            f"orphan tool messages in projections: {sum(r['totals']['projection_orphans'] for r in items)}; "
            f"calls without the task: {sum(r['totals']['task_missing_calls'] for r in items)}; "
            f"over-budget calls: {sum(r['totals']['over_budget_calls'] for r in items)}; "
            f"cached share of the input: {100 * sum(r['totals']['cacheable_tokens'] for r in items) / tot_in:.1f}%.",
            "",
            _status_line(items),
            "",
            "| session | calls | compactions (+merges) | max context | input tokens langctx | full history | reduction | fill ref (budget / mark) | prefix | cached | probes T C F L N S | over budget | orphans |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|",
        ]
        for r in items:
            t = r["totals"]
            probes = " ".join(_pct(r["probes"][p]) for p in PROBE_LETTERS)
            lines.append(
                f"| {r['session'][:70]} | {t['calls']} | {t['compactions']} (+{t['merges']}) | "
                f"{t['max_context_tokens']:,} | {t['input_tokens']:,} | {t['input_tokens_full']:,} | "
                f"{100 * t['reduction']:.1f}% | {100 * r['bound_budget']:.0f}% / {100 * r['bound_mark']:.0f}% | "
                f"{100 * t['mean_prefix_share']:.0f}% | {100 * t['cached_share']:.0f}% | {probes} | "
                f"{t['over_budget_calls']} | "
                f"{t['projection_orphans']} |"
            )
        lines.append("")
    pi = {r["session"]: r for r in rows[32_000] if r["session"].startswith("pi-mono/")}
    lines += ["## The pi sessions at 32k (issue 5 acceptance: at least 85% fewer input tokens)", ""]
    for sid, r in sorted(pi.items()):
        t = r["totals"]
        verdict = "meets" if t["reduction"] >= 0.85 else "misses"
        lines.append(
            f"- `{sid}`: {100 * t['reduction']:.1f}% fewer ({t['input_tokens']:,} vs "
            f"{t['input_tokens_full']:,} over {t['calls']} calls) -- {verdict} the 85% target; "
            f"orphans in projections {t['projection_orphans']}, calls without the task "
            f"{t['task_missing_calls']}; a memory that kept every request at the budget would reach "
            f"{100 * r['bound_budget']:.1f}%, at the compaction mark {100 * r['bound_mark']:.1f}%."
        )
    lines += [
        "",
        "The reduction is bounded by the budget and the session's length: the memory's request saws",
        "between what a compaction keeps (~10k at 32k) and the compaction mark (25.6k), so it averages",
        "~18k per call. 85% fewer needs a mean request at most 15% of the mean full history; for",
        "`large-session` (138k tokens, 84k mean history) that is 12.6k, below what one compaction keeps.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
