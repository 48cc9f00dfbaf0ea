"""The projection of a state's window computed directly, without building a memory.

Most model calls only need to know what the model sees and whether a compaction is due. For a
window of plain messages (no thinking blocks, no provider compaction item, every tool result
answering a call of the AI message before it, no repeated ids, pinned messages within their
share) that is a sum of per-message counts over the head, the summary block and the window, which
this module computes from the cached :func:`~langctx.count_cache.describe` records. Anything
else returns None, and the caller builds a :class:`~langctx.LayeredChatMemory` over the same
window, which handles every shape; ``tests/unit_tests/test_window.py`` checks the two agree.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> from langctx.state_memory import MemorySettings
    >>> s = MemorySettings.of(max_tokens=4000)
    >>> p = project_window([], [SystemMessage("Be brief.", id="s"), HumanMessage("Hi", id="h")],
    ...                    compactions=[], edits=[], settings=s)
    >>> [m.id for m in p.messages], p.due
    (['s', 'h'], False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.count_cache import CachedCounter, describe, describe_edited
from langctx.engine.layers import summary_block
from langctx.engine.restoring import active_positions, edits_by_message
from langctx.entries import CompactionEntry, EditEntry
from langctx.machinery import is_substantive_task

if TYPE_CHECKING:
    from langctx.state_memory import MemorySettings

__all__ = ["WindowProjection", "project_window"]


@dataclass(frozen=True, slots=True)
class WindowProjection:
    """What the model sees for a window, and what the triggers read."""

    messages: list[BaseMessage]
    tokens: int
    """Tokens of ``messages`` by the settings' counter."""
    calibrated: int
    """``tokens`` corrected by the latest response's ``usage_metadata`` (what triggers compare)."""
    due: bool
    """True when a compaction is due (above the high mark, or over the budget)."""


def project_window(
    head: Sequence[BaseMessage],
    window: Sequence[BaseMessage],
    *,
    compactions: Sequence[CompactionEntry],
    edits: Sequence[EditEntry],
    settings: MemorySettings,
) -> WindowProjection | None:
    """The projection of ``head`` + ``window`` (as :func:`~langctx.view_state` splits a state),
    or None when the window holds a shape only a memory handles."""
    config, counter = settings.config, settings.counter
    default_task = config.is_task is is_substantive_task
    see = counter.describe if isinstance(counter, CachedCounter) else partial(describe, counter)
    log = [*head, *window]
    n = len(log)
    tokens: list[int] = []
    views: list[BaseMessage] = []
    pos: dict[str, int] = {}
    systems: list[int] = []
    task: int | None = None
    leading = True
    open_calls: list[str] = []
    for i, m in enumerate(log):
        mid = m.id
        if mid is None or mid in pos or not isinstance(m, BaseMessage):
            return None
        pos[mid] = i
        d = see(m)
        if d.thinking or d.provider_compaction or d.refused:
            return None  # (the memory refuses what it must with its error)
        if isinstance(m, ToolMessage):
            if m.tool_call_id not in open_calls:
                return None  # an orphan: the memory leaves it out and records why
            open_calls.remove(m.tool_call_id)
        else:
            if open_calls:
                return None  # unanswered calls: the memory answers them with placeholders
            if d.call_ids:
                open_calls = list(d.call_ids)
            if leading and isinstance(m, SystemMessage):
                systems.append(i)
            else:
                leading = False
                if (
                    task is None
                    and isinstance(m, HumanMessage)
                    and (d.substantive if default_task else config.is_task(m))
                ):
                    task = i
        views.append(m if d.view is None else d.view)
        tokens.append(d.view_tokens)
    by_message = edits_by_message(edits)
    edited = (i for mid, i in pos.items() if mid in by_message) if by_message else ()
    for i in edited:
        for e in by_message[str(log[i].id)]:
            views[i], tokens[i] = describe_edited(counter, log[i], e)
    pinned = [*systems, *([task] if task is not None else [])]
    allowed = config.pinned_cap_tokens
    if sum(tokens[i] for i in pinned) > allowed:
        return None  # the memory truncates pinned messages (an edit to write)
    active = [compactions[k - 1] for k in active_positions(compactions)]
    block, block_tokens = summary_block(active, config, counter)
    start = len(head) if compactions else 0
    if start:
        while start < n and start in pinned:
            start += 1
    if task is not None and block is not None and task >= start:
        return None  # a task behind the summaries: the memory lifts it into the head
    head_idx = sorted(i for i in pinned if i < start) if start else []
    out = [views[i] for i in head_idx]
    head_tokens = sum(tokens[i] for i in head_idx) + block_tokens
    if block is not None:
        out.append(block)
    out.extend(views[start:])
    total = head_tokens + sum(tokens[start:])
    calibrated = max(0, total + _calibration(log, pos, tokens, compactions, start, head_tokens))
    due = calibrated > config.high_mark or total > config.max_tokens_resolved
    return WindowProjection(out, total, calibrated, due and n > 0)


def _calibration(
    log: Sequence[BaseMessage],
    pos: dict[str, int],
    tokens: Sequence[int],
    compactions: Sequence[CompactionEntry],
    start: int,
    head_tokens: int,
) -> int:
    """The correction from the latest response with usage since the latest cut (as the memory's
    ``_calibrate_window``): its real input + output minus the estimate of what it saw."""
    cut = next((e for e in reversed(compactions) if e["trigger"] != "merge"), None)
    last = cut.get("last_id", "") if cut is not None else None
    after = -1 if last is None else pos.get(last)
    if after is None:
        return 0  # an entry of an older langctx, or its log end is gone: no calibration
    for i in range(len(log) - 1, max(after, start - 1), -1):
        m = log[i]
        if isinstance(m, AIMessage) and m.usage_metadata:
            usage = m.usage_metadata
            real = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
            if real <= 0:
                return 0
            estimated = head_tokens + sum(tokens[start : i + 1])
            return max(-estimated // 2, real - estimated)
    return 0
