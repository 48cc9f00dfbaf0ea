"""Mechanical facts from agent messages: files read and modified, commands run, errors seen.

A compaction entry must still say which files the agent read and changed, which commands it ran
and how the last ones failed, after the messages themselves were folded into a summary. Those
facts are read here from the structure of the messages, never from prose:

* **Files** come only from tool-call arguments (``AIMessage.tool_calls[*]["args"]``). A
  :class:`FileToolSpec` per tool name says whether a call reads or modifies, and under which
  argument keys its path(s) sit. :data:`DEFAULT_FILE_TOOLS` covers the tool names of pi,
  SWE-agent, OpenHands, aider, mini-swe-agent, Anthropic's text editor, Codex's ``apply_patch``,
  Claude Code, Gemini CLI, Cursor, Cline and the LangChain/deepagents file tools. The command
  of a shell tool is parsed too (:func:`langctx.shell.parse_command`: ``cat``, ``sed -n``,
  ``rg``, ``apply_patch`` heredocs, ``sed -i``, ``>`` redirects, ``mv``...).
* **Commands** are the calls of shell tools (:data:`DEFAULT_COMMAND_TOOLS`); their exit code is
  read from the matching ``ToolMessage`` (its ``status``, its artifact, or an exit-code trailer
  in its text such as ``Command exited with code 1`` or ``<returncode>1</returncode>``).
* **Errors** are the error lines of failing tool results: a command that failed (a non-zero
  exit code other than a search's "no match", a failing test run or build in its output) or
  any tool result with ``status="error"``. Output of a command that only reads files is file
  content, not a diagnosis.

A call counts when it is made, whatever its result: a failed edit still tells the summary which
file the agent was working on. Results are matched to calls by ``tool_call_id``, so parallel
calls answered in any order are handled; a result whose call is not in the batch is still
checked for errors. The work is linear in the size of the messages, and tool outputs are scanned
only for command tools or results marked as errors.

The facts are plain JSON dicts (:class:`Facts`) that :func:`merge_facts` folds together, so the
facts of a summary-of-summaries are the merge of the facts it replaces. Their size is bounded:
every modified file is kept, the most recent reads are listed and the older ones counted.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import shlex
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal, NotRequired, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langctx.errors import ConfigError, InvalidMessageError
from langctx.shell import ShellCommand, looks_like_file, parse_command, patch_text_paths

__all__ = [
    "DEFAULT_COMMAND_TOOLS",
    "DEFAULT_FILE_TOOLS",
    "DEFAULT_MAX_COMMANDS",
    "DEFAULT_MAX_ERRORS",
    "DEFAULT_MAX_READ_FILES",
    "DEFAULT_PATH_KEYS",
    "CommandFact",
    "ErrorFact",
    "Facts",
    "FileRole",
    "FileToolSpec",
    "empty_facts",
    "extract_facts",
    "merge_facts",
]

FileRole = Literal["read", "modified"]
"""What a file tool call does to the files it names."""

DEFAULT_PATH_KEYS: tuple[str, ...] = ("path", "file_path", "filename", "file")
"""Argument keys that hold a path (or a list of paths) when a spec names none."""

DEFAULT_MAX_COMMANDS = 20
"""How many of the most recent commands a :class:`Facts` keeps."""

DEFAULT_MAX_ERRORS = 5
"""How many of the most recent errors a :class:`Facts` keeps."""

DEFAULT_MAX_READ_FILES = 50
"""How many of the most recently read files a :class:`Facts` lists; older reads are counted in
``read_files_dropped``. Modified files are never dropped."""

_MAX_READ_FILES_CHARS = 8_000
"""The listed read paths hold at most this many characters together (the newest always fits)."""

_MAX_ERROR_LINES = 8
_MAX_LINE_CHARS = 300
_MAX_COMMAND_CHARS = 500
_MAX_PATH_CHARS = 4096
_TAIL_CHARS = 400
_HEAD_CHARS = 300


# --------------------------------------------------------------------------------------------
# Public types
# --------------------------------------------------------------------------------------------


class CommandFact(TypedDict):
    """One shell command the agent ran.

    ``message_id`` is the id of the tool result when the batch holds it, else of the AI message
    that made the call. ``ok`` is ``False`` when the command failed (a non-zero exit code, an
    error status, a failing test run in its output; see :func:`_command_failed`); ``True`` when
    exit code 0 is known and nothing failed; ``None`` otherwise (no result, no exit code, or a
    search that matched nothing). ``command`` is clipped to 500 characters.
    """

    command: str
    exit_code: int | None
    ok: bool | None
    message_id: str | None


class ErrorFact(TypedDict):
    """The error lines of one failing tool result.

    ``command`` is the command string when the failing tool is a command tool, else ``None``.
    ``lines`` holds at most 8 lines of at most 300 characters each.
    """

    command: str | None
    lines: list[str]
    message_id: str | None


class Facts(TypedDict):
    """Facts extracted from a batch of messages; a plain JSON dict, mergeable.

    File lists are unique. ``modified_files`` is in order of first modification and is never
    cut. ``read_files`` is in order of the latest read (a file read again moves to the end) and
    lists the most recent 50 by default (at most 8,000 characters of paths); the reads left out
    are counted in ``read_files_dropped`` (missing means 0). ``commands`` and ``errors`` keep
    the most recent entries only (20 and 5 by default).
    """

    read_files: list[str]
    modified_files: list[str]
    commands: list[CommandFact]
    errors: list[ErrorFact]
    read_files_dropped: NotRequired[int]
    """How many older reads ``read_files`` leaves out. A file left out and read again later is
    listed, and may still be counted once: an upper bound on the files not listed."""


RoleFunc = Callable[[dict[str, Any]], FileRole | None]
PathsFunc = Callable[[dict[str, Any]], Iterable[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileToolSpec:
    """How to read file paths out of one tool's call arguments.

    Example:
        >>> spec = FileToolSpec(role="read", path_keys=("target",))
        >>> call = {"id": "1", "name": "peek", "args": {"target": "a.py"}}
        >>> facts = extract_facts([AIMessage("", tool_calls=[call])], file_tools={"peek": spec})
        >>> facts["read_files"]
        ['a.py']
    """

    role: FileRole | RoleFunc
    """``"read"``, ``"modified"``, or a callable that gets the call's arguments and returns one
    of those, or ``None`` when the call touches no file (e.g. a ``command`` argument that selects
    between view and edit)."""

    path_keys: tuple[str, ...] = DEFAULT_PATH_KEYS
    """Argument keys holding a path or a list of paths; every key present contributes."""

    paths: PathsFunc | None = None
    """Optional extra extractor: gets the call's arguments and yields more paths (patch text,
    text-action commands such as SWE-agent's ``open src/app.py 120``)."""

    sets_open_file: bool = False
    """The (first) path this call names becomes the agent's open file (SWE-agent ``open`` and
    ``create``)."""

    defaults_to_open_file: bool = False
    """A call that names no path acts on the open file set by an earlier call in the same batch
    (SWE-agent ``edit`` and ``insert``, which take line numbers, not a path)."""

    def __post_init__(self) -> None:
        if not callable(self.role) and self.role not in ("read", "modified"):
            msg = f"FileToolSpec.role must be 'read', 'modified' or a callable, got {self.role!r}."
            raise ConfigError(msg)
        keys = self.path_keys
        if isinstance(keys, str) or not isinstance(keys, Iterable):
            msg = (
                f"FileToolSpec.path_keys must be a tuple of argument names, got {keys!r}; "
                f"write path_keys=({keys!r},) for one key."
            )
            raise ConfigError(msg)
        keys = tuple(keys)
        if not all(isinstance(key, str) for key in keys):
            msg = f"FileToolSpec.path_keys must hold argument names (str), got {keys!r}."
            raise ConfigError(msg)
        object.__setattr__(self, "path_keys", keys)  # a list given by the caller becomes a tuple
        if self.paths is not None and not callable(self.paths):
            msg = f"FileToolSpec.paths must be a callable or None, got {self.paths!r}."
            raise ConfigError(msg)


# --------------------------------------------------------------------------------------------
# Default tool tables
# --------------------------------------------------------------------------------------------

_EDITOR_ROLES: Mapping[str, FileRole] = {
    "view": "read",
    "create": "modified",
    "str_replace": "modified",
    "insert": "modified",
    "undo_edit": "modified",
}


def _editor_role(args: dict[str, Any]) -> FileRole | None:
    """Role of an Anthropic/OpenHands-style text editor call, chosen by its ``command``."""
    command = args.get("command")
    return _EDITOR_ROLES.get(command) if isinstance(command, str) else None


def _text_action_path(args: dict[str, Any]) -> Iterable[str]:
    """The first argument of a text action held in ``command`` (``open src/app.py 120``)."""
    command = args.get("command")
    if not isinstance(command, str):
        return ()
    first_line = command.strip().split("\n", 1)[0]
    try:
        words = shlex.split(first_line)
    except ValueError:
        words = first_line.split()
    return words[1:2]


def _patch_paths(args: dict[str, Any]) -> Iterable[str]:
    """Files named by patch text in any argument (Codex ``*** Update File: x``, unified diffs)."""
    found: list[str] = []
    for value in args.values():
        if isinstance(value, str):
            found.extend(patch_text_paths(value))
        elif isinstance(value, Mapping):  # OpenAI apply_patch: {"operation": {"path": ..., ...}}
            inner = value.get("path")
            if isinstance(inner, str):
                found.append(inner)
            for item in value.values():
                if isinstance(item, str):
                    found.extend(patch_text_paths(item))
    return found


_MORE_PATH_KEYS = (
    *DEFAULT_PATH_KEYS,
    "paths",  # read_many_files (Gemini), read_multiple_files (MCP filesystem)
    "file_paths",
    "target_file",  # Cursor
    "absolute_path",  # Gemini CLI
    "filepath",  # Continue
    "notebook_path",  # Claude Code NotebookEdit
)

_READ = FileToolSpec(role="read", path_keys=_MORE_PATH_KEYS)
_MODIFIED = FileToolSpec(role="modified", path_keys=_MORE_PATH_KEYS)
_EDITOR = FileToolSpec(role=_editor_role, path_keys=_MORE_PATH_KEYS)
_OPEN = FileToolSpec(
    role="read", path_keys=_MORE_PATH_KEYS, paths=_text_action_path, sets_open_file=True
)
_CREATE = FileToolSpec(
    role="modified", path_keys=_MORE_PATH_KEYS, paths=_text_action_path, sets_open_file=True
)
_EDIT_OPEN = FileToolSpec(role="modified", path_keys=_MORE_PATH_KEYS, defaults_to_open_file=True)
_PATCH = FileToolSpec(role="modified", path_keys=_MORE_PATH_KEYS, paths=_patch_paths)


def _searched_file(args: dict[str, Any]) -> Iterable[str]:
    """The ``path`` of a search tool when it names one file (``Grep``), not a directory."""
    path = args.get("path")
    if isinstance(path, str) and looks_like_file(path) and not any(c in path for c in "*?[{"):
        return (path,)
    return ()


def _search_file_action(args: dict[str, Any]) -> Iterable[str]:
    """SWE-agent ``search_file <term> [<file>]``: the file, when one is named."""
    command = args.get("command")
    if isinstance(command, str):
        try:
            words = shlex.split(command.strip().split("\n", 1)[0])
        except ValueError:
            words = command.split()
        if len(words) >= 3:
            return words[2:3]
    for key in ("file", "file_name", "path"):
        value = args.get(key)
        if isinstance(value, str) and looks_like_file(value):
            return (value,)
    return ()


_MOVE = FileToolSpec(
    role="modified", path_keys=("source", "destination", "source_path", "destination_path")
)
_COPY = FileToolSpec(role="modified", path_keys=("destination", "destination_path"))
_SEARCH = FileToolSpec(role="read", path_keys=(), paths=_searched_file)

DEFAULT_FILE_TOOLS: Mapping[str, FileToolSpec] = MappingProxyType(
    {
        # pi, SWE-agent, aider, Claude Code (looked up lower-cased: Read/Edit/Write/MultiEdit)
        "read": _READ,
        "open": _OPEN,  # SWE-agent: "open src/app.py 120" or {"path": ..., "line_number": ...}
        "view": _READ,
        "cat": _READ,  # a cat *tool* with a path argument; a shell `cat` is not parsed
        "read_file": _READ,
        "read_text_file": _READ,
        "read_media_file": _READ,
        "read_many_files": _READ,
        "read_multiple_files": _READ,
        "open_file": _READ,
        "view_file": _READ,
        "edit": _EDIT_OPEN,  # pi/aider name a path; SWE-agent edits the open file
        "insert": _EDIT_OPEN,  # SWE-agent
        "create": _CREATE,  # SWE-agent: "create reproduce.py" or {"filename": ...}
        "write": _MODIFIED,
        "multiedit": _MODIFIED,
        "notebookedit": _MODIFIED,
        "write_file": _MODIFIED,
        "edit_file": _MODIFIED,
        "create_file": _MODIFIED,
        "delete_file": _MODIFIED,
        "file_delete": _MODIFIED,  # LangChain FileManagementToolkit
        "remove_file": _MODIFIED,
        "append_to_file": _MODIFIED,
        "write_to_file": _MODIFIED,  # Cline, Roo
        "replace_in_file": _MODIFIED,  # Cline
        "replace": _MODIFIED,  # Gemini CLI
        "insert_content": _MODIFIED,  # Roo
        "search_and_replace": _MODIFIED,  # Roo
        "create_new_file": _MODIFIED,  # Continue
        "edit_existing_file": _MODIFIED,  # Continue
        "move_file": _MOVE,
        "copy_file": _COPY,
        # searches: a read of the one file they name (Claude Code Grep with a file path)
        "grep": _SEARCH,
        "search_file": FileToolSpec(role="read", path_keys=(), paths=_search_file_action),
        # command-selected editors: view -> read; create/str_replace/insert/undo_edit -> modified
        "str_replace_editor": _EDITOR,  # OpenHands, SWE-agent function calling
        "str_replace_based_edit_tool": _EDITOR,  # Anthropic text editor
        "text_editor": _EDITOR,
        # patches: the files come from the patch headers
        "apply_patch": _PATCH,
        "apply_diff": _PATCH,
        "patch": _PATCH,
    }
)
"""Tool name -> :class:`FileToolSpec` for the agents langctx is tested against.

Names are matched exactly, then lower-cased (``Read`` finds ``read``). ``ls``, ``glob`` and
``find_file`` list names, they read no file; ``grep`` (Claude Code ``Grep``) and SWE-agent's
``search_file`` read the file they name, never a directory or a pattern. The shell commands of
:data:`DEFAULT_COMMAND_TOOLS` (``cat x``, ``sed -i``, ``apply_patch <<EOF``) are parsed by
:func:`langctx.shell.parse_command`.
"""

DEFAULT_COMMAND_TOOLS: frozenset[str] = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "shell",
        "terminal",
        "powershell",
        "execute",
        "execute_bash",
        "execute_command",
        "execute_shell",
        "exec_command",
        "run_command",
        "run_shell_command",
        "run_terminal_cmd",
        "run_terminal_command",
        "run_in_terminal",
        "shell_command",
        "local_shell",
    }
)
"""Names of tools that run shell commands (matched exactly, then lower-cased)."""

_COMMAND_KEYS = ("command", "cmd", "commands", "script", "code")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh", "/bin/dash"})
_EXIT_KEYS = ("exit_code", "returncode", "exitCode", "return_code", "exit_status")

# --------------------------------------------------------------------------------------------
# Output scanning
# --------------------------------------------------------------------------------------------

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

# "exit code 1", "Exit code: 2", "[exit_code: 1]", "Command exited with code 1", "(exit status
# 1)", "returncode=1", "executed with exit code 0." -- but not code identifiers like `exitCode`.
_EXIT_CODE_RE = re.compile(
    r"<returncode>\s*(-?\d{1,6})\s*</returncode>"
    r"|\b(?:[Ee]xit(?:ed)?(?: with)?[ _](?:[Cc]ode|[Ss]tatus)|EXIT[ _]CODE|[Rr]eturn[ _]?[Cc]ode)"
    r"\b\s*(?:[:=]|is|was|of)?\s*[\[(]?(-?\d{1,6})\b"
)

# The output plainly reports a failure (only checked for command tools).
_FAILURE_PATTERN = (
    r"^Traceback \(most recent call last\):"
    r"|^(?:E\s+)?(?:[A-Za-z_][\w.]*)?(?:Error|Exception)(?::|$)"  # Error: x / ValueError: x
    r"|^(?:FAIL|FAILED|ERROR)\b"
    r"|\bFAILED\b"
    r"|^error(?:\[\w+\])?:"  # rustc, git, cargo
    r"|:\d+(?::\d+)?:\s*(?:fatal\s+)?error\b"  # gcc/clang/go: path:line:col: error
    r"|\berror TS\d+:"  # tsc
    r"|^(?:fatal|panic):|\bpanicked at\b"
    r"|^npm (?:ERR!|error\b)"
    r"|^g?make(?:\[\d+\])?: \*\*\*"
    r"|: command not found$"
    r"|^EXECUTION TIMED OUT|^(?:Command|Process|Execution) timed out\b|\btimed out after \d+"
)
_FAILURE_RE = re.compile(_FAILURE_PATTERN, re.M)

# A test run or build that failed, whatever the exit code says (a pipe to `tail` hides it).
_TEST_FAILURE_RE = re.compile(
    r"^Traceback \(most recent call last\):"
    r"|^(?:FAILED|FAIL)\b|^--- FAIL: "  # pytest short summary, go, jest
    r"|^=+ .*\b[1-9]\d* (?:failed|errors?)\b"  # pytest summary line
    r"|^[1-9]\d* failed\b|^\s*[1-9]\d* failing\s*$"  # pytest -q, mocha
    r"|^Tests?:.*\b[1-9]\d* failed\b"  # jest, vitest
    r"|^E\s+\w*(?:Error|Exception)\b"  # pytest assertion lines
    r"|^npm (?:ERR!|error)\s|^error\[E\d+\]|^error: (?:could not compile|test failed)"
    r"|test result: FAILED|\bpanicked at\b",
    re.M,
)

# A reading command that could not read (`cat: x: No such file or directory`).
_READ_ERROR_RE = re.compile(
    r"^[\w./-]+: .*(?:No such file or directory|Permission denied|Is a directory"
    r"|command not found|invalid option|unrecognized option)",
    re.M,
)

_NO_MATCH_PROGRAMS = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep", "diff", "cmp", "test", "[", "[["}
)
"""Programs whose exit code 1 is an answer (no line matched, the files differ, false)."""


def _no_match(exit_code: int | None, shell: ShellCommand | None) -> bool:
    """Exit 1 from the search or comparison whose status is the command's: an answer."""
    return exit_code == 1 and shell is not None and shell.status_program in _NO_MATCH_PROGRAMS


def _command_failed(exit_code: int | None, text: str, shell: ShellCommand | None) -> bool:
    """Whether a shell command failed, from its exit code, its output and its parsed form.

    * A non-zero exit fails, except 1 from a search or comparison whose status is the
      command's (``grep`` that matched nothing, ``diff`` of files that differ).
    * A command that only reads or lists (``cat``, ``grep``, ``sed -n``) prints file content:
      its output is never read as a failure, bar the reader's own error line.
    * A failing test run or build in the output fails whatever the exit code (a pipe to
      ``tail`` returns 0), and so do the broader error lines when the exit code is unknown or
      masked by a pipe or a list. A clean exit 0 is not overruled by shell noise.
    """
    if exit_code is not None and exit_code != 0:
        return not _no_match(exit_code, shell)
    if shell is not None and shell.inspects_only:
        return exit_code is None and _READ_ERROR_RE.search(text) is not None
    if _TEST_FAILURE_RE.search(text) is not None:
        return True
    if exit_code is None or (shell is not None and shell.status_masked):
        return _FAILURE_RE.search(text) is not None
    return False


# Lines kept from a failing output: the strong ones if any, else the weak ones, else the tail.
_STRONG_LINE_RE = re.compile(
    _FAILURE_PATTERN
    + r"|^[^\s:]+:\d+:\d+: "  # linters: path:line:col: CODE message
    + r"|No such file or directory|^E: "
    + r"|^=+ .*\b\d+ failed\b"  # pytest summary: names the count
    + r"|^E {3,}\S"  # pytest: the assertion that failed
    + r"|^[^\s:]+:\d+: \w*(?:Error|Exception)$"  # pytest: where it failed
    + r"|^--- FAIL: "  # go: names the test
    + r"|^\s*[×✗✘] \S"  # biome, ruff, cargo-style diagnostics marked with a cross
)
_WEAK_LINE_RE = re.compile(
    r"Error|Exception|[Ff]ailed|FAILED|\bFAIL\b|\berrors?\b|\bfatal\b|\bpanic"
)
_ANY_LINE_RE = re.compile(f"(?:{_STRONG_LINE_RE.pattern})|(?:{_WEAK_LINE_RE.pattern})")
_TRACEBACK_HEAD = "Traceback (most recent call last):"
_SCAN_HEAD = 100
_SCAN_TAIL = 400
"""Error lines are looked for in the first and last lines of very long outputs only."""
_TRACEBACK_FRAME_RE = re.compile(r'^\s+File "[^"]*", line \d+')
_KEYWORDS = (
    "error",
    "exception",
    "fail",
    "traceback",
    "fatal",
    "panic",
    "npm ",
    ": ***",
    "command not found",
    "timed out",
    "no such file",
    "\ne: ",
    "\ne   ",
    "×",
    "✗",
    "✘",
)
"""Substrings (lower case) one of which every line matching ``_ANY_LINE_RE`` contains (a leading
newline stands for the start of a line), unless it has a ``:line:col:`` position (``_POSITION_RE``)
or is the first line and starts with ``E:``."""
_POSITION_RE = re.compile(r":\d+:\d+: ")


def _text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                text = block.get("text")
                if isinstance(text, str):
                    parts.append(text)
        return "\n".join(parts)
    return ""


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _exit_code(message: ToolMessage, text: str) -> int | None:
    """The exit code of a command result: structured fields first, then an exit-code trailer."""
    for source in (message.artifact, message.additional_kwargs, message.response_metadata):
        if isinstance(source, Mapping):
            for key in _EXIT_KEYS:
                value = source.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
    # The trailer is usually the last line (pi, OpenHands) or the first (mini-swe-agent).
    tail_matches = list(_EXIT_CODE_RE.finditer(text[-_TAIL_CHARS:]))
    match = tail_matches[-1] if tail_matches else _EXIT_CODE_RE.search(text[:_HEAD_CHARS])
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def _candidate_lines(lines: list[str]) -> list[int]:
    """Indices of the lines that may match ``_ANY_LINE_RE``, in order (a superset, found fast).

    Every alternative of the strong and weak patterns needs one of ``_KEYWORDS`` (in any case),
    a ``:line:col:`` position, or ``E:`` at the start of a line; substring searches over the
    lower-cased text find those in C, so the regexes run on these lines only.
    """
    low = "\n".join(lines).lower()  # lower() may change lengths but never adds or drops a newline
    starts = [0]
    pos = low.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = low.find("\n", pos + 1)
    hits: set[int] = set()
    for keyword in _KEYWORDS:
        at_start = keyword.startswith("\n")  # the hit is the newline before the line
        pos = low.find(keyword)
        while pos != -1:
            line = bisect.bisect_right(starts, pos + at_start) - 1
            hits.add(line)
            # one hit per line is enough: go on from the next line
            pos = low.find(keyword, starts[line + 1] - at_start) if line + 1 < len(starts) else -1
    hits.update(bisect.bisect_right(starts, m.start()) - 1 for m in _POSITION_RE.finditer(low))
    if low.startswith(("e: ", "e   ")):
        hits.add(0)
    return sorted(hits)


@functools.lru_cache(maxsize=512)  # a failing output is read again when its turn is folded
def _error_lines(text: str) -> tuple[str, ...]:
    """Up to 8 error lines of a failing output (the first 3 and last 5 when there are more).

    Strong lines (exception lines, ``error:`` diagnostics, ``FAILED``, ``fatal:``, a traceback's
    last frame and exception) win over weak ones (any mention of error/failed), except the last
    weak line after every strong one (a tool's closing verdict, "Found 49 errors."), which is
    kept after them; with neither, the last three non-empty lines stand in.
    """
    strong: list[str] = []
    weak: list[str] = []
    last_frame: str | None = None
    in_traceback = False
    label_tier: list[str] | None = None  # the tier of a bare "ERROR:" label awaiting its text
    verdict: str | None = None  # the last weak line after the last strong one

    all_lines = text.splitlines()
    if len(all_lines) > _SCAN_HEAD + _SCAN_TAIL:  # bounded work: failures sit at the ends of logs
        all_lines = [*all_lines[:_SCAN_HEAD], "", *all_lines[-_SCAN_TAIL:]]
    candidates = _candidate_lines(all_lines)
    next_candidate = 0
    index = 0
    while True:
        # Between tracebacks and labels, only candidate lines can change anything: jump to them.
        if not in_traceback and label_tier is None:
            while next_candidate < len(candidates) and candidates[next_candidate] < index:
                next_candidate += 1
            if next_candidate == len(candidates):
                break
            index = candidates[next_candidate]
        if index >= len(all_lines):
            break
        line = all_lines[index].rstrip()
        index += 1
        stripped = line.strip()
        if not stripped:
            continue
        if label_tier is not None:
            label_tier.append(stripped)
            label_tier = None
            continue
        if in_traceback:
            if _TRACEBACK_FRAME_RE.match(line):
                last_frame = stripped
            elif not line[0].isspace():  # the exception line that ends the traceback
                if last_frame is not None:
                    strong.append(last_frame)
                strong.append(stripped)
                in_traceback = False
                last_frame = None
            continue
        if line.startswith(_TRACEBACK_HEAD):
            strong.append(stripped)
            in_traceback = True
            continue
        if not _ANY_LINE_RE.search(line):  # a keyword in passing (``test_errors.py``, ...)
            continue
        tier = strong if _STRONG_LINE_RE.search(line) else weak
        tier.append(stripped)
        verdict = None if tier is strong else stripped
        if stripped.endswith(":") and len(stripped) <= 20:
            label_tier = tier
    picked = strong or weak
    if strong and verdict is not None:  # the closing verdict ("Found 49 errors.") after them
        picked = [*strong, verdict]
    if not picked:
        picked = [line.strip() for line in text.splitlines() if line.strip()][-3:]
    unique = [_clip(line, _MAX_LINE_CHARS) for line in dict.fromkeys(picked)]
    if len(unique) > _MAX_ERROR_LINES:
        unique = unique[:3] + unique[-(_MAX_ERROR_LINES - 3) :]
    return tuple(unique)


# --------------------------------------------------------------------------------------------
# Argument helpers
# --------------------------------------------------------------------------------------------


def _normalise_path(value: object) -> str | None:
    """Strip whitespace and leading ``./``; ignore empty, non-string and multi-line values."""
    if not isinstance(value, str):
        return None
    path = value.strip()
    while path.startswith("./"):
        path = path[2:].lstrip()
    if not path or len(path) > _MAX_PATH_CHARS or "\n" in path:
        return None
    return path


def _path_values(value: object) -> Iterator[str]:
    if isinstance(value, str):
        path = _normalise_path(value)
        if path:
            yield path
    elif isinstance(value, list | tuple):
        for item in value:
            path = _normalise_path(item)
            if path:
                yield path


def _as_args(raw: object) -> dict[str, Any]:
    """Tool-call arguments as a dict: a JSON object string is decoded, other text is the
    ``input`` of a freeform tool, anything else is ``{}``."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            decoded = json.loads(raw)
        except ValueError:
            return {"input": raw}  # a freeform tool's text (Codex's custom apply_patch)
        if isinstance(decoded, dict):
            return decoded
    return {}


def _argv_command(argv: Sequence[str]) -> str:
    """``["bash", "-lc", "make test"]`` -> ``make test``; other argv lists are shell-joined."""
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-lc", "-ic", "-lic"):
        return argv[2]
    return shlex.join(argv)


def _command_text(args: Mapping[str, Any]) -> str | None:
    """The whole command of a shell call (``cmd``/``command`` string or argv list), unclipped."""
    for key in _COMMAND_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            command = value.strip()
        elif isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            command = "\n".join(value) if key == "commands" else _argv_command(value)
            command = command.strip()
        else:
            continue
        if command:
            return command
    return None


def _tool_calls(message: AIMessage) -> Iterator[tuple[str | None, str, dict[str, Any]]]:
    """(id, name, args) of each call; falls back to ``tool_use`` blocks in list content."""
    calls: Iterable[Any] = message.tool_calls or ()
    if not message.tool_calls and isinstance(message.content, list):
        calls = (
            {"id": b.get("id"), "name": b.get("name"), "args": b.get("input", b.get("args"))}
            for b in message.content
            if isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_call")
        )
    for call in calls:
        if not isinstance(call, Mapping):
            continue
        name = call.get("name")
        if not isinstance(name, str) or not name:
            continue
        call_id = call.get("id")
        yield (call_id if isinstance(call_id, str) else None), name, _as_args(call.get("args"))


# --------------------------------------------------------------------------------------------
# Extraction
# --------------------------------------------------------------------------------------------


def _runs_itself(name: str, args: Mapping[str, Any]) -> bool:
    """A tool named after the program its one ``command`` argument runs (SWE-agent's
    ``./rock`` with ``{"command": "./rock"}``, ``python`` with ``python solve.py``): a shell call.
    """
    if len(args) != 1:
        return False
    command = args.get("command", args.get("cmd"))
    if not isinstance(command, str):
        return False
    first = command.strip().split(maxsplit=1)
    return bool(first) and first[0] == name


class _Extraction:
    """One linear pass over a batch of messages."""

    __slots__ = (
        "_command_tools",
        "_file_tools",
        "_modified_seen",
        "_open_file",
        "_pending",
        "_read_seen",
        "commands",
        "errors",
        "modified_files",
    )

    def __init__(self, file_tools: Mapping[str, FileToolSpec], command_tools: frozenset[str]):
        self._file_tools = file_tools
        self._command_tools = command_tools
        self._open_file: str | None = None
        self._pending: dict[str, tuple[str, CommandFact | None, ShellCommand | None]] = {}
        self._read_seen: dict[str, None] = {}
        self._modified_seen: set[str] = set()
        self.modified_files: list[str] = []
        self.commands: list[CommandFact] = []
        self.errors: list[ErrorFact] = []

    def _spec(self, name: str) -> FileToolSpec | None:
        spec = self._file_tools.get(name)
        if spec is None and not name.islower():
            spec = self._file_tools.get(name.lower())
        return spec

    def _is_command_tool(self, name: str | None) -> bool:
        if not name:
            return False
        return name in self._command_tools or name.lower() in self._command_tools

    def on_ai(self, message: AIMessage) -> None:
        for call_id, name, args in _tool_calls(message):
            spec = self._spec(name)
            if spec is not None:
                self._files(name, spec, args)
            fact: CommandFact | None = None
            shell: ShellCommand | None = None
            if self._is_command_tool(name) or (
                spec is None and self._command_tools and _runs_itself(name, args)
            ):
                command = _command_text(args)
                if command is not None:
                    fact = CommandFact(
                        command=_clip(command, _MAX_COMMAND_CHARS),
                        exit_code=None,
                        ok=None,
                        message_id=message.id,
                    )
                    self.commands.append(fact)
                    shell = parse_command(command)
                    self._add("read", shell.read)
                    self._add("modified", shell.modified)
            if call_id is not None:
                self._pending[call_id] = (name, fact, shell)

    def _files(self, name: str, spec: FileToolSpec, args: dict[str, Any]) -> None:
        role = spec.role(args) if callable(spec.role) else spec.role
        if role is None:
            return
        if role not in ("read", "modified"):
            msg = (
                f"The role function of file tool {name!r} returned {role!r}; "
                "return 'read', 'modified' or None."
            )
            raise ConfigError(msg)
        paths: list[str] = []
        for key in spec.path_keys:
            paths.extend(_path_values(args.get(key)))
        if spec.paths is not None:
            for value in spec.paths(args):
                path = _normalise_path(value)
                if path:
                    paths.append(path)
        if not paths and spec.defaults_to_open_file and self._open_file is not None:
            paths.append(self._open_file)
        if spec.sets_open_file and paths:
            self._open_file = paths[0]
        self._add(role, paths)

    def _add(self, role: FileRole, paths: Iterable[str]) -> None:
        """Record paths: reads in order of their latest read, modifications of their first."""
        for path in dict.fromkeys(_normalise_path(raw) for raw in paths):  # once per call
            if not path:
                continue
            if role == "read":
                self._read_seen.pop(path, None)  # a read again moves to the end
                self._read_seen[path] = None
            elif path not in self._modified_seen:
                self._modified_seen.add(path)
                self.modified_files.append(path)

    @property
    def read_files(self) -> list[str]:
        return list(self._read_seen)

    def on_tool(self, message: ToolMessage) -> None:
        pending = self._pending.get(message.tool_call_id)
        name, fact, shell = pending if pending is not None else (message.name, None, None)
        is_command = fact is not None or (pending is None and self._is_command_tool(name))
        is_error = message.status == "error"
        if fact is not None:
            fact["message_id"] = message.id
        if not (is_command or is_error):
            return  # the fast path: a plain successful result is never scanned
        if message.additional_kwargs.get("synthetic") is True:
            return  # a placeholder for a result that was never recorded says nothing
        text = _text_of(message.content)
        if "\x1b" in text:
            text = _ANSI_RE.sub("", text)
        exit_code = _exit_code(message, text) if is_command else None
        # an error status that only mirrors a search's exit 1 (pi marks every non-zero exit)
        no_match = is_command and _no_match(exit_code, shell)
        failed = (is_error and not no_match) or (
            is_command and _command_failed(exit_code, text, shell)
        )
        if fact is not None:
            fact["exit_code"] = exit_code
            fact["ok"] = False if failed else (True if exit_code == 0 else None)
        if failed:
            self.errors.append(
                ErrorFact(
                    command=fact["command"] if fact is not None else None,
                    lines=list(_error_lines(text)),
                    message_id=message.id,
                )
            )


def _check_limit(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        msg = f"{name} must be an int >= 0, got {value!r}."
        raise ConfigError(msg)
    return value


def _check_tools(
    file_tools: Mapping[str, FileToolSpec], command_tools: Collection[str]
) -> frozenset[str]:
    if file_tools is not DEFAULT_FILE_TOOLS:
        if not isinstance(file_tools, Mapping):
            msg = f"file_tools must map tool names to FileToolSpec, got {type(file_tools)!r}."
            raise ConfigError(msg)
        for key, spec in file_tools.items():
            if not isinstance(spec, FileToolSpec):
                msg = (
                    f"file_tools[{key!r}] must be a FileToolSpec, got {spec!r}; "
                    f"write FileToolSpec(role='read') or FileToolSpec(role='modified')."
                )
                raise ConfigError(msg)
    if command_tools is DEFAULT_COMMAND_TOOLS:
        return DEFAULT_COMMAND_TOOLS
    if isinstance(command_tools, str):
        msg = (
            f"command_tools must be a collection of tool names, got the string "
            f"{command_tools!r}; write command_tools={{{command_tools!r}}}."
        )
        raise ConfigError(msg)
    return frozenset(command_tools)


def extract_facts(
    messages: Sequence[BaseMessage],
    *,
    file_tools: Mapping[str, FileToolSpec] = DEFAULT_FILE_TOOLS,
    command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS,
    max_commands: int = DEFAULT_MAX_COMMANDS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
) -> Facts:
    """Extract files read/modified, commands and errors from a batch of messages.

    Args:
        messages: The messages, in order. Human and system messages are skipped.
        file_tools: Tool name -> :class:`FileToolSpec`. Extend the defaults with
            ``{**DEFAULT_FILE_TOOLS, "my_tool": FileToolSpec(role="read")}``.
        command_tools: Names of tools that run shell commands.
        max_commands: Keep the most recent this many commands.
        max_errors: Keep the most recent this many errors.
        max_read_files: List the most recently read this many files (the rest are counted).

    Returns:
        A fresh :class:`Facts` dict.

    Raises:
        InvalidMessageError: An item is not a langchain-core message.
        ConfigError: An option is invalid, or a role callable returned something other than
            ``"read"``, ``"modified"`` or ``None``.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> calls = [
        ...     {"id": "c1", "name": "read_file", "args": {"path": "./app.py"}},
        ...     {"id": "c2", "name": "bash", "args": {"command": "pytest -q"}},
        ... ]
        >>> facts = extract_facts([
        ...     AIMessage("", tool_calls=calls),
        ...     ToolMessage("FAILED test_app.py::test_add\\nexit code 1", tool_call_id="c2"),
        ...     ToolMessage("def add(a, b): ...", tool_call_id="c1"),
        ... ])
        >>> facts["read_files"], facts["commands"][0]["exit_code"], facts["commands"][0]["ok"]
        (['app.py'], 1, False)
        >>> facts["errors"][0]["lines"]
        ['FAILED test_app.py::test_add']
    """
    command_set = _check_tools(file_tools, command_tools)
    max_commands = _check_limit("max_commands", max_commands)
    max_errors = _check_limit("max_errors", max_errors)
    max_read_files = _check_limit("max_read_files", max_read_files)
    if isinstance(messages, BaseMessage | str):
        msg = (
            "extract_facts() takes a sequence of messages, got a single "
            f"{type(messages).__name__}; wrap it in a list."
        )
        raise InvalidMessageError(msg)
    run = _Extraction(file_tools, command_set)
    for index, message in enumerate(messages):
        if isinstance(message, AIMessage):
            run.on_ai(message)
        elif isinstance(message, ToolMessage):
            run.on_tool(message)
        elif not isinstance(message, BaseMessage):
            msg = (
                f"messages[{index}] is a {type(message).__name__}, not a chat message; "
                "convert it with langchain_core.messages.convert_to_messages first."
            )
            raise InvalidMessageError(msg)
    facts = Facts(
        read_files=[],
        modified_files=run.modified_files,
        commands=run.commands[-max_commands:] if max_commands else [],
        errors=run.errors[-max_errors:] if max_errors else [],
    )
    _set_reads(facts, run.read_files, 0, max_read_files)
    return facts


def _set_reads(facts: Facts, reads: list[str], dropped: int, limit: int) -> None:
    """Keep the most recent reads within ``limit`` and the character cap; count the rest."""
    keep = 0
    chars = 0
    for path in reversed(reads):
        if keep >= limit or (keep and chars + len(path) > _MAX_READ_FILES_CHARS):
            break
        keep += 1
        chars += len(path)
    facts["read_files"] = reads[len(reads) - keep :] if keep else []
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
    order: dict[str, None] = {}
    for items in lists:
        for item in items:
            order.pop(item, None)
            order[item] = None
    return list(order)


def _union(lists: Iterable[Iterable[str]]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for items in lists:
        for item in items:
            if item not in seen:
                seen.add(item)
                out.append(item)
    return out


def merge_facts(
    *facts: Facts,
    max_commands: int = DEFAULT_MAX_COMMANDS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
) -> Facts:
    """Fold facts together, oldest first, into facts of bounded size.

    ``modified_files`` is an order-preserving union and is never cut. ``read_files`` is ordered
    by the latest read and keeps the most recent ``max_read_files``; the rest are added to
    ``read_files_dropped``. Commands and errors are concatenated and only the most recent
    ``max_commands`` / ``max_errors`` are kept. So merging facts over and over (summaries of
    summaries) never grows them past those caps, whatever the length of the session. The inputs
    are not modified, and a dict missing a key (an older persisted entry) counts as empty there.

    Args:
        *facts: The facts to merge, oldest first.
        max_commands: Keep the most recent this many commands.
        max_errors: Keep the most recent this many errors.
        max_read_files: List the most recently read this many files.

    Returns:
        A fresh :class:`Facts` dict.

    Example:
        >>> a = {**empty_facts(), "read_files": ["a.py", "b.py"], "modified_files": ["b.py"]}
        >>> b = {**empty_facts(), "read_files": ["c.py", "a.py"], "modified_files": ["d.py"]}
        >>> merged = merge_facts(a, b, max_read_files=2)
        >>> merged["read_files"], merged["read_files_dropped"], merged["modified_files"]
        (['c.py', 'a.py'], 1, ['b.py', 'd.py'])
    """
    max_commands = _check_limit("max_commands", max_commands)
    max_errors = _check_limit("max_errors", max_errors)
    max_read_files = _check_limit("max_read_files", max_read_files)
    commands = [CommandFact(**c) for f in facts for c in f.get("commands", ())]
    errors = [
        ErrorFact(command=e["command"], lines=list(e["lines"]), message_id=e["message_id"])
        for f in facts
        for e in f.get("errors", ())
    ]
    merged = Facts(
        read_files=[],
        modified_files=_union(f.get("modified_files", ()) for f in facts),
        commands=commands[-max_commands:] if max_commands else [],
        errors=errors[-max_errors:] if max_errors else [],
    )
    dropped = sum(_count(f.get("read_files_dropped")) for f in facts)
    _set_reads(merged, _latest(f.get("read_files", ()) for f in facts), dropped, max_read_files)
    return merged


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0
