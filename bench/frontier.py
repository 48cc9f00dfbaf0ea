"""Cost against quality: modeled cost and probe shares per approach and budget, on the recorded
sessions.

Run by hand from the repository root (needs the ``bench`` dependency group for LangMem)::

    uv run --group bench python bench/frontier.py              # everything, two processes
    uv run --group bench python bench/frontier.py --limit 5    # the first 5 sessions (a trial)

For budgets of 4k / 8k / 16k / 32k tokens, ``bench/cost.py``'s sessions run (every recorded
session in ``../shared/data``, its requests measured by ``cost.Meter``) for langctx with a model
summarizer in the background (``langctx-model``), langctx + Context-mode (``langctx-cm``),
LangMem's ``SummarizationNode`` (``langmem``) and LangChain's ``SummarizationMiddleware``
(``middleware``), with cost.py's scripted summarizer; and once for **observation masking**, an
anchor without a summarizer or a budget: every message is kept, and the content of every tool
result older than the 10 most recent ones is replaced by a placeholder (its requests over each
budget are reported).

Per (approach, budget): the modeled cost under the Anthropic sheet (cost.py's cache model: the
unchanged prefix of the previous request priced as cache reads, the rest of a main request as
cache writes, summarizer calls uncached, the outputs of both), the seven amnesia probes of
``langctx replay`` and their mean over the probes that apply, requests over the budget and orphan
tool results. A point is on the frontier when no other point costs less or the same and holds a
higher or the same mean share (one of them strictly). Writes ``bench/results/frontier.md``,
``.json`` and ``.png``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path
from typing import Any

import _common
import cost
from cost import Approach, Row
from langchain_core.messages import BaseMessage, ToolMessage

from langctx import TiktokenCounter
from langctx._tiktoken_offline import seed_tiktoken_cache
from langctx.cli.replay.truth import PROBES

ROOT = Path(__file__).resolve().parents[1]
RESULTS_MD = ROOT / "bench" / "results" / "frontier.md"
RESULTS_JSON = ROOT / "bench" / "results" / "frontier.json"
RESULTS_PNG = ROOT / "bench" / "results" / "frontier.png"
BUDGETS = (4_000, 8_000, 16_000, 32_000)
KEYS = ("langctx-model", "langctx-cm", "langmem", "middleware")
MASKING = "masking"
KEEP_TOOL_RESULTS = 10
PLACEHOLDER = "[old tool output omitted]"
SHEET = "anthropic"
PACKAGES = ["langchain-core", "langchain", "langmem", "langgraph"]


class ObservationMasking(Approach):
    """Every message kept; the tool results older than the 10 most recent ones masked."""

    name = f"observation masking (last {KEEP_TOOL_RESULTS} tool results kept, no summarizer)"

    def __init__(self, budget: int, counter: TiktokenCounter) -> None:
        del budget, counter  # no budget, nothing to count
        self.messages: list[BaseMessage] = []
        self.tools: list[int] = []  # indexes of the tool results in ``messages``
        self.masked = 0  # how many of them (the oldest) are masked

    def start(self, messages: list[BaseMessage]) -> None:
        self.step(messages)

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        for m in turn:
            if isinstance(m, ToolMessage):
                self.tools.append(len(self.messages))
            self.messages.append(m)
        while len(self.tools) - self.masked > KEEP_TOOL_RESULTS:
            i = self.tools[self.masked]
            self.messages[i] = self.messages[i].model_copy(update={"content": PLACEHOLDER})
            self.masked += 1
        return list(self.messages)


cost.FACTORIES[MASKING] = ObservationMasking


def session_paths(limit: int | None = None) -> list[Path]:
    """The recorded sessions, as ``bench/cost.py`` finds them."""
    paths = sorted(p for p in _common.DATA.rglob("*") if p.is_file() and cost._session_file(p))
    return paths[:limit] if limit else paths


def mean_share(row: Row) -> float | None:
    """The mean of the probe shares over the probes that apply (checked at least once)."""
    shares = [s for p in PROBES if (s := row.probe_share(p)) is not None]
    return sum(shares) / len(shares) if shares else None


def run_one(job: tuple[str, int, int | None]) -> tuple[Row, float]:
    key, budget, limit = job
    seed_tiktoken_cache()
    t0 = time.perf_counter()
    row = cost.run_sessions(key, budget, session_paths(limit))
    return row, time.perf_counter() - t0


def frontier(points: dict[tuple[str, int], tuple[float, float]]) -> set[tuple[str, int]]:
    """The (approach, budget) points no other point dominates (cost down, share up)."""
    out = set()
    for a, (ca, sa) in points.items():
        if not any(
            cb <= ca and sb >= sa and (cb < ca or sb > sa)
            for b, (cb, sb) in points.items()
            if b != a
        ):
            out.add(a)
    return out


def _pct(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{100 * x:.{digits}f}%"


def _label(key: str) -> str:
    return {
        "langctx-model": "langctx",
        "langctx-cm": "langctx + Context-mode",
        "langmem": "LangMem SummarizationNode",
        "middleware": "LangChain SummarizationMiddleware",
        MASKING: f"observation masking (last {KEEP_TOOL_RESULTS})",
    }[key]


def summarize(rows: list[Row], masking_over: dict[int, int]) -> list[dict[str, Any]]:
    """One record per (approach, budget) row: cost, shares, mean, checks, on the frontier."""
    records: list[dict[str, Any]] = []
    for r in rows:
        records.append(
            {
                "key": r.key,
                "approach": _label(r.key),
                "budget": None if r.key == MASKING else r.budget,
                "cost_anthropic": round(r.cost(SHEET), 4),
                "cached_share": round(r.main.cached_share, 4),
                "probe_share": {
                    p: None if (s := r.probe_share(p)) is None else round(s, 4) for p in PROBES
                },
                "mean_probe_share": None if (m := mean_share(r)) is None else round(m, 4),
                "requests": r.requests,
                "over_budget": {str(b): n for b, n in masking_over.items()}
                if r.key == MASKING
                else r.over_budget,
                "max_tokens": r.max_tokens,
                "orphans": r.orphans,
                "summarizer_calls": r.summarizer_calls,
                "blocking_calls": r.blocking_calls,
                "error": r.error,
            }
        )
    points = {
        (x["key"], x["budget"] or 0): (x["cost_anthropic"], x["mean_probe_share"])
        for x in records
        if not x["error"] and x["mean_probe_share"] is not None
    }
    front = frontier(points)
    for x in records:
        x["on_frontier"] = (x["key"], x["budget"] or 0) in front
    return records


def table(records: list[dict[str, Any]]) -> list[str]:
    out = [
        "| approach | budget | cost, Anthropic | cached share | mean probe share | probes T/C/F/L/N/U/E | requests over budget (max tokens) | orphans | summarizer calls (blocking) | frontier |",
        "|---|--:|--:|--:|--:|---|--:|--:|--:|:-:|",
    ]
    for x in records:
        probes = "/".join(_pct(x["probe_share"][p]) for p in PROBES)
        err = f" **failed: {x['error']}**" if x["error"] else ""
        if x["key"] == MASKING:
            over = ", ".join(f"{n} at {int(b) // 1000}k" for b, n in x["over_budget"].items())
            budget = "none"
        else:
            over, budget = str(x["over_budget"]), f"{x['budget'] // 1000}k"
        out.append(
            f"| {x['approach']}{err} | {budget} | ${x['cost_anthropic']:.2f} | "
            f"{_pct(x['cached_share'])} | {_pct(x['mean_probe_share'], 1)} | {probes} | "
            f"{over} ({x['max_tokens']:,}) | {x['orphans']} | "
            f"{x['summarizer_calls']} ({x['blocking_calls']}) | {'**yes**' if x['on_frontier'] else ''} |"
        )
    return out


def plot(records: list[dict[str, Any]], path: Path, sessions: int) -> None:
    """x: modeled cost, y: mean probe share; the budgeted approaches on the left axes,
    observation masking (no budget, far costlier) on a narrow right one."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ok = [x for x in records if not x["error"] and x["mean_probe_share"] is not None]
    budgeted = [x for x in ok if x["key"] != MASKING]
    masked = [x for x in ok if x["key"] == MASKING]
    fig, axes = plt.subplots(
        1,
        2 if masked else 1,
        figsize=(10, 6),
        sharey=True,
        squeeze=False,
        gridspec_kw={"width_ratios": [5, 1]} if masked else None,
    )
    ax = axes[0][0]
    markers = {"langctx-model": "o", "langctx-cm": "s", "langmem": "^", "middleware": "v"}
    offsets = {"langctx-model": (6, -12), "langctx-cm": (-22, 6)}
    for key in KEYS:
        pts = [x for x in budgeted if x["key"] == key]
        if not pts:
            continue
        xs = [x["cost_anthropic"] for x in pts]
        ys = [100 * x["mean_probe_share"] for x in pts]
        (line,) = ax.plot(xs, ys, marker=markers[key], label=_label(key))
        for x, xv, yv in zip(pts, xs, ys, strict=True):
            ax.annotate(
                f"{x['budget'] // 1000}k",
                (xv, yv),
                textcoords="offset points",
                xytext=offsets.get(key, (6, 4)),
                fontsize=8,
                color=line.get_color(),
            )
    for x in records:
        if x["error"]:
            ax.plot([], [], " ", label=f"{x['approach']} at {x['budget'] // 1000}k: failed")
    front = sorted(
        (x["cost_anthropic"], 100 * x["mean_probe_share"]) for x in budgeted if x["on_frontier"]
    )
    if front:
        ax.step(
            [c for c, _ in front],
            [s for _, s in front],
            where="post",
            linestyle=":",
            color="grey",
            label="frontier",
        )
    ax.set_ylabel("mean probe share (%)")
    ax.set_xlabel(f"modeled cost over {sessions} recorded sessions, Anthropic sheet ($)")
    ax.grid(alpha=0.3)
    if masked:
        right = axes[0][1]
        for x in masked:
            right.plot(
                [x["cost_anthropic"]],
                [100 * x["mean_probe_share"]],
                "*",
                markersize=16,
                color="black",
            )
            right.annotate(
                f"observation\nmasking\n(no budget)\n${x['cost_anthropic']:.2f}",
                (x["cost_anthropic"], 100 * x["mean_probe_share"]),
                textcoords="offset points",
                xytext=(-30, -55),
                fontsize=8,
            )
            right.set_xlim(x["cost_anthropic"] - 2, x["cost_anthropic"] + 2)
        right.grid(alpha=0.3)
        right.set_xlabel("($, axis broken)")
        ax.plot([], [], "*", markersize=12, color="black", label=_label(MASKING) + ", no budget")
    ax.legend(fontsize=8, loc="center right")
    fig.suptitle("Cost against quality on the recorded sessions: budgets 4k / 8k / 16k / 32k")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def report(records: list[dict[str, Any]], sessions: int, seconds: float) -> str:
    env = _common.environment(PACKAGES)
    front = [x for x in records if x["on_frontier"]]
    front.sort(key=lambda x: x["cost_anthropic"])
    lines = [
        "# Cost against quality: approaches and budgets on the recorded sessions",
        "",
        f"Generated by `uv run --group bench python bench/frontier.py` ({seconds / 60:.1f} min, "
        f"{sessions} recorded sessions). Versions: "
        f"{', '.join(f'{k} {v}' for k, v in env.get('versions', {}).items())}.",
        "",
        (__doc__ or "").split("\n\n", 3)[3].strip(),
        "",
        "Probes: share of probed requests (every 5th, after the approach first changed its "
        "context) holding the task, the user's constraints, the modified files, the latest "
        "failure, the next step, the latest user message and the earlier user messages; – when "
        "none applied. Mean probe share: their mean over the probes that apply.",
        "",
        "![cost against quality](frontier.png)",
        "",
        "## Results",
        "",
        *table(records),
        "",
        "## On the frontier",
        "",
    ]
    for x in front:
        budget = "no budget" if x["budget"] is None else f"{x['budget'] // 1000}k"
        lines.append(
            f"- {x['approach']}, {budget}: ${x['cost_anthropic']:.2f}, mean probe share "
            f"{_pct(x['mean_probe_share'], 1)}; {x['over_budget']} requests over the budget, "
            f"{x['orphans']} orphans"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="only the first N sessions")
    parser.add_argument("--only", nargs="*", default=None, help="approach keys to run")
    parser.add_argument("--budgets", nargs="*", type=int, default=list(BUDGETS))
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite the report and plot from the JSON"
    )
    args = parser.parse_args(argv)
    if args.report_only:
        saved = __import__("json").loads(RESULTS_JSON.read_text(encoding="utf-8"))
        RESULTS_MD.write_text(
            report(saved["records"], saved["sessions"], saved["seconds"]), "utf-8"
        )
        plot(saved["records"], RESULTS_PNG, saved["sessions"])
        return 0
    seed_tiktoken_cache()
    started = time.perf_counter()
    sessions = len(session_paths(args.limit))
    keys = args.only or [*KEYS, MASKING]
    budgets = sorted(args.budgets)
    jobs = [(k, b, args.limit) for b in budgets for k in keys if k != MASKING]
    # masking has no budget: one run at every budget would send the same requests
    masking_jobs = [(MASKING, b, args.limit) for b in budgets] if MASKING in keys else []
    jobs.sort(key=lambda j: -j[1])  # the longest (large budgets) first
    rows: dict[tuple[str, int], Row] = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for (key, budget, _), (row, seconds) in zip(
            [*jobs, *masking_jobs[:1]], pool.map(run_one, [*jobs, *masking_jobs[:1]]), strict=True
        ):
            rows[key, budget] = row
            print(
                f"{key} {budget // 1000}k: {seconds:.0f} s, ${row.cost(SHEET):.2f}, "
                f"mean {_pct(mean_share(row))}, over {row.over_budget}, error {row.error}",
                flush=True,
            )
    masking_over: dict[int, int] = {}
    if masking_jobs:
        # the same requests at every budget: count the ones over each from their sizes
        masking_over = over_budgets(budgets, args.limit)
        measured = rows[MASKING, budgets[0]].over_budget
        assert masking_over[budgets[0]] == measured, (masking_over, measured)
    ordered = [rows[k, b] for k in keys if k != MASKING for b in budgets]
    if masking_jobs:
        ordered.append(rows[MASKING, budgets[0]])
    records = summarize(ordered, masking_over)
    seconds = time.perf_counter() - started
    text = report(records, sessions, seconds)
    print(text)
    if not args.no_write:
        RESULTS_MD.write_text(text, encoding="utf-8")
        plot(records, RESULTS_PNG, sessions)
        _common.write_json(
            RESULTS_JSON,
            {
                "records": records,
                "rows": [
                    {**asdict(r), "cost": {s: r.cost(s) for s in cost.PRICE_SHEETS}}
                    for r in ordered
                ],
                "sessions": sessions,
                "seconds": seconds,
                "environment": _common.environment(PACKAGES),
            },
        )
    return 0


def over_budgets(budgets: Sequence[int], limit: int | None) -> dict[int, int]:
    """Observation masking's requests over each budget (the requests ``cost.run_sessions``
    measures: one per recorded AI message)."""
    from langctx.cli.replay import read_session

    judge = TiktokenCounter()
    sizes: list[int] = []
    for path in session_paths(limit):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            session = read_session(path)
        approach = ObservationMasking(0, judge)
        for batch, ai in cost._turns(list(session.messages)):
            if ai is not None and batch:
                sizes.append(sum(judge.count_message(m) for m in approach.step(batch)))
            elif batch:
                approach.step(batch)
    return {b: sum(n > b for n in sizes) for b in budgets}


if __name__ == "__main__":
    sys.exit(main())
