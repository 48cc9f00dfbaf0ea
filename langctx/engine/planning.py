"""Compaction planning: triggers, where to cut, what to replace in place, what to merge."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ToolMessage,
)
from langchain_core.messages.tool import ToolCall

from langctx.blocks import has_opaque_blocks
from langctx.cache_mark import cheapest_mark, mark_floor
from langctx.engine import background
from langctx.engine.elision import elide_args, with_call_args
from langctx.engine.plan import MAX_LEVEL, SUMMARY_OVERHEAD, Plan, Trigger
from langctx.entries import (
    CompactionEntry,
    EditEntry,
    entry_facts,
    new_edit_entry,
)
from langctx.facts import (
    empty_facts,
    extract_facts,
    is_command_tool,
)
from langctx.machinery import substantive_text
from langctx.markers import (
    PLACEHOLDER_MARK,
)
from langctx.summarize import (
    SummaryRequest,
)
from langctx.summarize.text import merge_summary_facts, summary_facts
from langctx.turns import group_units

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory

logger = logging.getLogger("langctx")


def _due(self: LayeredChatMemory, after_ai_with_usage: bool) -> Trigger | None:
    if not self._log:
        return None
    last = self._log[-1]
    tokens = self.calibrated_tokens()
    if (
        tokens <= _mark(self, tokens)
        and self._context_tokens_raw() <= self.config.max_tokens_resolved
    ):
        return None
    if after_ai_with_usage and isinstance(last, AIMessage) and last.usage_metadata:
        return "threshold"
    return "proactive"


def _mark(self: LayeredChatMemory, tokens: int) -> int:
    """The mark ``tokens`` is compared with (:func:`~langctx.cache_mark.cheapest_mark`)."""
    config = self.config
    if config.cache_write_ratio is None:
        return config.high_mark
    task = [] if self._task_idx is None else [self._task_idx]
    pinned = sum(self._view_tokens(i) for i in [*self._system_idx, *task])
    floor = mark_floor(config, pinned=pinned, block=self._block_tokens)
    if tokens <= floor:
        return floor
    start = self._recent_start()
    calls = sum(isinstance(m, AIMessage) for m in self._log[start:])
    raw = self._context_tokens_raw()
    return cheapest_mark(config, tokens=raw, pinned=pinned, block=self._block_tokens, calls=calls)


def _plan(
    self: LayeredChatMemory,
    trigger: str,
    instructions: str | None,
    keep_override: int | None = None,
) -> Plan | None:
    # what the model was sent last (before a finished upgrade changes the block), for a
    # summarizer that reads the span from the provider's cache
    sent = self.build_context() if getattr(self.summarizer, "wants_context", False) else []
    self._settle_upgrade(wait=trigger in ("threshold", "proactive") and not instructions)
    tokens_before = self.context_tokens()
    n = len(self._log)
    lo = max(self._first_kept, self._pc_unit().stop)  # never fold the provider's compaction
    grouping = group_units(self._log[lo:n])
    starts = [lo + u.start for u in grouping.units]
    if not starts:
        return None
    keep = self._keep_target() if keep_override is None else max(0, keep_override)
    cut = starts[-1]
    acc = self._span_tokens(cut, n)
    for s, nxt in zip(reversed(starts[:-1]), reversed(starts), strict=False):
        add = self._span_tokens(s, nxt)
        if acc + add > keep:
            break
        acc += add
        cut = s
    t = self._task_idx
    if t is not None and lo <= t and cut <= t:
        # Never leave the task behind a summary: fold everything before it as well.
        cut = next((s for s in starts if s > t), n)
    if cut > lo and self._live_thinking():
        # A fold changes what precedes the live run's thinking blocks, which Anthropic then
        # rejects: fold the live run with it (the request ends with the summary), or wait
        # for the results of calls still open.
        if grouping.units[-1].pending:
            return None
        cut = n
    target = self._head_tokens() + keep
    placeholders: list[EditEntry] = []
    if trigger in ("threshold", "proactive") and cut > lo:
        placeholders = self._plan_placeholders(lo, cut, self.context_tokens() - target)
        saved = sum(e["tokens_before"] - e["tokens_after"] for e in placeholders)
        if placeholders and self.context_tokens() - saved <= target:
            self._apply_edits(placeholders, trigger)
            self._record(
                "placeholder",
                trigger,
                [e["message_id"] for e in placeholders],
                saved,
                f"{len(placeholders)} large tool outputs replaced in place; no fold needed",
            )
            return Plan(
                trigger, tokens_before, self._first_kept, [], [], None, "none", placeholders
            )
    batch = [
        i
        for i in range(lo, cut)
        if i not in self._skip and i not in self._system_idx and i != self._task_idx
    ]
    if not batch:
        return Plan(trigger, tokens_before, self._first_kept, [], [], None, "none")
    msgs = [self._log[i] for i in batch]
    facts = summary_facts(msgs, extract=self._extract)
    if self.summarizer is self._local:
        absorbed = self._mechanical()
        quality = "local"
    else:
        absorbed = [e for e in self._mechanical() if not background.running(e["id"])]
        pending = sum(self._tok[i] for i in batch) + sum(pending_tokens(e) for e in absorbed)
        asked = bool(instructions) or trigger in ("manual", "overflow")
        quality = (
            "model" if asked or pending >= self.config.summary_threshold_resolved else "mechanical"
        )
    if absorbed:
        facts = merge_summary_facts(*[entry_facts(e) for e in absorbed], facts)
    request = SummaryRequest(
        kind="turns",
        messages=msgs,
        summaries=[e["summary"] for e in absorbed],
        facts=facts,
        task=self._task_text(),
        instructions=instructions,
        max_tokens=self.config.max_summary_tokens_resolved,
        context=sent,
    )
    plan = Plan(trigger, tokens_before, cut, batch, absorbed, request, quality)
    plan.placeholders = self._kept_placeholders(cut, keep)  # applied with the fold
    if quality == "local":
        return plan
    plan.pending = pending
    if quality == "model" and absorbed:
        request = self._chain_request(request, absorbed)
    if quality == "model" and self.config.background_summaries and not asked:
        plan.quality, plan.upgrade = "mechanical", request  # folded now, summarized off the path
    else:
        plan.request = request
    return plan


def _mechanical(self: LayeredChatMemory) -> list[CompactionEntry]:
    """Active level-1 summaries written without the model, oldest first."""
    return [e for e in self._active if e["level"] == 1 and e["quality"] == "mechanical"]


def pending_tokens(entry: CompactionEntry) -> int:
    """Evicted tokens a mechanical entry stands for that no model summary has seen."""
    value = entry.get("pending_tokens")
    return value if isinstance(value, int) else 0


def _chain_request(
    self: LayeredChatMemory, request: SummaryRequest, absorbed: Sequence[CompactionEntry]
) -> SummaryRequest:
    """``request`` with the messages of the mechanical summaries it absorbs, where the log still
    holds them (their local summaries stand in for what it does not)."""
    by_id = {e["id"]: e for e in self._entries}
    messages: list[BaseMessage] = []
    missing: list[str] = []
    for entry in absorbed:
        spans = [self._folded(e) for e in _chain(entry, by_id)]
        if any(span is None for span in spans):
            missing.append(entry["summary"])  # the log no longer holds all of it (archived)
        messages.extend(m for span in spans for m in span or ())
    return replace(request, messages=[*messages, *request.messages], summaries=missing)


def _chain(entry: CompactionEntry, by_id: dict[str, CompactionEntry]) -> list[CompactionEntry]:
    """A mechanical entry and the mechanical entries it absorbed, oldest first."""
    out: list[CompactionEntry] = []
    for mid in entry["merged_from"]:
        prior = by_id.get(mid)
        if prior is not None and prior["quality"] == "mechanical":
            out.extend(_chain(prior, by_id))
    out.append(entry)
    return out


def _folded(self: LayeredChatMemory, entry: CompactionEntry) -> list[BaseMessage] | None:
    """The messages ``entry`` folded, from the log (None: not all of them are in it).

    A persisted entry may list only its first and last id (``langctx.channel.slim_covered``);
    its messages are then the log between them, pinned messages and repaired orphans aside.
    """
    ids = entry["covered_ids"]
    if not ids:
        return []
    if all(i in self._pos for i in ids):
        return [self._log[self._pos[i]] for i in ids]
    if ids[0] not in self._pos or ids[-1] not in self._pos:
        return None
    pinned = {*self._system_idx, self._task_idx}
    lo, hi = self._pos[ids[0]], self._pos[ids[-1]]
    span = [self._log[i] for i in range(lo, hi + 1) if i not in pinned and i not in self._skip]
    return span if len(span) == len(ids) else None


def _keep_target(self: LayeredChatMemory) -> int:
    """Recent tokens to keep: the low mark, lowered if the head would leave no hysteresis."""
    head_after = self._head_tokens() + self.config.max_summary_tokens_resolved + SUMMARY_OVERHEAD
    room = self.config.high_mark - head_after - self.config.max_tokens_resolved // 10
    room -= max(0, self._calibration)  # what the provider counts beyond our messages (tools, ...)
    return max(0, min(self.config.keep_recent_tokens_resolved, room))


def _plan_placeholders(self: LayeredChatMemory, lo: int, hi: int, excess: int) -> list[EditEntry]:
    """Large low-priority tool outputs in [lo, hi) replaced by a short note, lowest priority first."""
    floor = self._edit_floor()
    cands = [
        i
        for i in range(max(lo, floor + 1), hi)
        if isinstance(self._log[i], ToolMessage)
        and i not in self._skip
        and self._id(i) not in self._edit_of
        and self._view_tokens(i) >= self.config.placeholder_min_tokens
    ]
    cands.sort(key=lambda i: (self.priority_of(self._id(i)), i))
    out: list[EditEntry] = []
    saved = 0
    for i in cands:
        if saved >= excess:
            break
        edit = self._placeholder(i)
        if edit is not None:
            out.append(edit)
            saved += edit["tokens_before"] - edit["tokens_after"]
    return out


def _kept_placeholders(self: LayeredChatMemory, cut: int, keep: int) -> list[EditEntry]:
    """Placeholder edits for the older part of what a fold keeps: the request is written anew
    after the summary anyway, so an edit there breaks no cache (the newest half of ``keep`` stays
    verbatim)."""
    n = len(self._log)
    protect, acc = n, 0
    while protect > cut and acc + self._view_tokens(protect - 1) <= keep // 2:
        protect -= 1
        acc += self._view_tokens(protect)
    floor = self._edit_floor()
    out = []
    for i in range(max(cut, floor + 1), protect):
        if (
            isinstance(self._log[i], AIMessage)
            and i not in self._skip
            and self._id(i) not in self._edit_of
            and i not in self._system_idx
            and i != self._task_idx
            and self._view_tokens(i) >= self.config.placeholder_min_tokens
        ):
            edit = self._placeholder(i)
            if edit is not None:
                out.append(edit)
    return out


def _placeholder(self: LayeredChatMemory, i: int) -> EditEntry | None:
    """The edit replacing message ``i`` in place: a tool output by a note, a tool call's long
    string arguments (a file written, an edit's text) by their size (None: nothing to save)."""
    m, view = self._log[i], self._view(i)
    update: dict[str, Any]
    if isinstance(m, ToolMessage):
        update = {"content": self._placeholder_text(i)}
    elif isinstance(view, AIMessage) and view.tool_calls and not has_opaque_blocks(m):
        calls = [self._elided_call(tc) for tc in view.tool_calls]
        by_id = {str(tc["id"]): tc["args"] for tc in calls}
        update = {"content": with_call_args(view.content, by_id), "tool_calls": calls}
    else:
        return None
    before = self._view_tokens(i)
    after = self.counter.count_message(view.model_copy(update=update))
    if after >= before:
        return None
    return new_edit_entry(
        message_id=self._id(i),
        reason="placeholder",
        content=update["content"],
        tool_calls=update.get("tool_calls"),
        tokens_before=before,
        tokens_after=after,
    )


def _elided_call(self: LayeredChatMemory, call: ToolCall) -> ToolCall:
    """``call`` with its long string arguments elided, or whole when it is a shell command (the
    command is the record of what it changed) or when a file it names would go unnamed (a
    patch's later files)."""
    if is_command_tool(call["name"], self.command_tools):
        return call
    args = elide_args(call["args"])
    if args == call["args"]:
        return call
    facts = self._extract([AIMessage("", tool_calls=[call])])
    kept = json.dumps(args, ensure_ascii=False)
    if any(f not in kept for f in [*facts["read_files"], *facts["modified_files"]]):
        return call
    return {**call, "args": args}


def _placeholder_text(self: LayeredChatMemory, i: int) -> str:
    m = self._log[i]
    assert isinstance(m, ToolMessage)
    owner = self._call_owner.get(m.tool_call_id)
    call: dict[str, Any] = {}
    if owner is not None:
        call = next(
            (
                tc
                for tc in getattr(self._log[owner], "tool_calls", [])
                if tc.get("id") == m.tool_call_id
            ),
            {},
        )
    # files from the call's arguments; error lines from the output when the call failed
    facts = self._extract([self._log[owner], m]) if owner is not None else empty_facts()
    files = [*facts["read_files"], *facts["modified_files"]]
    failed = [c for c in facts["commands"] if c.get("ok") is False]
    error_lines = [ln for e in facts["errors"][-1:] for ln in e.get("lines") or []][-3:]
    args = json.dumps(call.get("args", {}), ensure_ascii=False)
    args = args if len(args) <= 160 else args[:157] + "..."
    text = m.text
    parts = [
        f"{PLACEHOLDER_MARK} to save context]",
        f"tool: {m.name or call.get('name') or '?'} {args}",
        f"size: {len(text)} chars, {self._tok[i]} tokens",
    ]
    if files:
        parts.append("files: " + ", ".join(files[:5]))
    if failed or error_lines:
        code = failed[-1].get("exit_code") if failed else None
        parts.append(
            "failed"
            + (f" (exit {code})" if code is not None else "")
            + ": "
            + "; ".join(error_lines)
        )
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if first:
        parts.append(f"first line: {first[:120]}")
    parts.append("The full output is kept in the log; re-run the tool if you need it.")
    return "\n".join(parts)


def _edit_floor(self: LayeredChatMemory) -> int:
    """Index of the latest projected thinking message (-1: none).

    Nothing at or before a live thinking block is edited in place: Anthropic checks that the
    content before a thinking block is what the model saw when it wrote the block.
    """
    if not self._thinking:
        return -1
    last = self._thinking[-1]
    return last if last >= self._recent_start() else -1


def _task_text(self: LayeredChatMemory) -> str | None:
    if self._task_idx is None:
        return None
    return substantive_text(self._log[self._task_idx]) or self._log[self._task_idx].text


def _extract(self: LayeredChatMemory, messages: Sequence[BaseMessage]) -> Any:
    return extract_facts(messages, file_tools=self.file_tools, command_tools=self.command_tools)


def _merge_group(self: LayeredChatMemory) -> list[CompactionEntry] | None:
    """The next summaries to merge, oldest first, or None.

    Over ``max_summaries`` level-1 summaries, the oldest ``merge_count`` become one level 2;
    over ``max_level2`` level-2 summaries, the oldest ``merge_count`` merge *into* the level-3
    summary (one call, not a level 3 that a second merge would fold at once).
    """
    caps = {1: self.config.max_summaries, 2: self.config.max_level2, 3: 1}
    for level in (1, 2, 3):
        live = [e for e in self._active if e["level"] == level]
        if len(live) > caps[level]:
            if level == MAX_LEVEL:
                return live
            top = [e for e in self._active if e["level"] == MAX_LEVEL]
            group = live[: self.config.merge_count]
            return [*top, *group] if level == MAX_LEVEL - 1 else group
    if sum(e["summary_tokens"] for e in self._active) > self.config.summary_share_tokens:
        # over their share of the budget: merge the oldest below the caps too
        top = [e for e in self._active if e["level"] == MAX_LEVEL]
        for level in (1, 2):
            live = [e for e in self._active if e["level"] == level]
            if level == MAX_LEVEL - 1 and (top or len(live) >= 2) and live:
                return [*top, *live[: self.config.merge_count]]
            if len(live) >= 2:
                return live[: self.config.merge_count]
    return None


def _merge_request(self: LayeredChatMemory, group: list[CompactionEntry]) -> SummaryRequest:
    return SummaryRequest(
        kind="merge",
        summaries=[e["summary"] for e in group],
        facts=merge_summary_facts(*[entry_facts(e) for e in group]),
        task=self._task_text(),
        max_tokens=self.config.max_summary_tokens_resolved,
        level=min(group[0]["level"] + 1, MAX_LEVEL),
    )
