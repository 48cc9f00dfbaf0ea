"""Compaction planning (pure: nothing is written): triggers, cuts, in-place edits, merges."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage

from langctx.cache_mark import cheapest_mark, mark_floor
from langctx.engine import placeholders
from langctx.engine.plan import SUMMARY_OVERHEAD, Plan, Trigger
from langctx.entries import MAX_LEVEL, CompactionEntry, entry_facts, user_count
from langctx.machinery import substantive_text
from langctx.requests import newest_request, track_answers
from langctx.summarize import SummaryRequest
from langctx.summarize.text import merge_read_summary_facts, summary_facts
from langctx.turns import group_units
from langctx.user_messages import ledger_tail

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore


def due(memory: MemoryCore, after_ai_with_usage: bool) -> Trigger | None:
    """The trigger that fires now ("threshold" right after a response with usage), if any."""
    if not memory._log:
        return None
    tokens, budget = memory.calibrated_tokens(), memory.config.max_tokens_resolved
    if tokens <= _mark(memory, tokens) and memory._full_tokens() <= budget:
        return None
    last = memory._log[-1]
    if after_ai_with_usage and isinstance(last, AIMessage) and last.usage_metadata:
        return "threshold"
    return "proactive"


def _mark(memory: MemoryCore, tokens: int) -> int:
    """The mark ``tokens`` is compared with (:func:`~langctx.cache_mark.cheapest_mark`)."""
    config = memory.config
    if config.cache_write_ratio is None:
        return config.high_mark
    pinned = sum(memory._view_tokens(i) for i in memory._pinned())
    floor = mark_floor(config, pinned=pinned, block=memory._block_tokens)
    if tokens <= floor:
        return floor
    start = memory._recent_start()
    calls = sum(isinstance(m, AIMessage) for m in memory._log[start:])
    raw = memory._full_tokens()
    return cheapest_mark(config, tokens=raw, pinned=pinned, block=memory._block_tokens, calls=calls)


def plan(
    memory: MemoryCore,
    trigger: str,
    instructions: str | None,
    keep_override: int | None = None,
    *,
    sent: Sequence[BaseMessage] = (),
    waiting: Collection[str] = (),
) -> Plan | None:
    """The next compaction (None: nothing to fold yet); ``sent``: what the model was sent last;
    ``waiting``: mechanical entries whose model summary is still running (not absorbed)."""
    tokens_before = memory._full_tokens()
    lo = max(memory._first_kept, memory._pc_unit().stop)  # never fold the provider's compaction
    grouping = group_units(memory._log[lo:])
    starts = [lo + u.start for u in grouping.units]
    if not starts:
        return None
    keep = _keep_target(memory) if keep_override is None else max(0, keep_override)
    cut = _cut(memory, lo, starts, keep)
    over = memory._full_tokens() > memory.config.max_tokens_resolved
    if (cut > lo or over) and memory._live_thinking():
        # Anthropic rejects thinking whose prefix changed: fold the live run too, or wait for it
        # (over the budget too: the summary block would shrink under the live thinking)
        if grouping.units[-1].pending:
            return None
        cut = _after_live_run(memory, lo)
    by_marks = trigger in ("threshold", "proactive")
    if by_marks and cut > lo:
        in_place = _in_place(memory, trigger, tokens_before, lo, cut, keep)
        if in_place is not None:
            return in_place
    pinned = memory._pinned()
    batch = [i for i in range(lo, cut) if i not in memory._skip and i not in pinned]
    marks_keep = keep if by_marks else None
    if not batch:
        return Plan(trigger, tokens_before, memory._first_kept, keep=marks_keep)
    out = Plan(trigger, tokens_before, cut, batch, quality="", keep=marks_keep)
    _fold(memory, instructions, out, context=list(sent), waiting=waiting)
    out.placeholders = placeholders.kept_placeholders(memory, cut, keep)  # applied with the fold
    return out


def _cut(memory: MemoryCore, lo: int, starts: Sequence[int], keep: int) -> int:
    """The first kept unit: back from the end while ``keep`` tokens allow, the task never behind."""
    n = len(memory._log)
    cut = starts[-1]
    acc = memory._span_tokens(cut, n)
    for s, nxt in zip(reversed(starts[:-1]), reversed(starts), strict=False):
        add = memory._span_tokens(s, nxt)
        if acc + add > keep:
            break
        acc += add
        cut = s
    t = memory._task_idx
    if t is not None and lo <= t and cut <= t:
        cut = next((s for s in starts if s > t), n)
    return cut


def _after_live_run(memory: MemoryCore, lo: int) -> int:
    """The cut that folds the live run whole, the user's messages after its last results kept."""
    t, cut = memory._task_idx, len(memory._log)
    stop = max(lo, -1 if t is None else t)
    while cut - 1 > stop and isinstance(memory._log[cut - 1], HumanMessage):
        cut -= 1
    return cut


def _in_place(
    memory: MemoryCore, trigger: str, tokens_before: int, lo: int, cut: int, keep: int
) -> Plan | None:
    """A plan that only replaces large tool outputs in place, when that is enough."""
    target = memory._head_tokens() + keep
    edits = placeholders.plan_placeholders(memory, lo, cut, memory._full_tokens() - target)
    saved = sum(e["tokens_before"] - e["tokens_after"] for e in edits)
    if not edits or memory._full_tokens() - saved > target:
        return None
    return Plan(trigger, tokens_before, memory._first_kept, placeholders=edits)


def _fold(
    memory: MemoryCore,
    instructions: str | None,
    out: Plan,
    context: list[BaseMessage],
    waiting: Collection[str],
) -> None:
    """Give ``out`` its summary request, the mechanical summaries it absorbs (all but those
    ``waiting`` for their model summary), and its quality."""
    msgs = [memory._log[i] for i in out.batch]
    absorbed = [
        e
        for e in memory._active
        if e["level"] == 1 and e["quality"] == "mechanical" and e["id"] not in waiting
    ]
    out.absorbed = absorbed
    facts = summary_facts(msgs, extract=partial(placeholders.extract, memory))
    out.users, out.answered = _answers(memory, msgs, facts.get("user_messages") or ())
    if out.users:  # the summarizer reads them with their answers
        facts["user_messages"] = out.users
    if (task := task_id(memory)) in out.answered:  # the task is pinned: its answer is a fact
        facts["task_answer"] = out.answered[task]
    if absorbed:
        facts = merge_read_summary_facts(*[request_facts(memory, e) for e in absorbed], facts)
    out.request = request = replace(
        _request(memory, "turns"),
        messages=msgs,
        summaries=[e["summary"] for e in absorbed],
        facts=facts,
        instructions=instructions,
        context=context,
    )
    if memory.summarizer is memory._local:
        out.quality = "local"
        return
    out.pending = sum(memory._tok[i] for i in out.batch) + sum(map(pending_tokens, absorbed))
    asked = bool(instructions) or out.trigger in ("manual", "overflow")
    if not asked and out.pending < memory.config.summary_threshold_resolved:
        out.quality = "mechanical"
        return
    chained = _chain_request(memory, request, absorbed) if absorbed else request
    if memory.config.background_summaries and not asked:  # folded now, summarized off the path
        out.quality, out.upgrade = "mechanical", chained
    else:
        out.quality, out.request = "model", chained


def task_id(memory: MemoryCore) -> str | None:
    """The pinned task's message id (None: no task)."""
    return None if memory._task_idx is None else memory._id(memory._task_idx)


def latest_request(memory: MemoryCore) -> str | None:
    """The newest request a fold has passed: the ledger's newest, else the pinned task."""
    return newest_request(memory._users[0]) or task_id(memory)


def _answers(
    memory: MemoryCore, msgs: Sequence[BaseMessage], users: Sequence[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The batch's user messages with the answers it holds, and the earlier request it answers."""
    before = latest_request(memory)
    answered, _ = track_answers(msgs, before)
    items = [{**u, "answer": answered[u["id"]]} if u["id"] in answered else u for u in users]
    return items, ({before: answered[before]} if before in answered else {})


def request_facts(memory: MemoryCore, entry: CompactionEntry) -> dict[str, Any]:
    """A fold entry's facts as a summary request reads them: its user messages from the ledger
    (the newest it holds: the entry is the latest fold, mechanical, awaiting its summary)."""
    facts = entry_facts(entry)
    if "user_messages" in facts or not (count := user_count(facts)):
        return facts  # an entry written before the ledger carries them
    items, dropped = ledger_tail(memory._users, count)
    facts["user_messages"] = items
    if dropped:
        facts["user_messages_dropped"] = dropped
    return facts


def pending_tokens(entry: CompactionEntry) -> int:
    """Evicted tokens a mechanical entry stands for that no model summary has seen."""
    value = entry.get("pending_tokens")
    return value if isinstance(value, int) else 0


def _chain_request(
    memory: MemoryCore, request: SummaryRequest, absorbed: Sequence[CompactionEntry]
) -> SummaryRequest:
    """``request`` with the messages of the mechanical summaries it absorbs, where the log has them."""
    by_id = {e["id"]: e for e in memory._entries}
    messages: list[BaseMessage] = []
    missing: list[str] = []
    for entry in absorbed:
        spans = [_folded(memory, e) for e in _chain(entry, by_id)]
        if any(span is None for span in spans):
            missing.append(entry["summary"])  # the log no longer holds all of it (archived)
        messages.extend(m for span in spans for m in span or ())
    return replace(request, messages=[*messages, *request.messages], summaries=missing)


def upgrade_request(memory: MemoryCore, entry: CompactionEntry) -> SummaryRequest | None:
    """The model summary replacing the mechanical ``entry``, rebuilt from the log (None: all gone)."""
    by_id = {e["id"]: e for e in memory._entries}
    own = _folded(memory, entry)
    absorbed = [by_id[i] for i in entry["merged_from"] if i in by_id]
    if own is None and not absorbed:
        return None
    request = replace(
        _request(memory, "turns"),
        messages=own or [],
        summaries=[] if own is not None else [entry["summary"]],
        facts=request_facts(memory, entry),
    )
    chained = _chain_request(memory, request, absorbed) if absorbed else request
    return replace(chained, summaries=[*request.summaries, *chained.summaries])


def archived(memory: MemoryCore, entry: CompactionEntry) -> bool:
    """True when what ``entry`` folded left the state for the append-only archive (unchangeable)."""
    stop, cut = memory._archived_to, entry["first_kept_id"]
    if stop is None or cut is None:
        return False
    pos = memory._pos
    return cut == stop or (cut in pos and stop in pos and pos[cut] <= pos[stop])


def _chain(entry: CompactionEntry, by_id: dict[str, CompactionEntry]) -> list[CompactionEntry]:
    """A mechanical entry and the mechanical entries it absorbed, oldest first."""
    out: list[CompactionEntry] = []
    for mid in entry["merged_from"]:
        prior = by_id.get(mid)
        if prior is not None and prior["quality"] == "mechanical":
            out.extend(_chain(prior, by_id))
    out.append(entry)
    return out


def _folded(memory: MemoryCore, entry: CompactionEntry) -> list[BaseMessage] | None:
    """The messages ``entry`` folded, from the log (None: not all of them are in it)."""
    ids = entry["covered_ids"]
    if all(i in memory._pos for i in ids):  # an entry that folded none too
        return [memory._log[memory._pos[i]] for i in ids]
    before = memory._before  # a window's memory: the log before the window, by id
    if before is not None:
        whole = ids if all(ids) else before.covered(entry["id"]) or ids  # slimmed when archived
        earlier = [before(i) for i in whole]
        if earlier and all(m is not None for m in earlier):
            return cast(list[BaseMessage], earlier)
    if ids[0] not in memory._pos or ids[-1] not in memory._pos:
        return None
    pinned = memory._pinned()
    lo, hi = memory._pos[ids[0]], memory._pos[ids[-1]]
    span = [memory._log[i] for i in range(lo, hi + 1) if i not in pinned and i not in memory._skip]
    return span if len(span) == len(ids) else None


def _keep_target(memory: MemoryCore) -> int:
    """Recent tokens to keep: the low mark, lowered if the head would leave no hysteresis."""
    config = memory.config
    head_after = memory._head_tokens() + config.max_summary_tokens_resolved + SUMMARY_OVERHEAD
    room = config.high_mark - head_after - config.max_tokens_resolved // 10
    room -= max(0, memory._calibration)  # what the provider counts beyond our messages (tools, ...)
    return max(0, min(config.keep_recent_tokens_resolved, room))


def _request(memory: MemoryCore, kind: Literal["turns", "merge"]) -> SummaryRequest:
    """An empty summary request of ``kind`` with the memory's task and summary cap."""
    task = None if memory._task_idx is None else memory._log[memory._task_idx]
    text = None if task is None else substantive_text(task) or task.text
    cap = memory.config.max_summary_tokens_resolved
    return SummaryRequest(kind=kind, task=text, max_tokens=cap)


def merge_group(memory: MemoryCore, unseen: Collection[str] = ()) -> list[CompactionEntry] | None:
    """The next summaries to merge, oldest first (level 2 into the level-3 summary), or None;
    the ids ``unseen`` (model summaries not sent yet, local ones whose model summary runs) merge
    only to keep the count caps."""
    config = memory.config
    by_level = {n: [e for e in memory._active if e["level"] == n] for n in (1, 2, MAX_LEVEL)}
    top = by_level[MAX_LEVEL]
    oldest = {  # what merges at each level: level 2 into the level-3 summary
        1: by_level[1][: config.merge_count],
        2: [*top, *by_level[2][: config.merge_count]],
        MAX_LEVEL: top,
    }
    caps = {1: config.max_summaries, 2: config.max_level2, MAX_LEVEL: 1}
    over_cap = (oldest[n] for n, live in by_level.items() if len(live) > caps[n])
    if (group := next(over_cap, None)) is not None:
        return group
    if sum(e["summary_tokens"] for e in memory._active) > config.summary_share_tokens:
        # over their share of the budget: merge the oldest below the caps too
        shown = (oldest[n] for n in (1, 2) if not {e["id"] for e in oldest[n]} & set(unseen))
        return next((group for group in shown if len(group) >= 2), None)
    return None


def merge_request(memory: MemoryCore, group: list[CompactionEntry]) -> SummaryRequest:
    return replace(
        _request(memory, "merge"),
        summaries=[e["summary"] for e in group],
        facts=merge_read_summary_facts(*[entry_facts(e) for e in group]),
        level=min(group[0]["level"] + 1, MAX_LEVEL),
    )
