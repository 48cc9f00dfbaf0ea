"""Restoring a memory from persisted state: the whole log, or a window of it."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import (
    BaseMessage,
    convert_to_messages,
)

from langctx.count_cache import describe_edited
from langctx.entries import (
    CompactionEntry,
    EditEntry,
    EvictionRecord,
    active_summaries,
    validate_entry,
)
from langctx.errors import (
    StateVersionError,
)

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory


def restore(
    self: LayeredChatMemory,
    messages: Sequence[BaseMessage],
    *,
    compactions: Sequence[Mapping[str, Any]] = (),
    edits: Sequence[Mapping[str, Any]] = (),
    priorities: Mapping[str, int] | None = None,
    eviction_log: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Replace this memory's state with a persisted log and its entries (no compaction runs).

    Used by the integrations to rebuild the memory from graph state or a database.
    """
    with self._lock:
        self._reset()
        self._restoring = True
        try:
            self._append_all(list(messages))
        finally:
            self._restoring = False
        for raw in edits:
            e = validate_entry(raw)
            if e["message_id"] not in self._pos:
                msg = f"edit {e['id']} names message {e['message_id']!r}, which is not in the log."
                raise StateVersionError(msg)
            self._edits.append(e)
            self._edit_of[e["message_id"]] = e
            i = self._pos[e["message_id"]]
            self._views[i], self._vtok[i] = describe_edited(self.counter, self._log[i], e)
        for raw in compactions:
            self._entries.append(validate_entry(raw))
            self._seq[self._entries[-1]["id"]] = len(self._entries)
        self._active = active_summaries(self._entries)
        cut = 0
        for e in self._entries:
            fk = e["first_kept_id"]
            if e["trigger"] != "merge" and fk is not None:
                if fk not in self._pos:
                    msg = f"compaction {e['id']} keeps from {fk!r}, which is not in the log."
                    raise StateVersionError(msg)
                cut = max(cut, self._pos[fk])
            elif e["trigger"] != "merge" and fk is None:  # folded to the log's end then
                last = e["covered_ids"][-1] if e["covered_ids"] else None
                cut = self._pos[last] + 1 if last in self._pos else len(self._log)
        if self._pc is not None:
            cut = max(cut, self._pc)
            self._active = [e for e in self._active if self._after_pc(e)]
        self._first_kept = cut
        self._priority = {str(k): int(v) for k, v in (priorities or {}).items()}
        self._evictions = [EvictionRecord(**r) for r in eviction_log]  # type: ignore[typeddict-item]
        self._refresh()
        self._check_pinned()


def restore_window(
    self: LayeredChatMemory,
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
    reducer validated them); only ``window[validate_from:]`` is validated, the rest was
    the input of an earlier model call. Edits and priorities of messages outside the
    window are ignored. ``before`` finds a message of the log before the window by id (for a
    pending background summary of a span the window no longer holds).
    """
    with self._lock:
        self._reset()
        self._before = before
        self._restoring = True
        head, window = _messages(head), _messages(window)
        try:
            for m in [*head, *window[:validate_from]]:
                self._append(m)
            self._new_from = len(self._log)
            self._validate_batch(window[validate_from:])
            for m in window[validate_from:]:
                self._append(m)
        finally:
            self._restoring = False
        pos, by_message = self._pos, edits_by_message(edits)
        if len(by_message) < len(pos):
            edited = sorted((mid for mid in by_message if mid in pos), key=pos.__getitem__)
        else:  # a long thread: the window is the smaller side
            edited = [mid for mid in pos if mid in by_message]  # pos is in log order
        for mid in edited:
            for e in by_message[mid]:
                i = pos[mid]
                self._edits.append(e)
                self._edit_of[e["message_id"]] = e
                self._views[i], self._vtok[i] = describe_edited(self.counter, self._log[i], e)
        self._entries = list(compactions)
        order = active_positions(self._entries)
        self._seq = {self._entries[n - 1]["id"]: n for n in order}
        self._active = [self._entries[n - 1] for n in order]
        self._active = [e for e in self._active if self._after_pc(e)]
        self._first_kept = max(len(head) if self._entries else 0, self._first_kept)
        self._priority = {k: int(v) for k, v in (priorities or {}).items() if k in self._pos}
        self._refresh()
        self._calibrate_window()
        self._check_pinned()


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
