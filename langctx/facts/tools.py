"""Which tools touch files and which run commands: :class:`FileToolSpec` and the default tables."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from langctx.errors import ConfigError
from langctx.facts.shell_programs import patch_text_paths
from langctx.facts.shell_words import looks_like_file

__all__ = [
    "DEFAULT_COMMAND_TOOLS",
    "DEFAULT_FILE_TOOLS",
    "DEFAULT_PATH_KEYS",
    "FileRole",
    "FileToolSpec",
    "command_tool_set",
    "is_command_tool",
]

FileRole = Literal["read", "modified"]
"""What a file tool call does to the files it names."""

DEFAULT_PATH_KEYS: tuple[str, ...] = ("path", "file_path", "filename", "file")
"""Argument keys that hold a path (or a list of paths) when a spec names none."""


RoleFunc = Callable[[dict[str, Any]], FileRole | None]
PathsFunc = Callable[[dict[str, Any]], Iterable[str]]


@dataclass(frozen=True, slots=True, kw_only=True)
class FileToolSpec:
    """How to read file paths out of one tool's call arguments.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> from langctx.facts import extract_facts
        >>> spec = FileToolSpec(role="read", path_keys=("target",))
        >>> call = {"id": "1", "name": "peek", "args": {"target": "a.py"}}
        >>> facts = extract_facts([AIMessage("", tool_calls=[call])], file_tools={"peek": spec})
        >>> facts["read_files"]
        ['a.py']
    """

    role: FileRole | RoleFunc
    """``"read"``, ``"modified"``, or a callable that gets the call's arguments and returns one
    of those, or ``None`` when the call touches no file."""

    path_keys: tuple[str, ...] = DEFAULT_PATH_KEYS
    """Argument keys holding a path or a list of paths; every key present contributes."""

    paths: PathsFunc | None = None
    """Optional extra extractor: gets the call's arguments and yields more paths (patch text,
    SWE-agent's ``open src/app.py 120``)."""

    sets_open_file: bool = False
    """The (first) path this call names becomes the agent's open file (SWE-agent ``open``)."""

    defaults_to_open_file: bool = False
    """A call that names no path acts on the open file set earlier in the same batch (SWE-agent
    ``edit``, which takes line numbers, not a path)."""

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
``find_file`` list names, they read no file; searches read the one file they name, never a
directory or a pattern.
"""

DEFAULT_COMMAND_TOOLS: frozenset[str] = frozenset(
    (
        "bash sh zsh shell terminal powershell execute execute_bash execute_command "
        "execute_shell exec_command run_command run_shell_command run_terminal_cmd "
        "run_terminal_command run_in_terminal shell_command local_shell"
    ).split()
)
"""Names of tools that run shell commands (matched exactly, then lower-cased)."""


def is_command_tool(
    name: str | None, command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS
) -> bool:
    """Whether ``name`` is one of ``command_tools``, matched exactly, then lower-cased.

    Example:
        >>> is_command_tool("Bash"), is_command_tool("read_file")
        (True, False)
    """
    if not name:
        return False
    return name in command_tools or name.lower() in command_tools


def command_tool_set(command_tools: Collection[str]) -> frozenset[str]:
    """``command_tools`` as a frozenset of tool names, checked (one string is a mistake).

    Example:
        >>> sorted(command_tool_set(["bash", "runner"]))
        ['bash', 'runner']
    """
    if command_tools is DEFAULT_COMMAND_TOOLS:
        return DEFAULT_COMMAND_TOOLS
    if isinstance(command_tools, str):
        msg = (
            f"command_tools must be a collection of tool names, got the string "
            f"{command_tools!r}; write command_tools={{{command_tools!r}}}."
        )
        raise ConfigError(msg)
    return frozenset(command_tools)
