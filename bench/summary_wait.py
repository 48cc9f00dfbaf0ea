"""The wait a slow background summarizer adds to the agent's model calls, one and two workers.

Run by hand from the repository root (never in the test suite)::

    uv run --no-sync python bench/summary_wait.py --label "after"           # ~2 min
    PYTHONPATH=/tmp/langctx-main uv run --no-sync python bench/summary_wait.py --label "before"

(``/tmp/langctx-main`` holds ``git archive main``: the same script measures another langctx.)

A scripted ``create_agent`` agent with ``LangctxMiddleware(summarizer=...)`` at its defaults (an
8,000-token budget: the scripted model has no window) runs ``--turns`` user turns on one
``SqliteSaver`` thread; each turn is ``--calls`` model calls (``read_file`` calls of ~2.5 KB, then
an answer). The agent's model answers after ``--model-latency`` s, the summarizer (a
``ScriptedChatModel``) after ``--summary-latency`` s (5 s). With one worker, one process serves
every turn; with two, two processes serve the turns in turn (each its own graph over the same
SQLite file, so each has only its own background jobs). Per model call, the *added wait* is the
outermost ``wrap_model_call`` less the model call itself (an innermost middleware times it):
langctx's work, with the wait for background summaries. Also counted: folds, the model summaries
that replaced a local one (``trigger="merge"`` at level 1), and summarizer calls in every worker.

Results are kept per ``--label`` in ``bench/results/summary_wait.json``; the Markdown table
``bench/results/summary_wait.md`` is written from all of them.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sqlite3
import statistics
import tempfile
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import _common
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.tools import tool
from langgraph.checkpoint.sqlite import SqliteSaver

from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import read_batches, thread_entries
from langctx.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
RESULTS_JSON = ROOT / "bench" / "results" / "summary_wait.json"
RESULTS_MD = ROOT / "bench" / "results" / "summary_wait.md"
THREAD = {"configurable": {"thread_id": "summary-wait"}, "recursion_limit": 500}


@tool
def read_file(path: str) -> str:
    """Read a file of the repository."""
    n = path.rsplit("_", 1)[-1].removesuffix(".py")
    return "\n".join(f"def f_{n}_{i}(x):  return x * {i} + {n}  # line {i}" for i in range(60))


class Session:
    """The agent's model: ``calls - 1`` tool calls per user turn, then an answer."""

    def __init__(self, calls: int) -> None:
        self.calls = calls
        self.turn = 0
        self.step = 0

    def respond(self, _: list[BaseMessage]) -> AIMessage:
        self.step += 1
        if self.step >= self.calls:
            return AIMessage(f"Turn {self.turn}: read them all, nothing to fix.")
        path = f"src/mod_{self.turn * self.calls + self.step}.py"
        call = {"name": "read_file", "args": {"path": path}, "id": f"c-{self.turn}-{self.step}"}
        return AIMessage("", tool_calls=[call])


def _build(
    db: str, args: argparse.Namespace, waits: list[float] | None = None
) -> tuple[Any, Session, _common.Stopwatch, _common.Stopwatch, list[int]]:
    session = Session(args.calls)
    model = ScriptedChatModel(responses=[session.respond], cycle=True, latency=args.model_latency)
    asked: list[int] = []

    def summary(_: list[BaseMessage]) -> str:
        asked.append(1)
        return "Goal:\n- read every module\nCurrent status:\n- modules read, all clean"

    summarizer = ScriptedChatModel(responses=[summary], cycle=True, latency=args.summary_latency)
    outer, inner = _common.Stopwatch("outer"), _common.Stopwatch("inner")

    def listen(event: Any) -> None:  # langctx >= summary_wait says how long a fold waited
        if waits is not None and event.phase == "end" and hasattr(event, "waited_s"):
            waits.append(event.waited_s * 1000)

    langctx_mw = LangctxMiddleware(summarizer=summarizer, on_compaction=listen)
    graph = create_agent(
        model,
        tools=[read_file],
        middleware=[outer, langctx_mw, inner],
        checkpointer=SqliteSaver(sqlite3.connect(db, check_same_thread=False)),
    )
    return graph, session, outer, inner, asked


def _worker(conn: Connection, db: str, args: argparse.Namespace) -> None:
    """Serve the turns sent over ``conn`` (None: stop, then send the summarizer calls made and
    the folds' waits for background summaries)."""
    waits: list[float] = []
    graph, session, outer, inner, asked = _build(db, args, waits)
    while (turn := conn.recv()) is not None:
        session.turn, session.step = turn, 0
        outer.steps.clear()
        inner.steps.clear()
        graph.invoke({"messages": [HumanMessage(f"Read the next modules ({turn}).")]}, THREAD)
        conn.send([o - i for o, i in zip(outer.steps, inner.steps, strict=True)])
    conn.send((len(asked), waits))


def _run(workers: int, args: argparse.Namespace) -> dict[str, Any]:
    """One session served by ``workers`` processes in turn; the added wait of every model call."""
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "thread.sqlite")
        pipes, procs = [], []
        for _ in range(workers):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(there, db, args), daemon=True)
            proc.start()
            pipes.append(here)
            procs.append(proc)
        added: list[float] = []
        started = time.perf_counter()
        for turn in range(args.turns):
            pipes[turn % workers].send(turn)
            added += pipes[turn % workers].recv()
        wall = time.perf_counter() - started
        calls, waits = 0, []
        for pipe, proc in zip(pipes, procs, strict=True):
            pipe.send(None)
            asked, waited = pipe.recv()
            calls, waits = calls + asked, waits + waited
            proc.join(30)
        values = _build(db, args)[0].get_state(THREAD).values
        comps = thread_entries(read_batches(None, None, values), values.get("langctx"))[0]
    folds = [e for e in comps if e["trigger"] != "merge"]
    applied = [e for e in comps if e["trigger"] == "merge" and e["level"] == 1]
    return {
        "workers": workers,
        "model_calls": len(added),
        "wall_s": round(wall, 1),
        "added_ms_median": round(statistics.median(added), 1),
        "added_ms_p90": round(statistics.quantiles(added, n=10)[-1], 1),
        "added_ms_worst": round(max(added), 1),
        "added_s_total": round(sum(added) / 1000, 2),
        "fold_wait_ms_worst": round(max(waits), 1) if waits else None,
        "folds": len(folds),
        "model_summaries_applied": len(applied),
        "summarizer_calls": calls,
    }


def _table(results: dict[str, Any]) -> str:
    head = (
        "| langctx | workers | model calls | added wait per call, median ms | p90 | worst | "
        "total s | a fold's wait for summaries, worst ms | folds | model summaries applied | "
        "summarizer calls |\n"
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n"
    )
    rows = []
    for label, run in results.items():
        for r in run["rows"]:
            worst = r.get("fold_wait_ms_worst")
            wait = "n/a" if worst is None else f"{worst:,}"
            rows.append(
                f"| {label} | {r['workers']} | {r['model_calls']} | {r['added_ms_median']:,} "
                f"| {r['added_ms_p90']:,} | {r['added_ms_worst']:,} | {r['added_s_total']} "
                f"| {wait} | {r['folds']} | {r['model_summaries_applied']} | {r['summarizer_calls']} |"
            )
    return head + "\n".join(rows) + "\n"


def _write_md(results: dict[str, Any]) -> None:
    any_run = next(iter(results.values()))
    a = any_run["args"]
    text = (
        "# Background summaries: the wait they add to the agent's model calls\n\n"
        "Generated by `bench/summary_wait.py` (run by hand, once per langctx: `--label`). A "
        "scripted `create_agent` agent with `LangctxMiddleware(summarizer=...)` at its defaults "
        f"(8,000-token budget) on a `SqliteSaver` thread: {a['turns']} user turns of "
        f"{a['calls']} model calls ({a['calls'] - 1} `read_file` calls of ~2.5 KB, then an "
        f"answer). The agent's model answers after {a['model_latency']} s, the summarizer after "
        f"{a['summary_latency']} s. Two workers: two processes serve the turns in turn over the "
        "same SQLite file. *Added wait* per model call: the outermost `wrap_model_call` less "
        "the model call (langctx's work and its wait for background summaries).\n\n"
        + _table(results)
        + "\n"
    )
    for label, run in results.items():
        env = run["env"]
        text += (
            f"- {label}: {env['machine']}, load average at start "
            f"{env['load_average_at_start']}; {', '.join(f'{k} {v}' for k, v in env['versions'].items())}.\n"
        )
    RESULTS_MD.write_text(text, encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--label", required=True, help="the langctx measured (a table row)")
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--calls", type=int, default=6, help="model calls per user turn")
    parser.add_argument("--model-latency", type=float, default=0.5)
    parser.add_argument("--summary-latency", type=float, default=5.0)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    env = _common.environment(["langchain-core", "langchain", "langgraph"])
    rows = []
    for workers in (1, 2):
        row = _run(workers, args)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.no_write:
        return
    results = json.loads(RESULTS_JSON.read_text()) if RESULTS_JSON.exists() else {}
    results[args.label] = {"rows": rows, "args": vars(args), "env": env}
    _common.write_json(RESULTS_JSON, results)
    _write_md(results)


if __name__ == "__main__":
    main()
