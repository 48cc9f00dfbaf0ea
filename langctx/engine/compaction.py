"""One compaction from plan to entry, sync and async (the twins differ only at the summarizer call)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from langctx.engine.plan import CompactionEvent, Plan
from langctx.entries import (
    CompactionEntry,
)

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
    plan = self._plan(trigger, instructions, keep)
    self._start(plan)
    if plan is None:
        return None
    summary, quality = self._run(plan)
    entry = self._commit(plan, summary, quality)
    self._merge_levels()
    self._finish(plan, entry, started)
    return entry


async def _acompact(
    self: LayeredChatMemory, trigger: str, instructions: str | None, keep: int | None = None
) -> CompactionEntry | None:
    started = time.perf_counter()
    with self._lock:
        plan = self._plan(trigger, instructions, keep)
    self._start(plan)
    if plan is None:
        return None
    summary, quality = await self._arun(plan)
    with self._lock:
        entry = self._commit(plan, summary, quality)
    await self._amerge_levels()
    self._finish(plan, entry, started)
    return entry


def _finish(
    self: LayeredChatMemory, plan: Plan, entry: CompactionEntry | None, started: float
) -> None:
    self._enforce_budget(plan.trigger)
    if entry is not None:
        entry["tokens_after"] = self.context_tokens()
    if self.on_compaction is not None:
        self.on_compaction(
            CompactionEvent(
                phase="end",
                trigger=plan.trigger,
                tokens_before=plan.tokens_before,
                tokens_after=self.context_tokens(),
                duration_s=time.perf_counter() - started,
                entry=entry,
                edits=len(plan.placeholders),
            )
        )
