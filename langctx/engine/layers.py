"""The projection's layers and their sizes: pinned head, summary block, recent messages."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_core.messages import (
    BaseMessage,
)

from langctx.blocks import (
    strip_thinking,
)
from langctx.config import MemoryConfig
from langctx.count_cache import counter_key, entry_digest, shared_blocks
from langctx.entries import (
    CompactionEntry,
    entry_facts,
)
from langctx.projection import (
    render_facts,
    render_summary_block,
)
from langctx.summarize.text import merge_summary_facts, truncate_to_tokens
from langctx.tokens import TokenCounter
from langctx.turns import group_units, tool_call_ids
from langctx.user_messages import render_user_messages

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory

logger = logging.getLogger("langctx")


def _context_tokens_raw(self: LayeredChatMemory) -> int:
    head = sum(self._view_tokens(i) for i in self._head_pinned())
    return head + self._block_tokens + self._recent_tokens


def _recent_start(self: LayeredChatMemory) -> int:
    """First index of the recent layer: the cut, moved past pinned messages that sit on it.

    Pinned messages at the cut belong to the head, so the summary block never precedes them.
    """
    start = self._first_kept
    if start == 0:
        return 0
    pinned = {*self._system_idx, *([self._task_idx] if self._task_idx is not None else [])}
    pinned.update(self._pc_unit())
    while start < len(self._log) and start in pinned:
        start += 1
    return start


def _pc_unit(self: LayeredChatMemory) -> range:
    """Indices of the latest provider compaction item's unit (its message and results)."""
    if self._pc is None:
        return range(0)
    key = (self._pc, len(self._log))
    if self._pc_memo is None or self._pc_memo[0] != key:
        width = 2 + 2 * len(tool_call_ids(self._log[self._pc]))
        units = group_units(self._log[self._pc : self._pc + width]).units
        self._pc_memo = (key, range(self._pc, self._pc + (units[0].end if units else 1)))
    return self._pc_memo[1]


def _lifted_task(self: LayeredChatMemory) -> int | None:
    """The task's index when it sits in the recent layer behind summaries.

    That happens when compactions ran before the task arrived (a session opening with slash
    commands and their output); the task is then lifted into the head, ahead of the summaries.
    """
    t = self._task_idx
    if t is not None and self._block is not None and t >= self._recent_start():
        return t
    return None


def _head_pinned(self: LayeredChatMemory) -> list[int]:
    start = self._recent_start()
    idx = [i for i in self._system_idx if i < start]
    if self._task_idx is not None and (self._task_idx < start or self._lifted_task() is not None):
        idx.append(self._task_idx)
    idx.extend(i for i in self._pc_unit() if i < start and i not in self._skip)
    return sorted(idx)


def _view(self: LayeredChatMemory, i: int) -> BaseMessage:
    if self._thinking_dropped(i):
        return self._stripped_view(i)[0]
    return self._views.get(i, self._log[i])


def _view_tokens(self: LayeredChatMemory, i: int) -> int:
    if self._thinking_dropped(i):
        return self._stripped_view(i)[1]
    return self._vtok.get(i, self._tok[i])


def _live_start(self: LayeredChatMemory) -> int:
    """First index of the live run: the turn in progress after the human message that opened it.

    A human message right after a tool result continues the turn
    (:func:`~langctx.turns.opens_turn`): the thinking of the turn's AI messages before it is live.
    """
    return max(self._last_human + 1, self._first_kept)


def _thinking_dropped(self: LayeredChatMemory, i: int) -> bool:
    """True when message ``i`` is sent without its thinking blocks.

    Once summaries stand in for earlier history, the thinking blocks of completed turns in
    the recent layer no longer match the prefix they were written for (Anthropic's prefix
    check rejects them); Anthropic's advice is to remove the thinking of kept turns. The
    live run keeps its thinking: a compaction never changes what precedes it (see
    :func:`~langctx.engine.planning.plan`).
    """
    return (
        bool(self._thinking)
        and self._block is not None
        and i < self._live_start()
        and i in self._thinking_set()
    )


def _thinking_set(self: LayeredChatMemory) -> frozenset[int]:
    if len(self._thinking_memo[0]) != len(self._thinking):
        self._thinking_memo = (list(self._thinking), frozenset(self._thinking))
    return self._thinking_memo[1]


def _stripped_view(self: LayeredChatMemory, i: int) -> tuple[BaseMessage, int]:
    if i not in self._stripped:
        view = strip_thinking(self._views.get(i, self._log[i]))
        self._stripped[i] = (view, self.counter.count_message(view))
    return self._stripped[i]


def _live_thinking(self: LayeredChatMemory) -> bool:
    """True when a projected message of the live run carries thinking."""
    live = self._live_start()
    return bool(self._thinking) and self._thinking[-1] >= max(live, self._recent_start())


def _head_tokens(self: LayeredChatMemory) -> int:
    return sum(self._view_tokens(i) for i in self._head_pinned()) + self._block_tokens


def _span_tokens(self: LayeredChatMemory, lo: int, hi: int) -> int:
    total = 0
    lifted = self._lifted_task()
    skip, repairs = self._skip, self._repair_after
    if self._thinking and self._block is not None:
        tokens = self._view_tokens
    else:  # no thinking is dropped: a message's tokens are its view's
        vtok, tok = self._vtok, self._tok

        def tokens(i: int) -> int:
            return vtok.get(i, tok[i])

    for i in range(lo, hi):
        if i not in skip and i != lifted:
            total += tokens(i)
        if i in repairs:
            total += sum(self.counter.count_message(r) for r in repairs[i])
    return total


def _refresh(self: LayeredChatMemory) -> None:
    """Recompute the cached layer sizes after a compaction (O(recent))."""
    task = [] if self._task_idx is None else [self._task_idx]
    pinned = sum(self._view_tokens(i) for i in [*self._system_idx, *task])
    self._block, self._block_tokens = summary_block(
        self._active, self.config, self.counter, pinned_tokens=pinned
    )
    self._recent_tokens = self._span_tokens(self._recent_start(), len(self._log))
    self._calibration = 0


def summary_block(
    active: Sequence[CompactionEntry],
    config: MemoryConfig,
    counter: TokenCounter,
    *,
    pinned_tokens: int = 0,
) -> tuple[BaseMessage | None, int]:
    """The summary block of the ``active`` summaries and its tokens ((None, 0) when none);
    rendered once per content, process-wide: looked up by what the entries hold
    (:func:`entry_digest`), so a copy of the same entries (a checkpoint read back) finds the
    block, and two threads whose entries share ids but not text never share one.
    """
    if not active:
        return None, 0
    key = counter_key(counter)
    if key is None:  # a counter without a stable name: rendered anew, never shared
        return _render_block(active, config, counter, pinned_tokens)
    tail = (
        config.summary_role,
        config.max_facts_tokens_resolved,
        config.user_messages_tokens,
        config.head_budget - pinned_tokens,
        key,
    )
    blocks = shared_blocks()
    by_content = ("block-content", tuple(entry_digest(e) for e in active), *tail)
    block = blocks.get(by_content)
    if block is None:
        block = _render_block(active, config, counter, pinned_tokens)
        blocks.put(by_content, block)
    return block[0], block[1]


def _render_block(
    active: Sequence[CompactionEntry],
    config: MemoryConfig,
    counter: TokenCounter,
    pinned_tokens: int,
) -> tuple[BaseMessage, int]:
    """The block: summaries (each within its cap), the user's messages in the room the head
    budget leaves beside the pinned messages and the rest of the block, the facts ledger."""
    facts = merge_summary_facts(*[entry_facts(e) for e in active])
    shown = [_within_cap(e, config.max_summary_tokens_resolved, counter) for e in active]
    role, count = config.summary_role, counter.count_text
    ledger = render_facts(facts, max_tokens=config.max_facts_tokens_resolved, count=count)
    rest = counter.count_message(render_summary_block(shown, role=role, facts=ledger))
    room = config.head_budget - pinned_tokens - rest - USERS_OVERHEAD_TOKENS
    share = config.user_messages_tokens
    users = render_user_messages(
        facts.get("user_messages") or [],
        dropped=facts.get("user_messages_dropped") or 0,
        max_tokens=max(MIN_USERS_TOKENS, min(2 * share, room)),
        verbatim_tokens=max(MIN_USERS_TOKENS, min(share, room)),
        count=count,
    )
    quoted = " ".join(users.split())  # a constraint quoted verbatim is not said twice
    constraints = facts.get("constraints") or []
    kept = [c for c in constraints if " ".join(c.split()) not in quoted]
    if len(kept) < len(constraints):
        ledger = render_facts(
            {**facts, "constraints": kept},
            max_tokens=config.max_facts_tokens_resolved,
            count=count,
        )
    message = render_summary_block(shown, role=role, facts=ledger, users=users)
    return message, counter.count_message(message)


USERS_OVERHEAD_TOKENS = 48
"""The note before the quoted user messages and its separators, in tokens (generous)."""

MIN_USERS_TOKENS = 48
"""The quoted user messages' floor: the newest request's opening words and a count of the rest
stay in view even when the pinned messages fill the head budget."""


def _within_cap(entry: CompactionEntry, cap: int, counter: TokenCounter) -> CompactionEntry:
    """``entry`` with its summary cut to ``cap`` tokens when it is longer: a stored summary's
    size is measured, never believed (``summary_tokens`` may lie, the text may be huge)."""
    text = entry["summary"]
    if len(text) <= cap or counter.count_text(text) <= cap:  # no token is shorter than a char
        return entry
    return {**entry, "summary": truncate_to_tokens(text, cap, counter.count_text)}


def _refresh_recent(self: LayeredChatMemory) -> None:
    self._recent_tokens = self._span_tokens(self._recent_start(), len(self._log))
