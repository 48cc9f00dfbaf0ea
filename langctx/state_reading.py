"""Reading a graph state's messages: conversion, derived ids, where the window starts, which
stored entries still fit, a saved log (checked)."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, overload

from langchain_core.messages import (
    BaseMessage,
    SystemMessage,
    convert_to_messages,
    messages_from_dict,
)

from langctx.commands import is_control_message
from langctx.entries import CompactionEntry
from langctx.errors import InvalidMessageError, StateVersionError
from langctx.markers import ANON_ID_PREFIX
from langctx.turns import tool_call_ids


class WithIds(Sequence[BaseMessage]):
    """The state's messages, each with an id (derived from its position and content when it has
    none, so the same state always gives the same ids); only the messages read are looked at."""

    def __init__(self, raw: list[BaseMessage]) -> None:
        self._raw = raw

    def __len__(self) -> int:
        return len(self._raw)

    @overload
    def __getitem__(self, i: int) -> BaseMessage: ...
    @overload
    def __getitem__(self, i: slice) -> list[BaseMessage]: ...
    def __getitem__(self, i: int | slice) -> BaseMessage | list[BaseMessage]:
        if isinstance(i, slice):
            part = self._raw[i]
            if all(isinstance(m, BaseMessage) and m.id is not None for m in part):
                return part
            return [self[j] for j in range(*i.indices(len(self._raw)))]
        index = i if i >= 0 else len(self._raw) + i
        m = self._raw[i]
        m = m if isinstance(m, BaseMessage) else _converted(m, index)
        if m.id is not None:
            return m
        return m.model_copy(update={"id": f"{ANON_ID_PREFIX}{index}-{_digest(m)}"})


def as_messages(raw: Sequence[Any]) -> list[BaseMessage]:
    """``raw`` with each message-like (a dict, a ``(role, text)`` pair, a string) converted
    (``InvalidMessageError`` for an item that converts to none).
    """
    return [m if isinstance(m, BaseMessage) else _converted(m, i) for i, m in enumerate(raw)]


def _converted(item: Any, index: int) -> BaseMessage:
    try:
        return convert_to_messages([item])[0]
    except (NotImplementedError, ValueError, TypeError) as exc:
        reason = str(exc).split("\n")[0]
        msg = (
            f"state message {index} ({type(item).__name__}) is not a message ({reason}). "
            "Pass langchain-core messages, or dicts and (role, text) pairs they convert from."
        )
        raise InvalidMessageError(msg) from exc


def _digest(message: BaseMessage) -> str:
    text = f"{message.type}\x00{message.content!r}\x00{getattr(message, 'tool_calls', None)!r}"
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def stored_messages(value: Any) -> list[BaseMessage]:
    """A saved log (``messages_to_dict`` dicts as ``to_state`` writes it; None for none), checked."""
    if value is None:
        return []
    reason = type(value).__name__
    if isinstance(value, list):
        try:
            return messages_from_dict(value)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            reason = str(exc).split("\n")[0][:80]
    msg = f"the saved langctx state's messages must be a list of message dicts, got: {reason}."
    raise StateVersionError(msg)


def stored_evictions(value: Any) -> list[dict[str, Any]]:
    """A saved eviction log (a list of dicts; None for none), checked."""
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(r, Mapping) for r in value):
        return [dict(r) for r in value]
    kind = "a list holding other items" if isinstance(value, list) else type(value).__name__
    msg = f"the saved langctx state's eviction_log must be a list of dicts, got {kind}."
    raise StateVersionError(msg)


def window_start(
    raw: Sequence[BaseMessage], comps: Sequence[CompactionEntry], archive: Any
) -> tuple[list[BaseMessage], int] | None:
    """The pinned head before the latest cut, and the cut's index in ``raw`` (None: not found)."""
    cut_entry = next((e for e in reversed(comps) if e["trigger"] != "merge"), None)
    if cut_entry is None:
        return [], 0
    fk = cut_entry["first_kept_id"]
    if fk is not None:
        start = _rfind(raw, fk)
    else:  # the fold reached the log's end: the cut is just after its last message
        covered = cut_entry["covered_ids"]
        last = _rfind(raw, covered[-1]) if covered else None
        start = None if last is None else last + 1
    if start is None and isinstance(archive, Mapping) and archive.get("first_kept"):
        start = _rfind(raw, str(archive["first_kept"]))  # the folded messages were archived
    if start is None:
        return None
    messages = raw._raw if isinstance(raw, WithIds) else raw  # types only: no ids needed
    k = next((i for i in range(start) if not isinstance(messages[i], SystemMessage)), start)
    head = [m for m in raw[:k] if not is_control_message(m)] if k else []
    pc_id = cut_entry.get("provider_compaction_id")
    if pc_id:
        p = _rfind(raw, pc_id, hi=start)
        if p is None:
            return None
        head.extend(_unit(raw, p, start))
    elif "task_id" in cut_entry:
        if task_id := cut_entry["task_id"]:
            t = next((i for i in range(k, start) if raw[i].id == task_id), None)
            if t is None:
                return None
            head.append(raw[t])
    else:  # an entry of an older langctx names no task: the whole state is read once more
        return None
    return head, start


def _unit(raw: Sequence[BaseMessage], p: int, hi: int) -> list[BaseMessage]:
    """The message at ``p`` and the tool results answering its calls (before ``hi``)."""
    calls = set(tool_call_ids(raw[p]))
    out = [raw[p]]
    for m in raw[p + 1 : hi]:
        if getattr(m, "tool_call_id", None) not in calls:
            break
        out.append(m)
    return out


def _rfind(raw: Sequence[BaseMessage], mid: str, *, hi: int | None = None) -> int | None:
    if isinstance(raw, WithIds) and not mid.startswith(ANON_ID_PREFIX):
        raw = raw._raw  # a stated id: no derived id can equal it
    return next((i for i in range(len(raw) if hi is None else hi)[::-1] if raw[i].id == mid), None)


def archived_messages(batches: Any) -> dict[str, BaseMessage]:
    """The messages of the state's archive (``langctx_archive``), by id; {} for none or junk."""
    out: dict[str, BaseMessage] = {}
    for batch in batches if isinstance(batches, list) else ():
        dicts = batch.get("messages") if isinstance(batch, Mapping) else None
        try:
            found = messages_from_dict(dicts) if isinstance(dicts, list) else []
        except (KeyError, TypeError, ValueError, AttributeError):
            continue  # not a batch this version reads: its messages are not found (no upgrade)
        out.update((str(m.id), m) for m in found if m.id is not None)
    return out


def archived_covered(batches: Any) -> dict[str, list[str]]:
    """The ``covered_ids`` of the compaction entries the state's archive holds, by entry id."""
    out: dict[str, list[str]] = {}
    for batch in batches if isinstance(batches, list) else ():
        comps = batch.get("compactions") if isinstance(batch, Mapping) else None
        for e in comps if isinstance(comps, list) else ():
            ids = e.get("covered_ids") if isinstance(e, Mapping) else None
            if isinstance(ids, list) and all(isinstance(i, str) and i for i in ids):
                out[str(e.get("id"))] = list(ids)
    return out


def restore_entries(
    comps: Sequence[Mapping[str, Any]], present: set[str], record: Mapping[str, Any] | None
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The channel's compaction entries that still fit the state, and the copies to restore.

    An entry fits when its cut is in the state, a merge when what it merged is kept or archived;
    the first misfit ends the list. An archived entry with an archived cut is restored with the
    archive's cut (``record["first_kept"]``), which leaves the memory's cut unchanged.
    """
    in_channel = {e["id"] for e in comps}
    saved = int(record.get("saved", 0)) if record else 0
    anchor = record.get("first_kept") if record else None
    kept: list[Mapping[str, Any]] = []
    restore: list[Mapping[str, Any]] = []
    known: set[str] = set()
    for n, e in enumerate(comps):
        fk = e["first_kept_id"]
        copy = e
        if e["trigger"] == "merge":
            ok = all(m in known or m not in in_channel for m in e.get("merged_from", []))
        elif fk is not None and fk in present:
            ok = True
        elif n < saved and anchor is not None and anchor in present:
            ok = True  # an archived cut (or none): the archived one stands in
            copy = {**e, "first_kept_id": anchor}
        else:
            ok = fk is None
        if not ok:
            break
        kept.append(e)
        restore.append(copy)
        known.add(e["id"])
    return kept, restore
