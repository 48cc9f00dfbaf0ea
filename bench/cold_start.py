"""Cold start: a worker's first model call on a 5,000-message thread, against a warm call.

Run by hand from the repository root (never in the test suite)::

    uv run --no-sync python bench/cold_start.py            # 5,000 messages, 7 runs (~4 min)
    uv run --no-sync python bench/cold_start.py --append --label "after X"  # add a section
    uv run --no-sync python bench/cold_start.py --runs 3 --no-write

A scripted ``create_agent`` agent with ``LangctxMiddleware(max_tokens=8000)`` (no archive) builds
the thread once on a ``SqliteSaver`` file (``durability="exit"``, 250 ``read_file`` turns of ~2 KB
a run). Then, per run, NEW processes on fresh copies of the file time ``agent.invoke`` of one user
message (the scripted model answers at once) and its model step (the outermost
``wrap_model_call``: langctx's work plus the model call):

- ``process``: the first call of the process, nothing warm;
- ``thread``: the process served a small thread first, so only this thread is cold; then warm
  calls; then one call after clearing every process-level cache found except the token counts,
  and one after clearing them all (middleware memories, token-count caches, langctx's
  ``functools`` caches and module-level caches: :func:`process_caches`);
- ``plain``: the same agent without langctx (LangGraph loading and saving 5,000 messages).

Medians over ``--runs`` processes. Writes ``bench/results/cold_start.md``.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import _common
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.sqlite import SqliteSaver

from langctx.cli.demo.session import SYSTEM_PROMPT, TASK, iter_turns
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel
from langctx.tokens import resolve_token_counter

ROOT = Path(__file__).resolve().parents[1]
RESULTS_MD = ROOT / "bench" / "results" / "cold_start.md"
MESSAGES = 5_000
RUNS = 7
WARM_CALLS = 5
BUDGET = 8_000
CHUNK = 250
"""Tool turns per run (then the agent answers and the user says "Go on")."""
OUTPUT_BYTES = 2_000
SEED = 5
THREAD = "big"
MODES = ("process", "thread", "plain")


# ---------------------------------------------------------------------- the thread


def _outputs(turns: int) -> list[str]:
    corpus = "\n".join(
        str(m.content) for turn in iter_turns(240, seed=SEED) for m in turn[1:]
    ).encode()
    step = 997  # a prime stride, so consecutive outputs differ
    out = []
    for k in range(turns):
        start = (k * step) % (len(corpus) - OUTPUT_BYTES)
        text = corpus[start : start + OUTPUT_BYTES].decode("utf-8", "ignore")
        out.append(f"# src/calc/module_{k % 40}.py (read {k})\n{text}")
    return out


def _tool_turns(messages: int) -> int:
    """Tool turns so that the thread holds ``messages``: 2 a turn, plus 2 a run (user, answer)."""
    turns = 0
    while 2 * turns + 2 * -(-turns // CHUNK) < messages:
        turns += 1
    return turns


def build(path: Path, messages: int) -> dict[str, Any]:
    """Write the thread into ``path``; what it holds and how long it took."""
    turns = _tool_turns(messages)
    outputs = _outputs(turns)
    responses: list[AIMessage] = []
    for k in range(turns):
        call = {"id": f"call_{k}", "name": "read_file", "args": {"path": f"m{k % 40}.py"}}
        responses.append(AIMessage(f"Reading module {k % 40}.", tool_calls=[call], id=f"ai-{k}"))
        if (k + 1) % CHUNK == 0 or k == turns - 1:
            responses.append(AIMessage(f"Checkpoint {k // CHUNK}: still looking.", id=f"ans-{k}"))

    @tool
    def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Read a file of the repository."""
        return outputs[int(tool_call_id.removeprefix("call_"))]

    model = ScriptedChatModel(responses=responses)
    started = time.perf_counter()
    with SqliteSaver.from_conn_string(str(path)) as saver:
        agent = create_agent(
            model,
            tools=[read_file],
            system_prompt=SYSTEM_PROMPT,
            middleware=[LangctxMiddleware(max_tokens=BUDGET)],
            checkpointer=saver,
        )
        cfg = _config(THREAD)
        text, n = TASK, 0
        while model._index < len(model.responses):
            agent.invoke({"messages": [HumanMessage(text, id=f"user-{n}")]}, cfg, durability="exit")
            n += 1
            text = f"Go on ({n})."
        state = agent.get_state(cfg).values
    return {
        "messages": len(state["messages"]),
        "entries": len(state["langctx"]["compactions"]),
        "runs": n,
        "db_bytes": path.stat().st_size,
        "build_s": time.perf_counter() - started,
    }


# ---------------------------------------------------------------------- one measuring process


def _config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 4 * CHUNK + 10}


def process_caches(middleware: Any, counter: Any) -> list[tuple[str, bool, Callable[[], None]]]:
    """Every process-level cache found: (name, holds token counts, clear).

    The middleware's per-thread memories, the token counter's own cache, and in langctx's modules
    the ``functools`` caches and module-level langctx objects with a ``clear()`` (a class named
    ``*Count*`` holds token counts)."""
    found: list[tuple[str, bool, Callable[[], None]]] = []
    memories = getattr(middleware, "memories", None)
    if memories is not None and hasattr(memories, "forget"):
        found.append(("LangctxMiddleware.memories", False, memories.forget))
    if hasattr(counter, "clear_cache"):
        found.append((f"{type(counter).__name__} cache", True, counter.clear_cache))
    seen: set[int] = set()
    for name, module in sorted(sys.modules.items()):
        if not name.startswith("langctx") or module is None:
            continue
        for attr, value in vars(module).items():
            if id(value) in seen:
                continue
            if isinstance(value, functools._lru_cache_wrapper):
                seen.add(id(value))
                found.append((f"{name}.{attr}", False, value.cache_clear))
            elif (
                not isinstance(value, type)
                and type(value).__module__.startswith("langctx")
                and callable(getattr(value, "clear", None))
            ):
                seen.add(id(value))
                counts = "Count" in type(value).__name__
                found.append((f"{name}.{attr}", counts, value.clear))
    return found


def measure(mode: str, db: Path) -> dict[str, Any]:
    """One process: build the agent, time the calls ``mode`` asks for."""
    model = ScriptedChatModel(responses=["Noted."], cycle=True)
    counter = resolve_token_counter("approximate")
    middleware = LangctxMiddleware(max_tokens=BUDGET, token_counter=counter)
    watch = _common.Stopwatch()
    out: dict[str, Any] = {"mode": mode}
    with SqliteSaver.from_conn_string(str(db)) as saver:
        agent = create_agent(
            model,
            tools=[],
            system_prompt=SYSTEM_PROMPT,
            middleware=[watch] if mode == "plain" else [watch, middleware],
            checkpointer=saver,
        )

        def call(thread: str) -> tuple[float, float]:
            gc.collect()
            start = time.perf_counter()
            agent.invoke({"messages": [HumanMessage("Go on.")]}, _config(thread))
            return (time.perf_counter() - start) * 1000, watch.steps[-1]

        if mode != "process":
            call("warm-up")  # another thread: the process is warm, this thread is not
        out["cold"] = call(THREAD)
        if mode == "process":
            return out
        out["warm"] = [call(THREAD) for _ in range(WARM_CALLS)]
        if mode == "plain":
            return out
        caches = process_caches(middleware, counter)
        out["caches"] = [(name, counts) for name, counts, _ in caches]
        for _, counts, clear in caches:
            if not counts:
                clear()
        out["counts_kept"] = call(THREAD)
        call(THREAD)
        for _, _, clear in caches:
            clear()
        out["cleared"] = call(THREAD)
        messages = agent.get_state(_config(THREAD)).values["messages"]
        start = time.perf_counter()
        resolve_token_counter("approximate").count_messages(messages)
        out["count_ms"] = (time.perf_counter() - start) * 1000
    return out


def child(mode: str, base: Path, workdir: Path, n: int) -> dict[str, Any]:
    """Run :func:`measure` in a new process on a fresh copy of the thread's file."""
    db = workdir / f"{mode}-{n}.sqlite"
    shutil.copyfile(base, db)
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode, str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    db.unlink()
    if proc.returncode != 0:
        raise RuntimeError(f"{mode} run {n} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------- report

LABELS = {
    "process": "langctx: first call of a new process",
    "thread": "langctx: cold thread, new process (it served another thread first)",
    "cleared": "langctx: every process-level cache cleared (same process)",
    "counts_kept": "langctx: every cache cleared but the token counts (same process)",
    "thread-warm": "langctx: warm call (same process, same thread)",
    "plain": "no langctx: cold thread, new process",
    "plain-warm": "no langctx: warm call",
}


def summarize(results: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per row: median and min total ms, median model-step ms, samples."""
    rows: dict[str, list[tuple[float, float]]] = {}
    for r in results:
        rows.setdefault(r["mode"], []).append(tuple(r["cold"]))
        rows.setdefault(f"{r['mode']}-warm", []).extend(tuple(w) for w in r.get("warm", []))
        for key in ("cleared", "counts_kept"):
            if key in r:
                rows.setdefault(key, []).append(tuple(r[key]))
    out = {
        key: {
            "total_ms": statistics.median(t for t, _ in vals),
            "min_ms": min(t for t, _ in vals),
            "step_ms": statistics.median(s for _, s in vals),
            "n": len(vals),
        }
        for key, vals in rows.items()
        if vals
    }
    counts = [r["count_ms"] for r in results if "count_ms" in r]
    out["count"] = {"total_ms": statistics.median(counts), "n": len(counts)}
    return out


def section(
    stats: dict[str, dict[str, float]],
    thread: dict[str, Any],
    caches: list[tuple[str, bool]],
    env: dict[str, Any],
    runs: int,
    wall: float,
    code: str,
) -> list[str]:
    """The results of one run, as a section of the results file."""
    warm = stats["thread-warm"]
    lines = [
        f"## {code}",
        "",
        f"{wall / 60:.1f} min wall; {env['machine']}; load average at start "
        f"{env['load_average_at_start']} (other jobs shared the machine: compare ratios). "
        f"The thread: {thread['messages']:,} messages ({thread['db_bytes'] / 1e6:.1f} MB file, "
        f"{thread['runs']} runs), {thread['entries']:,} compaction entries in the channel, built "
        f"in {thread['build_s']:.0f} s. Medians over {runs} new processes per cold row "
        f"({WARM_CALLS} warm calls in each).",
        "",
        "| call | total ms, median | min | model step ms (langctx + model) | total / warm | n |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for key, label in LABELS.items():
        if key in stats:
            s = stats[key]
            lines.append(
                f"| {label} | {s['total_ms']:,.1f} | {s['min_ms']:,.1f} | {s['step_ms']:,.1f} "
                f"| {s['total_ms'] / warm['total_ms']:.2f}x | {s['n']} |"
            )
    cold = stats["thread"]
    lines += [
        "",
        f"Cold thread / warm: **{cold['total_ms'] / warm['total_ms']:.2f}x** in total "
        f"({cold['total_ms']:,.0f} vs {warm['total_ms']:,.0f} ms), "
        f"**{cold['step_ms'] / warm['step_ms']:.1f}x** in the model step "
        f"({cold['step_ms']:,.0f} vs {warm['step_ms']:,.1f} ms). Counting the thread's "
        f"{thread['messages']:,} messages with a fresh counter: {stats['count']['total_ms']:,.0f} "
        "ms. Process-level caches found and cleared (token counts marked *): "
        + ", ".join(f"`{name}`{'*' if counts else ''}" for name, counts in caches)
        + ".",
        "",
    ]
    return lines


INTRO = f"""# Cold start: the first model call of a worker on a long thread

Generated by `uv run --no-sync python bench/cold_start.py` (`--append` adds a section). A
scripted `create_agent` agent with `LangctxMiddleware(max_tokens={BUDGET:,})` (no archive) builds
one thread on a `SqliteSaver` file: `read_file` turns returning ~{OUTPUT_BYTES:,} bytes of the demo
session's text, {CHUNK} tool turns a run, `durability="exit"`, until the checkpoint holds the
messages asked for; its `langctx` channel holds the compactions of the whole session. Each
measured call is `agent.invoke` of one user message on that thread; the scripted model answers at
once, so *total* is LangGraph loading and saving the checkpoint plus langctx, and the *model step*
(the outermost `wrap_model_call`) is langctx's work plus the model call. Every cold-process row
runs a new process on a fresh copy of the file. Versions: {{versions}}.
"""


def _code() -> str:
    """The commit measured (and whether the tree had local changes)."""
    import langctx

    repo = Path(langctx.__file__).resolve().parents[1]
    git = ["git", "-C", str(repo)]
    head = subprocess.run([*git, "log", "-1", "--format=%h %s"], capture_output=True, text=True)
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "langctx"], capture_output=True, text=True
    )
    if head.returncode != 0:
        return f"langctx at {repo} (not a git checkout)"
    return head.stdout.strip()[:80] + (" + local changes" if dirty.stdout.strip() else "")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=MESSAGES)
    parser.add_argument("--runs", type=int, default=RUNS)
    parser.add_argument("--append", action="store_true", help="add a section to the results")
    parser.add_argument("--label", default="", help="what the section measures (its heading)")
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "DB"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child[0], Path(args.child[1]))))
        return 0
    env = _common.environment(
        ["langchain-core", "langchain", "langgraph", "langgraph-checkpoint-sqlite"]
    )
    started = time.perf_counter()
    workdir = Path(tempfile.mkdtemp(prefix="langctx-cold-"))
    try:
        base = workdir / "thread.sqlite"
        thread = build(base, args.messages)
        print(f"thread: {thread}", flush=True)
        results = []
        for n in range(args.runs):
            for mode in MODES:
                r = child(mode, base, workdir, n)
                print(f"run {n} {mode}: cold {r['cold'][0]:.0f} ms", flush=True)
                results.append(r)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    stats = summarize(results)
    caches = next(r["caches"] for r in results if "caches" in r)
    wall = time.perf_counter() - started
    code = f"{args.label}: {_code()}" if args.label else _code()
    lines = section(stats, thread, caches, env, args.runs, wall, code)
    versions = ", ".join(f"{k} {v}" for k, v in env["versions"].items())
    text = "\n".join(lines)
    print(text)
    if not args.no_write:
        if args.append and RESULTS_MD.exists():
            RESULTS_MD.write_text(RESULTS_MD.read_text(encoding="utf-8") + "\n" + text)
        else:
            RESULTS_MD.write_text(INTRO.format(versions=versions) + "\n" + text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
