"""What a tool call says: its name, arguments, command text and paths; the text of a result.

Example:
    >>> command_text({"cmd": ["bash", "-lc", "make test"]}), normalise_path(" ./src/a.py ")
    ('make test', 'src/a.py')
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage

from langctx.facts.shell_parse import SHELLS
from langctx.facts.tool_names import normalize_tool_name

COMMAND_KEYS = tuple(
    "command cmd commands command_line commandLine cmdline script argv code".split()
)
"""Argument keys that hold a command, in the order they are looked up."""
MAX_PATH_CHARS = 4096  # a longer path is no path (ignored, or corrupt when stored)


def text_of(content: Any) -> str:
    """The text of a message content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (b.get("text") if isinstance(b, Mapping) else b for b in content)
        return "\n".join(text for text in texts if isinstance(text, str))
    return ""


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def normalise_path(value: object) -> str | None:
    """Strip whitespace and leading ``./``; None for empty, non-string and multi-line values."""
    if not isinstance(value, str):
        return None
    path = value.strip()
    while path.startswith("./"):
        path = path[2:].lstrip()
    if not path or len(path) > MAX_PATH_CHARS or "\n" in path:
        return None
    return path


def path_values(value: object) -> Iterator[str]:
    """The normalised paths of an argument holding a path or a list of paths."""
    values = [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else ()
    yield from filter(None, map(normalise_path, values))


def _as_args(raw: object) -> dict[str, Any]:
    """Tool-call arguments as a dict: a JSON object string decoded, other text as ``input``."""
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
    shell_c = len(argv) >= 3 and argv[1] in ("-c", "-lc", "-ic", "-lic")
    return argv[2] if shell_c and posixpath.basename(argv[0]) in SHELLS else shlex.join(argv)


def command_text(args: Mapping[str, Any], keys: Sequence[str] = COMMAND_KEYS) -> str | None:
    """The whole command (a string or an argv list) in the first of ``keys`` that holds one."""
    for key in keys:
        value = args.get(key)
        if isinstance(value, list | tuple) and value and all(isinstance(v, str) for v in value):
            value = "\n".join(value) if key == "commands" else _argv_command(value)
        if isinstance(value, str) and (command := value.strip()):
            return command
    return None


def tool_calls(message: AIMessage) -> Iterator[tuple[str | None, str, dict[str, Any]]]:
    """(id, name, args) of each call; falls back to ``tool_use`` blocks in list content."""
    calls: Iterable[Any] = message.tool_calls or ()
    if not message.tool_calls and isinstance(message.content, list):
        calls = (
            {"id": b.get("id"), "name": b.get("name"), "args": b.get("input", b.get("args"))}
            for b in message.content
            if isinstance(b, Mapping) and b.get("type") in ("tool_use", "tool_call")
        )
    for call in calls:
        name = call.get("name") if isinstance(call, Mapping) else None
        if isinstance(name, str) and name:
            call_id = call.get("id")
            yield (call_id if isinstance(call_id, str) else None), name, _as_args(call.get("args"))


def runs_itself(name: str, args: Mapping[str, Any]) -> bool:
    """A tool named after the program its one ``command`` argument runs: a shell call."""
    command = args.get("command", args.get("cmd"))
    words = command.split(maxsplit=1) if len(args) == 1 and isinstance(command, str) else []
    if not words:
        return False
    return words[0] == name or normalize_tool_name(words[0]) == normalize_tool_name(name) != ""
