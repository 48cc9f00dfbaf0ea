"""The projection's layers and their sizes: pinned head, summary block, recent messages."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from langchain_core.messages import BaseMessage

from langctx.config import MemoryConfig
from langctx.count_cache import counter_key, entry_digest, shared_blocks, text_counter
from langctx.entries import CompactionEntry, entry_facts, user_count
from langctx.files_in_hand import render_files
from langctx.monotone import largest
from langctx.projection import render_read_facts, render_summary_block
from langctx.subagent_reports import render_reports
from langctx.summarize.sections import without_section
from langctx.summarize.text import REQUEST_STEP, merge_read_summary_facts, truncate_to_tokens
from langctx.tokens import TokenCounter
from langctx.user_messages import Ledger, ledger_tail, render_user_messages


def _ledger_digest(users: object) -> bytes:
    text = json.dumps(users, ensure_ascii=False, sort_keys=True)
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def summary_block(
    active: Sequence[CompactionEntry],
    config: MemoryConfig,
    counter: TokenCounter,
    *,
    pinned_tokens: int = 0,
    users: Ledger = ([], 0),
    task: tuple[str, str] | None = None,
    files: CompactionEntry | None = None,
    room: int | None = None,
) -> tuple[BaseMessage | None, int]:
    """The summary block of ``active`` and its tokens ((None, 0): none), cached by content;
    ``users``: the ledger of folded user messages (its newest ones the active entries count);
    ``task``: the pinned task's id and opening words (its status has a line of the block);
    ``files``: the latest fold's entry, whose files in hand and sub-agent reports are shown;
    ``room``: tokens the block must fit in, every part shrinking by one ratio (default: the head
    budget beside the pinned messages, each part at its cap)."""
    if not active:
        return None, 0
    shown = ledger_tail(users, sum(user_count(e.get("facts") or {}) for e in active))
    render = partial(_render_block, active, config, counter, pinned_tokens, shown, task, files)
    key = counter_key(counter)
    if key is None:  # a counter without a stable name: rendered anew, never shared
        return render(FULL) if room is None else _within(render, room)
    blocks = shared_blocks()
    by_content = (
        "block-content",
        tuple(entry_digest(e) for e in active),
        config.summary_role,
        config.max_summary_tokens_resolved,  # each config value the rendering reads
        config.max_facts_tokens_resolved,
        config.user_messages_tokens,
        config.head_budget - pinned_tokens,
        room,
        key,
        _ledger_digest(shown),
        task,
        *_files_key(files, config),
    )
    block = blocks.get(by_content)
    if block is None:
        block = render(FULL) if room is None else _within(render, room)
        blocks.put(by_content, block)
    return block[0], block[1]


Render = Callable[[int], tuple[BaseMessage | None, int]]
FULL = 1000
"""The scale of a block rendered at its caps (per mille)."""


def _within(render: Render, room: int) -> tuple[BaseMessage | None, int]:
    """The block at the largest scale that fits ``room``: every part shrinks by one ratio; none
    when even its smallest form does not (the preamble and the fewest words of the requests,
    about 200 tokens): the budget holds, and the next fold brings the block back."""
    block = render(largest(lambda scale: render(scale)[1] <= room, FULL))
    return block if block[1] <= room else (None, 0)


def _render_block(
    active: Sequence[CompactionEntry],
    config: MemoryConfig,
    counter: TokenCounter,
    pinned_tokens: int,
    folded: Ledger,
    task: tuple[str, str] | None,
    files_entry: CompactionEntry | None,
    scale: int = FULL,
) -> tuple[BaseMessage | None, int]:
    """Summaries (each within its cap), the user's requests in the head budget's room, the facts,
    the sub-agent reports (within `reports_share`), then the files in hand in the room left
    (within `files_share`); each cap and the head budget at ``scale`` per mille."""

    def scaled(tokens: int) -> int:
        return tokens * scale // FULL

    head_room = scaled(config.head_budget - pinned_tokens)
    facts = merge_read_summary_facts(*[entry_facts(e) for e in active])
    items = request_items(folded[0], task, facts.get("task_answer"))
    facts["user_messages"], facts["user_messages_dropped"] = items, folded[1]

    stale = _names_answered(items)
    shown = [
        _without_stale_step(
            _within_cap(e, scaled(config.max_summary_tokens_resolved), counter), stale
        )
        for e in active
    ]
    role, count = config.summary_role, text_counter(counter)
    ledger_of = partial(
        render_read_facts, max_tokens=scaled(config.max_facts_tokens_resolved), count=count
    )
    ledger = ledger_of(facts)
    rest = counter.count_message(render_summary_block(shown, role=role, facts=ledger))
    room = head_room - rest - USERS_OVERHEAD_TOKENS
    share = scaled(config.user_messages_tokens)
    tags = min(share, STATUS_TOKENS * len(items))  # the statuses and answers, beside the words
    users = render_user_messages(
        facts.get("user_messages") or [],
        dropped=facts.get("user_messages_dropped") or 0,
        max_tokens=max(MIN_USERS_TOKENS, min(2 * share + tags, room)),
        verbatim_tokens=max(MIN_USERS_TOKENS, min(share + tags, room)),
        count=count,
    )
    quoted = " ".join(users.split())  # a constraint quoted verbatim is not said twice
    constraints = facts.get("constraints") or []
    kept = [c for c in constraints if " ".join(c.split()) not in quoted]
    if len(kept) < len(constraints):
        ledger = ledger_of({**facts, "constraints": kept})
    block = partial(render_summary_block, shown, role=role, facts=ledger, users=users)
    reports = files = ""
    if files_entry is not None and config.reports_tokens > 0 and "reports" in files_entry:
        room = head_room - counter.count_message(block())
        part = files_entry.get("reports")
        reports = render_reports(
            part, max_tokens=min(scaled(config.reports_tokens), room), count=count
        )
    if files_entry is not None and config.files_tokens > 0 and "files" in files_entry:
        room = head_room - counter.count_message(block(reports=reports))
        part = files_entry.get("files")
        files = render_files(part, max_tokens=min(scaled(config.files_tokens), room), count=count)
    if not (users or ledger or files or reports or any(e["summary"].strip() for e in shown)):
        return None, 0  # nothing to say: no block
    message = block(reports=reports, files=files)
    return message, counter.count_message(message)


def request_items(
    items: Sequence[dict[str, Any]], task: tuple[str, str] | None, task_answer: str | None
) -> list[dict[str, Any]]:
    """The ledger's items as the block shows them: the task first when it has a status worth a
    line (answered, or folded requests follow it)."""
    out = list(items)
    if task is not None and (task_answer or out):
        line = {"id": task[0], "text": task[1], "short": True, "task": True}
        out.insert(0, {**line, "answer": task_answer} if task_answer else line)
    return out


def _names_answered(items: Sequence[dict[str, Any]]) -> Callable[[str], bool]:
    """Whether a next step names an answered request (by the opening of its words) or only
    repeats a request (the requests section says which is the latest, and whether answered)."""
    said = [" ".join(str(i["text"]).split())[:40].rstrip("…") for i in items if i.get("answer")]
    said = [s for s in said if len(s) >= MIN_NAMED_CHARS]  # "ok" names nothing

    def stale(step: str) -> bool:
        flat = " ".join(step.split())
        return flat.startswith(REQUEST_STEP) or any(s in flat for s in said)

    return stale


def _without_stale_step(entry: CompactionEntry, stale: Callable[[str], bool]) -> CompactionEntry:
    """``entry`` without a "Next step" that names an answered request (never one to redo)."""
    text = without_section(entry["summary"], "Next step", stale)
    return entry if text is entry["summary"] else {**entry, "summary": text}


def _files_key(entry: CompactionEntry | None, config: MemoryConfig) -> tuple[object, ...]:
    """What the files in hand and the sub-agent reports add to the block's cache key (nothing
    when none are shown): their content, not only the entry's id (state is untrusted)."""
    if entry is None or (config.files_tokens <= 0 and config.reports_tokens <= 0):
        return ()
    parts = _ledger_digest([entry.get("files"), entry.get("reports")])
    return ("files", entry["id"], parts, config.files_tokens, config.reports_tokens)


def latest_fold(entries: Sequence[CompactionEntry]) -> CompactionEntry | None:
    """The latest fold's entry (merges fold nothing and hold no files or reports)."""
    return next((e for e in reversed(entries) if e["trigger"] != "merge"), None)


def latest_files(entries: Sequence[CompactionEntry]) -> CompactionEntry | None:
    """The latest fold's entry when it holds files in hand or sub-agent reports."""
    latest = latest_fold(entries)
    if latest is None:
        return None
    return latest if any(isinstance(latest.get(k), dict) for k in ("files", "reports")) else None


MIN_NAMED_CHARS = 24
"""Characters of a request's opening a next step must hold to name it."""

STATUS_TOKENS = 24
"""What a request's status and the first words of its answer add to its line, in tokens: the
requests section has that much more room than the user's words' share (up to the share again)."""

USERS_OVERHEAD_TOKENS = 48
"""The note before the quoted user messages and its separators, in tokens (generous)."""

MIN_USERS_TOKENS = 48
"""The quoted user messages' floor, even when the pinned messages fill the head budget."""


def _within_cap(entry: CompactionEntry, cap: int, counter: TokenCounter) -> CompactionEntry:
    """``entry`` with its summary cut to ``cap`` tokens (measured: ``summary_tokens`` may lie)."""
    text = entry["summary"]
    if len(text) <= cap or counter.count_text(text) <= cap:  # no token is shorter than a char
        return entry
    return {**entry, "summary": truncate_to_tokens(text, cap, counter.count_text)}
