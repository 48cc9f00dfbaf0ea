"""The tiers beside the conversation: :class:`WorkingMemory` (files, commands, open errors) and the
pure parts of long-term memory (keyword ranking, prompt block)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Literal, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langctx.config_checks import positive
from langctx.errors import ConfigError
from langctx.facts import DEFAULT_COMMAND_TOOLS, DEFAULT_FILE_TOOLS, FileToolSpec, extract_facts
from langctx.facts.calls import clip
from langctx.markers import context_mode_stamp, escape_delimiters
from langctx.tokens import TextCounter, TokenCounter, text_counter

WORKING_MEMORY_VERSION = 1
"""Version of :class:`WorkingMemoryState`."""

QueryKind = Literal["all", "files", "commands", "errors"]
"""What a working-memory query asks for."""

_MAX_LINE = 200


class FileRecord(TypedDict):
    """A file the agent touched and its last known state."""

    path: str
    last_read_turn: int | None
    last_modified_turn: int | None
    size_chars: int | None
    """Size of the last read's output (chars, or bytes when Context-mode stored it)."""
    reads: int
    modifications: int


class CommandRecord(TypedDict):
    """A command the agent ran."""

    command: str
    exit_code: int | None
    ok: bool | None
    turn: int
    message_id: str | None


class ErrorRecord(TypedDict):
    """A failing tool result; ``open`` until the same command (or tool) later succeeds."""

    source: str
    lines: list[str]
    turn: int
    message_id: str | None
    open: bool


class WorkingMemoryState(TypedDict):
    """The working memory as a plain, versioned JSON dict."""

    v: int
    turn: int
    files: dict[str, FileRecord]
    commands: list[CommandRecord]
    errors: list[ErrorRecord]


class WorkingMemory:
    """The execution record, kept mechanically from tool calls (no model involved).

    Args:
        file_tools: tool name -> :class:`~langctx.facts.FileToolSpec` (default: langctx's table).
        max_commands: most recent commands kept (``max_errors``: errors).
    """

    def __init__(
        self,
        *,
        file_tools: Mapping[str, FileToolSpec] | None = None,
        command_tools: Collection[str] | None = None,
        max_commands: int = 50,
        max_errors: int = 20,
    ) -> None:
        positive("max_commands", max_commands)
        positive("max_errors", max_errors)
        self.file_tools = DEFAULT_FILE_TOOLS if file_tools is None else file_tools
        self.command_tools = DEFAULT_COMMAND_TOOLS if command_tools is None else command_tools
        self.max_commands = max_commands
        self.max_errors = max_errors
        self._pending: dict[str, tuple[dict[str, Any], int]] = {}  # call id -> (call, its turn)
        self.state = WorkingMemoryState(
            v=WORKING_MEMORY_VERSION, turn=0, files={}, commands=[], errors=[]
        )

    @classmethod
    def from_messages(cls, messages: Sequence[BaseMessage], **kwargs: Any) -> WorkingMemory:
        """Replay a conversation (each AI message is a turn)."""
        memory = cls(**kwargs)
        memory.observe(messages)
        return memory

    def observe(self, messages: Iterable[BaseMessage]) -> None:
        """Record new messages: each AI message starts a turn; its calls are matched to results."""
        pending = self._pending
        for m in messages:
            if isinstance(m, AIMessage):
                self.state["turn"] += 1
                for call in m.tool_calls:
                    if call.get("id"):
                        pending[str(call["id"])] = (dict(call), self.state["turn"])
            elif isinstance(m, ToolMessage):
                asked, turn = pending.pop(m.tool_call_id, ({}, self.state["turn"]))
                self._on_result(asked, m, turn)

    def _on_result(self, call: Mapping[str, Any], result: ToolMessage, turn: int) -> None:
        asked = [AIMessage("", tool_calls=[{**call, "type": "tool_call"}])] if call else []
        batch: list[BaseMessage] = [*asked, result]
        facts = extract_facts(batch, file_tools=self.file_tools, command_tools=self.command_tools)
        stamp = context_mode_stamp(result) or {}
        size = stamp.get("original_bytes")
        if size is None:
            size = len(result.text) if isinstance(result.content, str) else None
        for path in facts["read_files"]:
            rec = self._file(path)
            rec["last_read_turn"], rec["size_chars"] = turn, size
            rec["reads"] += 1
        for path in facts["modified_files"]:
            rec = self._file(path)
            rec["last_modified_turn"] = turn
            rec["modifications"] += 1
        stamped = stamp["exit_code"] if isinstance(stamp.get("exit_code"), int) else None
        for fact in facts["commands"]:
            code = stamped if fact["exit_code"] is None else fact["exit_code"]
            ok = fact["ok"]
            if ok is None and code is not None:
                ok = code == 0
            self.state["commands"].append(
                CommandRecord(
                    command=fact["command"], exit_code=code, ok=ok, turn=turn, message_id=result.id
                )
            )
        del self.state["commands"][: -self.max_commands]
        # what an error without its own command is filed under, and what a success closes
        tool = str(call.get("name") or result.name or "tool")
        source = facts["commands"][-1]["command"] if facts["commands"] else tool
        if facts["errors"]:
            self.state["errors"].extend(
                ErrorRecord(
                    source=err["command"] or source,
                    lines=list(err["lines"]),
                    turn=turn,
                    message_id=result.id,
                    open=True,
                )
                for err in facts["errors"]
            )
            del self.state["errors"][: -self.max_errors]
        elif result.status != "error":
            for record in self.state["errors"]:
                if record["source"] == source:
                    record["open"] = False

    def _file(self, path: str) -> FileRecord:
        blank = FileRecord(
            path=path,
            last_read_turn=None,
            last_modified_turn=None,
            size_chars=None,
            reads=0,
            modifications=0,
        )
        return self.state["files"].setdefault(path, blank)

    def files(self, path: str | None = None) -> list[FileRecord]:
        """Files touched, most recently touched first (``path``: a substring filter)."""
        recs = [r for r in self.state["files"].values() if not path or path in r["path"]]
        return sorted(
            recs, key=lambda r: -max(r["last_read_turn"] or 0, r["last_modified_turn"] or 0)
        )

    def commands(self, path: str | None = None) -> list[CommandRecord]:
        """Commands run, oldest first (``path``: a substring of the command)."""
        return [c for c in self.state["commands"] if not path or path in c["command"]]

    def open_errors(self, path: str | None = None) -> list[ErrorRecord]:
        """Errors not followed by a success of the same command or tool."""
        return [
            e
            for e in self.state["errors"]
            if e["open"]
            and (not path or path in e["source"] or any(path in ln for ln in e["lines"]))
        ]

    def render(self, kind: QueryKind = "all", *, path: str | None = None, limit: int = 20) -> str:
        """The working memory (or one part of it) as text for the model."""
        if kind not in ("all", "files", "commands", "errors"):
            msg = f"kind must be one of all, files, commands, errors; got {kind!r}."
            raise ConfigError(msg)
        filtered = f", filtered by {path!r}" if path else ""
        out = [f"Working memory (turn {self.state['turn']}){filtered}"]
        if kind in ("all", "files"):
            files = self.files(path)[:limit]
            out.append("Files:" if files else "Files: none")
            out.extend(f"- {_file_line(r)}" for r in files)
        if kind in ("all", "commands"):
            cmds = self.commands(path)[-limit:]
            out.append("Commands:" if cmds else "Commands: none")
            out.extend(f"- [turn {c['turn']}] {_clip(c['command'])} -> {_exit(c)}" for c in cmds)
        if kind in ("all", "errors"):
            errs = self.open_errors(path)[-limit:]
            out.append("Open errors:" if errs else "Open errors: none")
            out.extend(
                f"- [turn {e['turn']}] {_clip(e['source'])}: {_clip(' | '.join(e['lines'][:3]))}"
                for e in errs
            )
        return escape_delimiters("\n".join(out))


def _clip(text: str) -> str:
    return clip(" ".join(text.split()), _MAX_LINE)


def _exit(c: CommandRecord) -> str:
    if c["exit_code"] is not None:
        return f"exit {c['exit_code']}"
    return {True: "ok", False: "failed", None: "exit code unknown"}[c["ok"]]


def _file_line(r: FileRecord) -> str:
    parts = []
    if r["last_read_turn"] is not None:
        size = f" ({r['size_chars']:,} chars)" if r["size_chars"] is not None else ""
        parts.append(f"read turn {r['last_read_turn']}{size}")
    if r["last_modified_turn"] is not None:
        parts.append(f"modified turn {r['last_modified_turn']}")
    return f"{_clip(r['path'])}: {', '.join(parts)}"


_WORD = re.compile(r"[\w][\w.\-]*\w|\w", re.UNICODE)
_STOP = frozenset(
    "a an and are as at be by do for from has have i in is it its of on or that the this to was "
    "we were what when where which who will with you your".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-case keywords of ``text`` (stop words dropped)."""
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if w not in _STOP]


def keyword_scores(query: str, documents: Sequence[str]) -> list[float]:
    """BM25 scores of ``documents`` for ``query`` (0 for a document sharing no keyword)."""
    terms = set(tokenize(query))
    if not terms or not documents:
        return [0.0] * len(documents)
    docs = [Counter(tokenize(d)) for d in documents]
    n = len(docs)
    avg = sum(sum(d.values()) for d in docs) / n or 1.0
    df = {t: sum(1 for d in docs if t in d) for t in terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}

    def score(d: Counter[str]) -> float:
        norm = 1.2 * (0.25 + 0.75 * sum(d.values()) / avg)
        return sum((idf[t] * d[t] * 2.2 / (d[t] + norm) for t in terms if d[t]), 0.0)

    return [score(d) for d in docs]


def render_memory_block(
    facts: Iterable[str], *, max_tokens: int, count_tokens: TokenCounter | TextCounter | None = None
) -> str | None:
    """A block of remembered facts within ``max_tokens`` (None when none fits)."""
    count = text_counter(count_tokens)
    lines = ["Long-term memory (retrieved for this request; may be outdated):"]
    used = count(lines[0])
    for fact in facts:
        line = "- " + escape_delimiters(" ".join(str(fact).split()))
        cost = count(line) + 1
        if used + cost <= max_tokens:
            lines.append(line)
            used += cost
    return "\n".join(lines) if len(lines) > 1 else None
