"""One compaction from plan to entry, sync and async; the caller holds the memory's lock."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from langctx.engine import background, planning, summarizer_calls, writing
from langctx.engine.plan import CompactionEvent, Plan
from langctx.entries import CompactionEntry
from langctx.telemetry import compaction_span, notify

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore
    from langctx.engine.summarizer_calls import Steps


def compact(
    mem: MemoryCore, trigger: str, instructions: str | None, keep: int | None = None
) -> CompactionEntry | None:
    started = time.perf_counter()
    mem._waited_s = 0.0
    return summarizer_calls.drive(mem, _steps(mem, trigger, instructions, keep, started))


async def acompact(
    mem: MemoryCore, trigger: str, instructions: str | None, keep: int | None = None
) -> CompactionEntry | None:
    started = time.perf_counter()
    mem._waited_s = 0.0
    if trigger in ("threshold", "proactive") and not instructions:
        await background.await_upgrade(mem)
    return await summarizer_calls.adrive(mem, _steps(mem, trigger, instructions, keep, started))


def _steps(
    mem: MemoryCore, trigger: str, instructions: str | None, keep: int | None, started: float
) -> Steps[CompactionEntry | None]:
    """Plan, summarize, write, merge, keep the budget, tell the listener (locked on each access)."""
    with mem._lock:
        # what the model was sent last, before an upgrade changes the block (for a cache reader;
        # the block as rendered: the compaction due, not a shrunk block, makes the room)
        wants = getattr(mem.summarizer, "wants_context", False)
        sent = mem._projection(mem._block) if wants else []
        # a blocking compaction leaves the pending model summary: its fold takes the mechanical
        # entry and summarizes those messages anew (the same in every process, job or none)
        by_marks = trigger in ("threshold", "proactive") and not instructions
        settled = background.settle_upgrade(mem) if by_marks else background.Settled()
        waiting = settled.waiting_ids  # still running: no fold absorbs them
        plan = planning.plan(mem, trigger, instructions, keep, sent=sent, waiting=waiting)
    if plan is None:
        return None
    notify(mem._on_compaction, CompactionEvent("start", plan.trigger, plan.tokens_before))
    with compaction_span(mem, plan) as span:  # the summarizer calls are its children
        calls = mem._blocking_calls
        summary, quality = yield from _summary(mem, plan)
        with mem._lock:
            entry = writing.commit(mem, plan, summary, quality)
            later = background.launch_upgrade(mem, entry, plan.upgrade)
            # a model summary applied now is sent before it merges, and a pending one is left to
            # its job, unless a count cap forces them
            unseen = [*(e["id"] for e in settled.upgraded), *waiting]
            writing.merge_locally(mem, unseen, folded=entry is not None)
        yield from writing.merging(mem, unseen)
        background.merged_away(mem, settled.waiting)
        blocking = mem._blocking_calls > calls or mem._waited_s > 0.05
        writing.enforce_budget(mem, plan.trigger, plan.keep)
        if entry is not None:
            entry["tokens_after"] = mem.context_tokens()
        event = CompactionEvent(
            phase="end",
            trigger=plan.trigger,
            tokens_before=plan.tokens_before,
            tokens_after=mem.context_tokens(),
            duration_s=time.perf_counter() - started,
            entry=entry,
            edits=len(plan.placeholders),
            mode="blocking" if blocking else "background" if later else "none",
            waited_s=mem._waited_s,
        )
        notify(mem._on_compaction, event)
        span.record(event)
    return entry


def _summary(mem: MemoryCore, plan: Plan) -> Steps[tuple[str, str]]:
    """The plan's summary and its quality; only a plan for a model summary calls the summarizer."""
    if plan.request is None or plan.quality in ("local", "mechanical"):
        local = "" if plan.request is None else mem._local.summarize(plan.request)
        return local, plan.quality
    return (yield from summarizer_calls.summarizing(mem, plan.request))
