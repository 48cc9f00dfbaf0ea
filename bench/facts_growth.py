"""Does the facts ledger stay bounded on a long session? (issue 9, item 4)

A synthetic coding session: every turn reads a new file (a new path each turn) and every 50th turn
also edits a new file, through ``LayeredChatMemory(max_tokens=8000)`` with the local summarizer.
Reported: the JSON size of all compaction entries, of ``mem.to_state()`` and of the largest entry,
against the content size (message text + tool-call arguments); per-turn time (add the turn +
build the request) over the first and the last 1,000 turns, and CPU per turn for each 1,000; the
ledger's tokens and how many of the modified files the final request names by their whole paths.

With ``--user-every N`` a distinct one-to-three-sentence user message opens every Nth turn (issue
41: the channel must not grow with the thread); the channel is ``to_state()`` less ``messages``.

With ``--graph`` the same session goes through the users' path instead: ``langctx.create_agent``
with ``LangctxMiddleware(max_tokens=8000)``, a ``SqliteSaver`` in a temporary file (``--saver
memory``: ``InMemorySaver``) and a scripted model; each user message is a new ``invoke`` on the same
thread (the model makes its N tool-calling turns, then answers). Reported: the ``langctx``
channel's JSON bytes and its largest entry at the end, the wall and CPU time per model turn over
the first and the last 1,000 turns and per 1,000 turns, the RSS growth and the file's size.

Run: ``uv run --no-sync python bench/facts_growth.py [--turns 20000] [--user-every 10] [--graph]
[--saver sqlite|memory] [--store] [--label before]``; appends a section to ``bench/results/facts_growth.md`` with ``--write``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "facts_growth.md"
PROJECT = "/home/dev/projects/webshop/"
EDIT_EVERY = 50
OUTPUT = (
    "def handler(request):\n    # validate the payload and dispatch to the service layer\n"
    "    data = request.json()\n    if not data:\n        raise ValueError('empty payload')\n"
    "    return service.dispatch(data)\n"
) * 2


def read_path(t: int) -> str:
    return f"{PROJECT}src/area_{t % 37}/pkg_{t % 5}/module_{t}.py"


def edit_path(k: int) -> str:
    return f"{PROJECT}src/area_{k % 11}/changed_{k}.py"


_ASKS = (
    "Look at the {area} checkout flow next.",
    "Check why {module} logs a warning on startup. It started after the last deploy.",
    "Please keep the public API of {module} stable. Only change the internals.",
    "Now add a test for the {area} refund path, then run the suite.",
    "The {area} pages feel slow on mobile. Can you profile {module} and tell me what you find?",
    "Do not touch the payment gateway config. Work around it in {module} instead.",
    "Rename the helper in {module} to something clearer and update its callers.",
    "Good progress. Next, look at how {area} handles an empty cart.",
)


def user_message(t: int) -> HumanMessage:
    """A distinct one-to-three-sentence request (its template, area and module vary with ``t``)."""
    text = _ASKS[(t // 7) % len(_ASKS)].format(area=f"area_{t % 37}", module=f"module_{t}.py")
    return HumanMessage(f"{text} (request {t})")


def turn(t: int, user_every: int = 0) -> list[Any]:
    asked = [user_message(t)] if user_every and t % user_every == 0 else []
    calls = [{"id": f"r{t}", "name": "read_file", "args": {"path": read_path(t)}}]
    if t % EDIT_EVERY == EDIT_EVERY - 1:
        k = t // EDIT_EVERY
        calls.append({"id": f"e{t}", "name": "edit_file", "args": {"path": edit_path(k)}})
    out: list[Any] = [*asked, AIMessage(f"Step {t}: reading the next module.", tool_calls=calls)]
    for c in calls:
        text = OUTPUT if c["name"] == "read_file" else "ok: 1 replacement"
        out.append(ToolMessage(text, tool_call_id=c["id"]))
    return out


def content_bytes(messages: list[Any]) -> int:
    total = 0
    for m in messages:
        total += len(str(m.content).encode())
        for c in getattr(m, "tool_calls", None) or []:
            total += len(json.dumps(c["args"]).encode())
    return total


def ledger_of(ctx: list[Any]) -> str:
    for m in ctx:
        text = str(m.content)
        if "<langctx:facts>" in text:
            return text.split("<langctx:facts>\n", 1)[1].split("\n</langctx:facts>", 1)[0]
    return ""


def named(path: str, hay: str) -> bool:
    """The whole path in the text, bounded by characters that cannot be part of it."""
    return re.search(r"(?<![\w./-])" + re.escape(path) + r"(?![\w/-]|\.\w)", hay) is not None


def run(turns: int, user_every: int = 0) -> dict[str, Any]:
    mem = LayeredChatMemory(max_tokens=8000)
    head = [SystemMessage("You are a coding agent."), HumanMessage("Refactor the web shop.")]
    mem.add_messages(head)
    logged = list(head)
    times: list[float] = []
    cpu: list[float] = []
    max_ctx = 0
    over = 0
    for t in range(turns):
        msgs = turn(t, user_every)
        logged.extend(msgs)
        start, started = time.perf_counter(), time.process_time()
        mem.add_messages(msgs)
        ctx = mem.build_context()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - started)
        tokens = mem.context_tokens()
        max_ctx = max(max_ctx, tokens)
        over += tokens > 8000
    entries = mem.compactions
    sizes = [len(json.dumps(e, ensure_ascii=False).encode()) for e in entries]
    snapshot = dict(mem.to_state())
    state = len(json.dumps(snapshot, ensure_ascii=False).encode())
    snapshot.pop("messages")
    channel = len(json.dumps(snapshot, ensure_ascii=False).encode())
    ledger = ledger_of(ctx)
    edited = [edit_path(k) for k in range(turns // EDIT_EVERY)]
    folded = {f for e in entries for f in e["modified_files"]}
    folded_edits = [p for p in edited if p in folded]
    hay = "\n".join(str(m.content) for m in ctx)
    n = min(1000, turns // 2)
    return {
        "turns": turns,
        "content_bytes": content_bytes(logged),
        "entries": len(entries),
        "entries_bytes": sum(sizes),
        "largest_entry_bytes": max(sizes, default=0),
        "state_bytes": state,
        "channel_bytes": channel,
        "user_every": user_every,
        "users_quoted": sum(f"(request {u})" in hay for u in range(0, turns, user_every or turns)),
        "first_ms": statistics.mean(times[:n]) * 1000,
        "last_ms": statistics.mean(times[-n:]) * 1000,
        "cpu_per_1000": [statistics.mean(cpu[k : k + 1000]) * 1000 for k in range(0, turns, 1000)],
        "max_context_tokens": max_ctx,
        "requests_over_budget": over,
        "ledger_tokens": mem.counter.count_text(ledger),
        "modified_total": len(edited),
        "modified_folded": len(folded_edits),
        "modified_named": sum(named(p, hay) for p in folded_edits),
        "ledger_head": ledger[:400],
    }


def rss_mb() -> float:
    """This process's resident set size now, in MB (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path("/proc/self/statm").read_text().split()
    except OSError:
        return 0.0
    return int(fields[1]) * os.sysconf("SC_PAGE_SIZE") / 1_000_000


def _scripted_turns(user_every: int) -> Callable[[list[Any]], AIMessage]:
    """The model's next step: the synthetic session's turns, an answer after each ``user_every``."""
    step = {"t": 0, "since": 0}

    def respond(messages: list[Any]) -> AIMessage:
        if step["since"] == user_every:
            step["since"] = 0
            return AIMessage("Done with this request.")
        t = step["t"]
        step["t"] += 1
        step["since"] += 1
        asked = turn(t)[0]  # the AI message of turn t (its tool calls)
        return AIMessage(asked.content, tool_calls=asked.tool_calls)

    return respond


def run_graph(
    turns: int, user_every: int, saver: str = "sqlite", store: bool = False
) -> dict[str, Any]:
    """The session through ``langctx.create_agent`` (one ``invoke`` per user message) on a
    ``SqliteSaver`` in a temporary file (``saver="memory"``: ``InMemorySaver``, which keeps
    every checkpoint in RAM and walks the whole parent chain at every run start); ``store``: a
    ``SqliteStore`` file of its own holds the folded log, else (the default) the store
    ``create_agent`` makes in the checkpointer's database."""
    import sqlite3
    import tempfile

    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.store.sqlite import SqliteStore

    import langctx
    from langctx.testing import ScriptedChatModel

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return OUTPUT

    @tool
    def edit_file(path: str) -> str:
        """Edit a file."""
        return "ok: 1 replacement"

    every = user_every or 10
    tmp = tempfile.TemporaryDirectory()
    checkpointer: Any = InMemorySaver()
    if saver == "sqlite":
        conn = sqlite3.connect(f"{tmp.name}/graph.db", check_same_thread=False)
        checkpointer = SqliteSaver(conn)
    archive: Any = None
    if store:
        archive = SqliteStore(
            sqlite3.connect(f"{tmp.name}/store.db", check_same_thread=False, isolation_level=None)
        )
        archive.setup()
    model = ScriptedChatModel(responses=[_scripted_turns(every)], cycle=True)
    agent = langctx.create_agent(
        model,
        [read_file, edit_file],
        memory=langctx.LangctxMiddleware(max_tokens=8000),  # archive="auto", the default
        checkpointer=checkpointer,
        store=archive,
        system_prompt="You are a coding agent.",
    )
    cfg = {"configurable": {"thread_id": "facts-growth"}, "recursion_limit": 4 * every + 10}
    rss0 = rss_mb()
    times: list[float] = []
    cpu: list[float] = []
    for t in range(0, turns, every):
        asked = [user_message(t)] if user_every else [HumanMessage("Go on.")]
        head = [HumanMessage("Refactor the web shop.")] if t == 0 else []
        start, start_cpu = time.perf_counter(), time.process_time()
        agent.invoke({"messages": [*head, *asked]}, cfg)
        n = min(every, turns - t)
        times += [(time.perf_counter() - start) / n] * n
        cpu += [(time.process_time() - start_cpu) / n] * n
        model.calls.clear()  # the fake keeps every input: not the memory's to hold
        if t and t % 1000 == 0:
            print(f"turn {t}: CPU {statistics.mean(cpu[-1000:]) * 1000:.2f} ms/turn", flush=True)
    channel = agent.get_state(cfg).values["langctx"]
    sizes = [len(json.dumps(e, ensure_ascii=False).encode()) for e in channel["compactions"]]
    n = min(1000, turns // 2)
    return {
        "turns": turns,
        "user_every": user_every,
        "channel_bytes": len(json.dumps(channel, ensure_ascii=False, default=str).encode()),
        "channel_entries": len(sizes),
        "largest_entry_bytes": max(sizes, default=0),
        "users_bytes": len(json.dumps(channel.get("users", []), ensure_ascii=False).encode()),
        "first_ms": statistics.mean(times[:n]) * 1000,
        "last_ms": statistics.mean(times[-n:]) * 1000,
        "first_cpu_ms": statistics.mean(cpu[:n]) * 1000,
        "last_cpu_ms": statistics.mean(cpu[-n:]) * 1000,
        "cpu_per_1000": [statistics.mean(cpu[k : k + 1000]) * 1000 for k in range(0, turns, 1000)],
        "rss_growth_mb": rss_mb() - rss0,
        "saver": saver,
        "store": store,
        "db_mb": _size_mb(tmp.name),
    }


def _size_mb(folder: str) -> float:
    return sum(p.stat().st_size for p in Path(folder).iterdir()) / 1_000_000


def graph_markdown(label: str, r: dict[str, Any]) -> str:
    rows = [
        ("`langctx` channel at the end, JSON", f"{r['channel_bytes'] / 1_000_000:.3f} MB"),
        (
            "entries in the channel / largest, JSON",
            f"{r['channel_entries']} / {r['largest_entry_bytes'] / 1000:.1f} KB",
        ),
        ("user-message ledger (`users`), JSON", f"{r['users_bytes'] / 1000:.1f} KB"),
        (
            "time per model turn, first / last 1,000 turns",
            f"{r['first_ms']:.2f} / {r['last_ms']:.2f} ms ({r['last_ms'] / r['first_ms']:.2f}x)",
        ),
        (
            "CPU per model turn, first / last 1,000 turns",
            f"{r['first_cpu_ms']:.2f} / {r['last_cpu_ms']:.2f} ms "
            f"({r['last_cpu_ms'] / r['first_cpu_ms']:.2f}x)",
        ),
        (
            "CPU per model turn, each 1,000 turns",
            ", ".join(f"{x:.1f}" for x in r["cpu_per_1000"]) + " ms",
        ),
        ("RSS growth over the run", f"{r['rss_growth_mb']:.0f} MB"),
        ("checkpointer file", f"{r['db_mb']:.1f} MB" if r["saver"] == "sqlite" else "(in RAM)"),
    ]
    users = f", a user message every {r['user_every']} turns" if r["user_every"] else ""
    lines = [f"## {label}", "", f"Code: `{commit()}`, {r['turns']:,} turns through "]
    saver = "SqliteSaver" if r["saver"] == "sqlite" else "InMemorySaver"
    stored = (
        " + `SqliteStore` (the folded log)"
        if r["store"]
        else " (the folded log in a store beside the checkpoints)"
    )
    lines[-1] += f"`langctx.create_agent` + `{saver}`{stored}{users}."
    lines += ["", "| measure | value |", "|---|---|", *[f"| {a} | {b} |" for a, b in rows], ""]
    return "\n".join(lines)


def commit() -> str:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True
    )
    return out.stdout.strip()[:100]


def markdown(label: str, r: dict[str, Any]) -> str:
    mb = 1_000_000
    rows = [
        ("content (message text + tool arguments)", f"{r['content_bytes'] / mb:.2f} MB"),
        ("compaction entries", f"{r['entries']:,}"),
        (
            "all entries, JSON",
            f"{r['entries_bytes'] / mb:.2f} MB ({r['entries_bytes'] / r['content_bytes']:.2f}x)",
        ),
        ("largest entry, JSON", f"{r['largest_entry_bytes'] / 1000:.1f} KB"),
        (
            "`mem.to_state()`, JSON",
            f"{r['state_bytes'] / mb:.2f} MB ({r['state_bytes'] / r['content_bytes']:.2f}x)",
        ),
        ("channel: `to_state()` less `messages`, JSON", f"{r['channel_bytes'] / mb:.2f} MB"),
        (
            "per-turn time, first / last 1,000 turns",
            f"{r['first_ms']:.2f} / {r['last_ms']:.2f} ms",
        ),
        (
            "CPU per turn, each 1,000 turns",
            ", ".join(f"{x:.2f}" for x in r["cpu_per_1000"]) + " ms",
        ),
        (
            "largest context / requests over 8,000",
            f"{r['max_context_tokens']:,} / {r['requests_over_budget']}",
        ),
        ("facts ledger in the last request", f"{r['ledger_tokens']:,} tokens"),
        (
            "modified files folded into entries / named in the last request",
            f"{r['modified_folded']} of {r['modified_total']} / {r['modified_named']}",
        ),
    ]
    users = ""
    if r["user_every"]:
        asked = len(range(0, r["turns"], r["user_every"]))
        rows.append(
            ("user messages asked / quoted in the last request", f"{asked} / {r['users_quoted']}")
        )
        users = f", a user message every {r['user_every']} turns"
    lines = [f"## {label}", "", f"Code: `{commit()}`, {r['turns']:,} turns{users}.", ""]
    lines += ["| measure | value |", "|---|---|"]
    lines += [f"| {a} | {b} |" for a, b in rows]
    lines += ["", "Start of the last request's ledger:", "", "```", r["ledger_head"], "```", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20_000)
    parser.add_argument("--user-every", type=int, default=0, help="a user message every N turns")
    parser.add_argument("--graph", action="store_true", help="through langctx.create_agent")
    parser.add_argument("--saver", choices=("sqlite", "memory"), default="sqlite")
    parser.add_argument("--store", action="store_true", help="a SqliteStore for the folded log")
    parser.add_argument("--label", default="run")
    parser.add_argument("--write", action="store_true", help="append to the results file")
    args = parser.parse_args()
    if args.graph:
        text = graph_markdown(
            args.label, run_graph(args.turns, args.user_every, args.saver, args.store)
        )
    else:
        text = markdown(args.label, run(args.turns, args.user_every))
    print(text)
    if args.write:
        if not RESULTS.exists():
            RESULTS.write_text("# Facts ledger growth (bench/facts_growth.py)\n\n")
        with RESULTS.open("a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
