"""Read recorded agent sessions in five formats as langchain-core messages.

The format is detected from the content, never from the file name: ``langchain`` (message JSONL,
``messages_to_dict`` records), ``openai`` (chat-completions or Anthropic Messages bodies),
``claude-code`` (session JSONL; sub-agent transcripts listed beside it), ``codex`` (CLI rollouts)
and ``pi`` (coding-agent session JSONL). Each ``_Reader`` method says how it reads its format;
thinking blocks are dropped in all of them. Every message gets a stable id, ``"<name>:<line>"``
(``"<name>:<line>.<k>"`` when one line yields several, ``"<name>:m<index>"`` in a JSON document;
a tool call without one gets ``"<message id>-call<k>"``), so reading a file twice gives the same
messages.

Example:
    >>> text = '{"type": "human", "content": "Fix the parser."}\\n{"type": "ai", "content": "On it."}'
    >>> session = parse_session(text, name="demo")
    >>> session.format, [m.type for m in session.messages], session.messages[0].id
    ('langchain', ['human', 'ai'], 'demo:1')
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
)

from langctx.cli.replay.transcript import find_turns, read_turns
from langctx.errors import LangctxError

__all__ = [
    "SESSION_FORMATS",
    "EmptySessionError",
    "ParsedSession",
    "SessionFormat",
    "SessionFormatError",
    "detect_format",
    "parse_session",
    "read_session",
]

SessionFormat = Literal["langchain", "openai", "claude-code", "codex", "pi", "transcript"]
"""The session formats :func:`parse_session` reads."""

SESSION_FORMATS: tuple[SessionFormat, ...] = get_args(SessionFormat)
"""Every supported format name, for ``--format`` choices."""

_LC_TYPES = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage, "tool": ToolMessage}
_PI_ENTRY_TYPES = frozenset(
    {
        "session",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
_CLAUDE_ONLY_TYPES = frozenset({"summary", "file-history-snapshot", "queue-operation"})
_CODEX_TYPES = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_ITEMS = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "reasoning",
        "web_search_call",
    }
)
_DETECT_RECORDS = 200
_BRANCH_PREFIX = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
_BRANCH_SUFFIX = "</summary>"
_COMPACTION_PREFIX = (
    "The conversation history before this point was compacted into the following summary:\n\n"
    "<summary>\n"
)
_COMPACTION_SUFFIX = "\n</summary>"
_FORMATS_HELP = (
    "LangChain message JSONL, OpenAI chat-completions JSON, Claude Code session JSONL, Codex CLI "
    "rollout JSONL, pi session JSONL, or any JSON / JSONL list of role and content records"
)


class SessionFormatError(LangctxError, ValueError):
    """A session file cannot be read: unreadable, not JSON, of no known format, or malformed.

    Attributes:
        path: the file, when one was read.
        line: the 1-based line the problem is on, when there is one.

    Example:
        >>> try:
        ...     parse_session('{"type": "human", "content": "hi"}\\n{"type": "human", oops}')
        ... except SessionFormatError as exc:
        ...     exc.line
        2
    """

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.line = line


class EmptySessionError(SessionFormatError):
    """A session holds no messages, or no model call to replay.

    Example:
        >>> try:
        ...     parse_session("\\n")
        ... except EmptySessionError as exc:
        ...     "empty" in str(exc)
        True
    """


@dataclass(frozen=True, slots=True)
class ParsedSession:
    """A session read from a file or text.

    Example:
        >>> s = parse_session('[{"role": "user", "content": "hi"}]', name="x")
        >>> s.format, s.messages[0].content, s.notes
        ('openai', 'hi', ())
    """

    name: str
    """Short name, from the file name without ``.jsonl`` / ``.json`` / ``.messages``."""
    format: SessionFormat
    """The format it was read as."""
    messages: list[BaseMessage]
    """The messages, in order, with stable ids."""
    path: str | None = None
    """The file it was read from."""
    notes: tuple[str, ...] = field(default=())
    """What was skipped or assumed while reading (bookkeeping lines, pi's own compactions, ...)."""
    cwd: str | None = None
    """The agent's working directory, when the session records it (Claude Code, Codex, pi)."""
    subagents: tuple[str, ...] = field(default=())
    """Claude Code sub-agent transcripts found beside the file (``<stem>/subagents/agent-*.jsonl``);
    replay each with :func:`read_session` on its own."""


# --------------------------------------------------------------------------------------------
# Public entry points


def read_session(
    path: str | Path, *, format: SessionFormat | None = None, name: str | None = None
) -> ParsedSession:
    """Read a session file; the format is detected from its content unless ``format`` is given.

    Args:
        path: the session file.
        format: one of :data:`SESSION_FORMATS` to skip detection.
        name: the session's name; defaults to the file name without its extensions.

    Returns:
        The :class:`ParsedSession`.

    Raises:
        SessionFormatError: the file cannot be read, is not UTF-8 JSON / JSONL, is of no known
            format, or a line is malformed (the message names the line).
        EmptySessionError: the file holds no messages.

    Example:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as d:
        ...     p = Path(d) / "run.messages.jsonl"
        ...     _ = p.write_text('{"type": "human", "content": "hi"}\\n')
        ...     read_session(p).name
        'run'
    """
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        msg = f"cannot read session file {str(p)!r}: {exc.strerror or exc}. Check the path."
        raise SessionFormatError(msg, path=str(p)) from exc
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        msg = (
            f"{p}, line {line}: not UTF-8 text (byte {exc.start}); a session file is JSON or "
            f"JSONL ({_FORMATS_HELP})."
        )
        raise SessionFormatError(msg, path=str(p), line=line) from exc
    try:
        parsed = parse_session(text, format=format, name=name or _stem(p), path=str(p))
    except RecursionError as exc:
        msg = f"{p}: nested too deeply to read (JSON nesting beyond Python's limit); not a session."
        raise SessionFormatError(msg, path=str(p)) from exc
    if parsed.format == "claude-code":
        found = _subagent_files(p)
        if found:
            note = f"{len(found)} sub-agent transcript(s) beside it (replay each on its own)"
            parsed = ParsedSession(
                name=parsed.name,
                format=parsed.format,
                messages=parsed.messages,
                path=parsed.path,
                notes=(*parsed.notes, note),
                cwd=parsed.cwd,
                subagents=found,
            )
    return parsed


def _subagent_files(path: Path) -> tuple[str, ...]:
    """``<dir>/<stem>/subagents/agent-*.jsonl`` beside a Claude Code session, compaction calls left out."""
    folder = path.with_suffix("") / "subagents"
    if not folder.is_dir():
        return ()
    return tuple(
        str(f)
        for f in sorted(folder.glob("agent-*.jsonl"))
        if not f.name.startswith("agent-acompact")
    )


def parse_session(
    text: str,
    *,
    format: SessionFormat | None = None,
    name: str = "session",
    path: str | None = None,
) -> ParsedSession:
    """Parse session text (JSON or JSONL) into messages with stable ids.

    Args:
        text: the file's content.
        format: one of :data:`SESSION_FORMATS` to skip detection.
        name: prefix of the message ids.
        path: shown in error messages.

    Returns:
        The :class:`ParsedSession`.

    Raises:
        SessionFormatError: not JSON / JSONL, no known format, or a malformed record.
        EmptySessionError: no messages.

    Example:
        >>> parse_session('{"messages": [{"role": "system", "content": "Be brief."}]}').messages
        [SystemMessage(content='Be brief.', additional_kwargs={}, response_metadata={}, id='session:m0')]
    """
    where = path or f"<{name}>"
    if format is not None and format not in SESSION_FORMATS:
        msg = f"unknown session format {format!r}; use one of {', '.join(SESSION_FORMATS)}."
        raise SessionFormatError(msg, path=path)
    if not text.strip():
        msg = f"{where}: the session is empty (no lines). Record a session first or pick another file."
        raise EmptySessionError(msg, path=path, line=None)
    doc = _document(text, where, path)
    reader = _Reader(name=name, where=where, path=path)
    records = [] if doc is not None else list(_records(text, where, path))
    whole = doc if doc is not None else [rec for _, rec in records]
    fmt = format or _detect(doc, records, where, path)
    if fmt == "transcript":
        turns = find_turns(whole)
        if turns is None:
            raise _unknown(where, path, 1, whole[0] if isinstance(whole, list) and whole else whole)
        reader.out, notes = read_turns(turns, name, tool_call=_tool_call, flatten=_flatten)
        reader._notes.extend(notes)
    elif doc is None:
        reader.records(fmt, records)
    elif fmt == "openai" and (isinstance(doc, list) or "messages" in doc):
        reader.openai_document(doc)
    elif fmt == "langchain" and isinstance(doc, list):
        reader.langchain(list(enumerate(doc, start=1)), index_label="item")
    else:  # a single JSON object is a one-line JSONL file
        reader.records(fmt, [(1, doc)])
    if not reader.out:
        skipped = f" ({'; '.join(reader.notes)})" if reader.notes else ""
        msg = f"{where}: the session holds no messages{skipped}. Check that this is an agent session log."
        raise EmptySessionError(msg, path=path)
    return ParsedSession(
        name=name,
        format=fmt,
        messages=reader.out,
        path=path,
        notes=tuple(reader.notes),
        cwd=reader.cwd,
    )


def _detect(
    doc: Any, records: list[tuple[int, Any]], where: str, path: str | None
) -> SessionFormat:
    """The format of a JSON document (``doc``), else of JSONL ``records``; ``"transcript"`` when
    no known format matches but a list of role/content records is there."""
    try:
        if doc is not None:
            return _detect_document(doc, where, path)
        return _detect_records(records, where, path)
    except SessionFormatError:
        if find_turns(doc if doc is not None else [rec for _, rec in records]) is None:
            raise
        return "transcript"


def detect_format(text: str) -> SessionFormat:
    """Which session format ``text`` is in, from its content.

    Raises:
        SessionFormatError: not JSON / JSONL, or no record matches a known format.

    Example:
        >>> detect_format('{"type": "session", "id": "s1", "cwd": "/repo"}')
        'pi'
        >>> detect_format('{"type": "user", "message": {"role": "user", "content": "hi"}, "uuid": "u1"}')
        'claude-code'
    """
    doc = _document(text, "<text>", None)
    records = [] if doc is not None else list(_records(text, "<text>", None))
    return _detect(doc, records, "<text>", None)


# --------------------------------------------------------------------------------------------
# Reading and detecting


def _stem(path: Path) -> str:
    name = path.name
    for suffix in (".jsonl", ".json", ".txt", ".messages", ".session"):
        name = name.removesuffix(suffix)
    return name or path.name


def _document(text: str, where: str, path: str | None) -> Any:
    """The whole text as one JSON value when it is one (a list or a dict), else None (JSONL)."""
    stripped = text.lstrip()
    if not stripped.startswith(("[", "{")):
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            return None  # several JSON values: JSONL
        first = stripped.split("\n", 1)[0]
        try:
            json.loads(first)
        except json.JSONDecodeError:
            if stripped.startswith("["):  # a JSON array document that is broken
                msg = (
                    f"{where}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}). "
                    "Fix or truncate the file at that line."
                )
                raise SessionFormatError(msg, path=path, line=exc.lineno) from exc
            if "\n" in stripped.strip():
                # a multi-line JSON object (pretty-printed request body) that is broken
                msg = (
                    f"{where}, line {exc.lineno}: not valid JSON ({exc.msg}, column {exc.colno}). "
                    "Fix the file at that line."
                )
                raise SessionFormatError(msg, path=path, line=exc.lineno) from exc
        return None  # the first line is fine: a JSONL file with a broken later line


def _records(text: str, where: str, path: str | None) -> Iterator[tuple[int, Any]]:
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except json.JSONDecodeError as exc:
            msg = (
                f"{where}, line {lineno}: not valid JSON ({exc.msg}, column {exc.colno}). "
                "Each line of a JSONL session must be one JSON object; fix or remove that line."
            )
            raise SessionFormatError(msg, path=path, line=lineno) from exc


def _classify(rec: Any) -> SessionFormat | None:
    if not isinstance(rec, dict):
        return None
    kind = rec.get("type")
    message = rec.get("message")
    if kind == "message" and isinstance(message, dict):
        return "pi"
    if kind in _PI_ENTRY_TYPES and (kind != "custom" or "customType" in rec):
        return "pi"
    if (kind in ("user", "assistant") and isinstance(message, dict)) or kind in _CLAUDE_ONLY_TYPES:
        return "claude-code"
    if "sessionId" in rec and ("uuid" in rec or "parentUuid" in rec):
        return "claude-code"
    if kind in _CODEX_TYPES and isinstance(rec.get("payload"), dict):
        return "codex"
    if kind in _CODEX_ITEMS and ("call_id" in rec or "role" in rec or "summary" in rec):
        return "codex"
    if rec.get("record_type") == "state" or ("instructions" in rec and "timestamp" in rec):
        return "codex"
    if kind in _LC_TYPES and ("content" in rec or isinstance(rec.get("data"), dict)):
        return "langchain"
    if isinstance(rec.get("role"), str) and ("content" in rec or "tool_calls" in rec):
        return "openai"
    return None


def _unknown(where: str, path: str | None, line: int | None, sample: Any) -> SessionFormatError:
    shown = json.dumps(sample, ensure_ascii=False)[:120] if sample is not None else ""
    at = f", line {line}" if line is not None else ""
    msg = (
        f"{where}{at}: not a known session format (read {shown!r}). Supported: {_FORMATS_HELP}; "
        "pass --format to force one."
    )
    return SessionFormatError(msg, path=path, line=line)


def _detect_records(
    records: Sequence[tuple[int, Any]], where: str, path: str | None
) -> SessionFormat:
    for _, rec in records[:_DETECT_RECORDS]:
        fmt = _classify(rec)
        if fmt is not None:
            return fmt
    line, sample = records[0] if records else (None, None)
    raise _unknown(where, path, line, sample)


def _detect_document(doc: Any, where: str, path: str | None) -> SessionFormat:
    if isinstance(doc, dict):
        messages = doc.get("messages")
        if isinstance(messages, list) and (
            not messages or any(_classify(m) == "openai" for m in messages[:_DETECT_RECORDS])
        ):
            return "openai"
        fmt = _classify(doc)
        if fmt is not None:
            return fmt
        raise _unknown(where, path, 1, doc)
    if isinstance(doc, list):
        for item in doc[:_DETECT_RECORDS]:
            fmt = _classify(item)
            if fmt in ("openai", "langchain"):
                return fmt
        raise _unknown(where, path, 1, doc[0] if doc else doc)
    raise _unknown(where, path, 1, doc)


# --------------------------------------------------------------------------------------------
# Content helpers


def _block_text(block: Any) -> str | None:
    """Text of one content block; None for blocks that carry no text for the model."""
    if isinstance(block, str):
        return block
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind in ("text", "input_text", "output_text") and isinstance(block.get("text"), str):
        return str(block["text"])
    if kind == "refusal" and isinstance(block.get("refusal"), str):
        return str(block["refusal"])
    if kind in ("image", "image_url", "input_image"):
        return "[image]"
    return None


def _flatten(content: Any) -> str:
    """String or block-list content as one string (text blocks joined, images as ``[image]``)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [t for t in (_block_text(b) for b in content) if t is not None]
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def _args(raw: Any) -> dict[str, Any]:
    """Tool-call arguments as a dict: JSON strings decoded, anything else wrapped."""
    if isinstance(raw, dict):
        return raw
    if raw is None or raw == "":
        return {}
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            return {"arguments": raw}
        return value if isinstance(value, dict) else {"arguments": value}
    return {"arguments": raw}


def _tool_call(raw: Any, fallback_id: str) -> dict[str, Any] | None:
    """A langchain tool call from LangChain, OpenAI, Anthropic or pi shapes; None if nameless."""
    if not isinstance(raw, dict):
        return None
    fn = raw.get("function") if isinstance(raw.get("function"), dict) else None
    name = (fn or raw).get("name")
    if not isinstance(name, str) or not name:
        return None
    if fn is not None:
        args = _args(fn.get("arguments"))
    elif "args" in raw:
        args = _args(raw.get("args"))
    elif "input" in raw:
        args = _args(raw.get("input"))
    else:
        args = _args(raw.get("arguments"))
    call_id = raw.get("id") or raw.get("call_id")
    return {
        "id": str(call_id) if call_id else fallback_id,
        "name": name,
        "args": args,
        "type": "tool_call",
    }


# --------------------------------------------------------------------------------------------
# The reader: one per parse, appends to ``out``


class _Reader:
    def __init__(self, *, name: str, where: str, path: str | None) -> None:
        self.name = name
        self.where = where
        self.path = path
        self.out: list[BaseMessage] = []
        self.skipped: Counter[str] = Counter()
        self._notes: list[str] = []
        self._per_line: Counter[str] = Counter()
        self.cwd: str | None = None

    @property
    def notes(self) -> list[str]:
        counted = [f"{n} {what}" for what, n in sorted(self.skipped.items())]
        return [*self._notes, *counted]

    def _id(self, label: str) -> str:
        k = self._per_line[label]
        self._per_line[label] += 1
        return f"{self.name}:{label}" if k == 0 else f"{self.name}:{label}.{k}"

    def _fail(self, line: int | str, problem: str) -> SessionFormatError:
        label = f"line {line}" if isinstance(line, int) else str(line)
        msg = f"{self.where}, {label}: {problem}"
        return SessionFormatError(msg, path=self.path, line=line if isinstance(line, int) else None)

    def records(self, fmt: SessionFormat, records: list[tuple[int, Any]]) -> None:
        for line, rec in records:
            if not isinstance(rec, dict):
                raise self._fail(line, f"expected a JSON object, got {type(rec).__name__}.")
        if fmt == "langchain":
            self.langchain(records)
        elif fmt == "openai":
            for line, rec in records:
                self.openai_message(rec, str(line), line)
        elif fmt == "claude-code":
            self.claude_code(records)
        elif fmt == "codex":
            self.codex(records)
        else:
            self.pi(records)

    # ---------------------------------------------------------------- langchain

    def langchain(self, records: list[tuple[int, Any]], *, index_label: str = "line") -> None:
        """One message per line, ``{"type": "system"|"human"|"ai"|"tool", "content": ...,
        "tool_calls": [{"id", "name", "args"}], "tool_call_id": ...}`` (the recorded sessions in
        ``../shared/data``), or langchain's ``messages_to_dict`` records ``{"type", "data"}``; a
        JSON array of such records works too.
        """
        for line, rec in records:
            where: int | str = line if index_label == "line" else f"item {line}"
            label = str(line) if index_label == "line" else f"m{line - 1}"
            if not isinstance(rec, dict):
                raise self._fail(where, f"expected a message object, got {type(rec).__name__}.")
            kind = rec.get("type")
            if isinstance(rec.get("data"), dict):
                try:
                    (message,) = messages_from_dict([rec])
                except (ValueError, KeyError, TypeError) as exc:
                    raise self._fail(where, f"not a langchain message dict ({exc}).") from exc
                self.out.append(message.model_copy(update={"id": self._id(label)}))
                continue
            if kind not in _LC_TYPES:
                raise self._fail(
                    where,
                    f"unknown message type {kind!r}; a LangChain session line has type "
                    "system, human, ai or tool.",
                )
            mid = self._id(label)
            content = rec.get("content")
            content = "" if content is None else content
            if not isinstance(content, str | list):
                content = json.dumps(content, ensure_ascii=False)
            extra = (
                rec.get("additional_kwargs")
                if isinstance(rec.get("additional_kwargs"), dict)
                else {}
            )
            if kind == "ai":
                calls = [
                    c
                    for k, raw in enumerate(rec.get("tool_calls") or [])
                    if (c := _tool_call(raw, f"{mid}-call{k}")) is not None
                ]
                self.out.append(
                    AIMessage(content=content, id=mid, tool_calls=calls, additional_kwargs=extra)
                )
            elif kind == "tool":
                call_id = rec.get("tool_call_id")
                if not call_id:
                    raise self._fail(where, "a tool message needs a tool_call_id.")
                self.out.append(
                    ToolMessage(
                        content=content,
                        id=mid,
                        tool_call_id=str(call_id),
                        name=rec.get("name"),
                        status="error" if rec.get("status") == "error" else "success",
                        additional_kwargs=extra,
                    )
                )
            else:
                cls = _LC_TYPES[kind]
                self.out.append(cls(content=content, id=mid, additional_kwargs=extra))

    # ---------------------------------------------------------------- openai / anthropic

    def openai_document(self, doc: Any) -> None:
        """A chat-completions body ``{"messages": [...]}`` or a bare list of messages (``role`` /
        ``content`` / ``tool_calls`` / ``tool_call_id``, also one per line); Anthropic Messages
        bodies (top-level ``system``, ``tool_use`` / ``tool_result`` blocks) are read here too.
        """
        if isinstance(doc, dict):
            system = doc.get("system")  # Anthropic Messages API
            if system:
                self.out.append(SystemMessage(content=_flatten(system), id=self._id("system")))
            messages = doc.get("messages")
        else:
            messages = doc
        if not isinstance(messages, list):
            raise self._fail("messages", "expected a list of messages.")
        for i, rec in enumerate(messages):
            self.openai_message(rec, f"m{i}", f"message {i} (messages[{i}])")

    def openai_message(self, rec: Any, label: str, where: int | str) -> None:
        if not isinstance(rec, dict):
            raise self._fail(where, f"expected a message object, got {type(rec).__name__}.")
        role = rec.get("role")
        content = rec.get("content")
        if role in ("system", "developer"):
            self.out.append(SystemMessage(content=_flatten(content), id=self._id(label)))
        elif role == "user":
            self._user_blocks(content, label, where)
        elif role == "assistant":
            mid = self._id(label)
            calls: list[dict[str, Any]] = []
            text_parts: list[str] = []
            if isinstance(content, list):
                for block in content:
                    if isinstance(block, dict) and block.get("type") == "tool_use":
                        call = _tool_call(block, f"{mid}-call{len(calls)}")
                        if call is not None:
                            calls.append(call)
                    elif (t := _block_text(block)) is not None:
                        text_parts.append(t)
            elif content is not None:
                text_parts.append(_flatten(content))
            for raw in rec.get("tool_calls") or []:
                call = _tool_call(raw, f"{mid}-call{len(calls)}")
                if call is not None:
                    calls.append(call)
            legacy = rec.get("function_call")
            if isinstance(legacy, dict):
                call = _tool_call({**legacy, "id": f"{mid}-fc"}, f"{mid}-fc")
                if call is not None:
                    calls.append(call)
            self.out.append(AIMessage(content="\n".join(text_parts), id=mid, tool_calls=calls))
        elif role == "tool":
            call_id = rec.get("tool_call_id")
            if not call_id:
                raise self._fail(where, "a tool message needs a tool_call_id.")
            self.out.append(
                ToolMessage(
                    content=_flatten(content),
                    id=self._id(label),
                    tool_call_id=str(call_id),
                    name=rec.get("name"),
                )
            )
        elif role == "function":  # legacy function calling: paired by name
            name = rec.get("name")
            call_id = self._open_function_call(name)
            self.out.append(
                ToolMessage(
                    content=_flatten(content),
                    id=self._id(label),
                    tool_call_id=call_id or f"{self.name}:unmatched-{name}",
                    name=name,
                )
            )
        else:
            raise self._fail(
                where,
                f"unknown role {role!r}; expected system, developer, user, assistant or tool.",
            )

    def _open_function_call(self, name: Any) -> str | None:
        for m in reversed(self.out):
            if isinstance(m, AIMessage):
                for tc in m.tool_calls:
                    if tc["name"] == name and tc["id"] and tc["id"].endswith("-fc"):
                        return str(tc["id"])
                return None
        return None

    def _user_blocks(
        self, content: Any, label: str, where: int | str, extra: dict[str, Any] | None = None
    ) -> None:
        """A user turn: ``tool_result`` blocks become tool messages, the rest one human message
        (with ``extra`` as its ``additional_kwargs``)."""
        if not isinstance(content, list):
            self.out.append(
                HumanMessage(
                    content=_flatten(content),
                    id=self._id(label),
                    additional_kwargs=dict(extra or {}),
                )
            )
            return
        pending: list[str] = []

        def flush() -> None:
            if pending:
                self.out.append(
                    HumanMessage(
                        content="\n".join(pending),
                        id=self._id(label),
                        additional_kwargs=dict(extra or {}),
                    )
                )
                pending.clear()

        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                flush()
                call_id = block.get("tool_use_id")
                if not call_id:
                    raise self._fail(where, "a tool_result block needs a tool_use_id.")
                self.out.append(
                    ToolMessage(
                        content=_flatten(block.get("content")),
                        id=self._id(label),
                        tool_call_id=str(call_id),
                        status="error" if block.get("is_error") else "success",
                    )
                )
            elif (t := _block_text(block)) is not None:
                pending.append(t)
        flush()

    # ---------------------------------------------------------------- claude code

    def claude_code(self, records: list[tuple[int, Any]]) -> None:
        """Claude Code JSONL: ``"user"`` / ``"assistant"`` lines whose ``message.content`` holds
        ``text``, ``tool_use`` and ``tool_result`` blocks.

        Claude Code writes one line per content block, so consecutive assistant lines with the same
        ``message.id`` are merged into one AI message. ``summary``, ``system``,
        ``file-history-snapshot``, ``progress`` and other bookkeeping lines are skipped and counted
        in the notes. A sub-agent's transcript (``<session>/subagents/agent-<id>.jsonl``, every line
        ``isSidechain: true``) is a session of its own whose task is the sub-agent's prompt; in a
        main session, sidechain lines (older versions wrote them inline) are skipped: the parent
        sees a sub-agent only through the ``Task`` tool's result.

        A user line marked ``isMeta`` is text Claude Code injected, not what the user typed: a
        slash command's expanded prompt or skill body (it follows the command's own line), the
        caveat before local-command output, hook feedback, image references. Its human message
        gets ``additional_kwargs={"is_meta": True}``, a flag :mod:`langctx.machinery` reads as
        machinery; a line that holds the ``<command-name>`` of a command the user ran is not
        flagged, as its ``<command-args>`` are the user's request.
        """
        open_ai: tuple[str, int] | None = None  # (message.id, index in out) of the last AI
        talk = [rec for _, rec in records if rec.get("type") in ("user", "assistant")]
        subagent = bool(talk) and all(rec.get("isSidechain") for rec in talk)
        if subagent:
            agent = next((r.get("agentId") for r in talk if r.get("agentId")), None)
            self._notes.append(
                f"a sub-agent transcript{f' (agent {agent})' if agent else ''}: read on its own"
            )
        for line, rec in records:
            kind = rec.get("type")
            if self.cwd is None and isinstance(rec.get("cwd"), str):
                self.cwd = str(rec["cwd"])
            if rec.get("isSidechain") and not subagent:
                self.skipped["sidechain (sub-agent) lines skipped"] += 1
                continue
            message = rec.get("message")
            if kind not in ("user", "assistant"):
                self.skipped[f"{kind!s} lines skipped"] += 1
                continue
            if not isinstance(message, dict):
                raise self._fail(line, f"a {kind!r} line needs a 'message' object.")
            content = message.get("content")
            if kind == "assistant":
                mid = message.get("id")
                blocks = content if isinstance(content, list) else [content]
                if open_ai is not None and mid and open_ai[0] == mid:
                    index = open_ai[1]
                    self.out[index] = _extend_ai(self.out[index], blocks)
                    continue
                ai = _extend_ai(AIMessage(content="", id=self._id(str(line))), blocks)
                self.out.append(ai)
                open_ai = (str(mid), len(self.out) - 1) if mid else None
            else:
                before = len(self.out)
                if rec.get("isCompactSummary"):
                    self.skipped["Claude Code compact summaries kept as human messages"] += 1
                extra = None
                if rec.get("isMeta") and "<command-name>" not in _flatten(content):
                    extra = {"is_meta": True}  # injected text, not typed (see the docstring)
                    self.skipped["Claude Code isMeta user lines flagged is_meta"] += 1
                self._user_blocks(content, str(line), line, extra)
                if any(not isinstance(m, ToolMessage) for m in self.out[before:]):
                    open_ai = None  # a human turn closes the assistant message

    # ---------------------------------------------------------------- codex

    def codex(self, records: list[tuple[int, Any]]) -> None:
        """Codex CLI rollouts: ``{"type", "payload"}`` lines (``session_meta`` / ``turn_context`` /
        ``response_item`` / ``event_msg``), or the older ``{"id", "timestamp", "instructions"}``
        header followed by bare response items.

        Response items are read: ``message`` (``input_text`` / ``output_text`` blocks),
        ``function_call`` / ``custom_tool_call`` / ``local_shell_call`` and their ``*_output``
        items (a JSON ``{"output", "metadata": {"exit_code"}}`` output becomes its text, a non-zero
        exit code noted); ``reasoning`` items are dropped and ``event_msg`` lines, which duplicate
        the response items, skipped. The user messages Codex injects (``<environment_context>``,
        ``<user_instructions>``) stay human messages, as Codex sends them.
        """
        open_ai: int | None = None  # index in out of the AI message collecting calls
        for line, rec in records:
            kind = rec.get("type")
            payload = rec.get("payload") if isinstance(rec.get("payload"), dict) else None
            if kind == "session_meta" and payload is not None:
                if isinstance(payload.get("cwd"), str):
                    self.cwd = str(payload["cwd"])
                continue
            if kind in ("event_msg", "turn_context", "compacted") or rec.get("record_type"):
                what = kind if kind else f"{rec.get('record_type')} records"
                self.skipped[f"codex {what} lines skipped"] += 1
                continue
            if kind is None and "instructions" in rec:  # the older header line
                continue
            item = payload if kind == "response_item" and payload is not None else rec
            open_ai = self._codex_item(item, line, open_ai)

    def _codex_item(self, item: dict[str, Any], line: int, open_ai: int | None) -> int | None:
        kind = item.get("type")
        label = str(line)
        if kind == "message":
            role = item.get("role")
            text = _flatten(item.get("content"))
            if role == "assistant":
                self.out.append(AIMessage(content=text, id=self._id(label)))
                return len(self.out) - 1
            if role in ("system", "developer"):
                self.out.append(SystemMessage(content=text, id=self._id(label)))
            else:
                self.out.append(HumanMessage(content=text, id=self._id(label)))
            return None
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            call_id = item.get("call_id") or item.get("id")
            if kind == "local_shell_call":
                action = item.get("action")
                command = action.get("command") if isinstance(action, dict) else None
                args: dict[str, Any] = {"command": command}
                name = "local_shell"
            elif kind == "custom_tool_call":
                args, name = {"input": item.get("input")}, str(item.get("name") or "custom")
            else:
                args, name = _args(item.get("arguments")), str(item.get("name") or "")
            if not name or not call_id:
                raise self._fail(line, f"a codex {kind} needs a name and a call_id.")
            call = {"id": str(call_id), "name": name, "args": args, "type": "tool_call"}
            if open_ai is None or not isinstance(self.out[open_ai], AIMessage):
                self.out.append(AIMessage(content="", id=self._id(label)))
                open_ai = len(self.out) - 1
            ai = self.out[open_ai]
            assert isinstance(ai, AIMessage)
            self.out[open_ai] = AIMessage(
                content=ai.content, id=ai.id, tool_calls=[*ai.tool_calls, call]
            )
            return open_ai
        if kind in ("function_call_output", "custom_tool_call_output", "local_shell_call_output"):
            call_id = item.get("call_id")
            if not call_id:
                raise self._fail(line, f"a codex {kind} needs a call_id.")
            text, code = _codex_output(item.get("output"))
            self.out.append(
                ToolMessage(
                    content=text,
                    id=self._id(label),
                    tool_call_id=str(call_id),
                    status="error" if code not in (None, 0) else "success",
                )
            )
            return None  # the next call belongs to the next model response
        if kind == "reasoning":
            self.skipped["codex reasoning items dropped"] += 1
            return open_ai
        self.skipped[f"codex {kind!s} items skipped"] += 1
        return open_ai

    # ---------------------------------------------------------------- pi

    def pi(self, records: list[tuple[int, Any]]) -> None:
        """pi coding-agent JSONL: a ``{"type": "session"}`` header, then ``{"type": "message",
        "message": {"role": "user" | "assistant" | "toolResult" | "bashExecution" | "custom"}}``
        lines; assistant blocks are ``text`` / ``thinking`` / ``toolCall {id, name, arguments}``.

        From format version 2 entries link by ``id`` / ``parentId`` and the branch ending at the
        last entry is read, as pi does. pi's own ``compaction`` entries are skipped (the replay
        feeds the full history and lets langctx compact it); ``branch_summary`` and
        ``custom_message`` entries become human messages, as pi sends them.
        """
        for _, rec in records:
            if rec.get("type") == "session" and isinstance(rec.get("cwd"), str):
                self.cwd = str(rec["cwd"])
        entries = [(line, rec) for line, rec in records if rec.get("type") != "session"]
        if any("parentId" in rec and "id" in rec for _, rec in entries):
            entries = self._pi_branch(entries)
        for line, rec in entries:
            kind = rec.get("type")
            if kind == "message":
                message = rec.get("message")
                if not isinstance(message, dict):
                    raise self._fail(line, "a pi 'message' entry needs a 'message' object.")
                self._pi_message(message, line)
            elif kind == "branch_summary" and rec.get("summary"):
                text = _BRANCH_PREFIX + str(rec["summary"]) + _BRANCH_SUFFIX
                self.out.append(HumanMessage(content=text, id=self._id(str(line))))
            elif kind == "custom_message":
                self.out.append(
                    HumanMessage(content=_flatten(rec.get("content")), id=self._id(str(line)))
                )
            elif kind == "compaction":
                self.skipped[
                    "pi compaction entries skipped (langctx compacts the full history itself)"
                ] += 1
            else:
                self.skipped[f"pi {kind!s} entries skipped"] += 1

    def _pi_branch(self, entries: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
        """The path from the last entry to the root through ``parentId`` (pi's active branch)."""
        by_id = {str(rec["id"]): (line, rec) for line, rec in entries if rec.get("id") is not None}
        path: list[tuple[int, Any]] = []
        current: tuple[int, Any] | None = entries[-1] if entries else None
        seen: set[str] = set()
        while current is not None:
            path.append(current)
            seen.add(str(current[1].get("id")))
            parent = current[1].get("parentId")
            if parent is None:
                break
            if str(parent) in seen or str(parent) not in by_id:
                self._notes.append(
                    f"line {current[0]}: parentId {parent!r} not found; the branch starts there"
                )
                break
            current = by_id[str(parent)]
        path.reverse()
        off = len(entries) - len(path)
        if off:
            self._notes.append(f"{off} entries on other branches were not replayed")
        return path

    def _pi_message(self, message: dict[str, Any], line: int) -> None:
        role = message.get("role")
        content = message.get("content")
        label = str(line)
        if role == "user":
            self.out.append(HumanMessage(content=_flatten(content), id=self._id(label)))
        elif role == "assistant":
            blocks = content if isinstance(content, list) else [content]
            self.out.append(_extend_ai(AIMessage(content="", id=self._id(label)), blocks))
        elif role == "toolResult":
            call_id = message.get("toolCallId")
            if not call_id:
                raise self._fail(line, "a pi toolResult message needs a toolCallId.")
            self.out.append(
                ToolMessage(
                    content=_flatten(content),
                    id=self._id(label),
                    tool_call_id=str(call_id),
                    name=message.get("toolName"),
                    status="error" if message.get("isError") else "success",
                )
            )
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                self.skipped["pi bash executions skipped (excluded from context with !!)"] += 1
                return
            self.out.append(HumanMessage(content=_pi_bash_text(message), id=self._id(label)))
        elif role == "custom":
            self.out.append(HumanMessage(content=_flatten(content), id=self._id(label)))
        elif role == "branchSummary":
            text = _BRANCH_PREFIX + str(message.get("summary", "")) + _BRANCH_SUFFIX
            self.out.append(HumanMessage(content=text, id=self._id(label)))
        elif role == "compactionSummary":
            text = _COMPACTION_PREFIX + str(message.get("summary", "")) + _COMPACTION_SUFFIX
            self.out.append(HumanMessage(content=text, id=self._id(label)))
        else:
            self.skipped[f"pi messages with role {role!r} skipped"] += 1


def _extend_ai(ai: BaseMessage, blocks: Sequence[Any]) -> AIMessage:
    """``ai`` with the text and tool calls of ``blocks`` appended (thinking blocks dropped)."""
    assert isinstance(ai, AIMessage)
    text = ai.content if isinstance(ai.content, str) else _flatten(ai.content)
    parts = [text] if text else []
    calls: list[Any] = list(ai.tool_calls)
    for block in blocks:
        if isinstance(block, Mapping) and block.get("type") in ("tool_use", "toolCall"):
            call = _tool_call(dict(block), f"{ai.id}-call{len(calls)}")
            if call is not None:
                calls.append(call)
        elif (t := _block_text(block)) is not None and t:
            parts.append(t)
    return AIMessage(content="\n".join(parts), id=ai.id, tool_calls=calls)


def _codex_output(output: Any) -> tuple[str, int | None]:
    """A codex tool output as text and its exit code: JSON ``{"output", "metadata"}`` unwrapped."""
    if isinstance(output, dict):
        data: Any = output
    elif isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            data = json.loads(output)
        except json.JSONDecodeError:
            return output, None
    else:
        return _flatten(output), None
    if not isinstance(data, dict) or "output" not in data:
        return (output if isinstance(output, str) else json.dumps(output)), None
    text = _flatten(data.get("output"))
    meta = data.get("metadata")
    raw = meta.get("exit_code") if isinstance(meta, dict) else None
    code = raw if isinstance(raw, int) else None
    if code:
        text += f"\n\nProcess exited with code {code}"
    return text, code


def _pi_bash_text(message: Mapping[str, Any]) -> str:
    """pi's ``bashExecutionToText``: how a user's ``!command`` reaches the model."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif code not in (None, 0):
        text += f"\n\nCommand exited with code {code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text
