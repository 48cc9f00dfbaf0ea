"""One compaction from plan to entry, sync and async (the twins differ only at the summarizer call)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from langctx.engine import planning
from langctx.engine.plan import CompactionEvent, Plan
from langctx.entries import (
    CompactionEntry,
)
from langctx.telemetry import compaction_span

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory


def _start(self: LayeredChatMemory, plan: Plan | None) -> None:
    if plan is not None and self.on_compaction is not None:
        self.on_compaction(
            CompactionEvent(phase="start", trigger=plan.trigger, tokens_before=plan.tokens_before)
        )


def _compact(
    self: LayeredChatMemory, trigger: str, instructions: str | None, keep: int | None = None
) -> CompactionEntry | None:
    started = time.perf_counter()
    self._waited_s = 0.0
    plan = _planned(self, trigger, instructions, keep)
    self._start(plan)
    if plan is None:
        return None
    with compaction_span(self, plan) as span:  # the summarizer calls are its children
        calls = self._blocking_calls
        summary, quality = self._run(plan)
        entry = self._commit(plan, summary, quality)
        background = self._upgrade_later(plan, entry)
        self._merge_levels()
        span.record(self._finish(plan, entry, started, _mode(self, calls, background)))
    return entry


async def _acompact(
    self: LayeredChatMemory, trigger: str, instructions: str | None, keep: int | None = None
) -> CompactionEntry | None:
    started = time.perf_counter()
    self._waited_s = 0.0
    if trigger in ("threshold", "proactive") and not instructions:
        await self._await_upgrade()
    with self._lock:
        plan = _planned(self, trigger, instructions, keep)
    self._start(plan)
    if plan is None:
        return None
    with compaction_span(self, plan) as span:
        calls = self._blocking_calls
        summary, quality = await self._arun(plan)
        with self._lock:
            entry = self._commit(plan, summary, quality)
            background = self._upgrade_later(plan, entry)
        await self._amerge_levels()
        span.record(self._finish(plan, entry, started, _mode(self, calls, background)))
    return entry


def _planned(
    self: LayeredChatMemory, trigger: str, instructions: str | None, keep: int | None
) -> Plan | None:
    """Settle a finished background summary, then plan over the memory as it is."""
    # what the model was sent last (before a finished upgrade changes the block), for a
    # summarizer that reads the span from the provider's cache
    sent = self.build_context() if getattr(self.summarizer, "wants_context", False) else []
    self._settle_upgrade(wait=trigger in ("threshold", "proactive") and not instructions)
    return planning.plan(self, trigger, instructions, keep, sent=sent)


def _upgrade_later(self: LayeredChatMemory, plan: Plan, entry: CompactionEntry | None) -> bool:
    """Start the background model summary of a fold written with its local summary."""
    if plan.upgrade is None or entry is None:
        return False
    return self._launch_upgrade(entry, plan.upgrade)


def _mode(self: LayeredChatMemory, calls_before: int, background: bool) -> str:
    if self._blocking_calls > calls_before or self._waited_s > 0.05:
        return "blocking"
    return "background" if background else "none"


def _finish(
    self: LayeredChatMemory,
    plan: Plan,
    entry: CompactionEntry | None,
    started: float,
    mode: str = "none",
) -> CompactionEvent:
    """Keep the budget, then tell the listener the compaction ended (the event is returned)."""
    self._enforce_budget(plan.trigger)
    if entry is not None:
        entry["tokens_after"] = self.context_tokens()
    event = CompactionEvent(
        phase="end",
        trigger=plan.trigger,
        tokens_before=plan.tokens_before,
        tokens_after=self.context_tokens(),
        duration_s=time.perf_counter() - started,
        entry=entry,
        edits=len(plan.placeholders),
        mode=mode,  # type: ignore[arg-type]
    )
    if self.on_compaction is not None:
        self.on_compaction(event)
    return event
