"""The ``langctx`` graph-state channel (a versioned ``TypedDict`` of JSON values), its reducer and
its reading; it holds what the memory decided, never the messages (docs/persistence.md)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypedDict, cast

from langctx.entries import ENTRY_VERSION, active_summaries, validate_entry
from langctx.errors import StateVersionError
from langctx.user_messages import Ledger, ledger_appended, ledger_from_facts, stored_ledger

CHANNEL_VERSION = 2
"""Version of the channel's own shape (entries carry their own ``v``). Version 2 keeps the folded
user messages once, in ``users`` (version 1, without it, is read by :func:`channel_users`)."""

USERS_KEY = "users"
"""The channel key of the ledger of folded user messages (:data:`~langctx.user_messages.Ledger`)."""
USERS_DROPPED_KEY = "users_dropped"
"""The channel key counting the older folded user messages the ledger no longer lists."""

ARCHIVE_RECORD_VERSION = 1
"""Version of the :class:`ArchiveRecord` shape."""

ARCHIVE_KEY = "langctx_archive"
"""The state key of the in-state archive, a list of batches (:mod:`langctx.stores.archive`)."""

RUN_KEY = "run"
"""The channel key of a run without a thread: its random id (``uuid4().hex``)."""
_RUN = re.compile(r"[0-9a-f]{32}")

_LISTS = ("compactions", "edits")
_USERS = (USERS_KEY, USERS_DROPPED_KEY)
_OPS = ("reset", "drop", "slim")
"""Update-only keys: they say how to apply an update and are never stored."""


class ArchiveRecord(TypedDict, total=False):
    """Where a thread's archive ends (archive mode), kept in the channel under ``archive``."""

    v: int
    last: str | None
    """Store key of the newest archived batch (None: nothing archived yet)."""
    batches: int
    """Batches archived so far."""
    messages: int
    """Messages archived so far."""
    saved: int
    """The first ``saved`` compaction entries of the channel are already copied to the store."""
    first_kept: str | None
    """Id of the first message kept in ``messages`` after the newest batch (the cut)."""
    held: int
    """Batches the state's ``langctx_archive`` holds (the first ``held``; absent: all of them),
    the later ones went to a store."""


class LangctxChannel(TypedDict, total=False):
    """The value of the ``langctx`` state key (version 2). All fields are JSON values.

    Update-only keys: ``reset`` (replace the channel, keeping its ``archive`` record and ``run``
    unless the update brings them), and in archive mode ``drop`` (``{"compactions": [ids], "edits": [ids],
    "priorities": [message ids]}``) and ``slim`` (compaction ids whose ``covered_ids`` keep only
    their length, first and last id), applied after the new entries are appended.
    """

    v: int
    compactions: list[dict[str, Any]]
    edits: list[dict[str, Any]]
    priorities: dict[str, int]
    users: list[dict[str, Any]]
    """The folded user messages, each once, oldest first (``{"id", "text"}``, ``"short"`` when by
    their opening, ``"constraints"``), bounded; in an update: those to append."""
    users_dropped: int
    """How many older folded user messages ``users`` only counts; in an update: how many more."""
    archive: ArchiveRecord
    eviction_log: list[dict[str, Any]]
    """What left the projection and why (``to_state`` and the chat history; not the graph)."""
    counter: str
    """The ``name`` of the token counter the entries were counted with (``langctx inspect``)."""
    run: str
    """A run without a thread: its random id (``uuid4().hex``), naming where its tool outputs are
    stored (:func:`run_of`); written by the middlewares at the run's first model call."""
    reset: bool
    drop: dict[str, list[str]]
    slim: list[str]


class MemorySnapshot(LangctxChannel, total=False):
    """:meth:`~langctx.LayeredChatMemory.to_state`: the channel's shape plus the whole log."""

    messages: list[dict[str, Any]]
    """The log, as ``messages_to_dict`` dicts."""


def channel_update(
    *,
    compactions: Sequence[Mapping[str, Any]] = (),
    edits: Sequence[Mapping[str, Any]] = (),
    priorities: Mapping[str, int] | None = None,
    reset: bool = False,
    archive: ArchiveRecord | None = None,
    drop: Mapping[str, Sequence[str]] | None = None,
    slim: Sequence[str] = (),
    counter: str | None = None,
    copy: bool = True,
    users: Sequence[Mapping[str, Any]] = (),
    users_dropped: int = 0,
) -> LangctxChannel:
    """An update for the ``langctx`` channel (see :class:`LangctxChannel` for the keys).

    Args:
        priorities: ledger changes (message id -> priority).
        reset: replace the channel instead of appending (the ``archive`` record is kept).
        counter: the name of the token counter the entries were counted with.
        copy: copy the entries (False: the caller hands over entries nothing else holds).
        users: folded user messages to append to the ledger (stored shape).
        users_dropped: older folded user messages the ledger counts more.

    Example:
        >>> channel_update(priorities={"m1": 10})
        {'v': 2, 'compactions': [], 'edits': [], 'priorities': {'m1': 10}}
    """
    out = LangctxChannel(
        v=CHANNEL_VERSION,
        compactions=[_copy(e) if copy else cast(dict[str, Any], e) for e in compactions],
        edits=[_copy(e) if copy else cast(dict[str, Any], e) for e in edits],
        priorities={str(k): int(v) for k, v in (priorities or {}).items()},
    )
    if reset:
        out["reset"] = True
    if counter is not None:
        out["counter"] = str(counter)
    if archive is not None:
        out["archive"] = _copy(archive)
    if drop:
        out["drop"] = {str(k): [str(i) for i in v] for k, v in drop.items() if v}
    if slim:
        out["slim"] = [str(i) for i in slim]
    if users:
        out["users"] = [dict(u) for u in users]
    if users_dropped:
        out["users_dropped"] = int(users_dropped)
    return out


def merge_langctx(
    left: Mapping[str, Any] | None, right: Mapping[str, Any] | None
) -> LangctxChannel:
    """Reducer of the ``langctx`` channel: append new entries by id, merge the priority ledger
    and the ledger of folded user messages (a channel without one gets it from its entries).

    Entries are validated (older versions migrated); unknown keys are kept, last writer wins.

    Raises:
        StateVersionError: an unknown version, or a part that is not what it must be.
    """
    return _merged(left, right, users_checked=False)


def merge_langctx_many(
    left: Mapping[str, Any] | None, updates: Iterable[Mapping[str, Any] | None]
) -> LangctxChannel:
    """:func:`merge_langctx` of ``updates`` in order: the stored value is checked once, each
    update as it comes (a ledger this reducer wrote is in its stored shape already).

    Example:
        >>> merge_langctx_many({}, [{"v": 2, "priorities": {"m1": 10}}, None])["priorities"]
        {'m1': 10}
    """
    out: Mapping[str, Any] | None = left
    checked = False
    for update in updates:
        if not update:
            continue
        if not checked and out and USERS_KEY in out and not update.get("reset"):
            out = {**out, **dict(zip(_USERS, channel_users(out), strict=True))}
            checked = True
        out = _merged(out, update, users_checked=checked)
        checked = True  # the reducer's own output from here on
    return _merged(out, None, users_checked=checked)


def _merged(
    left: Mapping[str, Any] | None, right: Mapping[str, Any] | None, *, users_checked: bool
) -> LangctxChannel:
    base = check_version(left or {}, "stored")
    if not right:
        return _normalise(base)
    update = check_version(right, "update")
    drop, slim = _ops(update)
    if update.get("reset"):
        base = {k: v for k, v in base.items() if k in ("archive", RUN_KEY)}
    out: dict[str, Any] = {k: v for k, v in base.items() if k not in (*_LISTS, "priorities")}
    out.update(
        {k: v for k, v in update.items() if k not in (*_LISTS, "priorities", *_OPS, *_USERS)}
    )
    fresh = update.get("compactions") and USERS_KEY not in base and not update.get("reset")
    if fresh or any(k in update for k in _USERS):  # (fresh: a channel of version 1 gets one)
        added = stored_ledger(update.get(USERS_KEY) or [], update.get(USERS_DROPPED_KEY) or 0)
        trusted = users_checked and USERS_KEY in base  # (written by this reducer)
        held = (base[USERS_KEY], base.get(USERS_DROPPED_KEY, 0)) if trusted else channel_users(base)
        out[USERS_KEY], out[USERS_DROPPED_KEY] = ledger_appended(held, *added)
    out["v"] = CHANNEL_VERSION
    for key in _LISTS:
        out[key] = _appended(list(current_entries(base.get(key), key)), update.get(key), key)
    out["priorities"] = {
        **stored_priorities(base.get("priorities")),
        **stored_priorities(update.get("priorities")),
    }
    return shed(out, drop, slim)  # type: ignore[return-value]


def _ops(update: Mapping[str, Any]) -> tuple[Mapping[str, Any], list[str]]:
    """An update's ``drop`` and ``slim``, checked."""
    drop, slim = update.get("drop") or {}, update.get("slim") or []
    if not isinstance(drop, Mapping) or not all(_ids(v or ()) for v in drop.values()):
        msg = f"a langctx update's drop must map channel keys to lists of ids, got {drop!r:.80}."
        raise StateVersionError(msg)
    if not _ids(slim):
        msg = f"a langctx update's slim must be a list of compaction ids, got {slim!r:.80}."
        raise StateVersionError(msg)
    return drop, list(slim)


def shed(
    channel: dict[str, Any], drop: Mapping[str, Any] | None, slim: Iterable[str] | None
) -> dict[str, Any]:
    """``channel`` (changed in place) without what ``drop`` names, the ``slim`` ones slimmed."""
    drop, slim = drop or {}, set(slim or ())
    for key in _LISTS:
        gone = set(drop.get(key) or ())
        slimmed = slim if key == "compactions" else set()
        if gone or slimmed:
            latest = latest_cut_id(channel.get(key) or []) if slimmed else None
            channel[key] = [
                slim_entry(e, keep_files=_entry_id(e, key) == latest)
                if _entry_id(e, key) in slimmed
                else e
                for e in channel.get(key) or []
                if _entry_id(e, key) not in gone
            ]
    if gone := set(drop.get("priorities") or ()):
        prio = channel.get("priorities") or {}
        channel["priorities"] = {k: v for k, v in prio.items() if k not in gone}
    return channel


def _ids(value: Any) -> bool:
    return isinstance(value, list | tuple | set | frozenset) and all(
        isinstance(i, str) for i in value
    )


def _entry_id(entry: Any, key: str) -> Any:
    if not isinstance(entry, Mapping):
        msg = f"a langctx {key} entry is a {type(entry).__name__}, not a dict."
        raise StateVersionError(msg)
    return entry.get("id")


def _appended(current: list[Any], updates: Any, key: str) -> list[Any]:
    """``current`` with the update's entries of ``key`` appended, validated, each id once."""
    if not updates:
        return current
    if not isinstance(updates, list | tuple):
        msg = f"a langctx update's {key} must be a list of entries, got {type(updates).__name__}."
        raise StateVersionError(msg)
    for i, e in enumerate(updates):
        if not isinstance(e, Mapping):
            msg = f"a langctx update's {key} entry {i} is a {type(e).__name__}, not a dict."
            raise StateVersionError(msg)
    seen = {_entry_id(e, key) for e in current}
    for raw in updates:
        # an update owns its entries (channel_update copies those a caller keeps): no copy here
        entry = validate_entry(raw if isinstance(raw, dict) else dict(raw))
        if entry["id"] not in seen:
            seen.add(entry["id"])
            current.append(entry)
    return current


def latest_cut_id(compactions: Sequence[Any]) -> Any:
    """The id of the latest compaction that folded messages (not a merge), or None."""
    return next(
        (
            e.get("id")
            for e in reversed(compactions)
            if isinstance(e, Mapping) and e.get("trigger") != "merge"
        ),
        None,
    )


def slim_covered(ids: Sequence[str]) -> list[str]:
    """``ids`` with every id but the first and the last blanked to ``""`` (same length)."""
    last = len(ids) - 1
    return [i if n in (0, last) else "" for n, i in enumerate(ids)]


def is_slim(ids: Sequence[str]) -> bool:
    """True when :func:`slim_covered` would not change ``ids``."""
    return all(not i for i in ids[1:-1])


def slim_entry(entry: Mapping[str, Any], *, keep_files: bool = True) -> dict[str, Any]:
    """A copy of ``entry`` with its ``covered_ids`` slimmed (:func:`slim_covered`), and without
    its files in hand and sub-agent reports unless ``keep_files`` (only the latest fold's are
    shown)."""
    out = dict(entry)
    covered = entry.get("covered_ids") or []
    if not is_slim(covered):
        out["covered_ids"] = slim_covered(covered)
    if not keep_files:
        out.pop("files", None)
        out.pop("reports", None)
    return out


# ---------------------------------------------------------------------- reading


def check_version(value: Mapping[str, Any], what: str) -> Mapping[str, Any]:
    """``value`` when it is a channel-shaped dict of this version (or an older, migrated one)."""
    if not isinstance(value, Mapping):
        msg = f"the langctx channel must be a dict, got {type(value).__name__}."
        raise StateVersionError(msg)
    version = value.get("v", CHANNEL_VERSION if not value else None)
    if version not in (0, 1, CHANNEL_VERSION):
        msg = (
            f"the {what} langctx channel has version {version!r}; this langctx reads version "
            f"{CHANNEL_VERSION}. Upgrade langctx, or clear the thread's langctx state with "
            f'graph.update_state(config, {{"langctx": {{"v": {CHANNEL_VERSION}, "reset": True}}}}).'
        )
        raise StateVersionError(msg)
    return value


def channel_users(channel: Mapping[str, Any] | None) -> Ledger:
    """The channel's ledger of folded user messages, checked and bounded.

    The rule for a channel without one (written before version 2, or by hand): the
    ``user_messages`` its active entries' facts carry (:func:`ledger_from_facts`).

    Raises:
        StateVersionError: ``users`` is not a list or ``users_dropped`` not a count.
    """
    if not channel:
        return [], 0
    if USERS_KEY in channel:
        return stored_ledger(channel[USERS_KEY], channel.get(USERS_DROPPED_KEY, 0))
    entries = current_entries(channel.get("compactions"))
    return ledger_from_facts(
        e["facts"] if isinstance(e.get("facts"), Mapping) else {} for e in active_summaries(entries)
    )


def channel_entries(
    channel: Mapping[str, Any] | None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, int]]:
    """The validated (migrated) compactions, edits and priorities stored in a channel value."""
    if not channel:
        return [], [], {}
    base = check_version(channel, "stored")
    return (
        [dict(e) for e in current_entries(base.get("compactions"), trust=False)],
        [dict(e) for e in current_entries(base.get("edits"), "edits", trust=False)],
        stored_priorities(base.get("priorities")),
    )


def current_entries(entries: Any, what: str = "compactions", *, trust: bool = True) -> list[Any]:
    """Stored entries, older versions migrated and unknown ones refused.

    A list whose first and last entries are current is trusted as it is (the reducer validated
    it), unless ``trust=False``.
    """
    if not isinstance(entries, list):
        if entries is None:
            return []
        if isinstance(entries, str | bytes | Mapping) or not isinstance(entries, Iterable):
            kind = type(entries).__name__
            msg = f"the langctx channel's {what} must be a list of entries, got {kind}."
            raise StateVersionError(msg)
        entries = list(entries)
    if not entries or (trust and _is_current(entries[0]) and _is_current(entries[-1])):
        return entries
    out = []
    for i, e in enumerate(entries):
        if not isinstance(e, Mapping):
            msg = f"langctx {what} entry {i} is a {type(e).__name__}, not a dict."
            raise StateVersionError(msg)
        out.append(validate_entry(dict(e)))
    return out


def _is_current(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("v") == ENTRY_VERSION and "kind" in entry


def check_channel(channel: Any) -> None:
    """Validate every entry of a stored channel (names what is wrong when reading it failed)."""
    for what in _LISTS if isinstance(channel, Mapping) else ():
        if isinstance(entries := channel.get(what), list):
            current_entries(entries, what, trust=False)


def stored_priorities(value: Any) -> dict[str, int]:
    """The channel's priority ledger (message id -> priority), checked."""
    if not value:
        return {}
    if isinstance(value, Mapping) and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value.values()
    ):
        return {str(k): v for k, v in value.items()}
    shown = type(value).__name__ if not isinstance(value, Mapping) else repr(dict(value))[:80]
    msg = f"the langctx channel's priorities must map message ids to integers, got {shown}."
    raise StateVersionError(msg)


def run_of(channel: Any) -> str | None:
    """The run id a thread-less run's channel holds (None: none, or not a ``uuid4().hex``)."""
    run = channel.get(RUN_KEY) if isinstance(channel, Mapping) else None
    return run if isinstance(run, str) and _RUN.fullmatch(run) else None


def run_update() -> LangctxChannel:
    """An update giving a thread-less run its random id (see :func:`run_of`)."""
    return LangctxChannel(v=CHANNEL_VERSION, run=uuid.uuid4().hex)


def archive_record(channel: Mapping[str, Any] | None) -> ArchiveRecord | None:
    """The channel's archive record, or None when the thread has nothing archived."""
    record = channel.get("archive") if isinstance(channel, Mapping) else None
    if not isinstance(record, Mapping) or not record.get("last"):
        return None
    for key, ok in _RECORD_FIELDS.items():
        if key in record and not ok(record[key]):
            msg = (
                f"the langctx channel's archive record has {key}={record[key]!r:.80} "
                "(hand-edited?); the state is corrupt (clear the thread's langctx state)."
            )
            raise StateVersionError(msg)
    return record  # type: ignore[return-value]


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_RECORD_FIELDS: dict[str, Any] = {
    "v": lambda v: v == ARCHIVE_RECORD_VERSION,
    "last": lambda v: isinstance(v, str),
    "first_kept": lambda v: v is None or isinstance(v, str),
    "batches": _count,
    "messages": _count,
    "saved": _count,
    "held": _count,
}
"""Each field of an :class:`ArchiveRecord` and what a stored value of it must be."""


def _normalise(value: Mapping[str, Any]) -> LangctxChannel:
    if value.get("v") == CHANNEL_VERSION and all(k in value for k in (*_LISTS, "priorities")):
        return value  # type: ignore[return-value]
    out = dict(value)
    out["v"] = CHANNEL_VERSION
    for key in _LISTS:
        out[key] = list(current_entries(out.get(key), key))
    out["priorities"] = stored_priorities(out.get("priorities"))
    return out  # type: ignore[return-value]


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _copy(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_copy(v) for v in value]
    return value
