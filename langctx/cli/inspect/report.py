"""What a thread's memory holds, rebuilt from one checkpoint's state values (pure, no I/O).

:func:`build_report` takes a graph state (``messages`` and the ``langctx`` channel), rebuilds the
memory with :meth:`~langctx.LayeredChatMemory.restore` (no compaction runs) and describes it: the
layers the model sees (pinned, summaries by level, recent), the compaction timeline, the in-place
edits, an eviction log built from the stored entries, and the figures. :func:`inspect_thread`
does the same for a thread of a :class:`~langctx.cli.inspect.store.CheckpointStore`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from langchain_core.messages import BaseMessage, convert_to_messages

from langctx.channel import ARCHIVE_KEY, archive_record, channel_entries, channel_users
from langctx.cli.inspect.store import CheckpointStore, unwrapped
from langctx.commands import state_messages
from langctx.delta_state import _messages_delta_reducer, append_batches, merge_langctx_writes
from langctx.entries import CompactionEntry, EditEntry, covered_count
from langctx.errors import InvalidMessageError
from langctx.markers import FACTS_CLOSE, FACTS_OPEN, SUMMARY_ID_PREFIX
from langctx.memory import LayeredChatMemory
from langctx.state_reading import restore_entries
from langctx.stores.archive import ArchiveMissingError, assemble, read_batches, thread_entries
from langctx.stores.archive_plan import ArchiveBatch
from langctx.tokens import counting_label

__all__ = ["REPORT_VERSION", "ThreadReport", "build_report", "inspect_thread"]

REPORT_VERSION = 1
"""Version of the JSON shape of :meth:`ThreadReport.to_dict`."""

_OPEN_BUDGET = 1_000_000  # restore with room to spare when the budget is unknown: nothing is cut
_FACTS = re.compile(re.escape(FACTS_OPEN) + r"\n(.*?)\n" + re.escape(FACTS_CLOSE), re.S)
_PREVIEW = 100


@dataclass
class ThreadReport:
    """A thread's memory at one checkpoint, as plain JSON values.

    Build one with :func:`build_report` or :func:`inspect_thread`; print it with
    :func:`langctx.cli.inspect.render.print_report`; :meth:`to_dict` is what ``--json`` prints.
    """

    thread_id: str | None = None
    """The thread (None when built from bare state values)."""
    source: dict[str, str] | None = None
    """Where the checkpoint was read: ``{"kind": "sqlite"|"postgres", "location": ...}``."""
    checkpoint: dict[str, Any] | None = None
    """The checkpoint read: id, time, step, source, parent, pending writes, count in the thread."""
    figures: dict[str, Any] = field(default_factory=dict)
    """Messages in state, context and full-history tokens, budget, entry counts."""
    pinned: list[dict[str, Any]] = field(default_factory=list)
    """System messages and the task: id, type, tokens, preview, whether edited, their layer."""
    summaries: list[dict[str, Any]] = field(default_factory=list)
    """The projected summaries, highest level first, with their text."""
    facts: str = ""
    """The mechanical facts ledger shown under the summaries ('' when none)."""
    recent: dict[str, Any] = field(default_factory=dict)
    """The verbatim recent layer: messages, tokens, first kept id."""
    timeline: list[dict[str, Any]] = field(default_factory=list)
    """Every compaction entry (merges included), oldest first, with its summary text, the facts
    it kept and a preview of each message it folded."""
    edits: list[dict[str, Any]] = field(default_factory=list)
    """Every in-place edit (placeholders, truncations), oldest first."""
    eviction_log: list[dict[str, Any]] = field(default_factory=list)
    """What left the projection, when and why, rebuilt from the entries (EvictionRecord shape)."""
    priorities: dict[str, int] = field(default_factory=dict)
    """The priority ledger's overrides (message id -> priority)."""
    notes: list[str] = field(default_factory=list)
    """Things worth knowing about this state (no langctx channel, entries dropped, ...)."""

    def to_dict(self, *, limit: int | None = None) -> dict[str, Any]:
        """The report as JSON values.

        Args:
            limit: keep only the newest ``limit`` rows of the timeline, the edits and the eviction
                log (0 or None: all); ``omitted`` says how many were left out.

        Example:
            >>> ThreadReport(thread_id="t1").to_dict()["layers"]["recent"]
            {}
        """
        timeline, cut_t = _tail(self.timeline, limit)
        edits, cut_e = _tail(self.edits, limit)
        log, cut_l = _tail(self.eviction_log, limit)
        out: dict[str, Any] = {
            "v": REPORT_VERSION,
            "thread_id": self.thread_id,
            "source": self.source,
            "checkpoint": self.checkpoint,
            "figures": self.figures,
            "layers": {
                "pinned": self.pinned,
                "summaries": self.summaries,
                "facts": self.facts,
                "recent": self.recent,
            },
            "timeline": timeline,
            "edits": edits,
            "eviction_log": log,
            "priorities": self.priorities,
            "notes": self.notes,
        }
        if cut_t or cut_e or cut_l:
            out["omitted"] = {"timeline": cut_t, "edits": cut_e, "eviction_log": cut_l}
        return out

    def to_json(self, *, limit: int | None = None, indent: int | None = 1) -> str:
        """:meth:`to_dict` as a JSON string."""
        return json.dumps(self.to_dict(limit=limit), indent=indent, ensure_ascii=False)


def _tail(rows: list[dict[str, Any]], limit: int | None) -> tuple[list[dict[str, Any]], int]:
    if not limit or len(rows) <= limit:
        return rows, 0
    return rows[-limit:], len(rows) - limit


def inspect_thread(
    store: CheckpointStore,
    thread_id: str,
    *,
    checkpoint_id: str | None = None,
    budget: int | None = None,
    token_counter: object = None,
    archive: Any = None,
) -> ThreadReport:
    """Read a thread's latest (or a given) checkpoint and describe its memory.

    Args:
        store: an open checkpoint database (:func:`~langctx.cli.inspect.store.open_store`).
        thread_id: the thread.
        checkpoint_id: a checkpoint of the thread (default: its latest).
        budget: the memory's ``max_tokens``, when known (it is not stored in the checkpoint).
        token_counter: how to count context tokens (as for ``LayeredChatMemory``; default: the
            counter the run recorded in its channel, else "approximate").
        archive: the LangGraph store of an archive-mode run: the full history then includes
            the archived messages.

    Raises:
        ThreadNotFoundError: no checkpoint belongs to ``thread_id``.
        CheckpointNotFoundError: the thread has no checkpoint ``checkpoint_id``.
        StateVersionError: the ``langctx`` channel was written by an unknown langctx version.

    See the :mod:`langctx.cli.inspect` example for a run against a SQLite file.
    """
    info = store.thread(thread_id)
    found = store.checkpoint(thread_id, checkpoint_id)
    cp = found.checkpoint
    meta = dict(found.metadata or {})
    parent = (found.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    cid = str(found.config["configurable"].get("checkpoint_id"))
    checkpoint = {
        "id": cid,
        "ts": cp.get("ts"),
        "step": meta.get("step"),
        "source": meta.get("source"),
        "parent_id": parent,
        "latest": cid == info.latest_checkpoint_id,
        "checkpoints_in_thread": info.checkpoints,
        "pending_writes": len(found.pending_writes or []),
    }
    values = _delta_values(store, found)
    full, archived = None, None
    if archive_record(values.get("langctx")):
        full, archived = _archived_log(values, archive, thread_id)
    return build_report(
        values,
        thread_id=thread_id,
        checkpoint=checkpoint,
        source=store.source,
        budget=budget,
        token_counter=token_counter,
        full_history=full,
        archived=archived,
    )


def _delta_values(store: CheckpointStore, found: Any) -> dict[str, Any]:
    """The checkpoint's channel values, the ``DeltaChannel``\\ s (delta ``messages``, ``langctx``,
    ``langctx_archive``) rebuilt from the thread's history where the checkpoint holds no value
    (or unwrapped where it holds a snapshot)."""
    cp = found.checkpoint
    values = {k: unwrapped(v) for k, v in (cp.get("channel_values") or {}).items()}
    versions = cp.get("channel_versions") or {}
    rebuilt_keys = (
        ("messages", lambda seed, writes: _messages_delta_reducer(seed or [], writes)),
        ("langctx", merge_langctx_writes),
        (ARCHIVE_KEY, append_batches),
    )
    for key, reducer in rebuilt_keys:
        if key not in values and key in versions:
            rebuilt = store.delta_value(found, key, reducer)
            if rebuilt is not None:
                values[key] = rebuilt
    return values


def _archived_log(
    values: Mapping[str, Any], archive: Any, thread_id: str
) -> tuple[list[BaseMessage] | None, list[ArchiveBatch] | None]:
    """The whole log of an archiving thread and its batches (None, None when a batch cannot be
    read)."""
    try:
        archived = read_batches(archive, thread_id, values)
    except ArchiveMissingError:
        return None, None
    return assemble(archived, values.get("messages") or []), archived


def _recorded_counter(channel: Any, notes: list[str]) -> str:
    """The counter the run recorded in its channel, as a ``token_counter`` spec."""
    name = str((channel or {}).get("counter") or "") if isinstance(channel, Mapping) else ""
    if name.startswith("tiktoken:"):
        return name.split(":", 1)[1]
    if name in ("", "approximate"):
        return "approximate"
    notes.append(
        f"the run counted tokens with {name!r}, which inspect cannot rebuild; figures use the "
        "estimator (pass --counter to choose)."
    )
    return "approximate"


def build_report(
    values: Mapping[str, Any],
    *,
    thread_id: str | None = None,
    checkpoint: Mapping[str, Any] | None = None,
    source: Mapping[str, str] | None = None,
    budget: int | None = None,
    token_counter: object = None,
    full_history: Sequence[BaseMessage] | None = None,
    archived: Sequence[ArchiveBatch] | None = None,
) -> ThreadReport:
    """Describe the memory that a graph state implies (nothing is compacted or written).

    Args:
        values: the state's values: ``messages`` and, when langctx ran, the ``langctx`` channel.
        thread_id: shown in the report.
        checkpoint: facts about the checkpoint, shown in the report.
        source: where the state was read, shown in the report.
        budget: the memory's ``max_tokens``, when known; it sets the budget figures and the caps
            used to render the summaries (default: no cap, so restoring cuts nothing).
        token_counter: how to count tokens (as for ``LayeredChatMemory``; default: the counter
            the run recorded in its channel, else "approximate").
        full_history: the whole conversation when part of it is archived (see
            :func:`~langctx.stores.archive.full_log`); default: the state's messages.
        archived: with ``full_history``, the archived batches: the report then restores the
            whole log with every entry, as if nothing had been archived.

    Example:
        >>> report = build_report({"messages": [("system", "Be brief."), ("user", "Fix it.")]})
        >>> [p["type"] for p in report.pinned], report.recent["messages"], report.timeline
        (['system', 'human'], 2, [])

    Raises:
        StateVersionError: the channel or an entry has an unknown version.
        InvalidMessageError: ``messages`` holds something that is not a chat message.
        ConfigError: ``budget`` or ``token_counter`` is invalid.
    """
    try:
        raw = convert_to_messages(list(values.get("messages") or []))
    except (ValueError, TypeError, NotImplementedError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        msg = f"the state's 'messages' holds something that is not a chat message: {first}"
        raise InvalidMessageError(msg) from exc
    conversation = state_messages(raw)
    channel = values.get("langctx")
    comps, edits, priorities = channel_entries(channel)
    if archived is not None and full_history is not None:
        conversation = state_messages(full_history)
        comps, edits, priorities = thread_entries(archived, channel)
    notes: list[str] = []
    if "messages" not in values:
        keys = ", ".join(sorted(map(str, values))) or "none"
        notes.append(
            f"this checkpoint has no 'messages' channel (channels: {keys}); langctx inspect reads "
            "graphs whose state keeps the conversation in 'messages'."
        )
    if channel is None and conversation:
        notes.append(
            "no 'langctx' channel in this checkpoint: the graph does not run langctx, or nothing "
            "was compacted yet. The layers below are what a fresh memory would show."
        )
    kept_c, kept_e, kept_p, dropped = _consistent(conversation, channel, comps, edits, priorities)
    if token_counter is None:
        token_counter = _recorded_counter(channel, notes)
    record = archive_record(channel)
    if record and full_history is None:
        notes.append(
            f"archive mode: {record.get('messages', 0)} messages in {record.get('batches', 0)} "
            "batches were moved from 'messages' to a LangGraph store; the message and "
            "full-history figures count only what is still in the state (pass --archive)."
        )
    elif record:
        notes.append(
            f"archive mode: the full history includes the {record.get('messages', 0)} archived "
            "messages."
        )
    if dropped:
        notes.append(
            f"{dropped} stored entries name messages that are no longer in 'messages' (edited or "
            "removed by hand); they are left out here and the next run resets them."
        )
    memory = LayeredChatMemory(max_tokens=budget or _OPEN_BUDGET, token_counter=token_counter)
    users, users_dropped = channel_users(channel)  # the folded user messages, stored once
    memory.restore(
        conversation,
        compactions=kept_c,
        edits=kept_e,
        priorities=kept_p,
        users=users,
        users_dropped=users_dropped,
    )
    if len(memory.edits) > len(kept_e):
        notes.append(
            f"the pinned messages do not fit budget {budget}: restoring truncated "
            f"{len(memory.edits) - len(kept_e)} of them (this budget is smaller than the agent's?)."
        )
    report = ThreadReport(
        thread_id=thread_id,
        source=dict(source) if source else None,
        checkpoint=dict(checkpoint) if checkpoint else None,
        priorities=memory.priorities,
        notes=notes,
    )
    _layers(report, memory)
    active = {e["id"] for e in memory.summaries}
    by_id = {str(m.id): m for m in memory.messages}
    report.timeline = [_timeline_row(e, e["id"] in active, by_id) for e in memory.compactions]
    report.edits = [_edit_row(e, by_id.get(e["message_id"])) for e in memory.edits]
    report.eviction_log = _eviction_log(memory)
    report.figures = _figures(memory, raw, channel, report, budget, token_counter, full_history)
    if budget is None and conversation:
        notes.append(
            "the budget is not stored in the checkpoint; pass the agent's max_tokens (--budget) "
            "to see how full the context is."
        )
    pending = (checkpoint or {}).get("pending_writes")
    if pending:
        notes.append(
            f"the checkpoint has {pending} pending writes (an interrupted or failed step); they "
            "are not part of the state shown."
        )
    return report


def _consistent(
    messages: Sequence[BaseMessage],
    channel: Any,
    comps: list[dict[str, Any]],
    edits: list[dict[str, Any]],
    priorities: dict[str, int],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int], int]:
    """The entries that still fit the messages, kept as the integrations keep them on a rebuild.

    In archive mode an entry whose cut was archived gets the archive's cut (see
    :func:`~langctx.state_reading.restore_entries`).
    """
    present = {str(m.id) for m in messages}
    kept, restore = restore_entries(
        cast(list[CompactionEntry], comps), present, archive_record(channel)
    )
    kept_edits = [e for e in edits if e["message_id"] in present]
    kept_prio = {k: v for k, v in priorities.items() if k in present}
    dropped = (
        len(comps) - len(kept) + len(edits) - len(kept_edits) + len(priorities) - len(kept_prio)
    )
    return [dict(e) for e in restore], kept_edits, kept_prio, dropped


def _text(message: BaseMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    parts = []
    for block in content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, Mapping) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return " ".join(parts)


def _preview(message: BaseMessage) -> str:
    text = " ".join(_text(message).split())
    calls = getattr(message, "tool_calls", None) or []
    if not text and calls:
        text = "tool calls: " + ", ".join(str(tc.get("name")) for tc in calls)
    return text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"


def _layers(report: ThreadReport, memory: LayeredChatMemory) -> None:
    log = memory.messages
    pos = {str(m.id): i for i, m in enumerate(log)}
    first_kept = memory.first_kept_id
    cut = pos[first_kept] if first_kept is not None else len(log)
    context = memory.build_context()
    count = memory.counter.count_message
    head = [m for m in context if str(m.id) in pos and pos[str(m.id)] < cut]
    head_ids = {str(m.id) for m in head}
    views = {str(m.id): m for m in context}
    edited = {e["message_id"] for e in memory.edits}
    for mid in memory.pinned_ids:
        message = views.get(mid, log[pos[mid]])
        report.pinned.append(
            {
                "id": mid,
                "type": message.type,
                "tokens": count(message),
                "edited": mid in edited,
                "layer": "pinned" if mid in head_ids else "recent",
                "preview": _preview(message),
            }
        )
    block = next((m for m in context if str(m.id).startswith(SUMMARY_ID_PREFIX)), None)
    if block is not None:
        found = _FACTS.search(_text(block))
        report.facts = found.group(1) if found else ""
    report.summaries = [
        {
            "id": e["id"],
            "level": e["level"],
            "quality": e["quality"],
            "trigger": e["trigger"],
            "created_at": e["created_at"],
            "messages_covered": covered_count(e),
            "summary_tokens": e["summary_tokens"],
            "text": e["summary"],
        }
        for e in memory.summaries
    ]
    recent = context[context.index(block) + 1 :] if block is not None else context[len(head) :]
    report.recent = {
        "messages": len(recent),
        "tokens": sum(count(m) for m in recent),
        "first_kept_id": first_kept,
        "last_id": str(recent[-1].id) if recent else None,
        "summary_block_id": str(block.id) if block is not None else None,
        "summary_block_tokens": count(block) if block is not None else 0,
    }


def _who(message: BaseMessage) -> str:
    """A message's role, with its tool's name for a tool result."""
    name = getattr(message, "name", None) if message.type == "tool" else None
    return f"{message.type} {name}" if name else message.type


def _timeline_row(
    e: CompactionEntry, active: bool, by_id: Mapping[str, BaseMessage]
) -> dict[str, Any]:
    covered = e["covered_ids"]
    return {
        "id": e["id"],
        "created_at": e["created_at"],
        "trigger": e["trigger"],
        "level": e["level"],
        "quality": e["quality"],
        "tokens_before": e["tokens_before"],
        "tokens_after": e["tokens_after"],
        "messages_covered": covered_count(e),
        "first_covered_id": covered[0] if covered else None,
        "last_covered_id": covered[-1] if covered else None,
        "first_kept_id": e["first_kept_id"],
        "merged_from": list(e["merged_from"]),
        "read_files": list(e["read_files"]),
        "modified_files": list(e["modified_files"]),
        "summary_tokens": e["summary_tokens"],
        "instructions": e["instructions"],
        "active": active,
        "summary": e["summary"],
        "facts": dict(e["facts"]),
        "folded": [f"{_who(by_id[i])}: {_preview(by_id[i])}" if i in by_id else i for i in covered],
    }


def _edit_row(e: EditEntry, message: BaseMessage | None) -> dict[str, Any]:
    return {
        "id": e["id"],
        "created_at": e["created_at"],
        "message_id": e["message_id"],
        "message_type": message.type if message is not None else None,
        "reason": e["reason"],
        "tokens_before": e["tokens_before"],
        "tokens_after": e["tokens_after"],
        "tool_calls_cut": "tool_calls" in e,
    }


_EDIT_DETAIL = {
    "placeholder": "tool output replaced by a placeholder",
    "truncate": "cut to head and tail, marked",
}


def _edit_detail(edit: EditEntry) -> str:
    if edit["reason"] == "placeholder" and "tool_calls" in edit:
        return "long tool-call arguments elided (kept turns)"
    return _EDIT_DETAIL.get(edit["reason"], edit["reason"])


def _eviction_log(memory: LayeredChatMemory) -> list[dict[str, Any]]:
    """EvictionRecord-shaped rows from the stored entries, in time order, then rebuild findings."""
    rows: list[dict[str, Any]] = []
    for e in memory.compactions:
        freed = e["tokens_before"] - e["tokens_after"]
        if e["trigger"] == "merge":
            detail = (
                f"merged {len(e['merged_from'])} summaries into {e['id']} "
                f"(level {e['level']}, {e['quality']})"
            )
            ids = list(e["merged_from"])
            action = "merge"
        else:
            detail = f"folded {covered_count(e)} messages into {e['id']} ({e['quality']})"
            ids = list(e["covered_ids"])
            action = "compact"
        rows.append(
            {
                "at": e["created_at"],
                "action": action,
                "trigger": e["trigger"],
                "ids": ids,
                "tokens": freed,
                "detail": detail,
            }
        )
    for ed in memory.edits:
        rows.append(
            {
                "at": ed["created_at"],
                "action": ed["reason"],
                "trigger": "",
                "ids": [ed["message_id"]],
                "tokens": ed["tokens_before"] - ed["tokens_after"],
                "detail": _edit_detail(ed),
            }
        )
    # Times have millisecond resolution; on a tie, an edit goes first (placeholders are planned
    # before the fold that follows them).
    rows.sort(key=lambda r: (str(r["at"]), r["action"] in ("compact", "merge")))
    for r in memory.eviction_log:  # what rebuilding found (orphan tool results, open calls)
        row = dict(r)
        row["detail"] = f"found when rebuilding: {row['detail']}"
        rows.append(row)
    return rows


def _archived_count(
    raw: Sequence[BaseMessage], full_history: Sequence[BaseMessage] | None, channel: Any
) -> int:
    """Messages of the log that left ``messages`` for the archive (the channel's count when the
    archive was not read)."""
    if full_history is not None:
        in_state = {str(m.id) for m in raw}
        return sum(1 for m in state_messages(full_history) if str(m.id) not in in_state)
    count = (archive_record(channel) or {}).get("messages")
    return count if isinstance(count, int) and count > 0 else 0


def _figures(
    memory: LayeredChatMemory,
    raw: Sequence[BaseMessage],
    channel: Any,
    report: ThreadReport,
    budget: int | None,
    token_counter: object,
    full_history: Sequence[BaseMessage] | None,
) -> dict[str, Any]:
    stats = memory.stats()
    context = stats["context_tokens"]
    history = state_messages(full_history) if full_history is not None else memory.messages
    full = sum(memory.counter.count_message(m) for m in history)
    reasons = [e["reason"] for e in memory.edits]
    counter = token_counter if isinstance(token_counter, str) else type(token_counter).__name__
    return {
        "messages_in_state": len(raw),
        "control_messages": len(raw) - len(state_messages(raw)),
        "messages_archived": _archived_count(raw, full_history, channel),
        "archive_read": full_history is not None,
        "messages_logged": len(memory.messages),
        "messages_in_context": len(memory.build_context()),
        "context_tokens": context,
        "full_history_tokens": full,
        "saved_share": round(1 - context / full, 4) if full else None,
        "budget": budget,
        "budget_used": round(context / budget, 4) if budget else None,
        "token_counter": counter,
        "counted_with": counting_label(memory.counter),  # what counted: says when it estimated
        "compactions": stats["compactions"],
        "merges": stats["merges"],
        "summaries": len(report.summaries),
        "summaries_by_level": {str(k): v for k, v in sorted(stats["summaries_by_level"].items())},
        "summary_tokens": stats["summary_tokens"],
        "placeholders": reasons.count("placeholder"),
        "truncations": reasons.count("truncate"),
        "pinned": len(report.pinned),
    }
