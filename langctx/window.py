"""The projection of a state's window computed directly, without building a memory.

Most model calls only need to know what the model sees and whether a compaction is due. For a
window of plain messages (no thinking blocks, no provider compaction item, every tool result
answering a call of the AI message before it, no repeated ids, pinned messages within their
share) that is a sum of per-message counts over the head, the summary block and the window, which
this module computes from the cached :func:`~langctx.count_cache.describe` records. Anything
else returns None, and the caller builds a :class:`~langctx.LayeredChatMemory` over the same
window, which handles every shape; ``tests/unit_tests/test_window.py`` checks the two agree.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> from langctx.state_memory import MemorySettings
    >>> s = MemorySettings.of(max_tokens=4000)
    >>> p = project_window([], [SystemMessage("Be brief.", id="s"), HumanMessage("Hi", id="h")],
    ...                    compactions=[], edits=[], settings=s)
    >>> [m.id for m in p.messages], p.due
    (['s', 'h'], False)
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter, is_
from typing import TYPE_CHECKING, NamedTuple, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.cache_mark import cheapest_mark
from langctx.commands import is_control_message
from langctx.count_cache import CachedCounter, Described, describe, describe_edited, shared_frames
from langctx.engine.layers import summary_block
from langctx.engine.restoring import active_positions, edits_by_message
from langctx.entries import CompactionEntry, EditEntry
from langctx.machinery import is_substantive_task

if TYPE_CHECKING:
    from langctx.config import MemoryConfig
    from langctx.state_memory import MemorySettings
    from langctx.tokens import TokenCounter

__all__ = ["WindowProjection", "project_window"]

_CONTENT = attrgetter("content")


@dataclass(frozen=True, slots=True)
class WindowProjection:
    """What the model sees for a window, and what the triggers read."""

    messages: list[BaseMessage]
    tokens: int
    """Tokens of ``messages`` by the settings' counter."""
    calibrated: int
    """``tokens`` corrected by the latest response's ``usage_metadata`` (what triggers compare)."""
    due: bool
    """True when a compaction is due (above the high mark, or over the budget)."""


def project_window(
    head: Sequence[BaseMessage],
    window: Sequence[BaseMessage],
    *,
    compactions: Sequence[CompactionEntry],
    edits: Sequence[EditEntry],
    settings: MemorySettings,
) -> WindowProjection | None:
    """The projection of ``head`` + ``window`` (as :func:`~langctx.view_state` splits a state;
    control messages in it are left out), or None when the window holds a shape only a memory
    handles.

    A call whose messages extend the previous call's, over the same channel entries, extends
    that call's projection by its new messages (unless one of them is pinned or edited).
    """
    config, counter = settings.config, settings.counter
    raw = (*head, *window)
    key: Hashable = None
    kept: _Frame | None = None
    if isinstance(counter, CachedCounter) and counter._slot is not None and raw:
        # the latest projection of a window starting with these messages, by this counter
        key = ("frame", counter._slot, config.is_task, raw[0].id, len(raw) > 1 and raw[1].id)
        kept = shared_frames().get(key)
    found = _scan(raw, counter, config, None if kept is None else kept.scan)
    if found is None:
        return None
    scan, base = found
    frame = _frame_after(kept, base, head, compactions, edits, settings)
    if frame is not None and base is not None and scan.found == base.found:
        return _extended(frame, scan, key, compactions, settings)
    return _projected(scan, key, head, compactions, edits, settings)


class _Frame(NamedTuple):
    """A projection and what it was computed from, kept to extend it by new messages (a named
    tuple: one is built per model call, and a frozen dataclass costs 5x as much to build)."""

    scan: _Scan
    head: tuple[BaseMessage, ...]
    compactions: Sequence[CompactionEntry]
    edits: Sequence[EditEntry]
    n_compactions: int
    n_edits: int
    settings: MemorySettings
    edited: Mapping[str, object]
    """Ids of the messages the edits name."""
    tokens: tuple[int, ...]
    """Per log message, edits applied."""
    out: tuple[BaseMessage, ...]
    start: int
    head_tokens: int
    pinned_tokens: int
    block_tokens: int
    total: int


def _frame_after(
    frame: _Frame | None,
    base: _Scan | None,
    head: Sequence[BaseMessage],
    compactions: Sequence[CompactionEntry],
    edits: Sequence[EditEntry],
    settings: MemorySettings,
) -> _Frame | None:
    """``frame`` when it was computed for ``base`` over the same head, entries and settings."""
    if (
        frame is None
        or base is None
        or frame.scan is not base
        or not _same(frame.compactions, frame.n_compactions, compactions)
        or not _same(frame.edits, frame.n_edits, edits)
        or frame.settings is not settings
        or len(frame.head) != len(head)
        or not all(map(is_, frame.head, head))
    ):
        return None
    return frame


def _same(kept: Sequence[object], n: int, entries: Sequence[object]) -> bool:
    """True when ``entries`` holds the entries a frame read: of its length, with the same first
    and last entries (the channel only appends, and the reducer copies the list but not its
    entries, so a copy of the same list passes)."""
    if n != len(entries):
        return False
    return n == 0 or (kept is entries) or (kept[0] is entries[0] and kept[-1] is entries[-1])


def _extended(
    frame: _Frame,
    scan: _Scan,
    key: Hashable,
    compactions: Sequence[CompactionEntry],
    settings: MemorySettings,
) -> WindowProjection | None:
    """``frame``'s projection with the messages ``scan`` read after it (computed whole when an
    edit names one of them)."""
    known = len(frame.scan.log)
    if frame.edited and any(str(m.id) in frame.edited for m in scan.log[known:]):
        return _projected(scan, key, frame.head, compactions, frame.edits, settings)
    new_tokens = scan.tokens[known:]
    tokens = frame.tokens + new_tokens
    out = frame.out + scan.views[known:]
    total = frame.total + sum(new_tokens)
    return _finish(
        key,
        _Frame(
            scan,
            frame.head,
            compactions,
            frame.edits,
            frame.n_compactions,
            frame.n_edits,
            settings,
            frame.edited,
            tokens,
            out,
            frame.start,
            frame.head_tokens,
            frame.pinned_tokens,
            frame.block_tokens,
            total,
        ),
    )


def _projected(
    scan: _Scan,
    key: Hashable,
    head: Sequence[BaseMessage],
    compactions: Sequence[CompactionEntry],
    edits: Sequence[EditEntry],
    settings: MemorySettings,
) -> WindowProjection | None:
    """The projection of the messages ``scan`` read, computed whole."""
    config, counter = settings.config, settings.counter
    log = scan.log
    n = len(log)
    views, tokens, pos, systems, task = list(scan.views), list(scan.tokens), scan.pos, *scan.found
    by_message = edits_by_message(edits)
    edited = [i for mid, i in pos.items() if mid in by_message] if by_message else ()
    for i in edited:
        for e in by_message[str(log[i].id)]:
            views[i], tokens[i] = describe_edited(counter, log[i], e)
    pinned = [*systems, *([task] if task is not None else [])]
    pinned_tokens = sum(tokens[i] for i in pinned)
    if pinned_tokens > config.pinned_cap_tokens:
        return None  # the memory truncates pinned messages (an edit to write)
    active = [compactions[k - 1] for k in active_positions(compactions)]
    block, block_tokens = summary_block(active, config, counter, pinned_tokens=pinned_tokens)
    start = len(head) if compactions else 0
    if start:
        while start < n and start in pinned:
            start += 1
    if task is not None and block is not None and task >= start:
        return None  # a task behind the summaries: the memory lifts it into the head
    head_idx = sorted(i for i in pinned if i < start) if start else []
    out = [views[i] for i in head_idx]
    head_tokens = sum(tokens[i] for i in head_idx) + block_tokens
    if block is not None:
        out.append(block)
    out.extend(views[start:])
    total = head_tokens + sum(tokens[start:])
    return _finish(
        key,
        _Frame(
            scan,
            tuple(head),
            compactions,
            edits,
            len(compactions),
            len(edits),
            settings,
            by_message,
            tuple(tokens),
            tuple(out),
            start,
            head_tokens,
            pinned_tokens,
            block_tokens,
            total,
        ),
    )


def _finish(key: Hashable, frame: _Frame) -> WindowProjection:
    """The projection a frame stands for, with its trigger decision; the frame is kept (one per
    scan key: the latest call's)."""
    if key is not None:
        shared_frames().put(key, frame)
    config, scan, total = frame.settings.config, frame.scan, frame.total
    calibration = _calibration(
        scan.log,
        scan.pos,
        frame.tokens,
        frame.compactions,
        frame.start,
        frame.head_tokens,
        scan.usage,
    )
    calibrated = max(0, total + calibration)
    mark = config.high_mark
    if config.cache_write_ratio is not None:
        mark = cheapest_mark(
            config,
            tokens=total,
            pinned=frame.pinned_tokens,
            block=frame.block_tokens,
            calls=scan.calls,
        )
    due = calibrated > mark or total > config.max_tokens_resolved
    return WindowProjection(list(frame.out), total, calibrated, due and len(scan.log) > 0)


class _Scan(NamedTuple):
    """The per-message part of a projection: what the loop over a state's messages found."""

    raw: tuple[BaseMessage, ...]
    """The messages read, control messages included."""
    contents: tuple[object, ...]
    """Each one's content object (a content assigned since is a change)."""
    log: tuple[BaseMessage, ...]
    """The messages read but control messages (``/compact`` commands, notices)."""
    views: tuple[BaseMessage, ...]
    tokens: tuple[int, ...]
    pos: dict[str, int]
    found: tuple[list[int], int | None]
    """The leading system messages and the task."""
    leading: bool
    open_calls: tuple[str, ...]
    usage: int
    """Index of the latest AI message with ``usage_metadata`` (-1: none)."""
    calls: int
    """AI messages in the log."""
    described: tuple[Described | None, ...]
    """Each raw message's :class:`~langctx.count_cache.Described` (None: a control message)."""


_EMPTY = _Scan((), (), (), (), (), {}, ([], None), True, (), -1, 0, ())


def _scan(
    raw: tuple[BaseMessage, ...],
    counter: TokenCounter,
    config: MemoryConfig,
    kept: _Scan | None,
) -> tuple[_Scan, _Scan | None] | None:
    """Describe each message of ``raw`` but control messages; with the scan it extends (None: a
    shape only a memory handles).

    Within a run, each model call's messages are the previous ones plus new ones, the same
    objects: when ``kept`` (the previous call's scan of a window with the same first ids) read a
    prefix of ``raw`` (checked message by message by identity), only the new messages are
    described. After a cut it is no prefix, but the messages it read keep their descriptions.
    """
    start = _EMPTY
    known: dict[int, int] = {}
    if kept is not None:
        if _extends(raw, kept):
            start = kept
        else:  # the scan holds its messages: no other object can take their ids
            known = {id(m): r for r, m in enumerate(kept.raw)}
    default_task = config.is_task is is_substantive_task
    see = counter.describe if isinstance(counter, CachedCounter) else partial(describe, counter)
    # the messages after ``start``'s, appended to its tuples at the end
    log: list[BaseMessage] = []
    contents: list[object] = []
    tokens: list[int] = []
    views: list[BaseMessage] = []
    described: list[Described | None] = []
    pos = dict(start.pos) if start.log else {}
    systems, task = start.found
    leading, open_calls, usage, calls = (
        start.leading,
        list(start.open_calls),
        start.usage,
        start.calls,
    )
    n = len(start.log)
    for r in range(len(start.raw), len(raw)):
        m = raw[r]
        if not isinstance(m, BaseMessage):
            return None
        content = m.__dict__["content"]
        contents.append(content)
        if is_control_message(m):
            described.append(None)
            continue
        mid = m.id
        if mid is None or mid in pos:
            return None
        i = n + len(log)
        log.append(m)
        pos[mid] = i
        old = known.get(id(m)) if known else None
        d = None
        if old is not None and kept is not None and kept.contents[old] is content:
            d = kept.described[old]
        if d is None:
            d = see(m)
        described.append(d)
        if d.thinking or d.provider_compaction or d.refused:
            return None  # (the memory refuses what it must with its error)
        if isinstance(m, ToolMessage):
            if m.tool_call_id not in open_calls:
                return None  # an orphan: the memory leaves it out and records why
            open_calls.remove(m.tool_call_id)
        else:
            if open_calls:
                return None  # unanswered calls: the memory answers them with placeholders
            if d.call_ids:
                open_calls = list(d.call_ids)
            if leading and isinstance(m, SystemMessage):
                systems = [*systems, i]
            else:
                leading = False
                if (
                    task is None
                    and isinstance(m, HumanMessage)
                    and (d.substantive if default_task else config.is_task(m))
                ):
                    task = i
        if isinstance(m, AIMessage):
            calls += 1
            if m.usage_metadata:
                usage = i
        views.append(m if d.view is None else d.view)
        tokens.append(d.view_tokens)
    base = start if start.raw else None
    if len(start.raw) == len(raw):
        return start, base
    scan = _Scan(
        raw,
        start.contents + tuple(contents),
        start.log + tuple(log),
        start.views + tuple(views),
        start.tokens + tuple(tokens),
        pos,
        (systems, task),
        leading,
        tuple(open_calls),
        usage,
        calls,
        start.described + tuple(described),
    )
    return scan, base


def _extends(raw: Sequence[BaseMessage], scan: _Scan) -> bool:
    """True when ``raw`` starts with the messages ``scan`` read, unchanged."""
    old = scan.raw
    if len(raw) < len(old):
        return False
    # identity of each message and of its content, compared in C (map stops at ``old``'s end)
    return all(map(is_, raw, old)) and all(map(is_, map(_CONTENT, old), scan.contents))


def _calibration(
    log: Sequence[BaseMessage],
    pos: dict[str, int],
    tokens: Sequence[int],
    compactions: Sequence[CompactionEntry],
    start: int,
    head_tokens: int,
    usage: int,
) -> int:
    """The correction from the latest response with usage since the latest cut (as the memory's
    ``_calibrate_window``): its real input + output minus the estimate of what it saw."""
    if usage < start:
        return 0  # no response with usage in the window
    cut = next((e for e in reversed(compactions) if e["trigger"] != "merge"), None)
    last = cut.get("last_id", "") if cut is not None else None
    after = -1 if last is None else pos.get(last)
    if after is None:
        return 0  # an entry of an older langctx, or its log end is gone: no calibration
    if usage <= max(after, start - 1):
        return 0  # no response with usage since the cut
    meta = cast(AIMessage, log[usage]).usage_metadata
    real = int(meta.get("input_tokens", 0)) + int(meta.get("output_tokens", 0)) if meta else 0
    if real <= 0:
        return 0
    estimated = head_tokens + sum(tokens[start : usage + 1])
    return max(-estimated // 2, real - estimated)
