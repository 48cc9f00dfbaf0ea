"""The re-read tax on the recorded sessions, per `files_share` and budget (issue 44).

For every session in ``../shared/data/trajectories``, each budget (8k, 32k, 128k) and each files
share (0 = no files in hand), ``langctx.cli.replay`` replays the session (local summarizer,
``o200k_base`` counting offline) and counts, for every read of a file the transcript makes after
a fold whose latest content the agent had seen (unchanged since), whether that content was already
in langctx's request (a re-read the model would not have needed); beside it the cost: tokens of
the files in hand per request after a fold, input tokens after the first fold, folds, and the
integrity checks (over-budget requests, orphan tool results, the amnesia probes).

Writes ``bench/results/files_share.md`` and ``bench/results/files_share.json``.

Run: ``uv run python bench/files_share.py`` (about ten minutes; ``--shares 0 0.1`` for fewer).
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
BUDGETS = (8_000, 32_000, 128_000)
SHARES = (0.0, 0.05, 0.1, 0.2)
PROBES = ("task", "constraints", "files_modified", "latest_failure")


def _replay(session: Any, budget: int, share: float, counter: str) -> dict[str, Any]:
    from langctx.cli.replay import replay_session

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        report = replay_session(
            session, max_tokens=budget, token_counter=counter, files_share=share
        )
    t = report.totals()
    return {
        **{k: t[k] for k in ("rereads_after_fold", "rereads_in_request", "files_tokens")},
        **{k: t[k] for k in ("calls_after_fold", "input_tokens_after_fold", "input_tokens")},
        **{k: t[k] for k in ("compactions", "over_budget_calls", "projection_orphans")},
        "probes": report.probe_shares(),
    }


def channel_bytes(budget: int, share: float, turns: int) -> dict[str, int]:
    """The ``langctx`` channel's JSON bytes after each run of the checkpoint benchmark's session
    (``create_agent`` + ``LangctxMiddleware``, a ~3 KB ``read_file`` result per turn): largest,
    last, and the bytes of the files parts in it."""
    sys.path.insert(0, str(ROOT / "bench"))
    from checkpoint_storage import SYSTEM_PROMPT, TASK, read_file_tool, script
    from langchain.agents import create_agent
    from langchain_core.messages import HumanMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from langctx import LangctxMiddleware
    from langctx.testing import ScriptedChatModel

    responses, by_call, runs = script(turns)
    agent = create_agent(
        ScriptedChatModel(responses=responses),
        tools=[read_file_tool(by_call)],
        system_prompt=SYSTEM_PROMPT,
        middleware=[LangctxMiddleware(max_context_tokens=budget, files_share=share)],
        checkpointer=InMemorySaver(),
    )
    cfg: Any = {"configurable": {"thread_id": "files"}, "recursion_limit": 1000}
    largest = files = last = 0
    for n in range(runs):
        text = TASK if n == 0 else f"Go on ({n})."
        state = agent.invoke({"messages": [HumanMessage(text)]}, cfg)
        channel = state["langctx"]
        last = len(json.dumps(channel, default=str).encode())
        largest = max(largest, last)
        parts = [e["files"] for e in channel.get("compactions", []) if "files" in e]
        files = max(files, len(json.dumps(parts).encode()))
    return {"largest": largest, "last": last, "files_parts": files}


def _pooled(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = [k for k in rows[0] if k != "probes"]
    out: dict[str, Any] = {k: sum(r[k] for r in rows) for k in keys}
    for probe in PROBES:
        values = [r["probes"][probe] for r in rows if r["probes"].get(probe) is not None]
        out[probe] = min(values) if values else None
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA, help="trajectories folder")
    parser.add_argument("--counter", default="tiktoken", help="token counter (default tiktoken)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="results folder")
    parser.add_argument("--shares", type=float, nargs="+", default=SHARES)
    parser.add_argument("--budgets", type=int, nargs="+", default=BUDGETS)
    parser.add_argument("--turns", type=int, default=300, help="turns of the channel-bytes run")
    parser.add_argument("--bytes-shares", type=float, nargs="+", default=(0.0, 0.05))
    args = parser.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from langctx._tiktoken_offline import seed_tiktoken_cache
    from langctx.cli.replay import read_session

    seed_tiktoken_cache()
    logging.getLogger("langctx").addHandler(logging.NullHandler())
    paths = sorted(args.data.glob("*/*.messages.jsonl"))
    if not paths:
        print(f"no sessions under {args.data}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    sizes = {
        f"{budget}/{share}": channel_bytes(budget, share, args.turns)
        for budget in args.budgets
        for share in args.bytes_shares
    }
    print(json.dumps(sizes), flush=True)
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    for path in paths:
        sid = f"{path.parent.name}/{path.name.removesuffix('.messages.jsonl')}"
        session = read_session(path)
        for budget in args.budgets:
            for share in args.shares:
                row = _replay(session, budget, share, args.counter)
                runs.setdefault(f"{budget}/{share}", {})[sid] = row
                print(
                    f"{sid[:50]:50s} {budget:>7} {share:4.2f} re-reads "
                    f"{row['rereads_in_request']}/{row['rereads_after_fold']}",
                    flush=True,
                )
    elapsed = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    out = {"replays": runs, "channel_bytes": sizes, "turns": args.turns}
    (args.out / "files_share.json").write_text(json.dumps(out, indent=1), encoding="utf-8")
    text = _markdown(runs, args.budgets, args.shares, len(paths), elapsed)
    text += _bytes_table(sizes, args.turns)
    (args.out / "files_share.md").write_text(text, encoding="utf-8")
    print(f"wrote {args.out / 'files_share.md'} in {elapsed:.0f} s")
    return 0


def _pct(a: float, b: float) -> str:
    return f"{100 * a / b:.0f}%" if b else "–"


def _markdown(
    runs: dict[str, dict[str, dict[str, Any]]],
    budgets: tuple[int, ...],
    shares: tuple[float, ...],
    n: int,
    elapsed: float,
) -> str:
    lines = [
        "# The re-read tax and the files share (`bench/files_share.py`)",
        "",
        f"{n} recorded sessions (`../shared/data/trajectories`), local summarizer, `o200k_base`, "
        f"{elapsed:.0f} s. A *re-read* is a read the transcript makes after langctx's first fold of a",
        "file whose latest content the agent had seen (read whole or written, not modified since);",
        "*in request* counts those whose content was already in langctx's request (a kept tool",
        "result, or the files in hand of the summary block): the model would not have needed them.",
        "*files tokens* is the mean size of the files in hand per request after the first fold;",
        "*input after fold* sums the requests from the first fold on (its change against share 0",
        "is the cost). Probes: the lowest share of requests after a fold, over the sessions, that",
        "held the task, the constraints, the modified files and the latest failure.",
        "",
        "## Pooled",
        "",
        "| budget | files_share | re-reads | in request | files tokens / request | input after fold (vs 0) "
        "| folds | over budget | orphans | probes T C F L (min) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for budget in budgets:
        base = _pooled(list(runs[f"{budget}/{shares[0]}"].values()))
        for share in shares:
            p = _pooled(list(runs[f"{budget}/{share}"].values()))
            mean_files = p["files_tokens"] / p["calls_after_fold"] if p["calls_after_fold"] else 0
            cost = p["input_tokens_after_fold"] / base["input_tokens_after_fold"] - 1
            probes = " ".join("–" if p[k] is None else f"{100 * p[k]:.0f}%" for k in PROBES)
            lines.append(
                f"| {budget:,} | {share:.2f} | {p['rereads_after_fold']} | "
                f"{p['rereads_in_request']} ({_pct(p['rereads_in_request'], p['rereads_after_fold'])}) | "
                f"{mean_files:,.0f} ({100 * mean_files / budget:.1f}% of the budget) | "
                f"{p['input_tokens_after_fold']:,} ({100 * cost:+.1f}%) | {p['compactions']} | "
                f"{p['over_budget_calls']} | {p['projection_orphans']} | {probes} |"
            )
    lines += ["", "## Per session (re-reads in the request / re-reads after a fold)", ""]
    head = [f"{b // 1000}k × {s:.2f}" for b in budgets for s in shares]
    lines += ["| session | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]
    sessions = sorted(runs[f"{budgets[0]}/{shares[0]}"])
    for sid in sessions:
        cells = [runs[f"{b}/{s}"][sid] for b in budgets for s in shares]
        shown = [f"{c['rereads_in_request']}/{c['rereads_after_fold']}" for c in cells]
        lines.append(f"| {sid[:80]} | " + " | ".join(shown) + " |")
    return "\n".join(lines) + "\n"


def _bytes_table(sizes: dict[str, dict[str, int]], turns: int) -> str:
    lines = [
        "",
        f"## Channel bytes ({turns} turns of `bench/checkpoint_storage.py`'s session)",
        "",
        "`create_agent` + `LangctxMiddleware` (archive in the state), a ~3 KB `read_file` result per",
        "turn: the `langctx` channel's JSON bytes (largest after a run, after the last run) and the",
        "largest total of the files parts it held (one per kept fold entry, each within the share).",
        "",
        "| budget | files_share | channel largest | channel last | files parts |",
        "|---:|---:|---:|---:|---:|",
    ]
    for key, s in sizes.items():
        budget, share = key.split("/")
        lines.append(
            f"| {int(budget):,} | {float(share):.2f} | {s['largest']:,} | {s['last']:,} | "
            f"{s['files_parts']:,} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
