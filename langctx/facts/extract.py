"""Facts from the structure of agent messages (never prose): files, commands run, errors seen.

A call counts when it is made, whatever its result; results match calls by ``tool_call_id``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langctx.errors import ConfigError, InvalidMessageError
from langctx.facts.calls import (
    clip,
    command_text,
    normalise_path,
    path_values,
    runs_itself,
    text_of,
    tool_calls,
)
from langctx.facts.failures import (
    ANSI_RE,
    command_exit_code,
    command_failed,
    error_lines,
    is_no_match,
)
from langctx.facts.record import (
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_COMMANDS,
    DEFAULT_MAX_ERRORS,
    DEFAULT_MAX_READ_FILES,
    MAX_COMMAND_FACT_CHARS,
    CommandFact,
    ErrorFact,
    Facts,
    ToolCallFact,
    check_limit,
    merge_read_facts,
)
from langctx.facts.results import call_arguments, reads_as_error, result_line
from langctx.facts.runners import summary_lines
from langctx.facts.shell_parse import ShellCommand, parse_command
from langctx.facts.tools import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    FileRole,
    FileToolSpec,
    command_tool_set,
    file_tool_spec,
    infer_command_tool,
    infer_file_tool,
    is_command_tool,
)


@dataclass(frozen=True, slots=True)
class FileTouch:
    """One file a tool call read or modified, by the rules of :func:`extract_facts`."""

    call_id: str | None
    name: str
    role: FileRole
    path: str
    args: Mapping[str, Any]
    shell: ShellCommand | None
    """The parsed command when a shell command touched the file."""


class _Extraction:
    """One linear pass over a batch of messages."""

    def __init__(self, file_tools: Mapping[str, FileToolSpec], command_tools: frozenset[str]):
        self._file_tools = file_tools
        self._command_tools = command_tools
        # the inference rules apply while the tables hold the defaults (as they are, or extended)
        self._infer_files = DEFAULT_FILE_TOOLS.keys() <= file_tools.keys()
        self._infer_commands = command_tools >= DEFAULT_COMMAND_TOOLS
        self._open_file: str | None = None
        self._pending: dict[str, tuple[CommandFact | None, ShellCommand | None]] = {}
        self.read_files: dict[str, None] = {}  # in order of the latest read
        self.modified_files: dict[str, None] = {}  # in order of the first modification
        self.commands: list[CommandFact] = []
        self.errors: list[ErrorFact] = []
        self.calls: list[ToolCallFact] = []
        self._other: dict[str, ToolCallFact] = {}  # the other tools' calls awaiting a result
        self.touches: list[FileTouch] = []  # every (call, role, path), in order
        self._call: tuple[str | None, str, dict[str, Any], ShellCommand | None] = (
            None,
            "",
            {},
            None,
        )

    def on_ai(self, message: AIMessage) -> None:
        for call_id, name, args in tool_calls(message):
            self._call = (call_id, name, args, None)
            spec = file_tool_spec(name, self._file_tools)
            is_command = is_command_tool(name, self._command_tools)
            if spec is None and not is_command and self._infer_files:
                spec = infer_file_tool(name, args)
            if spec is not None:
                self._files(name, spec, args)
            elif not is_command and self._command_tools:
                is_command = runs_itself(name, args) or (
                    self._infer_commands and infer_command_tool(name, args)
                )
            fact: CommandFact | None = None
            shell: ShellCommand | None = None
            command = command_text(args) if is_command else None
            if command is not None:
                fact = CommandFact(
                    command=clip(command, MAX_COMMAND_FACT_CHARS),
                    exit_code=None,
                    ok=None,
                    message_id=message.id,
                )
                self.commands.append(fact)
                shell = parse_command(command)
                self._call = (call_id, name, args, shell)
                self._add("read", shell.read)
                self._add("modified", shell.modified)
            if call_id is not None:
                self._pending[call_id] = (fact, shell)
            if spec is None and not is_command:  # no file, no command: said by its own line
                self._other_call(call_id, name, args, message.id)

    def _other_call(
        self, call_id: str | None, name: str, args: dict[str, Any], message_id: str | None
    ) -> None:
        call = ToolCallFact(
            name=clip(name, 120),
            args=call_arguments(args),
            result="",
            ok=None,
            message_id=message_id,
        )
        self.calls.append(call)
        if call_id is not None:
            self._other[call_id] = call

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
        paths = [path for key in spec.path_keys for path in path_values(args.get(key))]
        if spec.paths is not None:
            paths.extend(path for value in spec.paths(args) if (path := normalise_path(value)))
        if not paths and spec.defaults_to_open_file and self._open_file is not None:
            paths.append(self._open_file)
        if spec.sets_open_file and paths:
            self._open_file = paths[0]
        self._add(role, paths)

    def _add(self, role: FileRole, paths: Iterable[str]) -> None:
        for path in dict.fromkeys(normalise_path(raw) for raw in paths):  # once per call
            if not path:
                continue
            call_id, name, args, shell = self._call
            self.touches.append(FileTouch(call_id, name, role, path, args, shell))
            if role == "read":
                self.read_files.pop(path, None)  # a read again moves to the end
                self.read_files[path] = None
            else:
                self.modified_files.setdefault(path, None)

    def on_tool(self, message: ToolMessage) -> None:
        pending = self._pending.get(message.tool_call_id)
        fact, shell = pending if pending is not None else (None, None)
        is_command = fact is not None or (
            pending is None and is_command_tool(message.name, self._command_tools)
        )
        is_error = message.status == "error"
        if (call := self._other.pop(message.tool_call_id, None)) is not None:
            self._result(call, message, is_error)
        if fact is not None:
            fact["message_id"] = message.id
        # a plain successful result is never scanned; a placeholder (never recorded) says nothing
        if not (is_command or is_error) or message.additional_kwargs.get("synthetic") is True:
            return
        text = text_of(message.content)
        if "\x1b" in text:
            text = ANSI_RE.sub("", text)
        exit_code = command_exit_code(message, text) if is_command else None
        # an error status that only mirrors a search's exit 1 (pi marks every non-zero exit)
        no_match = is_command and is_no_match(exit_code, shell)
        # a command's known exit code decides over the error status its tool may set
        failed = (is_error and not no_match and exit_code is None) or (
            is_command and command_failed(exit_code, text, shell)
        )
        if fact is not None:
            fact["exit_code"] = exit_code
            fact["ok"] = False if failed else (True if exit_code == 0 else None)
        if failed:
            error = ErrorFact(
                command=fact["command"] if fact is not None else None,
                lines=list(error_lines(text)),
                message_id=message.id,
            )
            if summary := summary_lines(text):
                error["summary_lines"] = list(summary)
            self.errors.append(error)

    @staticmethod
    def _result(call: ToolCallFact, message: ToolMessage, is_error: bool) -> None:
        """``call``'s one-line result and whether it failed (a placeholder says nothing)."""
        call["message_id"] = message.id
        if message.additional_kwargs.get("synthetic") is True:
            return
        text = text_of(message.content)
        if "\x1b" in text:
            text = ANSI_RE.sub("", text)
        failed = is_error or reads_as_error(text)
        call["ok"] = not failed
        call["result"] = result_line(text, failed=failed)


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
    return command_tool_set(command_tools)


def extract_facts(
    messages: Sequence[BaseMessage],
    *,
    file_tools: Mapping[str, FileToolSpec] = DEFAULT_FILE_TOOLS,
    command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS,
    max_commands: int = DEFAULT_MAX_COMMANDS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    max_read_files: int = DEFAULT_MAX_READ_FILES,
    max_calls: int = DEFAULT_MAX_CALLS,
) -> Facts:
    """Extract files read/modified, commands, errors and the other tools' calls (each with its
    one-line result) from a batch of messages.

    Args:
        messages: The messages, in order. Human and system messages are skipped.
        file_tools: Tool name -> spec; extend with ``{**DEFAULT_FILE_TOOLS, ...}`` (a table
            that replaces the defaults turns off :func:`infer_file_tool`, as for commands).

    Raises:
        InvalidMessageError: An item is not a langchain-core message.
        ConfigError: An option is invalid, or a role callable returned no role.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> calls = [{"id": "c1", "name": "read_file", "args": {"path": "./app.py"}},
        ...     {"id": "c2", "name": "bash", "args": {"command": "pytest -q"}}]
        >>> facts = extract_facts([AIMessage("", tool_calls=calls),
        ...     ToolMessage("FAILED test_app.py::test_add\\nexit code 1", tool_call_id="c2")])
        >>> facts["read_files"], facts["commands"][0]["exit_code"], facts["errors"][0]["lines"]
        (['app.py'], 1, ['FAILED test_app.py::test_add'])
    """
    command_set = _check_tools(file_tools, command_tools)
    max_commands = check_limit("max_commands", max_commands)
    max_errors = check_limit("max_errors", max_errors)
    max_read_files = check_limit("max_read_files", max_read_files)
    max_calls = check_limit("max_calls", max_calls)
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
    extracted = {"read_files": list(run.read_files), "modified_files": list(run.modified_files)}
    return merge_read_facts(
        {**extracted, "commands": run.commands, "errors": run.errors, "calls": run.calls},
        max_commands=max_commands,
        max_errors=max_errors,
        max_read_files=max_read_files,
        max_calls=max_calls,
    )


def file_touches(
    messages: Iterable[BaseMessage],
    *,
    file_tools: Mapping[str, FileToolSpec] = DEFAULT_FILE_TOOLS,
    command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS,
) -> list[FileTouch]:
    """Every file each tool call of the AI ``messages`` reads or modifies, in order, by the
    rules of :func:`extract_facts` (one call may touch several files).

    Example:
        >>> call = {"id": "c1", "name": "bash", "args": {"command": "cat a.py > b.py"}}
        >>> [(t.call_id, t.role, t.path) for t in file_touches([AIMessage("", tool_calls=[call])])]
        [('c1', 'read', 'a.py'), ('c1', 'modified', 'b.py')]
    """
    run = _Extraction(file_tools, _check_tools(file_tools, command_tools))
    for message in messages:
        if isinstance(message, AIMessage):
            run.on_ai(message)
    return run.touches
