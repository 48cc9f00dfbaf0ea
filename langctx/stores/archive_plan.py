"""Archive mode, the pure part: what leaves ``messages`` and the channel after a compaction
(:mod:`langctx.stores.archive` does the I/O).

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
    >>> raw = [SystemMessage("Be brief.", id="s"), HumanMessage("Fix it", id="t"),
    ...        AIMessage("a", id="a1"), AIMessage("b", id="a2"), AIMessage("c", id="a3")]
    >>> archivable(raw, first_kept_id="a3", pinned_ids=["s", "t"])
    (['s', 't', 'a1', 'a2'], ['a1', 'a2'])
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langchain_core.messages import BaseMessage, RemoveMessage, message_to_dict, messages_from_dict

from langctx.archive_repair import BATCH_VERSION, ArchiveBatch, batch_key
from langctx.channel import (
    ARCHIVE_RECORD_VERSION,
    ArchiveRecord,
    LangctxChannel,
    archive_record,
    channel_entries,
    channel_update,
    is_slim,
    latest_cut_id,
    merge_langctx,
    shed,
)
from langctx.entries import active_summaries


@dataclass
class ArchivePlan:
    """What one archive step does: one store item, the removals, the channel update."""

    key: str
    """Store key of the new batch."""
    batch: ArchiveBatch
    removals: list[RemoveMessage]
    """``RemoveMessage`` for every archived message."""
    channel: LangctxChannel
    """The ``langctx`` update: the view's own new entries plus the archive's drop/slim/record."""
    in_state: bool = False
    """The batch goes to the state's ``langctx_archive`` key, not to a store."""

    def channel_with(self, update: Mapping[str, Any] | None) -> LangctxChannel:
        """:attr:`channel` for a later ``ThreadView.update()`` of the same step (overflow)."""
        return _combined(update, self.channel)


def lean_message_dict(message: BaseMessage) -> dict[str, Any]:
    """``message_to_dict(message)`` without fields at their default (when it reads back exactly)."""
    full = message_to_dict(message)
    fields = type(message).model_fields
    data = {
        k: v
        for k, v in full["data"].items()
        if not (k in fields and not fields[k].is_required() and _is_default(v, fields[k]))
    }
    if len(data) == len(full["data"]):
        return full
    lean = {"type": full["type"], "data": data}
    back = message_to_dict(messages_from_dict([lean])[0])
    return lean if _canonical(back) == _canonical(full) else full


def _is_default(value: Any, field: Any) -> bool:
    if field.default_factory is None:
        default = field.default
    else:  # called as is: pydantic's get_default inspects the factory's signature every time
        try:
            default = field.default_factory()
        except TypeError:  # a factory of the validated data: keep the field
            return False
    return type(value) is type(default) and value == default


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=repr)


def archivable(
    raw: Sequence[BaseMessage], *, first_kept_id: str | None, pinned_ids: Sequence[str]
) -> tuple[list[str], list[str]]:
    """The ids before the cut (in order) and those of them that may leave the state (neither
    pinned nor without an id); nothing when the cut is unknown or not in ``raw``."""
    ids = [None if m.id is None else str(m.id) for m in raw]
    if first_kept_id is None or first_kept_id not in ids:
        return [], []
    pinned = set(pinned_ids)
    order = [i for i in ids[: ids.index(first_kept_id)] if i is not None]
    return order, [i for i in order if i not in pinned]


def plan_archive(
    *,
    thread_id: str,
    raw: Sequence[BaseMessage],
    first_kept_id: str | None,
    pinned_ids: Sequence[str],
    channel: Mapping[str, Any] | None,
    update: Mapping[str, Any] | None,
    in_state: bool = False,
) -> ArchivePlan | None:
    """The archive step for a state whose memory was just synced (None: nothing to archive).

    Args:
        raw: the state's ``messages``.
        channel: the state's ``langctx`` channel (before this step).
        update: what this step writes to the channel anyway (``ThreadView.update()``), or None.
        in_state: the batch goes to the state's ``langctx_archive`` (else to a store).
    """
    order, gone = archivable(raw, first_kept_id=first_kept_id, pinned_ids=pinned_ids)
    if not gone:
        return None
    after = merge_langctx(channel, update or None)
    comps = channel_entries(after)[0]  # migrated: a channel written by an older langctx
    if not comps:
        return None  # a cut without a compaction entry (restored by hand): nothing to fold
    assert first_kept_id is not None
    record = archive_record(after) or {}
    drop_c, slim = _compaction_fates(comps)
    by_id = {str(m.id): m for m in raw if m.id is not None}
    live = set(by_id) - set(gone)  # the edits and priorities of the other messages leave
    edits_out = [e for e in after["edits"] if e["message_id"] not in live]
    prio_out = {k: v for k, v in after["priorities"].items() if k not in live}
    saved = min(int(record.get("saved", 0)), len(comps))
    batch = ArchiveBatch(
        v=BATCH_VERSION,
        kind="langctx_archive_batch",
        thread_id=thread_id,
        seq=int(record.get("batches", 0)),
        prev=record.get("last"),
        order=order,
        messages=[lean_message_dict(by_id[i]) for i in gone],
        compactions=[dict(e) for e in comps[saved:]],
        edits=[dict(e) for e in edits_out],
        priorities=prio_out,
        first_kept=first_kept_id,
        created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
    )
    key = batch_key(batch)
    new_record = ArchiveRecord(
        v=ARCHIVE_RECORD_VERSION,
        last=key,
        batches=batch["seq"] + 1,
        messages=int(record.get("messages", 0)) + len(gone),
        saved=len(comps) - len(drop_c),
        first_kept=first_kept_id,
        held=batch["seq"] + 1 if in_state else int(record.get("held", batch["seq"])),
    )
    delta = channel_update(
        archive=new_record,
        drop={
            "compactions": drop_c,
            "edits": [e["id"] for e in edits_out],
            "priorities": list(prio_out),
        },
        slim=slim,
    )
    return ArchivePlan(
        key=key,
        batch=batch,
        removals=[RemoveMessage(id=i) for i in gone],
        channel=_combined(update, delta),
    )


def _compaction_fates(comps: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """Ids of the compaction entries the channel drops, and of those it keeps slim (it keeps the
    active summaries and the latest cut entry with the merges that absorbed it)."""
    active = {e["id"] for e in active_summaries(comps)}  # type: ignore[arg-type]
    latest = latest_cut_id(comps)
    keep = active | set(_merge_chain(comps, latest))
    drop = [e["id"] for e in comps if e["id"] not in keep]
    slim = [
        e["id"]
        for e in comps
        if e["id"] in keep
        and (not is_slim(e["covered_ids"]) or (_has_parts(e) and e["id"] != latest))
    ]
    return drop, slim


def _has_parts(entry: Mapping[str, Any]) -> bool:
    """True when ``entry`` holds the parts only the latest fold's entry keeps (files, reports)."""
    return "files" in entry or "reports" in entry


def _combined(update: Mapping[str, Any] | None, archived: Mapping[str, Any]) -> LangctxChannel:
    """The view's update plus the archive's ops of ``archived``, its new entries already dropped
    and slimmed (the same channel, a smaller checkpoint write)."""
    ops = {k: v for k, v in archived.items() if k in ("archive", "drop", "slim")}
    out: dict[str, Any] = {**(update or channel_update()), **ops}
    return shed(out, ops.get("drop"), ops.get("slim"))  # type: ignore[return-value]


def _merge_chain(comps: list[dict[str, Any]], entry_id: str | None) -> list[str]:
    """``entry_id`` and the merges that absorbed it (kept together: the channel knows it merged)."""
    merger = {m: e["id"] for e in comps for m in e.get("merged_from") or ()}
    chain: list[str] = []
    while entry_id is not None and entry_id not in chain:
        chain.append(entry_id)
        entry_id = merger.get(entry_id)
    return chain
