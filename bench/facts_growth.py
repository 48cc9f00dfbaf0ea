"""Does the facts ledger stay bounded on a long session? (issue 9, item 4)

A synthetic coding session: every turn reads a new file (a new path each turn) and every 50th turn
also edits a new file, through ``LayeredChatMemory(max_tokens=8000)`` with the local summarizer.
Reported: the JSON size of all compaction entries, of ``mem.to_state()`` and of the largest entry,
against the content size (message text + tool-call arguments); per-turn time (add the turn +
build the request) over the first and the last 1,000 turns; the ledger's tokens and how many of the
modified files the final request names by their whole paths.

With ``--user-every N`` a distinct one-to-three-sentence user message opens every Nth turn (issue
41: the channel must not grow with the thread); the channel is ``to_state()`` less ``messages``.

Run: ``uv run --no-sync python bench/facts_growth.py [--turns 20000] [--user-every 10]
[--label before]``; appends a section to ``bench/results/facts_growth.md`` with ``--write``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import time
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
    max_ctx = 0
    over = 0
    for t in range(turns):
        msgs = turn(t, user_every)
        logged.extend(msgs)
        start = time.perf_counter()
        mem.add_messages(msgs)
        ctx = mem.build_context()
        times.append(time.perf_counter() - start)
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
        "max_context_tokens": max_ctx,
        "requests_over_budget": over,
        "ledger_tokens": mem.counter.count_text(ledger),
        "modified_total": len(edited),
        "modified_folded": len(folded_edits),
        "modified_named": sum(named(p, hay) for p in folded_edits),
        "ledger_head": ledger[:400],
    }


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
    parser.add_argument("--label", default="run")
    parser.add_argument("--write", action="store_true", help="append to the results file")
    args = parser.parse_args()
    result = run(args.turns, args.user_every)
    text = markdown(args.label, result)
    print(text)
    if args.write:
        if not RESULTS.exists():
            RESULTS.write_text("# Facts ledger growth (bench/facts_growth.py)\n\n")
        with RESULTS.open("a") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
