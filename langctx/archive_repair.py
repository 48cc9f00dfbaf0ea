"""The archive's batches (their shape and keys), and the rule that repairs a ``langctx`` channel
that no longer describes them (a hand edit with ``update_state``, an older channel put back,
another thread's) or refuses the state in one line (docs/persistence.md, "When the channel and
the archive disagree").

The rule: the archive's batches are the record of what was archived. The batch with the highest
``seq`` ends the archive when the state's messages continue it (its cut, ``first_kept``, is in
``messages``, none of its archived messages is, and the other ids of its ``order``, the pinned
messages, are). A channel whose archive record does not name that batch is rebuilt from the
chain it ends: the record (last key, batches, messages, cut) from the batches, their compaction
entries, edits and priorities put back, and the channel's own entries kept only when its record
named a batch of that chain (or nothing). A chain with a batch missing, or archived messages that
neither the record's chain nor the messages hold, is refused with one line.

Every batch is checked where it is read (:func:`checked_batch`): a batch this langctx cannot
read is refused with one line, what is no batch is left out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from langctx.archive_packing import is_packed, unpack_batch
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
    "check_placed",
    "checked_batch",
    "newest_batch",
    "newest_held",
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


def state_batches(held: Any) -> list[ArchiveBatch]:
    """The archived batches a state holds (its ``langctx_archive``), each checked
    (:func:`checked_batch`); what is no batch is left out.

    Raises:
        StateVersionError: a batch this langctx cannot read.
    """
    checked = (checked_batch(b) for b in (held if isinstance(held, list) else ()))
    return [b for b in checked if b is not None]


def newest_held(held: Any) -> ArchiveBatch | None:
    """The batch with the highest ``seq`` a state holds, checked (:func:`checked_batch`); of the
    others only the ``seq`` is read (each is checked where it is read: :func:`state_batches`),
    so a step costs one batch whatever the archive's length.

    Raises:
        StateVersionError: the newest batch, or a batch's ``seq``, cannot be read.
    """
    newest: Mapping[str, Any] | None = None
    for b in held if isinstance(held, list) else ():
        if isinstance(b, Mapping) and b.get("kind") == "langctx_archive_batch":
            seq: Any = b.get("seq")
            if not (_is_int(seq) and seq >= 0):
                checked_batch(b)  # raises: its seq cannot be read
            if newest is None or seq > newest["seq"]:
                newest = b
    return None if newest is None else checked_batch(newest)


def checked_batch(value: Any) -> ArchiveBatch | None:
    """``value`` as an archived batch, checked field by field where it is read (the state's
    ``langctx_archive``, a store item); None when it is no batch (not a dict of kind
    ``"langctx_archive_batch"``).

    Raises:
        StateVersionError: a batch this langctx cannot read: a field missing or of another type,
            a newer version, an archived message without an id or one its ``order`` leaves out.
    """
    if not isinstance(value, Mapping) or value.get("kind") != "langctx_archive_batch":
        return None
    seq = value.get("seq")
    name = f"archived batch {seq}" if _is_int(seq) else "an archived batch"
    if is_packed(value):  # (the state's batches: :mod:`langctx.archive_packing`)
        value, problem = _unpacked(value)
    else:
        problem = None
    problem = problem or _batch_problem(value)
    if problem is not None:
        msg = (
            f"{name} cannot be read by this langctx: {problem}; restore the thread's "
            "langctx_archive from an earlier checkpoint or a backup."
        )
        raise StateVersionError(msg)
    return value


def _unpacked(value: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None]:
    """The batch a packed ``value`` holds, or ``value`` and what makes it unreadable."""
    try:
        body = unpack_batch(value)
    except ValueError as exc:
        return value, str(exc)
    if not isinstance(body, Mapping) or body.get("kind") != "langctx_archive_batch":
        return value, "its 'packed' holds no batch"
    if body.get("seq") != value.get("seq") or is_packed(body):
        return value, "its 'packed' batch is not the one its 'seq' names"
    return body, None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_MISSING = object()

_FIELDS: dict[str, Callable[[Any], bool]] = {
    "seq": lambda v: _is_int(v) and v >= 0,
    "thread_id": lambda v: isinstance(v, str),
    "prev": lambda v: v is None or isinstance(v, str),
    "order": lambda v: isinstance(v, list),
    "messages": lambda v: isinstance(v, list),
    "compactions": lambda v: isinstance(v, list),
    "edits": lambda v: isinstance(v, list),
    "priorities": lambda v: isinstance(v, Mapping),
    "first_kept": lambda v: isinstance(v, str),
}
"""The fields of a batch that langctx reads, and what each must be."""


def _batch_problem(batch: Mapping[str, Any]) -> str | None:
    """What makes ``batch`` unreadable (None: nothing)."""
    v = batch.get("v", _MISSING)
    if _is_int(v) and v > BATCH_VERSION:
        return f"it is version {v} (written by a newer langctx)"
    for key, ok in (("v", lambda v: v == BATCH_VERSION), *_FIELDS.items()):
        value = batch.get(key, _MISSING)
        if value is _MISSING or not ok(value):
            shown = "missing" if value is _MISSING else f"{type(value).__name__} {value!r:.40}"
            return f"its {key!r} is {shown}"
    return _content_problem(batch)


def _content_problem(batch: Mapping[str, Any]) -> str | None:
    """What makes the lists of ``batch`` unreadable (None: nothing)."""
    order = batch["order"]
    if not all(isinstance(i, str) for i in order):
        return "its 'order' holds an item that is no message id"
    placed = set(order)
    seen: set[str] = set()
    for n, d in enumerate(batch["messages"]):
        data = d.get("data") if isinstance(d, Mapping) else None
        mid = data.get("id") if isinstance(data, Mapping) else None
        if not isinstance(mid, str) or not isinstance(d.get("type"), str):
            return f"its message {n} is no stored message with an id"
        if mid in seen or mid not in placed:
            why = "twice" if mid in seen else "and its 'order' does not place it"
            return f"it holds message {mid[:40]!r} {why}"
        seen.add(mid)
    for key in ("compactions", "edits"):
        for n, e in enumerate(batch[key]):
            if not isinstance(e, Mapping) or not isinstance(e.get("id"), str):
                return f"its {key} entry {n} is no entry with an id"
    prio = batch.get("priorities") or {}
    if not all(isinstance(k, str) and _is_int(p) for k, p in prio.items()):
        return "its 'priorities' do not map message ids to integers"
    return None


def _archived_ids(batch: Mapping[str, Any]) -> list[str]:
    """The ids of a checked batch's archived messages."""
    return [d["data"]["id"] for d in batch["messages"]]


def newest_batch(
    batches: Sequence[Mapping[str, Any]], present: Callable[[str], bool]
) -> Mapping[str, Any] | None:
    """The batch that ends the archive, when the state's messages continue it (``present``: is
    this message id in ``messages``); None: no batch, or the messages do not continue it.

    The messages continue a batch when its cut is in them, none of its archived messages is, and
    every other id of its ``order`` (the pinned messages, which stayed) is.
    """
    if not batches:
        return None
    newest = max(batches, key=lambda b: b["seq"])
    if not present(newest["first_kept"]):
        return None
    archived = set(_archived_ids(newest))
    if any(present(i) for i in archived):
        return None
    return newest if all(i in archived or present(i) for i in newest["order"]) else None


def agrees(record: Mapping[str, Any] | None, newest: Mapping[str, Any]) -> bool:
    """Whether the channel's archive record ends at ``newest``, the newest batch the state holds
    (cheap: no key is computed), or went on from it in a store (its ``held``)."""
    if record is not None and record.get("held", record.get("batches")) != record.get("batches"):
        return record.get("held") == newest["seq"] + 1  # the later batches are in a store
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


def check_placed(
    batches: Sequence[Mapping[str, Any]],
    record: Mapping[str, Any] | None,
    present: Callable[[str], bool],
) -> None:
    """Refuse a state whose archived messages neither the chain the channel's record names nor
    the state's messages hold (what :func:`newest_batch` cannot place: the channel was emptied
    or replaced, or a batch changed, and the messages do not continue the newest batch).

    Raises:
        StateVersionError: an archived message is in neither.
    """
    by_key = {batch_key(b): b for b in batches}  # type: ignore[arg-type]
    key, chained = (record or {}).get("last"), set()
    held = (record or {}).get("held")
    if isinstance(held, int) and held < (record or {}).get("batches", 0):  # went on in a store
        chained = {k for k, b in by_key.items() if b["seq"] < held}
    while isinstance(key, str) and key in by_key and key not in chained:
        chained.add(key)
        key = by_key[key]["prev"]
    lost = sum(
        not present(i) for k, b in by_key.items() if k not in chained for i in _archived_ids(b)
    )
    if lost:
        names = "names none of them" if record is None else "does not name their chain"
        msg = (
            f"{lost} archived messages of the state's langctx_archive are placed neither by the "
            f"langctx channel, which {names}, nor by the messages, which do not continue the "
            "newest batch; restore the thread's channel or messages from an earlier checkpoint."
        )
        raise StateVersionError(msg)


def repaired_channel(
    channel: Mapping[str, Any] | None,
    batches: Sequence[Mapping[str, Any]],
    present: Callable[[str], bool],
) -> LangctxChannel | None:
    """``channel`` rebuilt from the archive by the module's rule (None: it agrees already, or
    the state's messages continue no batch and the channel places every archived message).

    Raises:
        StateVersionError: a batch of the archive's chain is missing, or archived messages are
            placed neither by the channel nor by the messages (:func:`check_placed`).
    """
    newest = newest_batch(batches, present)
    record = archive_record(channel)
    if newest is None:
        check_placed(batches, record, present)
        return None
    if agrees(record, newest):
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
