"""Drive a long scripted coding session through LayeredChatMemory and narrate each compaction."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from langchain_core.messages import BaseMessage

from langctx.cli.demo.session import SYSTEM_PROMPT, TASK, iter_turns
from langctx.entries import covered_count
from langctx.memory import CompactionEvent, LayeredChatMemory
from langctx.tokens import counting_label

__all__ = ["amnesia_probes", "run_engine_demo"]


def amnesia_probes(context: list[BaseMessage], memory: LayeredChatMemory) -> dict[str, bool]:
    """Which of the compaction chapter's must-keep facts are visible in ``context``."""
    text = "\n".join(m.text for m in context)
    modified = {p for e in memory.compactions for p in e["modified_files"]}
    return {
        "task": TASK in text,
        "constraints": "Do not edit the tests" in text,
        "files modified": all(p in text for p in modified) if modified else True,
        "latest failure": "AssertionError" in text,
        "next step": "ext step" in text or "Next I will" in text,
    }


def run_engine_demo(
    *,
    turns: int = 300,
    max_tokens: int = 8000,
    token_counter: str = "tiktoken",
    out: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Run the demo session; return its final figures."""
    from langchain_core.messages import HumanMessage, SystemMessage

    from langctx._tiktoken_offline import seed_tiktoken_cache

    seed_tiktoken_cache()

    def narrate(ev: CompactionEvent) -> None:
        if ev.phase == "end" and ev.entry is not None:
            e = ev.entry
            out(
                f"  ↳ compaction #{mem.stats()['compactions']} [{ev.trigger}] {ev.tokens_before} → {ev.tokens_after} tokens, "
                f"folded {covered_count(e)} messages, quality={e['quality']}, "
                f"files read {len(e['read_files'])} / modified {len(e['modified_files'])}"
            )
        elif ev.phase == "end" and ev.edits:
            out(
                f"  ↳ {ev.edits} large tool output(s) replaced by placeholders ({ev.tokens_before} → {ev.tokens_after})"
            )

    mem = LayeredChatMemory(
        max_tokens=max_tokens, token_counter=token_counter, on_compaction=narrate
    )
    out(
        f"langctx engine demo: {turns} scripted agent turns, budget {max_tokens} tokens "
        f"(counted {counting_label(mem.counter)})"
    )
    mem.add_messages([SystemMessage(SYSTEM_PROMPT), HumanMessage(TASK)])
    started = time.perf_counter()
    peak = 0
    for n, turn in enumerate(iter_turns(turns), start=1):
        mem.add_messages(turn)
        peak = max(peak, mem.context_tokens())
        if n % 25 == 0:
            out(
                f"turn {n:4d}: context {mem.context_tokens():6d} tokens, log {len(mem.messages):5d} messages"
            )
    elapsed = time.perf_counter() - started
    ctx = mem.build_context()
    probes = amnesia_probes(ctx, mem)
    full = mem.counter.count_messages(mem.messages)
    stats = mem.stats()
    out("")
    out(f"full history      {full:8d} tokens in {len(mem.messages)} messages (all kept in the log)")
    out(f"model sees        {mem.context_tokens():8d} tokens (peak {peak}, budget {max_tokens})")
    out(
        f"compactions       {stats['compactions']:8d}  merges {stats['merges']}, summaries by level {stats['summaries_by_level']}"
    )
    out("amnesia probes    " + ", ".join(f"{k}: {'yes' if v else 'NO'}" for k, v in probes.items()))
    out(f"time              {elapsed:8.2f} s ({1000 * elapsed / max(turns, 1):.2f} ms per turn)")
    return {"stats": stats, "probes": probes, "full_tokens": full, "peak": peak, "seconds": elapsed}
