"""Mechanical facts: what tool calls did (files, commands, errors, the other tools' calls and
their results) and what tool outputs state.

Example:
    >>> from langchain_core.messages import AIMessage
    >>> call = {"id": "c1", "name": "bash", "args": {"command": "sed -i 's/a/b/' app.py"}}
    >>> extract_facts([AIMessage("", tool_calls=[call])])["modified_files"]
    ['app.py']
"""

from langctx.facts.extract import FileTouch, extract_facts, file_touches
from langctx.facts.failures import EXIT_CODE_RE, find_exit_code
from langctx.facts.output import (
    DURATION_RE,
    ERROR_NAME_RE,
    LOCATION_RE,
    OutputFacts,
    extract_output_facts,
    find_duration,
    missing_output_facts,
    short_location,
)
from langctx.facts.record import (
    DEFAULT_MAX_CALLS,
    DEFAULT_MAX_COMMANDS,
    DEFAULT_MAX_ERRORS,
    DEFAULT_MAX_READ_FILES,
    CommandFact,
    ErrorFact,
    Facts,
    ToolCallFact,
    empty_facts,
    merge_facts,
)
from langctx.facts.runners import is_summary_line, summary_lines
from langctx.facts.shell_parse import MAX_COMMAND_CHARS, ShellCommand, parse_command
from langctx.facts.shell_programs import patch_text_paths
from langctx.facts.shell_words import looks_like_file
from langctx.facts.tool_names import normalize_tool_name, tool_name_words
from langctx.facts.tools import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    DEFAULT_PATH_KEYS,
    FileRole,
    FileToolSpec,
    file_tool_spec,
    infer_command_tool,
    infer_file_tool,
    is_command_tool,
)

__all__ = [
    "DEFAULT_COMMAND_TOOLS",
    "DEFAULT_FILE_TOOLS",
    "DEFAULT_MAX_CALLS",
    "DEFAULT_MAX_COMMANDS",
    "DEFAULT_MAX_ERRORS",
    "DEFAULT_MAX_READ_FILES",
    "DEFAULT_PATH_KEYS",
    "DURATION_RE",
    "ERROR_NAME_RE",
    "EXIT_CODE_RE",
    "LOCATION_RE",
    "MAX_COMMAND_CHARS",
    "CommandFact",
    "ErrorFact",
    "Facts",
    "FileRole",
    "FileToolSpec",
    "FileTouch",
    "OutputFacts",
    "ShellCommand",
    "ToolCallFact",
    "empty_facts",
    "extract_facts",
    "extract_output_facts",
    "file_tool_spec",
    "file_touches",
    "find_duration",
    "find_exit_code",
    "infer_command_tool",
    "infer_file_tool",
    "is_command_tool",
    "is_summary_line",
    "looks_like_file",
    "merge_facts",
    "missing_output_facts",
    "normalize_tool_name",
    "parse_command",
    "patch_text_paths",
    "short_location",
    "summary_lines",
    "tool_name_words",
]
