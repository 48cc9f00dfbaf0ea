"""The whole agent at the defaults users get: CPU per step and checkpoint bytes, side by side.

Run by hand from the repository root::

    uv run --group bench python bench/agent_e2e.py                  # CPU at 100 and 600 turns,
                                                                    # bytes at 300 (~5 min)
    uv run --group bench python bench/agent_e2e.py --turns 2000 --bytes-turns 1000

``create_agent`` with a scripted model and a ``read_file`` tool returning ~3 KB (the session of
``bench/checkpoint_storage.py``: the agent answers and the user says "Go on" every 25 tool
turns), each approach at its own defaults, in one process, one after the other:

- ``plain``: no middleware (the log kept, nothing projected);
- ``langctx``: ``LangctxMiddleware(max_tokens=8000)``;
- ``summarization``: LangChain's ``SummarizationMiddleware(model=..., trigger=("tokens", 6400),
  keep=("tokens", 2400))`` with a scripted summarizer model and its default token counter.

CPU is process time (the model, the tools, the middleware, the checkpointer) on
``InMemorySaver``: in all and per tool step (median of the first and of the last 100 steps).
Bytes are a ``SqliteSaver`` file's after ``--bytes-turns`` turns, against the UTF-8 bytes of the
content the thread produced (the user's, the model's and the tool's messages). Results: ``bench/results/agent_e2e.md``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from checkpoint_storage import CHUNK, read_file_tool, script
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver

from langctx.cli.demo.session import SYSTEM_PROMPT, TASK
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
RESULTS_MD = ROOT / "bench" / "results" / "agent_e2e.md"
VARIANTS = ("plain", "langctx", "summarization")
EDGE = 100


@dataclass
class Run:
    variant: str
    turns: int
    saver: str
    cpu_s: float = 0.0
    step_cpu_ms: list[float] = field(default_factory=list)
    db_bytes: int = 0
    content_bytes: int = 0

    def edge(self, last: bool) -> float:
        steps = self.step_cpu_ms[-EDGE:] if last else self.step_cpu_ms[:EDGE]
        return statistics.median(steps) if steps else 0.0


def _middleware(variant: str) -> list[Any]:
    if variant == "langctx":
        return [LangctxMiddleware(max_tokens=8000)]
    if variant == "summarization":
        summarizer = ScriptedChatModel(
            responses=["Goal: fix the parser. Read the modules; nested lists still flatten."],
            cycle=True,
        )
        return [
            SummarizationMiddleware(
                model=summarizer, trigger=("tokens", 6400), keep=("tokens", 2400)
            )
        ]
    return []


def run(variant: str, turns: int, saver_kind: str, workdir: Path) -> Run:
    responses, by_call, runs = script(turns)
    read_file = read_file_tool(by_call)
    model = ScriptedChatModel(responses=responses)
    result = Run(variant, turns, saver_kind)
    db = workdir / f"{variant}-{turns}.sqlite"
    cfg: Any = {"configurable": {"thread_id": variant}, "recursion_limit": 10 * CHUNK + 20}
    gc.collect()
    with SqliteSaver.from_conn_string(str(db)) if saver_kind == "sqlite" else _nothing() as sqlite:
        saver = sqlite if saver_kind == "sqlite" else InMemorySaver()
        agent = create_agent(
            model,
            tools=[read_file],
            system_prompt=SYSTEM_PROMPT,
            middleware=_middleware(variant),
            checkpointer=saver,
        )
        started = time.process_time()
        for n in range(runs):
            message = HumanMessage(TASK if n == 0 else f"Go on ({n}).", id=f"user-{n}")
            last = time.process_time()
            for update in agent.stream({"messages": [message]}, cfg, stream_mode="updates"):
                if "tools" in update:
                    now = time.process_time()
                    result.step_cpu_ms.append((now - last) * 1000)
                    last = now
        result.cpu_s = time.process_time() - started
    texts = [TASK, *(f"Go on ({n})." for n in range(1, runs))]
    texts += [str(m.content) for m in responses] + list(by_call.values())
    result.content_bytes = sum(len(t.encode()) for t in texts)  # what the thread produced
    if saver_kind == "sqlite":
        result.db_bytes = sum(
            Path(f"{db}{s}").stat().st_size for s in ("", "-wal") if Path(f"{db}{s}").exists()
        )
        for s in ("", "-wal", "-shm"):
            Path(f"{db}{s}").unlink(missing_ok=True)
    return result


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def report(cpu: Sequence[Run], size: Sequence[Run], argv: str, wall: float) -> str:
    lines = [
        "# The whole agent at defaults: CPU per step and checkpoint bytes",
        "",
        f"Generated by `uv run --group bench python bench/agent_e2e.py{argv}` ({wall / 60:.1f} min "
        "wall; a 2-core machine shared with other work: compare the ratios of one run, not "
        "absolute times). Method: the module docstring of `bench/agent_e2e.py`.",
        "",
        "| variant | turns | CPU s (InMemorySaver) | vs SummarizationMiddleware | step ms first-100 / "
        "last-100 (median) | last / first |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    anchor = {r.turns: r.cpu_s for r in cpu if r.variant == "summarization"}
    for r in cpu:
        first, last = r.edge(False), r.edge(True)
        ratio = r.cpu_s / anchor[r.turns] if anchor.get(r.turns) else float("nan")
        lines.append(
            f"| {r.variant} | {r.turns:,} | {r.cpu_s:.1f} | {ratio:.2f}x | {first:.1f} / "
            f"{last:.1f} | {last / first if first else float('nan'):.2f} |"
        )
    lines += [
        "",
        "| variant | turns | SqliteSaver file | content of the thread | file / content |",
        "|---|--:|--:|--:|--:|",
    ]
    for r in size:
        lines.append(
            f"| {r.variant} | {r.turns:,} | {r.db_bytes / 1e6:.1f} MB | "
            f"{r.content_bytes / 1e6:.2f} MB | {r.db_bytes / max(1, r.content_bytes):.1f}x |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[100, 600])
    parser.add_argument("--bytes-turns", type=int, nargs="+", default=[300])
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cpu, size = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for turns in args.turns:
            for variant in VARIANTS:
                cpu.append(run(variant, turns, "memory", Path(tmp)))
                print(f"{variant} {turns}: {cpu[-1].cpu_s:.1f} s CPU", flush=True)
        for turns in args.bytes_turns:
            for variant in VARIANTS:
                size.append(run(variant, turns, "sqlite", Path(tmp)))
                print(f"{variant} {turns}: {size[-1].db_bytes / 1e6:.1f} MB", flush=True)
    shown = "" if argv is None and len(sys.argv) == 1 else " " + " ".join(sys.argv[1:])
    text = report(cpu, size, shown, time.perf_counter() - started)
    print(text)
    if not args.no_write:
        RESULTS_MD.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
