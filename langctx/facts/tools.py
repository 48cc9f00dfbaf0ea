"""Which tools touch files and which run commands: the default tables and rules for the rest."""

from __future__ import annotations

import functools
import shlex
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from langctx.errors import ConfigError
from langctx.facts.calls import COMMAND_KEYS, command_text, path_values
from langctx.facts.shell_programs import patch_text_paths
from langctx.facts.shell_words import looks_like_file
from langctx.facts.tool_names import tool_name_forms, tool_name_words

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
        >>> extract_facts([AIMessage("", tool_calls=[call])], file_tools={"peek": spec})["read_files"]
        ['a.py']
    """

    role: FileRole | RoleFunc
    """``"read"``, ``"modified"``, or a callable of the arguments returning one of them or None."""
    path_keys: tuple[str, ...] = DEFAULT_PATH_KEYS
    """Argument keys holding a path or a list of paths; every key present contributes."""
    paths: PathsFunc | None = None
    """Optional callable of the arguments yielding more paths (patch text, ``open a.py 120``)."""
    sets_open_file: bool = False
    """The (first) path this call names becomes the agent's open file (SWE-agent ``open``)."""
    defaults_to_open_file: bool = False
    """A call naming no path acts on the open file set earlier in the batch (SWE-agent ``edit``)."""

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
    **dict.fromkeys(("create", "write", "str_replace", "insert", "undo_edit"), "modified"),
}  # write: Goose's text_editor


def _editor_role(args: Mapping[str, Any]) -> FileRole | None:
    """Role of a text editor call (Anthropic, OpenHands), chosen by its ``command``."""
    command = args.get("command")
    return _EDITOR_ROLES.get(command) if isinstance(command, str) else None


def _action_words(args: dict[str, Any]) -> list[str]:
    """The words of the first line of a text action held in ``command`` (``open src/app.py 120``)."""
    command = args.get("command")
    if not isinstance(command, str):
        return []
    first_line = command.strip().split("\n", 1)[0]
    try:
        return shlex.split(first_line)
    except ValueError:  # an unclosed quote: the first line's words as they stand
        return first_line.split()


def _text_action_path(args: dict[str, Any]) -> Iterable[str]:
    """The first argument of a text action (``open src/app.py 120``)."""
    return _action_words(args)[1:2]


def _patch_paths(args: Mapping[str, Any]) -> Iterable[str]:
    """Files named by patch text in any argument (Codex ``*** Update File: x``, unified diffs)."""
    found: list[str] = []
    for value in args.values():
        texts = [value]
        if isinstance(value, Mapping):  # OpenAI apply_patch: {"operation": {"path": ..., ...}}
            if isinstance(inner := value.get("path"), str):
                found.append(inner)
            texts = list(value.values())
        found.extend(
            path for text in texts if isinstance(text, str) for path in patch_text_paths(text)
        )
    return found


def _with_camel_case(keys: Iterable[str]) -> tuple[str, ...]:
    """Each key, then its camelCase form (``file_path``, ``filePath``), each once."""
    forms: list[str] = []
    for key in keys:
        first, *rest = key.split("_")
        forms += [key, first + "".join(word.capitalize() for word in rest)]
    return tuple(dict.fromkeys(forms))


# paths: Gemini's read_many_files, MCP's read_multiple_files; target_file: Cursor, Kiro;
# absolute_path: Gemini CLI; filepath: Continue; notebook_path: Claude Code; relative_path: Serena
_EXTRA_PATH_KEYS = "paths file_paths target_file absolute_path filepath notebook_path relative_path"
_MORE_PATH_KEYS = _with_camel_case((*DEFAULT_PATH_KEYS, *_EXTRA_PATH_KEYS.split(), "target_path"))

_spec = functools.partial(FileToolSpec, path_keys=_MORE_PATH_KEYS)
_READ = _spec(role="read")
_MODIFIED = _spec(role="modified")
_EDITOR = _spec(role=_editor_role)
_PATCH = _spec(role="modified", paths=_patch_paths)


def _searched_file(args: dict[str, Any]) -> Iterable[str]:
    """The ``path`` of a search tool when it names one file (``Grep``), not a directory."""
    path = args.get("path")
    if isinstance(path, str) and looks_like_file(path) and not any(c in path for c in "*?[{"):
        return (path,)
    return ()


def _search_file_action(args: dict[str, Any]) -> Iterable[str]:
    """SWE-agent ``search_file <term> [<file>]``: the file, when one is named."""
    words = _action_words(args)
    if len(words) >= 3:
        return words[2:3]
    for key in ("file", "file_name", "path"):
        value = args.get(key)
        if isinstance(value, str) and looks_like_file(value):
            return (value,)
    return ()


_DESTINATION_KEYS = _with_camel_case(("destination", "destination_path", "new_path", "to_path"))
_SOURCE_KEYS = _with_camel_case(("source", "source_path", "old_path", "from_path"))
_COPY = FileToolSpec(role="modified", path_keys=_DESTINATION_KEYS)
_SEARCH = FileToolSpec(role="read", path_keys=(), paths=_searched_file)

DEFAULT_FILE_TOOLS: Mapping[str, FileToolSpec] = MappingProxyType(
    {
        # pi, SWE-agent, aider, Claude Code, Gemini CLI, LangChain, Cline/Roo, Continue
        **dict.fromkeys(
            "read view cat read_file read_text_file read_media_file read_many_files "
            "read_multiple_files open_file view_file".split(),
            _READ,
        ),
        **dict.fromkeys(
            "write multiedit notebookedit write_file edit_file create_file delete_file "
            "file_delete remove_file append_to_file write_to_file replace_in_file replace "
            "insert_content search_and_replace create_new_file edit_existing_file".split(),
            _MODIFIED,
        ),
        # SWE-agent: open/create name a path in text or arguments; edit/insert the open file
        "open": _spec(role="read", paths=_text_action_path, sets_open_file=True),
        "create": _spec(role="modified", paths=_text_action_path, sets_open_file=True),
        **dict.fromkeys(("edit", "insert"), _spec(role="modified", defaults_to_open_file=True)),
        "move_file": FileToolSpec(role="modified", path_keys=(*_SOURCE_KEYS, *_DESTINATION_KEYS)),
        "copy_file": _COPY,
        # searches: a read of the one file they name
        "grep": _SEARCH,
        "search_file": FileToolSpec(role="read", path_keys=(), paths=_search_file_action),
        # editors whose ``command`` argument chooses the role (OpenHands, SWE-agent, Anthropic)
        **dict.fromkeys(
            ("str_replace_editor", "str_replace_based_edit_tool", "text_editor"), _EDITOR
        ),
        **dict.fromkeys(("apply_patch", "apply_diff", "patch"), _PATCH),
    }
)
"""Tool name -> :class:`FileToolSpec` for the agents langctx is tested against."""

DEFAULT_COMMAND_TOOLS: frozenset[str] = frozenset(
    "bash sh zsh shell terminal powershell execute execute_bash execute_command "
    "execute_shell exec_command run_command run_shell_command run_terminal_cmd "
    "run_terminal_command run_in_terminal shell_command local_shell".split()
)
"""Names of tools that run shell commands (looked up like :data:`DEFAULT_FILE_TOOLS`)."""


def file_tool_spec(
    name: str | None, file_tools: Mapping[str, FileToolSpec] = DEFAULT_FILE_TOOLS
) -> FileToolSpec | None:
    """The spec of the first spelling of ``name`` (:func:`tool_name_forms`) in ``file_tools``.

    Example:
        >>> file_tool_spec("readFile") is DEFAULT_FILE_TOOLS["read_file"], file_tool_spec("fetch")
        (True, None)
    """
    specs = (file_tools.get(form) for form in tool_name_forms(name)) if name else ()
    return next((spec for spec in specs if spec is not None), None)


def is_command_tool(
    name: str | None, command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS
) -> bool:
    """Whether a spelling of ``name`` (``mcp__shell__RunCommand``) is one of ``command_tools``.

    Example:
        >>> is_command_tool("Bash"), is_command_tool("developer__shell"), is_command_tool("read_file")
        (True, True, False)
    """
    return any(form in command_tools for form in tool_name_forms(name)) if name else False


_READ_VERBS = frozenset(
    "read view open cat show load peek preview display inspect head tail".split()
)
_WRITE_VERBS = frozenset(
    "write edit create replace patch insert delete remove rm unlink append prepend modify "
    "update save overwrite truncate put apply undo move rename copy".split()
)
_EDITOR_WORDS = _READ_VERBS | _WRITE_VERBS | {"editor", "file", "files", "text"}
_NOT_FILE_WORDS = frozenset(
    "directory directories dir dirs folder folders url urls uri web page browser".split()
)
_PATCH_VERBS = frozenset({"patch", "diff", "apply"})
_ANY_PATH_KEYS = (*_MORE_PATH_KEYS, *_SOURCE_KEYS, *_DESTINATION_KEYS)
_MOVE_ANY = FileToolSpec(role="modified", path_keys=_ANY_PATH_KEYS)


def _names_path(args: Mapping[str, Any], keys: Iterable[str]) -> bool:
    return any(next(path_values(args.get(key)), None) is not None for key in keys)


def infer_file_tool(name: str | None, args: Mapping[str, Any]) -> FileToolSpec | None:
    """The spec of a file tool in no table, from its name's words and its arguments, or ``None``.

    The rules are in docs/memory.md (``file_tools``); a write verb beats a read verb.

    Example:
        >>> infer_file_tool("mcp__fs__fsWrite", {"path": "a.py"}).role, infer_file_tool("ReadSource", {"path": "a.py"}).role
        ('modified', 'read')
        >>> infer_file_tool("create_issue", {"title": "x"}), infer_file_tool("create_directory", {"path": "d"})
        (None, None)
    """
    words = set(tool_name_words(name)) if name else set()
    if not words or words & _NOT_FILE_WORDS:
        return None
    writes = words & _WRITE_VERBS
    if writes and words & _PATCH_VERBS and _patch_paths(args):
        return _PATCH
    if not _names_path(args, _ANY_PATH_KEYS):
        return None
    if words & _EDITOR_WORDS and _editor_role(args) is not None:
        return _EDITOR
    if words & {"move", "rename"}:
        return _MOVE_ANY
    if "copy" in words:
        return _COPY if _names_path(args, _DESTINATION_KEYS) else None
    if writes:
        return _MODIFIED if _names_path(args, _MORE_PATH_KEYS) else None
    if words & _READ_VERBS:
        return _READ if _names_path(args, _MORE_PATH_KEYS) else None
    if words & {"grep", "search"}:
        return _SEARCH
    return None


_SHELL_WORDS = frozenset(
    "bash sh zsh ksh dash fish shell terminal exec execute command commands cmd powershell "
    "pwsh console process subprocess".split()
)
_NOT_SHELL_WORDS = frozenset("slash sql query python ipython jupyter notebook browser".split())
_SHELL_COMMAND_KEYS = tuple(k for k in COMMAND_KEYS if k != "code")  # code: any language


def infer_command_tool(name: str | None, args: Mapping[str, Any]) -> bool:
    """Whether a tool in no table runs a shell command: a shell word in its name, no word of
    another language (sql, python, ...), and a command-like argument holding a command.

    Example:
        >>> infer_command_tool("start_process", {"command": "make"}), infer_command_tool("SlashCommand", {"command": "/review"})
        (True, False)
    """
    words = set(tool_name_words(name)) if name else set()
    if not words & _SHELL_WORDS or words & _NOT_SHELL_WORDS:
        return False
    return command_text(args, keys=_SHELL_COMMAND_KEYS) is not None


def command_tool_set(command_tools: Collection[str]) -> frozenset[str]:
    """``command_tools`` as a frozenset of tool names, checked (one string is a mistake)."""
    if command_tools is DEFAULT_COMMAND_TOOLS:
        return DEFAULT_COMMAND_TOOLS
    if isinstance(command_tools, str):
        msg = (
            f"command_tools must be a collection of tool names, got the string "
            f"{command_tools!r}; write command_tools={{{command_tools!r}}}."
        )
        raise ConfigError(msg)
    return frozenset(command_tools)
