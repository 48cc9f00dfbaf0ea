"""The log's entries (compactions, in-place edits) as versioned JSON dicts, appended, never changed.

Example:
    >>> e = new_compaction_entry(summary="Goal: fix the parser", level=1, covered_ids=["m1", "m2"],
    ...     first_kept_id="m3", tokens_before=9000, tokens_after=2500, trigger="manual",
    ...     quality="local", read_files=["a.py"], modified_files=[])
    >>> e["v"], e["level"], e["first_kept_id"], covered_count(e)
    (4, 1, 'm3', 2)
    >>> validate_entry(e) is e
    True
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, NotRequired, TypedDict

from langctx.errors import StateVersionError
from langctx.facts.calls import MAX_PATH_CHARS
from langctx.facts.record import stored_facts
from langctx.markers import COMPACTION_ID_PREFIX, EDIT_ID_PREFIX

MAX_LEVEL = 3
"""Summaries merge up to this level (one level-3 summary at most)."""

ENTRY_VERSION = 4
"""Version of the entries written; older ones are migrated on read (:func:`_migrated`).
Version 4: a compaction's facts count the user messages it stands for (``users``) instead of
copying them; their texts are in the channel's ledger (:data:`~langctx.user_messages.Ledger`)."""

Trigger = Literal["threshold", "proactive", "manual", "overflow", "merge"]
Quality = Literal["model", "local", "fallback", "mechanical", "merged"]
"""How a summary was made: by the model, the local summarizer (configured, or as the model's
fallback), mechanically (standing in until the model summarizes the span) or by a merge."""


class CompactionEntry(TypedDict):
    """One compaction: a summary standing in for a span of the log (version 4)."""

    v: int
    kind: Literal["compaction"]
    id: str
    level: int
    summary: str
    summary_tokens: int
    tokens_before: int
    tokens_after: int
    first_kept_id: str | None
    covered_ids: list[str]
    """The messages this entry folded itself (not those of the entries it merged)."""
    covered_count: int
    """Every message this entry stands for, its merged entries' included."""
    merged_from: list[str]
    read_files: list[str]
    modified_files: list[str]
    facts: dict[str, Any]
    """Mechanical facts for later summaries, file lists aside (see :func:`entry_facts`)."""
    trigger: str
    quality: str
    instructions: str | None
    created_at: str
    task_id: NotRequired[str | None]
    """The pinned task when the entry was written (None: none yet, or closed)."""
    provider_compaction_id: NotRequired[str | None]
    """The latest provider compaction item when the entry was written."""
    last_id: NotRequired[str | None]
    """The last message of the log when the entry was written."""
    pending_tokens: NotRequired[int]
    """A ``mechanical`` entry's evicted tokens that no model summary has seen yet."""
    files: NotRequired[dict[str, Any]]
    """The files in hand as of a fold (:class:`~langctx.files_in_hand.FilesPart`)."""
    reports: NotRequired[dict[str, Any]]
    """The sub-agent reports as of a fold (:class:`~langctx.subagent_reports.ReportsPart`)."""
    upgrade_input: NotRequired[str]
    """Digest of the input of a ``mechanical`` entry's background model summary
    (:func:`~langctx.summarize.request.request_digest`): applied only if the log still gives it."""
    seq: NotRequired[int]
    """A level-1 summary's place among the thread's folds (1, 2, ...): level-1 summaries are
    shown in this order, and the model summary replacing a local one keeps its place."""


class EditEntry(TypedDict):
    """An in-place edit of one logged message in the projection (placeholder or truncation)."""

    v: int
    kind: Literal["edit"]
    id: str
    message_id: str
    reason: Literal["placeholder", "truncate"]
    content: str | list[Any]
    """Replacement content: a string, or the message's blocks with only text blocks cut."""
    tool_calls: NotRequired[list[dict[str, Any]]]
    """Replacement tool calls (an AI message whose arguments were cut), when present."""
    tokens_before: int
    tokens_after: int
    created_at: str


class EvictionRecord(TypedDict):
    """A line of the eviction log, for debugging: what left the projection, when and why."""

    at: str
    action: str
    trigger: str
    ids: list[str]
    tokens: int
    detail: str


def _stable_id(prefix: str, *parts: object) -> str:
    """An id derived from what an entry covers (the same in every run)."""
    digest = hashlib.sha1("\x1f".join(map(str, parts)).encode()).hexdigest()[:12]
    return f"{prefix}-{digest}"


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def new_compaction_entry(
    *,
    summary: str,
    level: int,
    covered_ids: Sequence[str],
    first_kept_id: str | None,
    tokens_before: int,
    tokens_after: int,
    trigger: str,
    quality: str,
    read_files: Iterable[str],
    modified_files: Iterable[str],
    summary_tokens: int = 0,
    merged_from: Sequence[str] = (),
    facts: Mapping[str, Any] | None = None,
    instructions: str | None = None,
    covered_count: int | None = None,
) -> CompactionEntry:
    """A compaction entry; ``covered_count`` (default ``len(covered_ids)``) counts merged ones."""
    count = len(covered_ids) if covered_count is None else covered_count
    ends = [*covered_ids[:1], *covered_ids[-1:]]
    return CompactionEntry(
        v=ENTRY_VERSION,
        kind="compaction",
        id=_stable_id(COMPACTION_ID_PREFIX, level, trigger, *ends, count, *merged_from),
        level=level,
        summary=summary,
        summary_tokens=summary_tokens,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        first_kept_id=first_kept_id,
        covered_ids=list(covered_ids),
        covered_count=count,
        merged_from=list(merged_from),
        read_files=list(read_files),
        modified_files=list(modified_files),
        facts=_entry_facts(facts or {}),
        trigger=trigger,
        quality=quality,
        instructions=instructions,
        created_at=_now(),
    )


def new_edit_entry(
    *,
    message_id: str,
    reason: Literal["placeholder", "truncate"],
    content: str | list[Any],
    tokens_before: int,
    tokens_after: int,
    tool_calls: Sequence[Mapping[str, Any]] | None = None,
) -> EditEntry:
    """Build an edit entry replacing one message's content in the projection."""
    entry = EditEntry(
        v=ENTRY_VERSION,
        kind="edit",
        id=_stable_id(EDIT_ID_PREFIX, message_id, reason, len(content), tokens_after),
        message_id=message_id,
        reason=reason,
        content=content,
        tokens_before=tokens_before,
        tokens_after=tokens_after,
        created_at=_now(),
    )
    if tool_calls is not None:
        entry["tool_calls"] = [dict(tc) for tc in tool_calls]
    return entry


def user_count(facts: Mapping[str, Any]) -> int:
    """How many folded user messages an entry's facts stand for: ``users``, or (an entry written
    before the ledger) its ``user_messages`` and ``user_messages_dropped``."""
    users = facts.get("users")
    if isinstance(users, int) and not isinstance(users, bool):
        return max(users, 0)
    dropped = facts.get("user_messages_dropped")
    extra = dropped if isinstance(dropped, int) and not isinstance(dropped, bool) else 0
    return len(facts.get("user_messages") or ()) + max(extra, 0)


_FILE_FACTS = ("read_files", "modified_files")
_USER_FACTS = ("user_messages", "user_messages_dropped")


def _entry_facts(facts: Mapping[str, Any]) -> dict[str, Any]:
    """What an entry keeps of a summary's facts: no file lists (kept at top level) and, of the
    user messages, their count (their texts go to the ledger once)."""
    out = {k: v for k, v in facts.items() if k not in (*_FILE_FACTS, *_USER_FACTS, "users")}
    if users := user_count(facts):
        out["users"] = users
    return out


def covered_count(entry: Mapping[str, Any]) -> int:
    """How many messages a compaction entry stands for (its own and its merged entries')."""
    count = entry.get("covered_count")
    return int(count) if isinstance(count, int) else len(entry.get("covered_ids") or ())


def entry_facts(entry: Mapping[str, Any]) -> dict[str, Any]:
    """An entry's mechanical facts with its file lists (which the entry keeps once, at top level)."""
    facts = entry.get("facts")
    out = dict(facts) if isinstance(facts, Mapping) else {}
    for key in _FILE_FACTS:
        out[key] = list(entry.get(key) or out.get(key) or [])
    return out


_REQUIRED = {
    "compaction": "id level summary covered_ids first_kept_id merged_from trigger".split(),
    "edit": ["id", "message_id", "content"],
}


def validate_entry(entry: Mapping[str, Any]) -> Any:
    """Check a persisted entry's version and fields (:data:`_FIELDS`); return it, migrated.

    Raises:
        StateVersionError: an unknown version or kind, a missing or malformed field.
    """
    if not isinstance(entry, Mapping):
        msg = f"a langctx entry must be a dict, got {type(entry).__name__}."
        raise StateVersionError(msg)
    version = entry.get("v")
    if version in (0, 1, 2, 3):
        entry = _migrated(entry, version)
    elif version != ENTRY_VERSION:
        raise _invalid(
            entry,
            f" has version {_shown(version)}; this langctx reads version {ENTRY_VERSION}. "
            "Upgrade langctx, or clear the thread's langctx state.",
        )
    kind = entry.get("kind")
    if not isinstance(kind, str) or kind not in _REQUIRED:
        raise _invalid(entry, f" has unknown kind {_shown(kind)}.")
    missing = [k for k in _REQUIRED[kind] if k not in entry]
    if missing:
        raise _invalid(entry, f" lacks {missing}; the state is corrupt.")
    for name, (ok, wanted) in _FIELDS[kind].items():
        if name in entry and not ok(entry[name]):
            raise _invalid(
                entry,
                f": {name} must be {wanted}, got {_shown(entry[name])}; the state is corrupt "
                "(clear the thread's langctx state).",
            )
    if kind == "compaction" and any(k not in entry for k in _DEFAULTS):
        entry = {**copy.deepcopy(_DEFAULTS), **entry}  # a field left out (by hand): its default
    return entry


_DEFAULTS: dict[str, Any] = {
    "summary_tokens": 0,
    "quality": "model",
    "tokens_before": 0,
    "tokens_after": 0,
    "read_files": [],
    "modified_files": [],
    "facts": {},
    "instructions": None,
}
"""What a compaction entry read from state is given for an optional field it lacks."""


def _invalid(entry: Mapping[str, Any], problem: str) -> StateVersionError:
    return StateVersionError(f"langctx entry {_shown(entry.get('id'))}{problem}")


def read_entry(entry: Mapping[str, Any]) -> Any:
    """:func:`validate_entry`, then a compaction's facts and file lists read by
    :func:`~langctx.facts.record.stored_facts` into a new dict.
    """
    entry = validate_entry(entry)
    if entry["kind"] != "compaction":
        return entry
    files = stored_facts({k: entry[k] for k in _FILE_FACTS if k in entry})
    facts = {"facts": stored_facts(entry["facts"])} if "facts" in entry else {}
    return {**entry, **files, **facts}


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{type(value).__name__} {text[:30]}…"


Check = Callable[[Any], bool]
_ENTRY_ID = re.compile(r"[\w.:-]{1,128}", re.ASCII)
_BLOCK_OPENER = re.compile(r"</?langctx", re.IGNORECASE)


def _is_entry_id(v: object) -> bool:
    return isinstance(v, str) and _ENTRY_ID.fullmatch(v) is not None


def _is_str(v: object) -> bool:
    return isinstance(v, str) and bool(v)


def _is_count(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _is_ids(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _is_paths(v: object) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) and len(x) <= MAX_PATH_CHARS for x in v)


def _is_content(v: object) -> bool:
    """Text or blocks with no live ``<langctx`` opener (langctx's edits are escaped)."""
    if isinstance(v, str):
        return _BLOCK_OPENER.search(v) is None
    return isinstance(v, list) and all(
        isinstance(b, str | dict)
        and _is_content(b if isinstance(b, str) else str(b.get("text", "")))
        for b in v
    )


def _is_files(v: object) -> bool:
    """A files-in-hand part: its items' paths and texts are strings (escaped when rendered)."""
    if not isinstance(v, dict):
        return False
    items, dropped = v.get("items", []), v.get("dropped", [])
    text = _records(("path", "text"), path=_is_str, text=lambda t: isinstance(t, str))
    return text(items) and _records(("path", "why"), path=_is_str)(dropped)


def _is_reports(v: object) -> bool:
    """A sub-agent reports part: its items' texts are strings (escaped when rendered)."""
    if not isinstance(v, dict):
        return False
    text = _records(("tool", "id", "head", "tail"), **dict.fromkeys(("tool", "id"), _is_str))
    return text(v.get("items", [])) and all(
        isinstance(i[k], str) for i in v.get("items", []) for k in ("head", "tail")
    )


def _or_none(check: Check) -> Check:
    return lambda v: v is None or check(v)


def _records(required: tuple[str, ...] = (), **fields: Check) -> Check:
    """A list of dicts holding ``required``, each of ``fields`` passing its check when present."""
    return lambda v: (
        isinstance(v, list)
        and all(
            isinstance(r, dict)
            and all(k in r for k in required)
            and all(ok(r[k]) for k, ok in fields.items() if k in r)
            for r in v
        )
    )


_COUNT = (_is_count, "an int >= 0")
_TEXT = (lambda v: isinstance(v, str), "a string")
_OPTIONAL_ID = (_or_none(_is_str), "a message id or None")
_FIELDS: dict[str, dict[str, tuple[Check, str]]] = {
    "compaction": {
        "id": (_is_entry_id, "an entry id"),
        "level": (lambda v: _is_count(v) and 1 <= v <= MAX_LEVEL, "an int from 1 to 3"),
        "summary": _TEXT,
        "covered_ids": (_is_ids, "a list of message ids"),
        "first_kept_id": _OPTIONAL_ID,
        "merged_from": (_is_ids, "a list of entry ids"),
        "facts": (lambda v: isinstance(v, dict), "a dict"),
        "read_files": (_is_paths, "a list of paths"),
        "modified_files": (_is_paths, "a list of paths"),
        "summary_tokens": _COUNT,
        "tokens_before": _COUNT,
        "tokens_after": _COUNT,
        "covered_count": _COUNT,
        "pending_tokens": _COUNT,
        "quality": _TEXT,
        "trigger": _TEXT,
        "upgrade_input": (_is_str, "a non-empty string"),
        "seq": _COUNT,
        "files": (_is_files, "a dict of files in hand (items, dropped)"),
        "reports": (_is_reports, "a dict of sub-agent reports (items, more)"),
        "task_id": _OPTIONAL_ID,
        "last_id": _OPTIONAL_ID,
        "provider_compaction_id": _OPTIONAL_ID,
    },
    "edit": {
        "id": (_is_entry_id, "an entry id"),
        "message_id": (_is_str, "a message id"),
        "content": (_is_content, "a string or a list of blocks, with no langctx delimiter"),
        "tool_calls": (
            _records(("name", "args", "id"), name=_is_str, args=lambda v: isinstance(v, dict)),
            "a list of tool calls (name, args, id)",
        ),
        "tokens_before": _COUNT,
        "tokens_after": _COUNT,
    },
}
"""Field -> (check, what it must be) of a persisted entry, checked when present."""


def _migrated(entry: Mapping[str, Any], version: int) -> dict[str, Any]:
    """An entry of version 0 to 3 in the shape of :data:`ENTRY_VERSION` (a version-3 entry keeps
    its ``facts["user_messages"]``: a state without a ledger is read from them)."""
    out = dict(entry)
    if version == 0:  # pre-release shape: no kind, `covered` instead of `covered_ids`
        out.setdefault("kind", "edit" if "message_id" in out else "compaction")
        if out["kind"] == "compaction":
            out.setdefault("covered_ids", list(out.pop("covered", [])))
            out.setdefault("merged_from", [])
            out.setdefault("facts", {})
            out.setdefault("summary_tokens", 0)
            out.setdefault("instructions", None)
            out.setdefault("read_files", [])
            out.setdefault("modified_files", [])
            out.setdefault("trigger", "manual")
            out.setdefault("quality", "model")
            out.setdefault("tokens_before", 0)
            out.setdefault("tokens_after", 0)
            out.setdefault("created_at", _now())
    if version <= 1 and out.get("kind") == "compaction":  # version 2 counts what a merge covers
        out.setdefault("covered_count", len(out.get("covered_ids") or ()))
    if "first_kept_entry_id" in out:  # version 3 renamed it (it holds a message id)
        out["first_kept_id"] = out.pop("first_kept_entry_id")
    out["v"] = ENTRY_VERSION
    return out


def active_summaries(entries: Sequence[CompactionEntry]) -> list[CompactionEntry]:
    """The entries no later entry has merged, in :func:`summary_order`."""
    merged = {m for e in entries for m in e["merged_from"]}
    return sorted((e for e in entries if e["id"] not in merged), key=summary_order)


def summary_order(entry: Mapping[str, Any]) -> tuple[int, int, int]:
    """Where an active summary is shown (a stable sort key: ties keep their creation order):
    highest level first, then level-1 summaries by ``seq`` (those written without one first)."""
    seq = entry.get("seq")
    return -entry["level"], int(isinstance(seq, int)), seq if isinstance(seq, int) else 0


def next_seq(entries: Sequence[Mapping[str, Any]]) -> int:
    """The ``seq`` of the next fold: after every entry's, so after the latest fold's (each fold
    is numbered after every entry before it; a merge keeps an older one), found from the end.

    >>> next_seq([{"trigger": "threshold", "seq": 4}, {"trigger": "merge", "seq": 3}])
    5
    """
    for entry in reversed(entries):
        if entry.get("trigger") != "merge" and isinstance(seq := entry.get("seq"), int):
            return seq + 1
    return 1
