"""What restoring a memory from persisted state reads: stored edits (checked), entries, messages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages

from langctx.blocks import has_opaque_blocks
from langctx.count_cache import describe_edited
from langctx.entries import CompactionEntry, EditEntry, active_summaries
from langctx.errors import StateVersionError
from langctx.user_messages import ledger_from_facts, stored_ledger

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore


def apply_edit(mem: MemoryCore, edit: EditEntry) -> None:
    """Apply a stored edit to its logged message (:class:`StateVersionError` when it does not fit)."""
    if (mid := edit["message_id"]) not in mem._pos:
        msg = f"edit {edit['id']} names message {mid!r}, which is not in the log."
        raise StateVersionError(msg)
    i = mem._pos[mid]
    message = mem._log[i]
    calls = edit.get("tool_calls")
    if has_opaque_blocks(message):
        _corrupt(edit, "edits a message with signed or encrypted blocks, which langctx never edits")
    if calls is not None and isinstance(message, AIMessage):
        shape = [(tc["id"], tc["name"]) for tc in message.tool_calls]
        if [(tc["id"], tc["name"]) for tc in calls] != shape:
            _corrupt(edit, "changes the tool calls of message " + repr(mid))
    mem._edits.append(edit)
    mem._edit_of[mid] = edit
    mem._views[i], mem._vtok[i] = describe_edited(mem.counter, message, edit)


def restored_cut(mem: MemoryCore) -> int:
    """The cut of a restored log: the latest its entries name, or the provider's compaction item."""
    cut = 0
    for e in mem._entries:
        fk = e["first_kept_id"]
        if e["trigger"] == "merge":
            continue
        if fk is None:  # folded to the log's end then
            last = e["covered_ids"][-1] if e["covered_ids"] else None
            cut = mem._pos[last] + 1 if last in mem._pos else len(mem._log)
        elif fk in mem._pos:
            cut = max(cut, mem._pos[fk])
        else:
            msg = f"compaction {e['id']} keeps from {fk!r}, which is not in the log."
            raise StateVersionError(msg)
    return cut if mem._pc is None else max(cut, mem._pc)


def _corrupt(edit: EditEntry, what: str) -> None:
    msg = f"edit {edit['id']} {what}; the state is corrupt (clear the thread's langctx state)."
    raise StateVersionError(msg)


def restore_users(
    mem: MemoryCore, users: Sequence[Mapping[str, Any]] | None, dropped: int = 0
) -> None:
    """Set the memory's ledger of folded user messages: ``users`` read (checked, bounded), or
    (None) read from the entries of a state written before the ledger (:func:`ledger_from_facts`)."""
    if users is None:
        mem._users = ledger_from_facts(e.get("facts") or {} for e in active_summaries(mem._entries))
        mem._users_log = list(mem._users[0])
    else:
        mem._users = stored_ledger(list(users) if isinstance(users, tuple) else users, dropped)
        mem._users_log = cast(list[dict[str, Any]], list(users))  # as given: delta positions
    mem._users_given = len(mem._users_log)


def active_positions(entries: Sequence[CompactionEntry]) -> tuple[int, ...]:
    """1-based positions of the active summaries, in projection order."""
    order = {e["id"]: n for n, e in enumerate(entries, 1)}
    return tuple(order[e["id"]] for e in active_summaries(entries))


def as_messages(messages: Sequence[Any]) -> list[BaseMessage]:
    if all(isinstance(m, BaseMessage) for m in messages):
        return list(messages)
    return convert_to_messages(list(messages))
