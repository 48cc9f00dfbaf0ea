"""The archive's batches (their shape and keys), and the rule that repairs a ``langctx`` channel
that no longer describes them (a hand edit with ``update_state``, an older channel put back,
another thread's) or refuses the state in one line (docs/persistence.md, "When the channel and
the archive disagree").

The rule: the archive's batches are the record of what was archived. The batch with the highest
``seq`` ends the archive when the state's messages continue it (its cut, ``first_kept``, is in
``messages`` and none of its archived messages is). A channel whose archive record does not name
that batch is rebuilt from the chain it ends: the record (last key, batches, messages, cut) from
the batches, their compaction entries, edits and priorities put back, and the channel's own
entries kept only when its record named a batch of that chain (or nothing). A chain with a batch
missing is refused with one line.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from langctx.channel import (
    ARCHIVE_RECORD_VERSION,
    CHANNEL_VERSION,
    ArchiveRecord,
    LangctxChannel,
    archive_record,
    channel_entries,
    is_slim,
)
from langctx.errors import StateVersionError

__all__ = [
    "BATCH_VERSION",
    "ArchiveBatch",
    "agrees",
    "batch_chain",
    "batch_key",
    "newest_batch",
    "repaired_channel",
    "state_batches",
    "thread_entries",
]


BATCH_VERSION = 1
"""Version of the :class:`ArchiveBatch` shape."""


class ArchiveBatch(TypedDict):
    """One archived batch, the value of one store item (version 1). JSON values only."""

    v: int
    kind: Literal["langctx_archive_batch"]
    thread_id: str
    seq: int
    """0 for the thread's first batch, then 1, 2, ..."""
    prev: str | None
    """Store key of the batch before this one (None for the first)."""
    order: list[str]
    """Ids of the state's messages before the cut, in order (archived and pinned ones)."""
    messages: list[dict[str, Any]]
    """The archived messages, as :func:`lean_message_dict` dicts."""
    compactions: list[dict[str, Any]]
    """Compaction entries copied here for the first time, as the channel first held them."""
    edits: list[dict[str, Any]]
    """Edit entries of the archived messages (they left the channel)."""
    priorities: dict[str, int]
    """Ledger priorities of the archived messages (they left the channel)."""
    first_kept: str
    """Id of the first message kept in ``messages`` (the cut)."""
    created_at: str


def batch_key(batch: ArchiveBatch) -> str:
    """The store key of ``batch``: its seq and a digest of its content (a retry finds it)."""
    comps = [e["id"] for e in batch["compactions"]]
    content = [batch["thread_id"], batch["prev"], batch["order"], batch["messages"], comps]
    digest = hashlib.sha1(json.dumps(content, sort_keys=True, default=str).encode()).hexdigest()
    return f"{batch['seq']:08d}-{digest[:12]}"


def state_batches(held: Any) -> list[Mapping[str, Any]]:
    """The archived batches a state holds (its ``langctx_archive``), what is no batch left out."""
    return [
        b
        for b in (held if isinstance(held, list) else ())
        if isinstance(b, Mapping)
        and b.get("kind") == "langctx_archive_batch"
        and isinstance(b.get("seq"), int)
        and isinstance(b.get("messages"), list)
    ]


def _archived_ids(batch: Mapping[str, Any]) -> set[str]:
    out = set()
    for d in batch.get("messages") or ():
        mid = d.get("data", {}).get("id") if isinstance(d, Mapping) else None
        if mid is not None:
            out.add(str(mid))
    return out


def newest_batch(
    batches: Sequence[Mapping[str, Any]], present: Callable[[str], bool]
) -> Mapping[str, Any] | None:
    """The batch that ends the archive, when the state's messages continue it (``present``: is
    this message id in ``messages``); None: no batch, or the messages do not continue it."""
    if not batches:
        return None
    newest = max(batches, key=lambda b: b["seq"])
    cut = newest.get("first_kept")
    if not isinstance(cut, str) or not present(cut):
        return None
    return None if any(present(i) for i in _archived_ids(newest)) else newest


def agrees(record: Mapping[str, Any] | None, newest: Mapping[str, Any]) -> bool:
    """Whether the channel's archive record ends at ``newest`` (cheap: no key is computed)."""
    return (
        record is not None
        and record.get("batches") == newest["seq"] + 1
        and record.get("first_kept") == newest.get("first_kept")
        and record.get("last") == batch_key(newest)  # type: ignore[arg-type]
    )


def batch_chain(
    batches: Sequence[Mapping[str, Any]], newest: Mapping[str, Any]
) -> list[Mapping[str, Any]]:
    """The chain of batches ``newest`` ends, oldest first.

    Raises:
        StateVersionError: a batch of the chain is missing (the archive was edited).
    """
    by_key = {batch_key(b): b for b in batches}  # type: ignore[arg-type]
    chain = [newest]
    while (prev := chain[-1].get("prev")) is not None:
        batch = by_key.get(str(prev))
        if batch is None or len(chain) > len(by_key):
            seq = chain[-1]["seq"]
            msg = (
                f"the thread's archive lost batch {prev!r}, which its batch {seq} follows (the "
                "archive was edited); restore the archive's batches from a backup."
            )
            raise StateVersionError(msg)
        chain.append(batch)
    return chain[::-1]


def thread_entries(
    batches: Sequence[Mapping[str, Any]], channel: Mapping[str, Any] | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """Every compaction, edit and priority of an archiving thread: its batches', then the channel's
    (an entry in both keeps its batch place and the channel's fields, with full ``covered_ids``)."""
    live_comps, live_edits, live_priorities = channel_entries(channel)
    comps: dict[str, dict[str, Any]] = {}
    edits: dict[str, dict[str, Any]] = {}
    priorities: dict[str, int] = {}
    for batch in batches:
        old = {"v": 1, "compactions": batch.get("compactions"), "edits": batch.get("edits")}
        old_comps, old_edits, _ = channel_entries(old)
        comps.update((e["id"], e) for e in old_comps)
        edits.update((e["id"], e) for e in old_edits)
        priorities.update(batch.get("priorities") or {})
    for entry in live_comps:
        was = comps.get(entry["id"])
        if was is not None and is_slim(entry.get("covered_ids") or []):
            entry = {**entry, "covered_ids": was["covered_ids"]}
        comps[entry["id"]] = entry
    edits.update((e["id"], e) for e in live_edits)
    priorities.update(live_priorities)
    return list(comps.values()), list(edits.values()), priorities


def repaired_channel(
    channel: Mapping[str, Any] | None,
    batches: Sequence[Mapping[str, Any]],
    present: Callable[[str], bool],
) -> LangctxChannel | None:
    """``channel`` rebuilt from the archive by the module's rule (None: it agrees already, or
    the state's messages continue no batch).

    Raises:
        StateVersionError: a batch of the archive's chain is missing.
    """
    newest = newest_batch(batches, present)
    record = archive_record(channel)
    if newest is None or agrees(record, newest):
        return None
    chain = batch_chain(batches, newest)
    keys = {batch_key(b) for b in chain}  # type: ignore[arg-type]
    own = record is None or record.get("last") in keys  # emptied or older: its entries are ours
    archived = thread_entries(chain, None)
    comps, edits, prio = thread_entries(chain, channel) if own else archived
    last: ArchiveBatch = newest  # type: ignore[assignment]
    out: dict[str, Any] = {
        k: v
        for k, v in (channel or {}).items()
        if k not in ("v", "compactions", "edits", "priorities", "archive")
    }
    out.update(v=CHANNEL_VERSION, compactions=comps, edits=edits, priorities=prio)
    out["archive"] = ArchiveRecord(
        v=ARCHIVE_RECORD_VERSION,
        last=batch_key(last),
        batches=last["seq"] + 1,
        messages=sum(len(b["messages"]) for b in chain),
        saved=len(archived[0]),
        first_kept=last["first_kept"],
    )
    return out  # type: ignore[return-value]
