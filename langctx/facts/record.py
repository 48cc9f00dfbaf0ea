"""The facts record: its JSON types and size caps, :func:`empty_facts` and :func:`merge_facts`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NotRequired, TypedDict

from langctx.errors import ConfigError

__all__ = [
    "DEFAULT_MAX_COMMANDS",
    "DEFAULT_MAX_ERRORS",
    "DEFAULT_MAX_READ_FILES",
    "MAX_COMMAND_FACT_CHARS",
    "MAX_CONSTRAINT_CHARS",
    "MAX_ERROR_LINES",
    "MAX_ERROR_LINE_CHARS",
    "MAX_NEXT_STEP_CHARS",
    "CommandFact",
    "ErrorFact",
    "Facts",
    "check_limit",
    "count_of",
    "empty_facts",
    "merge_facts",
    "set_reads",
]

DEFAULT_MAX_COMMANDS = 20
"""How many of the most recent commands a :class:`Facts` keeps."""

DEFAULT_MAX_ERRORS = 5
"""How many of the most recent errors a :class:`Facts` keeps."""

DEFAULT_MAX_READ_FILES = 50
"""How many of the most recently read files a :class:`Facts` lists; older reads are counted in
``read_files_dropped``. Modified files are never dropped."""

_MAX_READ_FILES_CHARS = 8_000
"""The listed read paths hold at most this many characters together (the newest always fits)."""

MAX_COMMAND_FACT_CHARS = 500
"""A :class:`CommandFact`'s ``command`` is clipped to this many characters."""

MAX_ERROR_LINES = 8
"""An :class:`ErrorFact` holds at most this many ``lines``."""

MAX_ERROR_LINE_CHARS = 500
"""Each of an :class:`ErrorFact`'s ``lines`` is clipped to this many characters."""

MAX_CONSTRAINT_CHARS = 400
"""Characters of one constraint sentence kept verbatim (a longer one is cut)."""

MAX_NEXT_STEP_CHARS = 220
"""Characters of the stated next step kept (a longer sentence is cut)."""


class CommandFact(TypedDict):
    """One shell command the agent ran.

    ``message_id`` is the tool result's id when the batch holds it, else the AI message's.
    ``ok`` is ``False`` when the command failed (:func:`~langctx.facts.failures.command_failed`),
    ``True`` when exit code 0 is known and nothing failed, ``None`` otherwise (no result, no exit
    code, a search that matched nothing). ``command`` is clipped to
    :data:`MAX_COMMAND_FACT_CHARS`.
    """

    command: str
    exit_code: int | None
    ok: bool | None
    message_id: str | None


class ErrorFact(TypedDict):
    """The error lines of one failing tool result, and its test runner's summary lines.

    ``command`` is the command string when the failing tool is a command tool, else ``None``.
    ``lines`` holds at most :data:`MAX_ERROR_LINES` lines of at most
    :data:`MAX_ERROR_LINE_CHARS` characters each.
    """

    command: str | None
    lines: list[str]
    message_id: str | None
    summary_lines: NotRequired[list[str]]
    """The runner's verdict (:func:`~langctx.facts.runners.summary_lines`). Missing when the
    output has none (and in facts written before they were kept)."""


class Facts(TypedDict):
    """Facts extracted from a batch of messages; a plain JSON dict, mergeable.

    File lists are unique. ``modified_files`` is in order of first modification and never cut.
    ``read_files`` is in order of the latest read and lists the most recent ones (at most 8,000
    characters of paths); the rest are counted in ``read_files_dropped`` (missing means 0).
    ``commands`` and ``errors`` keep the most recent entries only.
    """

    read_files: list[str]
    modified_files: list[str]
    commands: list[CommandFact]
    errors: list[ErrorFact]
    read_files_dropped: NotRequired[int]
    """How many older reads ``read_files`` leaves out. A file left out and read again later is
    listed, and may still be counted once: an upper bound on the files not listed."""


def check_limit(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"{name} must be an int >= 0, got {value!r}."
        raise ConfigError(msg)
    return value


def set_reads(facts: Facts, reads: list[str], dropped: int, limit: int) -> None:
    """Keep the most recent reads within ``limit`` and the character cap; count the rest."""
    keep = 0
    chars = 0
    for path in reversed(reads):
        if keep >= limit or (keep and chars + len(path) > _MAX_READ_FILES_CHARS):
            break
        keep += 1
        chars += len(path)
    facts["read_files"] = reads[len(reads) - keep :]
    dropped += len(reads) - keep
    if dropped:
        facts["read_files_dropped"] = dropped


def empty_facts() -> Facts:
    """A new :class:`Facts` with nothing in it.

    Example:
        >>> empty_facts()
        {'read_files': [], 'modified_files': [], 'commands': [], 'errors': []}
    """
    return Facts(read_files=[], modified_files=[], commands=[], errors=[])


def _latest(lists: Iterable[Iterable[str]]) -> list[str]:
    """Unique items in order of their last appearance."""
    items = [item for items in lists for item in items]
    return list(reversed(dict.fromkeys(reversed(items))))


def merge_facts(
    *facts: Facts,
    max_commands: int = DEFAULT_MAX_COMMANDS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
) -> Facts:
    """Fold facts together, oldest first, into facts of bounded size.

    Merging over and over (summaries of summaries) never grows them past the caps, which apply
    as in :func:`~langctx.facts.extract_facts`. The inputs are not modified; a missing key (an
    older persisted entry) counts as empty.

    Example:
        >>> a = {**empty_facts(), "read_files": ["a.py", "b.py"], "modified_files": ["b.py"]}
        >>> b = {**empty_facts(), "read_files": ["c.py", "a.py"], "modified_files": ["d.py"]}
        >>> merged = merge_facts(a, b, max_read_files=2)
        >>> merged["read_files"], merged["read_files_dropped"], merged["modified_files"]
        (['c.py', 'a.py'], 1, ['b.py', 'd.py'])
    """
    max_commands = check_limit("max_commands", max_commands)
    max_errors = check_limit("max_errors", max_errors)
    max_read_files = check_limit("max_read_files", max_read_files)
    commands = [CommandFact(**c) for f in facts for c in f.get("commands", ())]
    errors = [_error_copy(e) for f in facts for e in f.get("errors", ())]
    merged = Facts(
        read_files=[],
        modified_files=list(dict.fromkeys(p for f in facts for p in f.get("modified_files", ()))),
        commands=commands[-max_commands:] if max_commands else [],
        errors=errors[-max_errors:] if max_errors else [],
    )
    dropped = sum(count_of(f.get("read_files_dropped")) for f in facts)
    set_reads(merged, _latest(f.get("read_files", ()) for f in facts), dropped, max_read_files)
    return merged


def _error_copy(error: ErrorFact) -> ErrorFact:
    out = ErrorFact(
        command=error["command"], lines=list(error["lines"]), message_id=error["message_id"]
    )
    if "summary_lines" in error:
        out["summary_lines"] = list(error["summary_lines"])
    return out


def count_of(value: object) -> int:
    """``value`` when it is a positive int (a count read from state), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
