"""Ground truth for the replay's amnesia probes, read from the raw session with its own parser.

Nothing here uses langctx's own fact extraction (``langctx.facts``, ``langctx.summarize``,
``langctx.machinery``) or the memory: the probes check the memory, so their truth must not come
from it. :class:`Truth` is fed the session's messages in order and knows the facts at any point
(task, constraints, files modified, latest failure, next step, the user's messages so far, which
:mod:`langctx.cli.replay.users` reads from the raw session file); :func:`probe_request` checks
one request against them.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> t = Truth()
    >>> for m in [HumanMessage("Fix the parser. Never edit tests/."),
    ...           AIMessage("", tool_calls=[{"id": "c", "name": "bash",
    ...                                    "args": {"command": "sed -i s/a/b/ src/p.py"}}]),
    ...           ToolMessage("ok", tool_call_id="c")]:
    ...     t.add(m)
    >>> t.modified, t.constraints
    (['src/p.py'], ['Never edit tests/'])
    >>> r = probe_request(t, [HumanMessage("Fix the parser. Never edit tests/.")])
    >>> r["task"].held, r["files_modified"].held, r["files_modified"].missing
    (True, False, ('src/p.py',))
    >>> r["latest_user_message"].held, r["earlier_user_messages"].held
    (True, None)
"""

from __future__ import annotations

import bisect
import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langctx.cli.replay.request_status import (
    KnownRequest,
    StatusGrade,
    answered_requests,
    ends_turn,
    grade,
    parse_section,
)

__all__ = [
    "PROBES",
    "Failure",
    "ProbeResult",
    "Request",
    "Truth",
    "UserMessage",
    "command_args",
    "common_root",
    "error_lines",
    "is_failure",
    "is_informative_step",
    "is_local_output",
    "modified_paths",
    "not_typed",
    "position_of",
    "probe_request",
    "request_status",
    "session_roots",
    "user_pieces",
    "user_text",
]

PROBES: tuple[str, ...] = (
    "task",
    "constraints",
    "files_modified",
    "latest_failure",
    "next_step",
    "latest_user_message",
    "earlier_user_messages",
    "request_status",
)
"""The amnesia probes, in report order (``latest_user_message`` and ``earlier_user_messages``
check the user's own messages, ``request_status`` the status the summary block shows for each)."""

OPENING_CHARS = 60
"""Characters of an earlier user message a request must hold (``earlier_user_messages``)."""

# ------------------------------------------------------------------------------------ text


_AGENT_TAGS = (  # what Codex CLI and Claude Code wrap around text the user did not type
    "environment_context",
    "user_instructions",
    "user_shell_command",
    "turn_aborted",
    "permissions",
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
    "task-notification",
    "teammate-message",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "INSTRUCTIONS",
)
_TAG_NAMES = "|".join(map(re.escape, _AGENT_TAGS))
_OPENER = re.compile(r"<(" + _TAG_NAMES + r")(?:\s[^<>]*)?>")
_CLOSER = re.compile(r"</(" + _TAG_NAMES + r")>")
_ARGS_OPENER = re.compile(r"<(command-args)>")
_ARGS_CLOSER = re.compile(r"</(command-args)>")
_LOCAL_OUTPUT = re.compile(r"<local-command-(?:stdout|stderr)>")
_INTERRUPTED = re.compile(r"\[Request interrupted by user[^\]\n]{0,200}\]")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
_INJECTED = re.compile(
    r"^\s*(?:Contents of \S+\.md\b|# claudeMd\b|# AGENTS\.md\b|Base directory for this skill:"
    r"|(?:Subagent)?Stop hook feedback:)"
)
_CHAT_MODES = ("/ask ", "/code ", "/architect ")
_NOT_TYPED = ("is_demo", "command_output", "is_meta")
_NOT_TYPED_SOURCES = ("aider_console", "user_bash_execution", "environment_error")
_CUT = "\x00"


_LABEL = re.compile(r"^m?(\d+)(?:\.\d+)?$")


def position_of(message_id: str | None) -> int | None:
    """The source position in a replay message id (``<name>:<line>[.<k>]``, ``<name>:m<index>``),
    or None (no id, or a label such as ``system``)."""
    if not message_id or ":" not in message_id:
        return None
    m = _LABEL.match(message_id.rsplit(":", 1)[1])
    return int(m.group(1)) if m else None


def not_typed(extra: Mapping[str, Any] | None) -> bool:
    """Whether a message's ``additional_kwargs`` say the recording marked it as not typed by the
    user (a demonstration, console output, a Claude Code ``isMeta`` line, ...)."""
    extra = extra or {}
    return any(extra.get(k) for k in _NOT_TYPED) or extra.get("source") in _NOT_TYPED_SOURCES


def user_pieces(content: Any) -> list[str]:
    """The spans of ``content`` (a string or content blocks) the user typed, by this module's rule.

    A slash command's ``<command-args>`` (Claude Code: what the user asked after ``/name``) come
    first; then, per text block, what is left between the machinery elements (whitespace kept).
    See :func:`user_text`.
    """
    blocks = [content] if isinstance(content, str) else list(content or [])
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Mapping) and block.get("type") not in (None, "text", "input_text"):
            continue  # images, tool results
        text = block if isinstance(block, str) else _content_text([block])
        if not text or _INJECTED.match(text):
            continue
        text = _ANSI.sub("", text)
        out += command_args(text)
        cut = [text[a:b] for a, b in _gaps(text, _elements(text, _OPENER, _CLOSER))]
        text = _INTERRUPTED.sub(_CUT, _CUT.join(cut))
        lines = [ln for ln in text.splitlines() if not ln.strip(" \t" + _CUT).startswith("Caveat:")]
        pieces = [p.strip() for p in "\n".join(lines).split(_CUT)]
        pieces = [p for p in pieces if p]
        if pieces and pieces[0].startswith("/"):
            mode = next((m for m in _CHAT_MODES if pieces[0].startswith(m)), None)
            pieces = [pieces[0][len(mode) :].strip(), *pieces[1:]] if mode else []
        out += [p for p in pieces if p]
    return out


def user_text(message: BaseMessage) -> str:
    """What the user typed in a human message, by this module's own rule (not langctx's).

    Drops the complete elements of the tags agents wrap their machinery in (Codex CLI's and
    Claude Code's, listed here, not taken from langctx), ANSI codes, caveat lines and interrupt
    markers, text blocks that are injected instruction files, skill bodies or hook feedback, and
    slash commands (a chat-mode prefix such as ``/ask `` is dropped, the question kept). A Claude
    Code command's ``<command-args>`` are kept: they are what the user asked (whether the command
    ran in the terminal instead, :class:`Truth` tells from the output that follows it). Messages
    the recording marks as not typed (``additional_kwargs``: a demonstration, console output,
    ``is_meta``) have none.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> user_text(HumanMessage("<environment_context><cwd>/r</cwd></environment_context>Fix it"))
        'Fix it'
        >>> user_text(HumanMessage("/mode")), user_text(HumanMessage("/ask why does it fail?"))
        ('', 'why does it fail?')
        >>> user_text(HumanMessage("<command-name>/fix</command-name><command-args>issue 12</command-args>"))
        'issue 12'
    """
    if not_typed(message.additional_kwargs):
        return ""
    return "\n".join(user_pieces(message.content))


def command_args(text: str) -> list[str]:
    """The non-blank ``<command-args>`` of the slash commands in ``text`` (Claude Code).

    Example:
        >>> command_args("<command-name>/fix</command-name><command-args> issue 12 </command-args>")
        ['issue 12']
    """
    text = _ANSI.sub("", text)
    inner = [text[i:j] for _, i, j, _ in _elements(text, _ARGS_OPENER, _ARGS_CLOSER)]
    return [a.strip() for a in inner if a.strip()]


def _elements(
    text: str, opener: re.Pattern[str], closer: re.Pattern[str]
) -> list[tuple[int, int, int, int]]:
    """The complete elements in ``text``, left to right and not overlapping, as ``(start,
    inner start, inner end, end)``: each opener to the first closer of its name after it, as
    ``<(name)>.*?</\\1>`` would match, in one scan (the regex reads to the end of the text from
    each opener that has no closer: quadratic)."""
    closers: dict[str, list[tuple[int, int]]] = {}
    for m in closer.finditer(text):
        closers.setdefault(m.group(1), []).append((m.start(), m.end()))
    out: list[tuple[int, int, int, int]] = []
    pos = 0
    for m in opener.finditer(text):
        if m.start() < pos:
            continue
        found = closers.get(m.group(1), [])
        k = bisect.bisect_left(found, (m.end(), -1))
        if k < len(found):
            out.append((m.start(), m.end(), found[k][0], found[k][1]))
            pos = found[k][1]
    return out


def _gaps(text: str, elements: list[tuple[int, int, int, int]]) -> list[tuple[int, int]]:
    """The spans of ``text`` between ``elements``."""
    edges = [0, *(x for start, _, _, end in elements for x in (start, end)), len(text)]
    return list(zip(edges[::2], edges[1::2], strict=True))


def is_local_output(text: str) -> bool:
    """``text`` holds Claude Code's ``<local-command-stdout>`` / ``-stderr``: the command just
    before it ran in the terminal, so its arguments were settings, not a request."""
    return bool(_LOCAL_OUTPUT.search(text))


def _norm(text: str) -> str:
    return " ".join(text.split())


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                for key in ("text", "thinking", "content"):
                    value = block.get(key)
                    if isinstance(value, str):
                        parts.append(value)
                        break
        return "\n".join(parts)
    return "" if content is None else str(content)


def _strings(value: Any) -> Iterable[str]:
    """Every string inside a JSON value (tool-call arguments), depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)
    elif value is not None:
        yield json.dumps(value)


# ------------------------------------------------------------------------------------ paths

_PATH_CHARS = r"\w.\-/\\~+@%"
_READ_TOOLS = frozenset(
    {"read", "read_file", "view", "open", "cat", "glob", "grep", "ls", "find_file", "search_file"}
)
_WRITE_TOOLS = frozenset(
    {
        "edit",
        "write",
        "multiedit",
        "notebookedit",
        "write_file",
        "edit_file",
        "create_file",
        "replace",
        "insert",
        "create",
        "file_write",
        "str_replace",
        "file_editor",
    }
)
_EDITOR_TOOLS = frozenset({"str_replace_editor", "str_replace_based_edit_tool", "file_editor"})
_EDITOR_WRITES = frozenset({"create", "str_replace", "insert", "undo_edit", "write"})
_PATH_KEYS = ("file_path", "path", "filename", "notebook_path", "target_file", "file", "filepath")
_PATCH_RE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.M)
"""A patch's file line; the name is the rest of the line cut by :func:`_patch_name`."""


def _patch_name(rest: str) -> str:
    """``rest`` without trailing spaces (its first character when all spaces): ``(.+?)\\s*$``
    read the same, trying the end of the line from every character (quadratic on spaces)."""
    return rest.rstrip() or rest[:1]


_DIFF_RE = re.compile(r"^\+\+\+ (?:b/)?(\S+)", re.M)


def _clean(path: str) -> str | None:
    p = path.strip().strip("'\"`")
    if not p or p in ("-", "/dev/null", "/dev/stdout", "/dev/stderr") or p.startswith("&"):
        return None
    if any(c in p for c in "$*?{}<>|") or p.startswith("-"):
        return None
    while p.startswith("./"):
        p = p[2:]
    p = re.sub(r"/{2,}", "/", p)
    return p or None


def _shell_script(args: Mapping[str, Any]) -> str | None:
    cmd = args.get("command", args.get("cmd", args.get("script")))
    if isinstance(cmd, list):
        words = [str(w) for w in cmd]
        if (
            len(words) >= 3
            and words[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and words[1]
            in (
                "-lc",
                "-c",
            )
        ):
            return words[2]
        return " ".join(shlex.quote(w) for w in words)
    return cmd if isinstance(cmd, str) else None


def _words(line: str) -> list[str]:
    lex = shlex.shlex(line, posix=True, punctuation_chars=";&|<>()")
    lex.whitespace_split = True
    try:
        return list(lex)
    except ValueError:  # unbalanced quotes: fall back to whitespace
        return line.split()


def _commands(words: list[str]) -> Iterable[list[str]]:
    current: list[str] = []
    for w in words:
        if w and set(w) <= set(";&|()"):
            if current:
                yield current
            current = []
        else:
            current.append(w)
    if current:
        yield current


def _shell_writes(script: str) -> list[str]:
    """Files a shell script writes: redirects, tee, sed -i, mv/cp targets, rm, touch, patches."""
    out: list[str] = []
    heredoc = re.search(r"<<-?\s*['\"]?(\w+)['\"]?", script)
    head, body = script, ""
    if heredoc:  # a heredoc body is data, not commands (but may be a patch)
        start = script.find("\n", heredoc.end())
        if start != -1:
            head, body = script[:start], script[start + 1 :]
    out += [_patch_name(m.group(1) or m.group(2)) for m in _PATCH_RE.finditer(body or script)]
    cwd: str | None = None
    for line in head.splitlines():
        for words in _commands(_words(line)):
            if words[0] == "cd" and len(words) == 2:
                target = words[1]
                cwd = target if target.startswith("/") or cwd is None else f"{cwd}/{target}"
                cwd = posixpath.normpath(cwd) if cwd.startswith("/") else None
                continue
            found = len(out)
            plain: list[str] = []
            i = 0
            while i < len(words):
                w = words[i]
                if w in (">", ">>", ">|") and i + 1 < len(words):
                    if not (plain and plain[-1].isdigit() and plain[-1] != "1"):
                        out.append(words[i + 1])
                    elif plain:
                        plain.pop()  # 2> err.log: not a file the task writes
                    i += 2
                    continue
                if w in ("<", "<<", ">&", "<&", "&>", "&>>") and i + 1 < len(words):
                    i += 2
                    continue
                plain.append(w)
                i += 1
            while plain and re.match(r"^\w+=", plain[0]):
                plain = plain[1:]  # VAR=value prefixes
            if not plain:
                continue
            cmd, rest = plain[0].rsplit("/", 1)[-1], plain[1:]
            if cmd == "sed" and any(w.startswith("-i") for w in rest):
                out += _sed_files(rest)
            elif cmd == "perl" and any(re.match(r"^-\w*i", w) for w in rest):
                out += [w for w in rest if not w.startswith("-")][1:]
            else:
                operands = [w for w in rest if not w.startswith("-")]
                recursive = any(re.match(r"^-\w*[rR]", w) or w == "--recursive" for w in rest)
                if cmd == "rm" and recursive:
                    out += [w for w in operands if _names_file(w)]
                elif cmd == "tee" or cmd in ("rm", "touch", "truncate", "unlink"):
                    out += operands
                elif cmd in ("mv", "cp", "install") and len(operands) >= 2:
                    *sources, dest = operands
                    if len(sources) > 1 or dest.endswith("/") or dest == ".":
                        out += [  # a directory moved whole (`mv tools core/`) is not a file
                            posixpath.join(dest, posixpath.basename(x))
                            for x in sources
                            if _names_file(x)
                        ]
                    else:
                        out.append(dest)
            if cwd is not None:  # relative to the directory this script cd'ed into
                out[found:] = [
                    p if p.startswith(("/", "~")) else posixpath.normpath(f"{cwd}/{p}")
                    for p in out[found:]
                ]
    return out


def _names_whole(args: Mapping[str, Any], path: str) -> bool:
    """True when the call's arguments hold ``path`` as written (not only its parts)."""
    return any(path in text for text in _strings(args))


_EXTENSIONLESS_FILES = frozenset(
    {"Makefile", "Dockerfile", "LICENSE", "README", "Procfile", "Gemfile", "Rakefile", "Justfile"}
)


def _names_file(path: str) -> bool:
    """A path whose last part has an extension (or is a well-known file name): not a directory."""
    name = posixpath.basename(path.rstrip("/"))
    return not path.endswith("/") and ("." in name.strip(".") or name in _EXTENSIONLESS_FILES)


def _sed_files(args: list[str]) -> list[str]:
    """The file operands of ``sed -i``: what is left after options and the script."""
    files: list[str] = []
    script_given = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-e", "-f", "--expression", "--file"):
            script_given = True
            i += 2
            continue
        if a == "-i" and i + 1 < len(args) and args[i + 1] == "":
            i += 2  # BSD sed: -i ''
            continue
        if a.startswith("-"):
            i += 1
            continue
        files.append(a)
        i += 1
    return files if script_given else files[1:]


def modified_paths(name: str, args: Mapping[str, Any], open_file: str | None = None) -> list[str]:
    """Files a tool call modifies, read from its name and arguments only.

    Example:
        >>> modified_paths("Edit", {"file_path": "/r/a.py", "old_string": "x"})
        ['/r/a.py']
        >>> modified_paths("shell", {"command": ["bash", "-lc", "echo hi > out.txt && tee -a log.md"]})
        ['out.txt', 'log.md']
        >>> modified_paths("edit", {"command": "edit 3:4\\nx = 1\\nend_of_edit"}, open_file="m.py")
        ['m.py']
    """
    low = name.lower()
    raw: list[str] = []
    if low in _EDITOR_TOOLS:
        if str(args.get("command", "")) in _EDITOR_WRITES:
            raw += [str(args[k]) for k in _PATH_KEYS if isinstance(args.get(k), str)][:1]
    elif low == "apply_patch" or ("patch" in args and isinstance(args.get("patch"), str)):
        text = "\n".join(_strings(args))
        raw += [_patch_name(m.group(1) or m.group(2)) for m in _PATCH_RE.finditer(text)]
        raw += _DIFF_RE.findall(text) if not raw else []
    elif low in _WRITE_TOOLS and any(isinstance(args.get(k), str) for k in _PATH_KEYS):
        raw += [str(args[k]) for k in _PATH_KEYS if isinstance(args.get(k), str)][:1]
    elif low in _WRITE_TOOLS or low in ("open", "rm"):
        command = args.get("command")
        words = command.split("\n", 1)[0].split() if isinstance(command, str) else []
        verb = words[0] if words else low
        if verb in ("create", "rm") and len(words) > 1:
            raw += words[1:]
        elif verb in ("edit", "insert", "append") and open_file:
            raw.append(open_file)
        elif low in ("edit", "insert") and open_file and not words:
            raw.append(open_file)
    else:
        script = _shell_script(args)
        if script is not None:
            raw += _shell_writes(script)
    out: list[str] = []
    for r in raw:
        p = _clean(r)
        if p is not None and p not in out:
            out.append(p)
    return out


def _opened(name: str, args: Mapping[str, Any]) -> str | None:
    """The file an SWE-agent style ``open``/``create`` makes current (edits go to it)."""
    command = args.get("command")
    words = command.split("\n", 1)[0].split() if isinstance(command, str) else []
    if words and words[0] in ("open", "create") and len(words) > 1:
        return _clean(words[1])
    if name.lower() in ("open", "create"):
        for key in ("path", "filename", "file"):
            if isinstance(args.get(key), str):
                return _clean(str(args[key]))
    return None


def common_root(paths: Iterable[str]) -> str | None:
    """The deepest directory holding every absolute path, or None (fewer than two / only ``/``).

    Example:
        >>> common_root(["/r/app/a.py", "/r/app/sub/b.py", "rel.py"])
        '/r/app'
    """
    dirs = [posixpath.dirname(p) for p in paths if p.startswith("/")]
    if not dirs:
        return None
    root = posixpath.commonpath(dirs) if len(dirs) > 1 else dirs[0]
    return root if root not in ("/", "") else None


def session_roots(messages: Sequence[BaseMessage], cwd: str | None = None) -> tuple[str, ...]:
    """The roots relative paths are read against: the session's cwd and the common root of every
    absolute path its tool calls name (``path``-like arguments and ``cd`` targets)."""
    paths: list[str] = []
    for m in messages:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                args = tc.get("args") or {}
                paths += [str(args[k]) for k in _PATH_KEYS if isinstance(args.get(k), str)]
                script = _shell_script(args)
                if script:
                    paths += [p + "/" for p in re.findall(r"\bcd\s+(/[^\s;&|]+)", script)]
    roots: list[str] = []
    if cwd:
        roots.append(cwd.rstrip("/"))
    root = common_root(paths)
    if root and root not in roots:
        roots.append(root)
    return tuple(roots)


def _path_forms(path: str, roots: Sequence[str]) -> list[str]:
    """``path`` whole: as given, and a relative one also joined to each root (never shortened)."""
    if path.startswith("/"):
        return [path]
    return list(dict.fromkeys([path, *(f"{root}/{path}" for root in roots)]))


def _has_path(hay: str, path: str, roots: Sequence[str]) -> bool:
    for form in _path_forms(path, roots):
        start = 0
        while (i := hay.find(form, start)) != -1:
            start = i + 1
            before = hay[i - 1] if i else " "
            after = hay[i + len(form) : i + len(form) + 2]
            if re.match(f"[{_PATH_CHARS}]", before):
                continue
            if after[:1] and (re.match(r"[\w\-/\\]", after[:1]) or re.match(r"\.\w", after)):
                continue
            return True
    return False


# ------------------------------------------------------------------------------------ failures

_EXIT_RE = re.compile(
    r"(?i)(?:exit(?:ed)?\s+(?:with\s+)?(?:code|status)|exit\s+code|exit_code|returncode|"
    r"process exited with code)\s*[:=]?\s*(-?\d+)"
)
_TEST_FAIL_RE = re.compile(
    r"(?m)Traceback \(most recent call last\)|^FAILED\b|\b\d+ failed\b|^FAIL[: ]|^ERROR:|"
    r"\berror TS\d+|^npm ERR!|^error(?:\[\w+\])?:|^fatal:|^panic:|\bTIMED OUT\b|\btimed out\b"
)
_ERROR_LINE_RE = re.compile(
    r"(?i)(?:^|\s)[\w.]*(?:error|exception)(?:\[\w+\])?:|\b(?:\d+|some|an?) errors?\b"
    r"|^(?:FAILED|FAIL|E|ERROR|fatal:|panic:|npm ERR!|npm error|[×✗✘])\s|\bfailed\b|\bno such file\b|"
    r"\bcommand not found\b|\bpermission denied\b|\bnot found\b|\bcannot\b|\bunable to\b|"
    r"\bcould not\b|\btimed out\b"
    r"|^\s*[\w.]+(?:Error|Exception|Interrupt|Exit)\b"
    r"|^[\w./\\-]+:\d+(?::\d+)?:\s*\S"  # a diagnostic: path:line[:col]: message (compilers, linters)
    r"|\b(?:error|warning) [A-Z]{1,4}\d+:"  # a coded diagnostic: tsc's TS2304, C#'s CS0103, MSVC's C2065
    r"|^[\w./\\-]+\(\d+(?:,\d+)?\):\s*\S"  # path(line[,col]): message (tsc, MSBuild)
)
_NOTE_RE = re.compile(r"^\[[^\]\n]*\]$")
"""A lone bracketed note (``[no tool result recorded ...]``): a recording gap, not an error."""
_TRAILER_RE = re.compile(r"(?i)^\W*(?:command )?(?:exited|finished) with (?:exit )?code \d+\W*$")


@dataclass(frozen=True, slots=True)
class Failure:
    """A failing tool result: where it is, the command, and its error lines (normalized)."""

    index: int
    """Position of the tool result in the session (0-based)."""
    command: str
    """The call's name and arguments, short."""
    lines: tuple[str, ...]
    """Up to three error lines, in output order (the probe needs one of them)."""


_ANSWER_ON_ONE = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "cmp", "test", "["}
)
"""Programs whose exit status 1 is an answer (POSIX ``grep``: no line selected; ``diff``/``cmp``:
the files differ; ``test``: false), not a failure."""


def _status_program(script: str | None) -> str | None:
    """The program whose exit status a shell script returns: the last simple command's first word."""
    if not script:
        return None
    last = list(_commands(_words(script.strip().splitlines()[-1] if script.strip() else "")))
    if not last:
        return None
    words = [w for w in last[-1] if "=" not in w.split("/", 1)[0]]  # `LC_ALL=C grep`
    if words[:1] == ["git"] and words[1:2] == ["grep"]:
        return "grep"
    return posixpath.basename(words[0]) if words else None


def is_failure(
    output: str, *, status: str | None = None, tool: str = "", script: str | None = None
) -> bool:
    """Whether a tool result reports a failure: a non-zero exit code (bar exit 1 of a search or a
    comparison, ``script``'s last program), ``status="error"`` (unless the output is only a
    bracketed recording note, or that exit 1), or (for tools that do not just read a file) a
    traceback or a test/compiler failure.

    Example:
        >>> is_failure("1 passed"), is_failure("x\\nCommand exited with code 2")
        (False, True)
        >>> is_failure("(no output)\\nCommand exited with code 1", status="error", script="grep -n x a.ts")
        False
    """
    codes = [int(c) for c in _EXIT_RE.findall(output)]
    if codes:
        return codes[-1] != 0 and not (codes[-1] == 1 and _status_program(script) in _ANSWER_ON_ONE)
    if status == "error":
        return not _NOTE_RE.match(output.strip())
    return tool.lower() not in _READ_TOOLS and bool(_TEST_FAIL_RE.search(output))


def error_lines(output: str, limit: int = 3) -> tuple[str, ...]:
    """The last ``limit`` lines that read as errors, whitespace-normalized; else the last line.

    Example:
        >>> error_lines("ok\\nTraceback (most recent call last):\\n  x\\nValueError: bad  value\\n")
        ('ValueError: bad value',)
    """
    lines = [_norm(ln) for ln in output.splitlines()]
    lines = [ln for ln in lines if ln and not _TRAILER_RE.match(ln)]
    hits = [ln for ln in lines if _ERROR_LINE_RE.search(ln) and not ln.startswith("Traceback")]
    if hits:
        return tuple(dict.fromkeys(reversed(hits)))[:limit][::-1]
    return tuple(lines[-1:])


# ------------------------------------------------------------------------------------ sentences

_CONSTRAINT_RE = re.compile(
    r"(?i)\b(?:must(?:n't| not)?|never|do not|don't|dont|does not|doesn't|only|always|"
    r"should(?:n't| not)|make sure|ensure|avoid|no need to|cannot|can't|without|required?)\b"
)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(\[])|\n+")
_BULLET_RE = re.compile(r"^\s*(?:[-*+>•]|\d+[.)])\s+")
_LEAD_RE = re.compile(
    r"(?i)^(?:(?:ok(?:ay)?|now|great|good|perfect|first|then|next|finally|so)[,!.]?\s+)*"
    r"(?:let me|let's|let us|i'll|i will|i'm going to|i am going to|i need to|now i(?:'ll| will)|"
    r"next(?: step)?(?: is)?[:,]?|the next step is(?: to)?|the plan is to|my next step is(?: to)?)"
    r"\s+(?P<rest>.+)$"
)
_TARGET_RE = re.compile(
    r"`[^`]+`|\"[^\"]{2,}\"|'[^']{2,}'|(?<!\S)\S+/\S+|\b\w+\.[A-Za-z]{1,5}\b|\b\w+_\w+\b|\b\w+\(\)|"
    r"\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b"
)
_STOP = frozenset(
    "the a an and or to of in on at for with from into this that these those it its them their "
    "now first then again also just some more any all other relevant file files code codebase "
    "look check see take quick closer start begin continue understand what how where which there "
    "here let me you your our out up about over can will would could should need".split()
)


def _sentences(text: str) -> list[str]:
    out = []
    for raw in _SENTENCE_SPLIT.split(text):
        s = _norm(_BULLET_RE.sub("", raw)).rstrip(" .!?:;,")
        if s:
            out.append(s)
    return out


def is_informative_step(sentence: str) -> bool:
    """Whether a sentence states a concrete next step (see the module docstring).

    Example:
        >>> is_informative_step("Let me read the relevant files:")
        False
        >>> is_informative_step("Let me fix `parse_header` in src/http.py")
        True
        >>> is_informative_step("Next, I will rerun the failing integration tests with verbose logs")
        True
    """
    m = _LEAD_RE.match(_norm(sentence))
    if not m:
        return False
    rest = m.group("rest")
    if _TARGET_RE.search(rest):
        return True
    words = [w.lower() for w in re.findall(r"[A-Za-z][\w-]{2,}", rest)]
    return sum(1 for w in words if w not in _STOP) >= 4


# ------------------------------------------------------------------------------------ truth


@dataclass(frozen=True, slots=True)
class UserMessage:
    """One real user message: where the session has it and the spans the user typed.

    Example:
        >>> u = UserMessage.of(3, ["Fix  the parser.", "Keep 3.9 support."])
        >>> u.text, u.opening
        ('Fix the parser. Keep 3.9 support.', 'Fix the parser.')
    """

    position: int
    """Where the session file has it: a JSONL line (1-based), a message's index in a JSON
    document, or its index in a list of messages."""
    pieces: tuple[str, ...]
    """The spans the user typed, whitespace-normalized, in order (machinery between them left
    out); never empty."""

    @classmethod
    def of(cls, position: int, pieces: Iterable[str]) -> UserMessage | None:
        """A user message from raw spans, or None when no span has text."""
        kept = tuple(p for p in (_norm(x) for x in pieces) if p)
        return cls(position, kept) if kept else None

    @property
    def text(self) -> str:
        """The spans joined by a space."""
        return " ".join(self.pieces)

    @property
    def opening(self) -> str:
        """The first :data:`OPENING_CHARS` characters of the first span."""
        return self.pieces[0][:OPENING_CHARS]


class Truth:
    """The facts of a session up to the last message added (:meth:`add`).

    Args:
        roots: directories relative paths are read against (:func:`session_roots`).
        users: the session's real user messages read from its raw file
            (:func:`langctx.cli.replay.users.read_user_messages`); :meth:`reach` then says how
            far the session has got. Without it the user messages are the human messages added,
            by :func:`user_text`.
    """

    def __init__(
        self, roots: Sequence[str] = (), users: Sequence[UserMessage] | None = None
    ) -> None:
        self.roots = tuple(roots)
        self._heard = tuple(sorted(users, key=lambda u: u.position)) if users is not None else None
        self.users: list[UserMessage] = []
        """The real user messages so far, oldest first."""
        self._command: tuple[int, int, int] | None = None
        self.task: str | None = None
        """Normalized text of the task (first substantive human message)."""
        self.task_index: int | None = None
        self.constraints: list[str] = []
        self.modified: list[str] = []
        self.modified_by: dict[str, list[str]] = {}
        """For a modified path its call's arguments do not name whole: those arguments."""
        self.failure: Failure | None = None
        """The latest failing tool result."""
        self.failures: list[Failure] = []
        """Every failing tool result so far, in order."""
        self.next_step: str | None = None
        self.added = 0
        self._calls: dict[str, tuple[str, Mapping[str, Any]]] = {}
        self._open: str | None = None
        self.answers: list[int] = []
        """Where the AI messages that ended the agent's turn are (:func:`ends_turn`), in order:
        source positions (:func:`position_of`) with raw ``users``, else indices of :meth:`add`."""
        self._human_at: dict[str, int] = {}

    def where(self, message: BaseMessage) -> int | None:
        """Where a message added before is, as :attr:`UserMessage.position` counts: its source
        position with raw ``users``, else the index at which :meth:`add` took a human message."""
        if self._heard is not None:
            return position_of(message.id)
        return self._human_at.get(str(message.id)) if message.id is not None else None

    def reach(self, position: int | None) -> None:
        """With raw ``users``: the session has got to ``position`` (the source position of the
        model call about to be made); the user messages before it are the ones so far. None:
        every one (the end of the session)."""
        if self._heard is not None:
            self.users = [u for u in self._heard if position is None or u.position < position]

    def add(self, message: BaseMessage) -> None:
        """Take one message of the session, in order."""
        index = self.added
        self.added += 1
        self._place(message, index)
        if isinstance(message, HumanMessage):
            raw = _content_text(message.content)
            if is_local_output(raw) and self._command is not None:
                self._retract(*self._command)  # that command ran in the terminal
            self._command = None
            pieces = [] if not_typed(message.additional_kwargs) else user_pieces(message.content)
            text = "\n".join(pieces)
            if pieces and command_args(raw):
                self._command = (index, len(self.constraints), len(self.users))
            if self.task is None and _norm(text):
                self.task, self.task_index = _norm(text), index
            for s in _sentences(text):
                if 8 <= len(s) <= 400 and _CONSTRAINT_RE.search(s) and s not in self.constraints:
                    self.constraints.append(s)
            user = UserMessage.of(index, pieces) if self._heard is None else None
            if user is not None:
                self.users.append(user)
        elif isinstance(message, AIMessage):
            self._command = None
            for s in _sentences(_content_text(message.content)):
                if is_informative_step(s):
                    self.next_step = s
            for tc in message.tool_calls:
                name, args = str(tc.get("name") or ""), tc.get("args") or {}
                self._calls[str(tc.get("id"))] = (name, args)
                paths = modified_paths(name, args, self._open)
                for p in paths:
                    if p not in self.modified:
                        self.modified.append(p)
                    if not _names_whole(args, p):  # `cd src && mv a.ts utils/`: no whole path
                        self.modified_by.setdefault(p, []).append(_norm(" ".join(_strings(args))))
                self._open = _opened(name, args) or self._open
        elif isinstance(message, ToolMessage):
            self._command = None
            name, call_args = self._calls.get(str(message.tool_call_id), ("", {}))
            output = _content_text(message.content)
            if is_failure(
                output, status=message.status, tool=name, script=_shell_script(call_args)
            ):
                lines = error_lines(output)
                if lines:
                    shown = _norm(f"{name} {' '.join(_strings(call_args))}")[:200]
                    self.failure = Failure(index=index, command=shown, lines=lines)
                    self.failures.append(self.failure)

    def _place(self, message: BaseMessage, index: int) -> None:
        """Note where a human message is (:meth:`where`) and where the agent ended its turn."""
        if isinstance(message, HumanMessage) and message.id is not None:
            self._human_at[str(message.id)] = index
        elif ends_turn(message):
            at = index if self._heard is None else position_of(message.id)
            if at is not None:
                self.answers.append(at)

    def _retract(self, index: int, constraints: int, users: int) -> None:
        """Forget what the human message at ``index`` (a local command's arguments) added."""
        if self.task_index == index:
            self.task = self.task_index = None
        del self.constraints[constraints:]
        if self._heard is None:  # raw user messages have their own rule (users.py)
            del self.users[users:]


# ------------------------------------------------------------------------------------ probes


@dataclass(frozen=True, slots=True)
class ProbeResult:
    """One probe on one request: whether it held, and the facts it did not find."""

    held: bool | None
    """None when there is nothing to check yet."""
    missing: tuple[str, ...] = ()
    total: int = 0
    """Facts checked."""


class Request:
    """The searchable text of one request: message texts, tool-call names and argument strings."""

    def __init__(self, messages: Sequence[BaseMessage]) -> None:
        parts: list[str] = []
        for m in messages:
            parts.append(_content_text(m.content))
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    parts.append(str(tc.get("name") or ""))
                    parts.extend(_strings(tc.get("args") or {}))
        self.text = _norm("\n".join(parts))

    def has(self, fact: str) -> bool:
        """``fact`` (normalized, non-empty) is contained in the request."""
        key = _norm(fact)
        return bool(key) and key in self.text

    def has_path(self, path: str, roots: Sequence[str] = ()) -> bool:
        """``path`` is named whole, bounded by non-path characters: as the tool call gave it,
        or (a relative path) joined to one of ``roots``. A path relative to a prefix said once
        ("... (under /repo/): a.py") is not whole: the model cannot call a tool with it."""
        return bool(path) and _has_path(self.text, path, roots)


def probe_request(truth: Truth, messages: Sequence[BaseMessage]) -> dict[str, ProbeResult]:
    """Every probe of :data:`PROBES` on one request (the messages langctx would send).

    What each probe requires of the request:

    * ``task`` -- the text of the first human message with substance, once :func:`user_text` has
      stripped the agents' machinery (``<environment_context>``, ``<system-reminder>``,
      ``<command-name>``, ANSI codes, caveat lines, injected instruction files, slash commands),
      whitespace normalized, is contained in it;
    * ``constraints`` -- every constraint sentence of the human messages so far, machinery
      stripped (a sentence with *must, never, do not, don't, only, always, avoid, make sure, ...*),
      taken verbatim, is contained in it (whitespace normalized, trailing punctuation ignored);
    * ``files_modified`` -- every file modified so far (edit/write tool arguments, ``apply_patch``
      blocks, and shell writes: ``>``/``>>`` redirects, ``tee``, ``sed -i``, ``mv``, ``cp``,
      ``rm``, ``touch``; SWE-agent's ``create``/``edit`` of the open file) is *named* by its whole
      path: exactly as the call gave it (a relative one also joined to a session root), bounded
      by characters that cannot be part of a path, never relative to a prefix said once (or, for
      a file the command that changed it names only in parts, as in ``cd src && mv a.ts
      utils/``, that command verbatim);
    * ``latest_failure`` -- one of the error lines of the latest failing tool result (non-zero
      exit, ``status="error"``, a traceback or test failure) is contained whole (whitespace
      normalized);
    * ``next_step`` -- the latest *informative* next-step statement of the agent is contained
      whole. A sentence is a next-step statement when it starts with a lead (*let me, I'll, I will,
      next, now I, I'm going to, the plan is to ...*); it is informative when what follows the lead
      names a concrete target (a path, a file name, a backticked or quoted term, a code
      identifier) or has at least four content words ("Let me read the relevant files:" has one).

    * ``latest_user_message`` -- the newest real user message so far (:attr:`Truth.users`: read
      from the raw session file when the replay has it, else the human messages by
      :func:`user_text`) is contained verbatim, every span the user typed (whitespace
      normalized);
    * ``earlier_user_messages`` -- every earlier real user message is contained at least by its
      first :data:`OPENING_CHARS` characters;
    * ``request_status`` -- every real request the request's ``<langctx:requests>`` section
      shows has the status the transcript gives it (:func:`request_status`); None without a
      section, or when it shows none of them.

    An empty fact is never "present": a probe with nothing to check is ``None``, and a fact whose
    text normalizes to nothing is not collected.
    """
    req = Request(messages)
    out: dict[str, ProbeResult] = {}
    if truth.task is None:
        out["task"] = ProbeResult(None)
    else:
        ok = req.has(truth.task)
        out["task"] = ProbeResult(ok, () if ok else (truth.task[:120],), 1)
    for name, items, test in (
        ("constraints", truth.constraints, req.has),
        (
            "files_modified",
            truth.modified,
            lambda p: (
                req.has_path(p, truth.roots)
                or any(c and c in req.text for c in truth.modified_by.get(p, ()))
            ),
        ),
    ):
        missing = tuple(i for i in items if not test(i))
        out[name] = ProbeResult(not missing if items else None, missing, len(items))
    f = truth.failure
    if f is None:
        out["latest_failure"] = ProbeResult(None)
    else:
        ok = any(req.has(ln) for ln in f.lines)
        out["latest_failure"] = ProbeResult(ok, () if ok else (f.lines[-1],), 1)
    step = truth.next_step
    if step is None:
        out["next_step"] = ProbeResult(None)
    else:
        ok = req.has(step)
        out["next_step"] = ProbeResult(ok, () if ok else (step,), 1)
    users = truth.users
    if not users:
        out["latest_user_message"] = ProbeResult(None)
    else:
        ok = all(req.has(p) for p in users[-1].pieces)
        out["latest_user_message"] = ProbeResult(ok, () if ok else (users[-1].text[:120],), 1)
    openings = tuple(dict.fromkeys(u.opening for u in users[:-1]))  # "ok" twice is one fact
    missing = tuple(o for o in openings if not req.has(o))
    out["earlier_user_messages"] = ProbeResult(
        not missing if openings else None, missing, len(openings)
    )
    g = request_status(truth, messages)
    graded = g is not None and g.graded > 0
    out["request_status"] = ProbeResult(
        not g.wrong if g is not None and graded else None,
        g.wrong if g is not None else (),
        g.graded if g is not None else 0,
    )
    return out


def request_status(truth: Truth, messages: Sequence[BaseMessage]) -> StatusGrade | None:
    """The ``<langctx:requests>`` section of a request against the transcript, or None when no
    message of the request holds one.

    The truth: each real user message so far (:attr:`Truth.users`) is *answered* when an AI
    message that ended the agent's turn (:attr:`Truth.answers`) follows it before the next one,
    else open. The section is read and matched by
    :mod:`langctx.cli.replay.request_status`; a real request whose own message is in the
    request is *in the window* (preferred last when two have the same opening).

    Example:
        >>> t = Truth()
        >>> for m in [HumanMessage("Fix it."), AIMessage("Done."), HumanMessage("Add a flag.")]:
        ...     t.add(m)
        >>> section = '<langctx:requests>\\n- [open — act on this] "Fix it."\\n</langctx:requests>'
        >>> g = request_status(t, [HumanMessage(section)])
        >>> g.graded, g.answered_shown_open
        (1, 1)
    """
    found = next(
        (
            (i, shown)
            for i, m in enumerate(messages)
            if (shown := parse_section(_content_text(m.content))) is not None
        ),
        None,
    )
    if found is None:
        return None
    holder, shown = found
    window = {
        truth.where(m)
        for i, m in enumerate(messages)
        if isinstance(m, HumanMessage) and i != holder
    }
    users = truth.users
    answered = answered_requests([u.position for u in users], truth.answers)
    known = [
        KnownRequest(u.opening, u.text, done, u.position in window)
        for u, done in zip(users, answered, strict=True)
    ]
    return grade(shown, known)
