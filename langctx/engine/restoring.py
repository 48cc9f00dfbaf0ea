"""Restoring a memory from persisted state: the whole log, or a window of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages

from langctx.blocks import has_opaque_blocks
from langctx.count_cache import describe_edited
from langctx.engine import log, writing
from langctx.entries import (
    CompactionEntry,
    EditEntry,
    EvictionRecord,
    active_summaries,
    read_entry,
    validate_entry,
)
from langctx.errors import StateVersionError

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore


def restore(
    mem: MemoryCore,
    messages: Sequence[BaseMessage],
    *,
    compactions: Sequence[Mapping[str, Any]] = (),
    edits: Sequence[Mapping[str, Any]] = (),
    priorities: Mapping[str, int] | None = None,
    eviction_log: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Replace this memory's state with a persisted log and its entries (no compaction runs).

    Used by the integrations to rebuild the memory from graph state or a database. Entries are
    read (:func:`~langctx.entries.read_entry`); an edit must name a logged message and
    keep its tool calls' ids and names, a cut must be in the log. Two repairs: a compaction whose
    cut is the pinned task is ignored (no fold cuts there: it folds past the task), and so is a
    priority of a message that is not in the log.

    Raises:
        StateVersionError: an entry is corrupt or does not fit the log.
    """
    with mem._lock:
        mem._reset()
        mem._restoring = True
        try:
            log.append_all(mem, list(messages))
        finally:
            mem._restoring = False
        for raw in edits:
            e = validate_entry(raw)
            if e["message_id"] not in mem._pos:
                msg = f"edit {e['id']} names message {e['message_id']!r}, which is not in the log."
                raise StateVersionError(msg)
            _apply_edit(mem, e)
        task = mem._id(mem._task_idx) if mem._task_idx is not None else None
        for raw in compactions:
            e = read_entry(raw)
            if e["trigger"] != "merge" and task is not None and e["first_kept_id"] == task:
                continue  # a cut no fold makes (it folds past the task): ignored
            mem._entries.append(e)
            mem._seq[e["id"]] = len(mem._entries)
        mem._active = active_summaries(mem._entries)
        cut = 0
        for e in mem._entries:
            fk = e["first_kept_id"]
            if e["trigger"] != "merge" and fk is not None:
                if fk not in mem._pos:
                    msg = f"compaction {e['id']} keeps from {fk!r}, which is not in the log."
                    raise StateVersionError(msg)
                cut = max(cut, mem._pos[fk])
            elif e["trigger"] != "merge" and fk is None:  # folded to the log's end then
                last = e["covered_ids"][-1] if e["covered_ids"] else None
                cut = mem._pos[last] + 1 if last in mem._pos else len(mem._log)
        if mem._pc is not None:
            cut = max(cut, mem._pc)
            mem._active = [e for e in mem._active if log.after_pc(mem, e)]
        mem._first_kept = cut
        mem._priority = {k: int(v) for k, v in (priorities or {}).items() if k in mem._pos}
        mem._evictions = [EvictionRecord(**r) for r in eviction_log]  # type: ignore[typeddict-item]
        mem._refresh()
        writing.check_pinned(mem)


def restore_window(
    mem: MemoryCore,
    head: Sequence[BaseMessage],
    window: Sequence[BaseMessage],
    *,
    compactions: Sequence[CompactionEntry] = (),
    edits: Sequence[EditEntry] = (),
    priorities: Mapping[str, int] | None = None,
    validate_from: int = 0,
    before: Callable[[str], BaseMessage | None] | None = None,
) -> None:
    """Rebuild from a window of a longer log (no compaction runs).

    ``window`` is the log from the latest compaction's cut on; ``head`` the messages before
    the cut that stay projected (leading system messages, the task, the latest provider
    compaction item and its results). ``compactions`` are taken as stored (the channel's
    reducer validated them), but those projected are read (:func:`~langctx.entries.read_entry`:
    checked again, for a state written without the reducer, and their facts read); only
    ``window[validate_from:]`` is validated, the rest was the input of an earlier model call.
    Edits and priorities of messages outside the window are ignored. ``before`` finds a message
    of the log before the window by id (for a pending background summary of a span the window
    no longer holds).
    """
    with mem._lock:
        mem._reset()
        mem._before = before
        mem._restoring = True
        head, window = _messages(head), _messages(window)
        try:
            for m in [*head, *window[:validate_from]]:
                log.append(mem, m)
            mem._new_from = len(mem._log)
            log.validate_batch(mem, window[validate_from:])
            for m in window[validate_from:]:
                log.append(mem, m)
        finally:
            mem._restoring = False
        pos, by_message = mem._pos, edits_by_message(edits)
        if len(by_message) < len(pos):
            edited = sorted((mid for mid in by_message if mid in pos), key=pos.__getitem__)
        else:  # a long thread: the window is the smaller side
            edited = [mid for mid in pos if mid in by_message]  # pos is in log order
        for mid in edited:
            for e in by_message[mid]:
                _apply_edit(mem, e)
        mem._entries = list(compactions)
        order = active_positions(mem._entries)
        mem._seq = {mem._entries[n - 1]["id"]: n for n in order}
        projected = [n for n in order if log.after_pc(mem, mem._entries[n - 1])]
        for n in projected:  # read, their facts too: a state written without the reducer
            mem._entries[n - 1] = read_entry(mem._entries[n - 1])
        mem._active = [mem._entries[n - 1] for n in projected]
        mem._first_kept = max(len(head) if mem._entries else 0, mem._first_kept)
        mem._priority = {k: int(v) for k, v in (priorities or {}).items() if k in mem._pos}
        mem._refresh()
        log.calibrate_window(mem)
        writing.check_pinned(mem)


def _apply_edit(mem: MemoryCore, edit: EditEntry) -> None:
    """Apply a stored edit to its logged message (an edit cuts arguments only: the tool calls
    keep their ids and names).

    Raises:
        StateVersionError: the edit's tool calls are not the message's (by id and name, in
            order), or the message has signed or encrypted blocks (thinking, reasoning).
    """
    i = mem._pos[edit["message_id"]]
    message = mem._log[i]
    calls = edit.get("tool_calls")
    if has_opaque_blocks(message):
        _corrupt(edit, "edits a message with signed or encrypted blocks, which langctx never edits")
    if calls is not None and isinstance(message, AIMessage):
        if [(tc["id"], tc["name"]) for tc in calls] != [
            (tc["id"], tc["name"]) for tc in message.tool_calls
        ]:
            _corrupt(edit, "changes the tool calls of message " + repr(edit["message_id"]))
    mem._edits.append(edit)
    mem._edit_of[edit["message_id"]] = edit
    mem._views[i], mem._vtok[i] = describe_edited(mem.counter, message, edit)


def _corrupt(edit: EditEntry, what: str) -> None:
    msg = f"edit {edit['id']} {what}; the state is corrupt (clear the thread's langctx state)."
    raise StateVersionError(msg)


def active_positions(entries: Sequence[CompactionEntry]) -> tuple[int, ...]:
    """1-based positions of the active summaries, in projection order."""
    order = {e["id"]: n for n, e in enumerate(entries, 1)}
    return tuple(order[e["id"]] for e in active_summaries(entries))


def edits_by_message(edits: Sequence[EditEntry]) -> Mapping[str, tuple[EditEntry, ...]]:
    """Message id -> its edits, in order."""
    grouped: dict[str, tuple[EditEntry, ...]] = {}
    for e in edits:
        mid = e["message_id"]
        grouped[mid] = (*grouped.get(mid, ()), e)
    return grouped


def _messages(messages: Sequence[Any]) -> list[BaseMessage]:
    if all(isinstance(m, BaseMessage) for m in messages):
        return list(messages)
    return convert_to_messages(list(messages))
