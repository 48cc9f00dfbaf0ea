"""Writing a compaction: entries, merges, in-place edits, budget truncation, the eviction log."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage

from langctx.blocks import cut_text_blocks, has_opaque_blocks
from langctx.config import DEFAULT_PRIORITIES
from langctx.engine import placeholders, planning, summarizer_calls
from langctx.engine.layers import latest_fold
from langctx.engine.placeholders import map_strings
from langctx.engine.plan import Plan
from langctx.entries import (
    MAX_LEVEL,
    CompactionEntry,
    EditEntry,
    EvictionRecord,
    covered_count,
    entry_facts,
    new_compaction_entry,
    new_edit_entry,
    next_seq,
    summary_order,
)
from langctx.entry_bounds import MAX_ENTRY_BYTES, within_bytes
from langctx.errors import BudgetError
from langctx.files_in_hand import FilesPart, fold_files
from langctx.markers import TRUNCATION_MARK
from langctx.monotone import largest
from langctx.projection import view_message
from langctx.subagent_reports import ReportsPart, fold_reports
from langctx.summarize.sections import merge_sections
from langctx.summarize.text import merge_read_summary_facts, truncate_to_tokens
from langctx.user_messages import ledger_appended

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore
    from langctx.engine.summarizer_calls import Steps

logger = logging.getLogger("langctx")


def commit(mem: MemoryCore, plan: Plan, summary: str, quality: str) -> CompactionEntry | None:
    if not plan.batch:
        if plan.placeholders:  # replaced in place, no fold needed
            _apply_edits(mem, plan.placeholders)
            detail = (
                f"{len(plan.placeholders)} large tool outputs replaced in place; no fold needed"
            )
            _record_edits(mem, "placeholder", plan.trigger, plan.placeholders, detail)
        return None
    covered = [mem._id(i) for i in plan.batch]
    answered = [  # earlier folded requests this batch answers (the task's is in the facts)
        {**item, "answer": plan.answered[item["id"]]}
        for item in mem._users[0]
        if item["id"] in plan.answered and not item.get("answer")
    ]
    if plan.users or answered:  # each folded user message stored once, in the ledger; the
        mem._users = ledger_appended(mem._users, [*answered, *plan.users])  # entry counts them
        mem._users_log.extend([*answered, *plan.users])
    files = _files_in_hand(mem, plan)
    reports = _reports(mem, plan)
    entry = write_entry(
        mem,
        summary,
        plan.request.facts if plan.request is not None else {},
        seq=next_seq(mem._entries),
        level=1,
        covered_ids=covered,
        covered_count=len(covered) + sum(covered_count(e) for e in plan.absorbed),
        first_kept_id=mem._id(plan.cut) if plan.cut < len(mem._log) else None,
        tokens_before=plan.tokens_before,
        trigger=plan.trigger,
        quality=quality,
        merged_from=[e["id"] for e in plan.absorbed],
        instructions=plan.request.instructions if plan.request is not None else None,
        pending_tokens=plan.pending if quality == "mechanical" else None,
        parts={"files": files, "reports": reports},
    )
    mem._first_kept = plan.cut  # the block is rendered once the merges it causes are done
    folded = sum(mem._tok[i] for i in plan.batch)
    detail = f"folded {len(plan.batch)} messages into {entry['id']} ({quality})"
    record(mem, "compact", plan.trigger, covered, folded, detail)
    kept = [e for e in plan.placeholders if e["message_id"] not in mem._edit_of]
    if kept:  # what the fold keeps is sent anew: its long call arguments go now, at no cache cost
        _apply_edits(mem, kept)
        detail = f"long tool-call arguments of {len(kept)} kept messages elided"
        _record_edits(mem, "placeholder", plan.trigger, kept, detail)
    return entry


def _files_in_hand(mem: MemoryCore, plan: Plan) -> FilesPart | None:
    """The files in hand after ``plan``'s fold (None: ``files_share`` is 0)."""
    if mem.config.files_tokens <= 0:
        return None
    return fold_files(
        *_fold_parts(mem, plan, "files"),
        max_tokens=mem.config.files_tokens,
        count=mem.counter.count_text,
        file_tools=mem._file_tools,
        command_tools=mem._command_tools,
    )


def _reports(mem: MemoryCore, plan: Plan) -> ReportsPart | None:
    """The sub-agent reports after ``plan``'s fold (None: none, or ``reports_share`` is 0)."""
    if mem.config.reports_tokens <= 0:
        return None
    return fold_reports(
        *_fold_parts(mem, plan, "reports"),
        tools=mem.config.subagent_tools,
        max_tokens=mem.config.reports_tokens,
        count=mem.counter.count_text,
    )


def _fold_parts(
    mem: MemoryCore, plan: Plan, part: str
) -> tuple[Any, list[BaseMessage], list[BaseMessage]]:
    """The latest fold's ``part`` (None: none), ``plan``'s folded messages and the kept ones."""
    previous = latest_fold(mem._entries)
    held = previous.get(part) if previous is not None else None
    return held, [mem._log[i] for i in plan.batch], mem._log[plan.cut :]


def write_entry(
    mem: MemoryCore,
    summary: str,
    facts: Mapping[str, Any],
    *,
    tokens_before: int | None = None,
    pending_tokens: int | None = None,
    seq: int | None = None,
    parts: Mapping[str, Mapping[str, Any] | None] | None = None,
    **fields: Any,
) -> CompactionEntry:
    """A new active entry of ``summary``, stamped for a window restore (``tokens_after`` later),
    with the block's ``parts`` (files in hand, reports) and its read paths within
    :data:`~langctx.entry_bounds.MAX_ENTRY_BYTES`."""
    entry = new_compaction_entry(
        summary=summary,
        summary_tokens=mem.counter.count_text(summary),
        tokens_before=mem._full_tokens() if tokens_before is None else tokens_before,
        tokens_after=0,
        read_files=facts.get("read_files", []),
        modified_files=facts.get("modified_files", []),
        facts=facts,
        **fields,
    )
    if pending_tokens is not None:
        entry["pending_tokens"] = pending_tokens
    if seq is not None:
        entry["seq"] = seq
    if entry["trigger"] != "merge":
        entry["task_id"] = mem._id(mem._task_idx) if mem._task_idx is not None else None
        entry["last_id"] = mem._id(len(mem._log) - 1) if mem._log else None
    if mem._pc is not None:
        entry["provider_compaction_id"] = mem._id(mem._pc)
    for key, part in (parts or {}).items():
        if part is not None:
            entry[key] = dict(part)  # type: ignore[literal-required]
    within_bytes(entry, MAX_ENTRY_BYTES)
    # ``_active`` stays in summary order: the sort is stable, the entry the newest
    mem._entries.append(entry)
    gone = set(entry["merged_from"])
    live = [e for e in mem._active if e["id"] not in gone]
    mem._active = sorted([*live, entry], key=summary_order)
    return entry


def merge_locally(mem: MemoryCore, unseen: Collection[str] = (), *, folded: bool = True) -> None:
    """After a fold (``folded``; the caller holds the lock): the merges that need no model call,
    then the summary block rendered once (:func:`merging` asks the model for the rest)."""
    merged: list[CompactionEntry] = []
    while (group := planning.merge_group(mem, unseen)) is not None:
        done = _merge_without_model(mem, group)
        if done is None:
            break
        merged.append(_commit_merge(mem, group, *done))
    if folded or merged:
        _rendered(mem, merged)


def merging(mem: MemoryCore, unseen: Collection[str] = ()) -> Steps[None]:
    """Merge the summaries over their caps, asking the model where it must (``unseen``: see
    :func:`~langctx.engine.planning.merge_group`)."""
    merged: list[CompactionEntry] = []
    while (group := planning.merge_group(mem, unseen)) is not None:
        done = _merge_without_model(mem, group)
        if done is None:
            done = yield from summarizer_calls.summarizing(mem, planning.merge_request(mem, group))
        with mem._lock:
            merged.append(_commit_merge(mem, group, *done))
    if merged:  # the summary block re-rendered once after a cascade of merges
        with mem._lock:
            _rendered(mem, merged)


def _rendered(mem: MemoryCore, merged: Sequence[CompactionEntry]) -> None:
    """The summary block and the layer sizes after a fold or merges; each merge's size after."""
    mem._refresh()
    for entry in merged:
        entry["tokens_after"] = mem.context_tokens()


def _merge_without_model(mem: MemoryCore, group: list[CompactionEntry]) -> tuple[str, str] | None:
    """``group`` merged by sections, else locally (``background_summaries``); None: ask the model."""
    cap, count = mem.config.max_summary_tokens_resolved, mem.counter.count_text
    if mem.summarizer is mem._local:  # computed here, once, cut as a summarizer's would be
        local = mem._local.summarize(planning.merge_request(mem, group))
        return truncate_to_tokens(local, cap, count), "merged"
    text = merge_sections([e["summary"] for e in group], max_tokens=cap, count=count)
    if text is not None:
        return text, "merged"
    if mem.config.background_summaries:
        return mem._local.summarize(planning.merge_request(mem, group)), "merged"
    return None


def _commit_merge(
    mem: MemoryCore, group: list[CompactionEntry], text: str, quality: str
) -> CompactionEntry:
    facts = merge_read_summary_facts(*[entry_facts(e) for e in group])
    entry = write_merge(mem, group, text, quality, min(group[0]["level"] + 1, MAX_LEVEL), facts)
    ids, tokens = [e["id"] for e in group], sum(e["summary_tokens"] for e in group)
    detail = f"merged {len(group)} level-{group[0]['level']} summaries into {entry['id']}"
    record(mem, "merge", "merge", ids, tokens, detail)
    return entry


def write_merge(
    mem: MemoryCore,
    group: Sequence[CompactionEntry],
    text: str,
    quality: str,
    level: int,
    facts: Mapping[str, Any],
) -> CompactionEntry:
    """A new entry of ``text`` standing for ``group`` (it folds no message itself: they did); a
    level-1 entry (a model summary replacing a local one) takes the place of the first."""
    seq = group[0].get("seq") if level == 1 else None
    return write_entry(
        mem,
        text,
        facts,
        seq=seq,
        level=level,
        covered_ids=[],
        covered_count=sum(covered_count(e) for e in group),
        first_kept_id=group[-1]["first_kept_id"],
        trigger="merge",
        quality=quality,
        merged_from=[e["id"] for e in group],
    )


def _apply_edits(mem: MemoryCore, edits: Sequence[EditEntry]) -> None:
    for e in edits:
        i = mem._pos[e["message_id"]]
        mem._edits.append(e)
        mem._edit_of[e["message_id"]] = e
        mem._views[i] = view_message(mem._log[i], e)
        mem._vtok[i] = e["tokens_after"]
    mem._refresh_recent()


def _record_edits(
    mem: MemoryCore, action: str, trigger: str, edits: Sequence[EditEntry], detail: str
) -> None:
    """Record applied ``edits`` (if any) in the eviction log, with the tokens they saved."""
    if edits:
        saved = sum(e["tokens_before"] - e["tokens_after"] for e in edits)
        record(mem, action, trigger, [e["message_id"] for e in edits], saved, detail)


def enforce_budget(mem: MemoryCore, trigger: str, keep: int | None = None) -> None:
    """Cut kept tool outputs over their share of ``keep``, then the newest turn if still too big."""
    budget = mem.config.max_tokens_resolved
    floor = placeholders.edit_floor(mem)
    pinned = mem._pinned()  # their own policy: `check_pinned`
    recent = [
        i
        for i in range(max(mem._recent_start(), floor + 1), len(mem._log))
        if i not in mem._skip and i not in pinned and not has_opaque_blocks(mem._log[i])
    ]
    edits: list[EditEntry] = []
    if keep:
        cap = min(keep, mem.config.output_cap_tokens)
        outputs = [
            i
            for i in recent
            if mem._view_tokens(i) > cap
            and mem.priority_of(mem._id(i)) <= DEFAULT_PRIORITIES["tool_result"]
        ]
        shared = _shared_cap([mem._view_tokens(i) for i in outputs], keep)
        edits += _apply_cut(mem, outputs, min(cap, shared))
    if mem._full_tokens() > min(budget, mem.config.high_mark):
        over = mem._full_tokens() - min(budget, mem.config.high_mark - budget // 10)
        sizes = [mem._view_tokens(i) for i in recent]
        edits += _apply_cut(mem, recent, _shared_cap(sizes, sum(sizes) - over))
    detail = "kept messages over their share of the budget: head and tail kept, marked"
    _record_edits(mem, "truncate", trigger, edits, detail)


def _apply_cut(mem: MemoryCore, ids: Sequence[int], cap: int) -> list[EditEntry]:
    """Messages ``ids`` larger than ``cap`` cut to it; the edits are applied and returned."""
    edits = [e for i in ids if (e := _truncation(mem, i, cap)) is not None]
    _apply_edits(mem, edits)
    return edits


TRUNCATED_FLOOR_TOKENS = 16
"""What a cut message keeps at least (its marker and a few words)."""


def _shared_cap(sizes: Sequence[int], room: int) -> int:
    """The largest ``cap`` with ``sum(min(s, cap)) <= room`` (water-filling), never below the floor."""
    hi = max(sizes, default=TRUNCATED_FLOOR_TOKENS)
    return largest(lambda cap: sum(min(s, cap) for s in sizes) <= room, hi, TRUNCATED_FLOOR_TOKENS)


def _truncation(mem: MemoryCore, i: int, keep_tokens: int) -> EditEntry | None:
    """Cut message ``i`` (its text, and the string arguments of its tool calls) to ``keep_tokens``."""
    m = mem._log[i]
    view = mem._view(i)
    before = mem._view_tokens(i)
    if before <= keep_tokens or has_opaque_blocks(m):
        return None  # signed / encrypted blocks travel whole: the message is kept or folded
    calls = [dict(tc) for tc in view.tool_calls] if isinstance(view, AIMessage) else []
    mid = str(m.id)
    ratio = max(keep_tokens - 40, 0) / before
    for _ in range(12):  # shrink until it fits: cutting changes the mix of the text
        shorten = partial(_cut_text, ratio=ratio, message_id=mid)
        text = view.content
        content = shorten(text) if isinstance(text, str) else cut_text_blocks(text, shorten)
        update: dict[str, Any] = {"content": content}
        if calls:  # provider blocks that repeat the arguments are cut alike
            cut = [{**tc, "args": map_strings(tc.get("args", {}), shorten)} for tc in calls]
            update = placeholders.with_calls(content, cut)
        after = mem.counter.count_message(m.model_copy(update=update))
        if after <= keep_tokens or ratio <= 0:
            break
        ratio *= 0.85
    if after >= before:
        return None
    return new_edit_entry(
        message_id=mid, reason="truncate", tokens_before=before, tokens_after=after, **update
    )


def check_pinned(mem: MemoryCore) -> None:
    pinned = mem._pinned()
    allowed = mem.config.pinned_cap_tokens
    total = sum(mem._view_tokens(i) for i in pinned)
    if total <= allowed:
        return
    if mem.config.oversize_policy == "error":
        raise BudgetError(
            f"pinned messages (system + task) take {total} tokens but only {allowed} fit beside "
            "the summaries and the reserve; raise max_context_tokens, shorten the task, or use "
            "oversize_policy='truncate'."
        )
    over = total - allowed
    edits: list[EditEntry] = []
    for i in sorted(pinned, key=lambda i: -mem._view_tokens(i)):
        if over <= 0:
            break
        before = mem._view_tokens(i)
        edit = _truncation(mem, i, max(before - over - 24, 16))
        if edit is not None:
            edits.append(edit)
            over -= before - edit["tokens_after"]
    if edits:
        _apply_edits(mem, edits)
        detail = "pinned messages larger than their share of the budget: head and tail kept, marked"
        _record_edits(mem, "truncate_pinned", "add", edits, detail)
        logger.warning(
            "langctx: pinned messages truncated to fit the budget (full text stays in the log)"
        )


def record_block_room(mem: MemoryCore) -> None:
    """Record in the eviction log when what the summary block gives up to the newest turn
    changes (:meth:`~langctx.engine.core.MemoryCore._sent_block`): the request's prefix changed
    without a fold or an edit."""
    given = mem._block_tokens - mem._sent_block()[1]
    if given == mem._block_given:
        return
    mem._block_given = given
    detail = (
        f"the summary block gave up {given} tokens to the newest turn, which cannot be cut further"
        if given
        else "the summary block is whole again"
    )
    record(mem, "shrink_block" if given else "restore_block", "budget", [], given, detail)


def record(
    mem: MemoryCore, action: str, trigger: str, ids: list[str], tokens: int, detail: str
) -> None:
    mem._evictions.append(
        EvictionRecord(
            at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            action=action,
            trigger=trigger,
            ids=list(ids),
            tokens=int(tokens),
            detail=detail,
        )
    )


def _cut_text(text: str, ratio: float, message_id: str) -> str:
    """``text`` over 200 characters cut to about ``ratio`` of it: head and tail around a marker."""
    if len(text) <= 200:
        return text
    keep_chars = int(len(text) * ratio)
    head = keep_chars * 2 // 3
    tail = keep_chars - head
    cut = len(text) - keep_chars
    marker = "\n" + TRUNCATION_MARK.format(cut=cut, message_id=message_id) + "\n"
    return text[:head] + marker + (text[-tail:] if tail else "")
