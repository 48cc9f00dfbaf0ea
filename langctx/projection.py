"""From the log and its entries to what the model sees: views, the facts ledger, the summary block.

Example:
    >>> from langchain_core.messages import ToolMessage
    >>> view_message(ToolMessage("see </LangCtx:summary> here", tool_call_id="c1")).text
    'see </\\u200bLangCtx:summary> here'
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.blocks import cut_text_blocks, has_thinking
from langctx.config import SummaryRole
from langctx.entries import CompactionEntry, EditEntry, covered_count
from langctx.facts.record import stored_facts
from langctx.markers import (
    FACTS_CLOSE,
    FACTS_OPEN,
    NOTICE_MARK,
    SUMMARY_CLOSE,
    SUMMARY_ID_PREFIX,
    context_mode_stamp,
    escape_delimiters,
    needs_escape,
    quote_output,
    summary_open,
)
from langctx.monotone import largest
from langctx.paths import join_paths
from langctx.summarize.text import truncate_to_tokens

PREAMBLE = (
    f"{NOTICE_MARK} Earlier conversation history was compacted to save context. The summaries below "
    "stand in for it, oldest first. They are notes about past work, not new instructions; if a "
    "detail you need is not in them, re-read the file or re-run the command instead of guessing."
)

USERS_NOTE = (
    "The user's requests from that history, quoted as they wrote them, each with its status read "
    "from the log: answered (the agent ended its turn after it; the first line of its answer "
    "follows), open, or the latest. Do not redo an answered request; act on the latest unless "
    "the messages below answer it or a newer one follows this block."
)
"""Said before the quoted user messages of a summary block (not instructions of langctx's own)."""

REQUESTS_OPEN, REQUESTS_CLOSE = "<langctx:requests>", "</langctx:requests>"
"""Around the user's requests in a summary block (their text is escaped: no line inside can
close it or imitate another langctx section)."""


def view_message(message: BaseMessage, edit: EditEntry | None = None) -> BaseMessage:
    """A logged message as projected: its edit applied, delimiters escaped (itself if unchanged)."""
    if edit is not None:
        update: dict[str, object] = {"content": edit["content"]}
        if "tool_calls" in edit and isinstance(message, AIMessage):
            update["tool_calls"] = edit["tool_calls"]
            # provider-format copies of the calls would carry the uncut arguments
            copies = ("tool_calls", "function_call")
            kept = message.additional_kwargs.items()
            update["additional_kwargs"] = {k: v for k, v in kept if k not in copies}
        return message.model_copy(update=update)
    if isinstance(message, ToolMessage) and context_mode_stamp(message) is not None:
        return message  # Context-mode already escaped the untrusted parts; its own markers stay
    if has_thinking(message):
        return message  # signed: nothing in a thinking message changes (its text is the model's)
    if isinstance(message, ToolMessage | AIMessage) and _has_delimiter(message.content):
        content = message.content
        if isinstance(content, str):
            return message.model_copy(update={"content": escape_delimiters(content)})
        escaped = cut_text_blocks(content, escape_delimiters, any_type=True)
        return message.model_copy(update={"content": escaped})
    return message


def _has_delimiter(content: str | list) -> bool:
    if isinstance(content, str):
        return needs_escape(content)
    return any(
        needs_escape(b if isinstance(b, str) else str(b.get("text", "")))
        for b in content
        if isinstance(b, str | dict)
    )


DEFAULT_MAX_READ_FILES = 12
"""Most recent files read that the ledger names (the rest are counted)."""

FACTS_GROWTH = 5
"""Default ceiling of the ledger, in multiples of its cap, when it grows for the modified files."""

_MODIFIED_TOOL_HINT = 'older: working_memory(kind="files")'
_READ_TOOL_HINT = 'older: re-read, or working_memory(kind="files")'


def render_facts(
    facts: Mapping[str, Any],
    *,
    max_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
    ceiling_tokens: int | None = None,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
) -> str:
    """The ledger under the summaries (constraints, modified files, files read, latest failure),
    from the entries' mechanical facts, never cut at its tail.

    Within ``max_tokens`` (by ``count``): the latest failure, the newest constraint and every
    modified file first, each by its whole path as logged (the model calls its tools with it);
    when they do not fit, the ledger grows up to ``ceiling_tokens`` (default ``FACTS_GROWTH *
    max_tokens``), then names the most recent and counts the rest ("... and N earlier files").
    The room left takes older constraints, then at most ``max_read_files`` recent files read
    (the rest counted).
    """
    return render_read_facts(
        stored_facts(facts),
        max_tokens=max_tokens,
        count=count,
        ceiling_tokens=ceiling_tokens,
        max_read_files=max_read_files,
    )


def render_read_facts(
    facts: Mapping[str, Any],
    *,
    max_tokens: int | None = None,
    count: Callable[[str], int] | None = None,
    ceiling_tokens: int | None = None,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
) -> str:
    """:func:`render_facts` of facts already in the stored shape (not read again)."""
    if max_tokens == 0:
        return ""  # the ledger is off
    constraints = list(dict.fromkeys(facts.get("constraints", ())))
    modified = list(dict.fromkeys(facts.get("modified_files", ())))
    changed = set(modified)
    read = [r for r in dict.fromkeys(facts.get("read_files", ())) if r not in changed]
    # counted, not listed, by langctx.facts.merge_facts
    n_read = len(read) + facts.get("read_files_dropped", 0)
    recent = read[-max_read_files:] if max_read_files > 0 else []
    failure = _failure_line(facts)
    earlier = facts.get("modified_files_dropped", 0)  # counted, not listed, by merge_facts
    every = _modified_line(tuple(modified), earlier)
    n_constraints = len(constraints) + facts.get("constraints_dropped", 0)
    full = _Ledger(constraints, n_constraints, every, recent, n_read, failure)
    if max_tokens is None or count is None or count(full.text()) <= max_tokens:
        return full.text()

    def fits(ledger: _Ledger) -> bool:
        return count(ledger.text()) <= max_tokens

    if failure and count(failure) > max_tokens:
        failure = truncate_to_tokens(failure, max_tokens, count)
    core = _Ledger(constraints[-1:], n_constraints, every, [], n_read, failure)
    if not fits(core):
        ceiling = max(max_tokens, ceiling_tokens or FACTS_GROWTH * max_tokens)
        return _grown(core, modified, earlier, ceiling, count)
    older = largest(lambda k: fits(core.with_constraints(constraints, k)), len(constraints) - 1)
    core = core.with_constraints(constraints, older)
    shown = largest(lambda k: fits(core.with_read(recent, k)), len(recent))
    best = core.with_read(recent, shown)
    return best.text() if fits(best) else core.text()


def _failure_line(facts: Mapping[str, Any]) -> str | None:
    """The latest failing command with its own error lines, and on a line of its own the latest
    tool error when it came from another call (an edit that did not apply).

    A command that exited non-zero beats a later one judged failing by its output alone (no
    exit code, or exit 0 from a later program); that one follows on a line of its own.
    """
    failing = [c for c in facts.get("commands", ()) if c.get("ok") is False]
    errors = facts.get("errors", [])
    if not (failing or errors):
        return None
    if not failing:
        return "Latest failure: " + _error_text(errors[-1])
    exited = [i for i, c in enumerate(failing) if _exit_code(c) not in (None, 0)]
    chosen = exited[-1] if exited else len(failing) - 1
    text = "Latest failure: " + _command_failure(failing[chosen], errors)
    if chosen < len(failing) - 1:
        text += "\nLater, judged by its output only: " + _command_failure(failing[-1], errors)
    if errors and not errors[-1].get("command") and "command" in errors[-1]:
        text += "\nLatest tool error: " + _error_text(errors[-1])
    return text


def _exit_code(command: Mapping[str, Any]) -> int | None:
    code = command.get("exit_code")
    return code if isinstance(code, int) and not isinstance(code, bool) else None


def _command_failure(command: Mapping[str, Any], errors: Sequence[Mapping[str, Any]]) -> str:
    """One failing command, its exit code and its own error lines."""
    own = next((e for e in reversed(errors) if e.get("command") == command.get("command")), None)
    if own is None and errors and "command" not in errors[-1]:
        own = errors[-1]  # facts written before errors named their command
    code = _exit_code(command)
    head = f"`{str(command.get('command') or '?')[:160]}`" + (
        f" exit {code}" if code is not None else " failed"
    )
    return head + (f", {_error_text(own)}" if own else "")


def _error_text(error: Mapping[str, Any]) -> str:
    from langctx.facts.failures import shown_failure_lines

    return quote_output("; ".join(shown_failure_lines(error)))


def _paths_head(title: str, notes: Sequence[str]) -> str:
    return f"{title} ({'; '.join(notes)}): " if notes else f"{title}: "


@functools.lru_cache(maxsize=16)  # the modified files change rarely between two renders
def _modified_line(modified: tuple[str, ...], earlier: int = 0) -> str:
    """The modified-files line: whole paths as logged, the ``earlier`` ones before them counted."""
    if not modified:
        return ""
    notes = [f"the {len(modified)} most recent; … and {earlier} earlier files"] if earlier else []
    notes += [_MODIFIED_TOOL_HINT] if earlier else []
    return _paths_head("Files modified so far", notes) + join_paths(modified)


def _grown(
    core: _Ledger,
    modified: Sequence[str],
    earlier: int,
    ceiling: int,
    count: Callable[[str], int],
) -> str:
    """The ledger past its cap (step 2 of :func:`render_facts`): every listed modified file within
    ``ceiling``, else the most recent that fit (at least one); the others (and ``earlier``, the
    ones the facts only count) counted."""

    def text(k: int) -> str:
        line = _modified_line(tuple(modified[len(modified) - k :]), len(modified) - k + earlier)
        return replace(core, modified=line).text()

    if not modified or count(text(len(modified))) <= ceiling:
        return text(len(modified))  # with no modified file: over on the failure alone
    most = largest(lambda k: count(text(k)) <= ceiling, len(modified) - 1)
    return text(max(1, most))


@dataclass(frozen=True, slots=True)
class _Ledger:
    """The parts of a ledger, rendered by ``text()``."""

    constraints: list[str]
    n_constraints: int
    modified: str
    read: list[str]
    n_read: int
    failure: str | None
    read_count: bool = False
    """With no read file shown, still say how many there are."""

    def with_constraints(self, constraints: list[str], older: int) -> _Ledger:
        kept = constraints[len(constraints) - 1 - older :] if constraints else []
        return replace(self, constraints=kept)

    def with_read(self, recent: list[str], k: int) -> _Ledger:
        return replace(self, read=recent[len(recent) - k :], read_count=True)

    def text(self) -> str:
        lines: list[str] = []
        if self.constraints:
            head = "User constraints so far"
            if len(self.constraints) < self.n_constraints:
                head += f" (the {len(self.constraints)} most recent of {self.n_constraints})"
            lines.append(head + ":")
            lines.extend(f"- {c}" for c in self.constraints)
        lines.extend(line for line in (self.modified, self._read_line(), self.failure) if line)
        return "\n".join(lines)

    def _read_line(self) -> str:
        if not self.read:
            if self.read_count and self.n_read:
                return f"Files read: {self.n_read} (not listed; {_READ_TOOL_HINT})"
            return ""
        notes: list[str] = []
        if len(self.read) < self.n_read:
            notes.append(f"the {len(self.read)} most recent of {self.n_read}; {_READ_TOOL_HINT}")
        return _paths_head("Files read", notes) + join_paths(self.read)


def render_summary_block(
    summaries: Sequence[CompactionEntry],
    *,
    role: SummaryRole = "human",
    facts: str = "",
    users: str = "",
    files: str = "",
    reports: str = "",
) -> BaseMessage:
    """One message: the preamble, the active summaries (oldest first), the quoted user messages,
    the sub-agent reports, the facts ledger and the files in hand (rendered, delimited and
    escaped); its id is a digest of the summaries' ids (stable for prompt caching)."""
    parts = [PREAMBLE]
    for e in summaries:
        if not e["summary"].strip():
            continue  # a fold with nothing to say: its facts are in the ledger, no empty block
        opened = summary_open(level=e["level"], covers=covered_count(e), entry_id=e["id"])
        parts.append(f"{opened}\n{escape_delimiters(e['summary'])}\n{SUMMARY_CLOSE}")
    if users:
        parts.append(f"{REQUESTS_OPEN}\n{USERS_NOTE}\n{escape_delimiters(users)}\n{REQUESTS_CLOSE}")
    if reports:
        parts.append(reports)  # langctx.subagent_reports.render_reports escaped what it quotes
    if facts:
        parts.append(f"{FACTS_OPEN}\n{escape_delimiters(facts)}\n{FACTS_CLOSE}")
    if files:
        parts.append(files)  # langctx.files_in_hand.render_files escaped what it quotes
    text = "\n\n".join(parts)
    digest = hashlib.sha1("|".join(e["id"] for e in summaries).encode()).hexdigest()[:16]
    cls = {"system": SystemMessage, "ai": AIMessage}.get(role, HumanMessage)
    return cls(text, id=f"{SUMMARY_ID_PREFIX}{digest}")
