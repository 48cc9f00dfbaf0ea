"""The facts record: its JSON types, size caps, merges and reading back from state."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import accumulate
from typing import Any, NotRequired, TypedDict

from langctx.errors import ConfigError
from langctx.facts.calls import clip, normalise_path
from langctx.facts.runners import MAX_NAMED_FAILURES, MAX_SUMMARY_LINE_CHARS, MAX_TALLIES
from langctx.surrogates import encodable_text

DEFAULT_MAX_COMMANDS = 20
"""How many of the most recent commands a :class:`Facts` keeps."""
DEFAULT_MAX_ERRORS = 5
"""How many of the most recent errors a :class:`Facts` keeps."""
DEFAULT_MAX_READ_FILES = 50
"""How many of the most recently read files a :class:`Facts` lists (the rest are counted)."""
_MAX_READ_FILES_CHARS = 8_000  # the listed read paths together (the newest always fits)
MAX_MODIFIED_FILES = 64
"""How many of the most recently (first) modified files a merged :class:`Facts` lists; older ones
are counted in ``modified_files_dropped`` (no recorded session modifies more than 59)."""
_MAX_MODIFIED_FILES_CHARS = 6_000  # the listed modified paths together (the newest always fits)
MAX_COMMAND_FACT_CHARS = 500  # a :class:`CommandFact`'s ``command`` is clipped to this
MAX_ERROR_LINES = 8  # an :class:`ErrorFact` holds at most this many ``lines``
MAX_ERROR_LINE_CHARS = 500  # each of an :class:`ErrorFact`'s ``lines`` is clipped to this
MAX_CONSTRAINT_CHARS = 400  # one constraint sentence kept verbatim (a longer one is cut)
MAX_NEXT_STEP_CHARS = 220  # characters of the stated next step kept (a longer sentence is cut)
MAX_CALL_TEXT_CHARS = 240  # a :class:`ToolCallFact`'s name, arguments and result each
MAX_CONCLUSION_CHARS = 280  # one conclusion of the agent (its own words) or open question
MAX_CONCLUSIONS = 8  # the agent's most recent conclusions the facts keep
MAX_OPEN_QUESTIONS = 4  # the most recent open questions the facts keep
DEFAULT_MAX_CALLS = 12
"""How many of the most recent other tool calls (no file, no command) a :class:`Facts` keeps."""


class CommandFact(TypedDict):
    """One shell command the agent ran; ``message_id`` is its result's (else the AI message's).

    ``ok``: ``False`` when it failed, ``True`` when exit 0 is known and nothing failed, else None.
    """

    command: str
    exit_code: int | None
    ok: bool | None
    message_id: str | None


class ErrorFact(TypedDict):
    """The error lines of one failing tool result (``command`` set for a command tool)."""

    command: str | None
    lines: list[str]
    message_id: str | None
    summary_lines: NotRequired[list[str]]
    """The runner's verdict (:func:`~langctx.facts.runners.summary_lines`); missing when none."""


class ToolCallFact(TypedDict):
    """One call of a tool that is neither a file nor a command tool, and what it returned.

    ``ok``: ``False`` when it failed (an error status, or a result that reads as an error),
    ``True`` when it returned, None while no result was seen.
    """

    name: str
    args: str
    """Its arguments as ``key=value``, the key argument first (:func:`~langctx.facts.results.call_arguments`)."""
    result: str
    """What it returned in one line (:func:`~langctx.facts.results.result_line`)."""
    ok: bool | None
    message_id: str | None


class Facts(TypedDict):
    """Facts extracted from a batch of messages; a plain JSON dict, mergeable.

    ``modified_files`` is in order of first modification, the :data:`MAX_MODIFIED_FILES` most
    recent listed (the rest counted); the others keep the most recent entries (``read_files`` in
    order of the latest read).
    """

    read_files: list[str]
    modified_files: list[str]
    commands: list[CommandFact]
    errors: list[ErrorFact]
    read_files_dropped: NotRequired[int]
    """How many older reads ``read_files`` leaves out (an upper bound; missing means 0)."""
    modified_files_dropped: NotRequired[int]
    """How many earlier modified files ``modified_files`` leaves out (an upper bound; missing: 0)."""
    calls: NotRequired[list[ToolCallFact]]
    """The other tools' calls, most recent last (missing when there are none)."""


def check_limit(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"{name} must be an int >= 0, got {value!r}."
        raise ConfigError(msg)
    return value


def empty_facts() -> Facts:
    """A new :class:`Facts` with nothing in it.

    Example:
        >>> empty_facts()
        {'read_files': [], 'modified_files': [], 'commands': [], 'errors': []}
    """
    return Facts(read_files=[], modified_files=[], commands=[], errors=[])


def merge_facts(
    *facts: Mapping[str, Any],
    max_commands: int = DEFAULT_MAX_COMMANDS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> Facts:
    """Fold facts together, oldest first, within the caps of :func:`extract_facts`.

    Each input is read as :func:`stored_facts` reads it, and is not modified.

    Example:
        >>> merge_facts({"read_files": ["a.py", "b.py"]}, {"read_files": ["c.py", "a.py"]},
        ...     max_read_files=2)
        {'read_files': ['c.py', 'a.py'], 'modified_files': [], 'commands': [], 'errors': [], 'read_files_dropped': 1}
    """
    return merge_read_facts(
        *[stored_facts(f) for f in facts],
        max_commands=max_commands,
        max_errors=max_errors,
        max_read_files=max_read_files,
        max_calls=max_calls,
    )


def merge_read_facts(
    *facts: Mapping[str, Any],
    max_commands: int = DEFAULT_MAX_COMMANDS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> Facts:
    """:func:`merge_facts` of facts in the stored shape already (not read again, not modified;
    the merged commands and errors are the inputs' own dicts)."""
    max_commands = check_limit("max_commands", max_commands)
    max_errors = check_limit("max_errors", max_errors)
    max_read_files = check_limit("max_read_files", max_read_files)
    max_calls = check_limit("max_calls", max_calls)
    commands = [c for f in facts for c in f.get("commands", ())]
    errors = [e for f in facts for e in f.get("errors", ())]
    reads = [path for f in facts for path in f.get("read_files", ())]
    latest = list(dict.fromkeys(reversed(reads)))  # each path once, by its last read, newest first
    keep = newest_within(latest, max_read_files, _MAX_READ_FILES_CHARS)
    changed = list(dict.fromkeys(p for f in facts for p in f.get("modified_files", ())))
    kept = newest_within(changed[::-1], MAX_MODIFIED_FILES, _MAX_MODIFIED_FILES_CHARS)
    merged = Facts(
        read_files=latest[:keep][::-1],
        modified_files=changed[len(changed) - kept :],
        commands=commands[-max_commands:] if max_commands else [],
        errors=errors[-max_errors:] if max_errors else [],
    )
    if dropped := sum(f.get("read_files_dropped", 0) for f in facts) + len(latest) - keep:
        merged["read_files_dropped"] = dropped
    if earlier := sum(f.get("modified_files_dropped", 0) for f in facts) + len(changed) - kept:
        merged["modified_files_dropped"] = earlier
    if max_calls and (calls := [c for f in facts for c in f.get("calls", ())]):
        merged["calls"] = calls[-max_calls:]
    return merged


def newest_within(paths: list[str], limit: int, max_chars: int) -> int:
    """How many of ``paths`` (newest first) a list keeps: at most ``limit``, together within
    ``max_chars`` characters (the newest always, unless ``limit`` is 0)."""
    newest = paths[:limit]
    within = sum(1 for chars in accumulate(map(len, newest)) if chars <= max_chars)
    return max(within, min(1, len(newest)))


_MISSING: Any = object()  # a reader's answer for a value it cannot read: left out

Reader = Callable[[Any], Any]


def _of(kind: type, convert: Reader = lambda v: v) -> Reader:
    """A value of ``kind`` (a bool is no int), converted; else missing."""
    return lambda v: (
        convert(v)
        if isinstance(v, kind) and (kind is bool or not isinstance(v, bool))
        else _MISSING
    )


def _text(limit: int, prefix: bool = False) -> Reader:
    """A string, encodable, clipped to ``limit`` (or its ``prefix`` kept)."""
    cut = (lambda text: text[:limit]) if prefix else (lambda text: clip(text, limit))
    return _of(str, lambda v: cut(encodable_text(v)))


def _or_none(read: Reader) -> Reader:
    return lambda v: None if v is None else read(v)


_count = _of(int, lambda v: max(v, 0))
_path = _of(str, lambda v: normalise_path(encodable_text(v)) or _MISSING)
_constraint_text = _text(MAX_CONSTRAINT_CHARS, prefix=True)


def _constraint(value: object) -> Any:
    text = _constraint_text(value)
    return text if text is not _MISSING and text.strip() else _MISSING


def _list(item: Reader, last: int | None = None) -> Reader:
    """A list of what ``item`` reads (the others skipped), the ``last`` ones when given."""
    keep = slice(-last if last else None, None)
    return _of(list, lambda v: [r for r in map(item, v) if r is not _MISSING][keep])


def _record(**fields: Reader) -> Reader:
    """A dict with those of ``fields`` it holds that read (the rest left out); else skipped."""

    def read(value: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: field(value[k]) for k, field in fields.items() if k in value}
        return {k: v for k, v in out.items() if v is not _MISSING}

    return _of(Mapping, read)


_command = _or_none(_text(MAX_COMMAND_FACT_CHARS))
_msg_id = _or_none(_of(str, encodable_text))
_exit_code = _or_none(_of(int))
_call_text = _text(MAX_CALL_TEXT_CHARS)
MAX_TASK_ANSWER_CHARS = 240
"""Characters of the first line of the answer to the pinned task (``task_answer``)."""

_FACTS: dict[str, Reader] = {
    "read_files": _list(_path),
    "modified_files": _list(_path),
    "read_files_dropped": _count,
    "modified_files_dropped": _count,
    "constraints_dropped": _count,
    "commands": _list(
        _record(command=_command, exit_code=_exit_code, ok=_or_none(_of(bool)), message_id=_msg_id)
    ),
    "errors": _list(
        _record(
            command=_command,
            lines=_list(_text(MAX_ERROR_LINE_CHARS), MAX_ERROR_LINES),
            message_id=_msg_id,
            summary_lines=_list(_text(MAX_SUMMARY_LINE_CHARS), MAX_NAMED_FAILURES + MAX_TALLIES),
        )
    ),
    "calls": _list(
        _record(
            name=_call_text,
            args=_call_text,
            result=_call_text,
            ok=_or_none(_of(bool)),
            message_id=_msg_id,
        ),
        DEFAULT_MAX_CALLS,
    ),
    "conclusions": _list(_text(MAX_CONCLUSION_CHARS), MAX_CONCLUSIONS),
    "open_questions": _list(_text(MAX_CONCLUSION_CHARS), MAX_OPEN_QUESTIONS),
    "constraints": _list(_constraint),
    "next_step": _or_none(_text(MAX_NEXT_STEP_CHARS, prefix=True)),
    "task_answer": _or_none(_text(MAX_TASK_ANSWER_CHARS)),
    "user_messages_dropped": _count,
    "users": _count,
}
"""How each key of the facts is read from state (``user_messages``: its own module)."""


def stored_facts(value: object) -> dict[str, Any]:
    """Facts read back from untrusted state, in the shape langctx writes (docs/persistence.md).

    What cannot be read is left out, strings are cut to the caps, unknown keys are kept as is.
    """
    from langctx.user_messages import stored_user_messages  # it imports this module

    if not isinstance(value, Mapping):
        return {}
    out: dict[str, Any] = {}
    for key, raw in value.items():
        read = stored_user_messages if key == "user_messages" else _FACTS.get(key)
        fact = raw if read is None else read(raw)
        if fact is not _MISSING:
            out[key] = fact
    return out
