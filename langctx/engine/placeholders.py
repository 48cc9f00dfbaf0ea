"""In-place edits a compaction plans (pure decisions): large tool outputs replaced by a short note,
long tool-call arguments elided in the same shape; never at or before a live thinking block.

Example:
    >>> out = elide_args({"path": "a.py", "content": "x" * 1000})
    >>> out["path"], len(out["content"]) < 1000, "elided" in out["content"]
    ('a.py', True, True)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.messages.tool import ToolCall

from langctx.blocks import has_opaque_blocks
from langctx.entries import EditEntry, new_edit_entry
from langctx.facts import empty_facts, extract_facts, is_command_tool
from langctx.facts.failures import shown_failure_lines
from langctx.markers import ARGS_PLACEHOLDER_MARK, PLACEHOLDER_MARK

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore


def extract(memory: MemoryCore, messages: Sequence[BaseMessage]) -> Any:
    """The mechanical facts of ``messages`` with the memory's tool settings."""
    return extract_facts(
        messages, file_tools=memory._file_tools, command_tools=memory.command_tools
    )


def plan_placeholders(memory: MemoryCore, lo: int, hi: int, excess: int) -> list[EditEntry]:
    """Large low-priority tool outputs in [lo, hi) replaced by a short note, lowest priority first."""
    start = max(lo, edit_floor(memory) + 1)
    cands = [
        i
        for i in range(start, hi)
        if isinstance(memory._log[i], ToolMessage)
        and _editable(memory, i)
        and not is_subagent_report(memory, i)
    ]
    if sum(memory._view_tokens(i) for i in cands) < excess:
        return []  # replacing every one of them by nothing would not save enough: a fold it is
    cands.sort(key=lambda i: (memory.priority_of(memory._id(i)), i))
    out: list[EditEntry] = []
    saved = 0
    for i in cands:
        if saved >= excess:
            break
        edit = placeholder(memory, i)
        if edit is not None:
            out.append(edit)
            saved += edit["tokens_before"] - edit["tokens_after"]
    return out


def kept_placeholders(memory: MemoryCore, cut: int, keep: int) -> list[EditEntry]:
    """Placeholder edits for what a fold keeps (sent anew anyway) but the newest half of ``keep``."""
    n = len(memory._log)
    protect, acc = n, 0
    while protect > cut and acc + memory._view_tokens(protect - 1) <= keep // 2:
        protect -= 1
        acc += memory._view_tokens(protect)
    pinned = memory._pinned()
    return [
        edit
        for i in range(max(cut, edit_floor(memory) + 1), protect)
        if isinstance(memory._log[i], AIMessage) and i not in pinned and _editable(memory, i)
        if (edit := placeholder(memory, i)) is not None
    ]


def is_subagent_report(memory: MemoryCore, i: int) -> bool:
    """True when message ``i`` is a sub-agent's report (:mod:`langctx.subagent_reports`): it is
    kept or folded whole, never replaced by a placeholder (the fold keeps its head and tail)."""
    m, tools = memory._log[i], memory.config.subagent_tools
    if not isinstance(m, ToolMessage) or memory.config.reports_tokens <= 0:
        return False
    owner = memory._call_owner.get(m.tool_call_id)
    calls = [] if owner is None else getattr(memory._log[owner], "tool_calls", [])
    name = next((tc["name"] for tc in calls if tc.get("id") == m.tool_call_id), m.name)
    return name in tools


def _editable(memory: MemoryCore, i: int) -> bool:
    return (
        i not in memory._skip
        and memory._id(i) not in memory._edit_of
        and memory._view_tokens(i) >= memory.config.placeholder_min_tokens
    )


def placeholder(memory: MemoryCore, i: int) -> EditEntry | None:
    """The edit replacing message ``i``: a tool output by a note, long call arguments elided."""
    m, view = memory._log[i], memory._view(i)
    update: dict[str, Any]
    if isinstance(m, ToolMessage):
        update = {"content": placeholder_text(memory, i)}
    elif isinstance(view, AIMessage) and view.tool_calls and not has_opaque_blocks(m):
        update = with_calls(view.content, [elided_call(memory, tc) for tc in view.tool_calls])
    else:
        return None
    before = memory._view_tokens(i)
    after = memory.counter.count_message(view.model_copy(update=update))
    if after >= before:
        return None
    mid = memory._id(i)
    return new_edit_entry(
        message_id=mid, reason="placeholder", tokens_before=before, tokens_after=after, **update
    )


def elided_call(memory: MemoryCore, call: ToolCall) -> ToolCall:
    """``call`` with long string arguments elided; whole for a shell command or a file left unnamed."""
    if is_command_tool(call["name"], memory.command_tools):
        return call
    args = elide_args(call["args"])
    if args == call["args"]:
        return call
    facts = extract(memory, [AIMessage("", tool_calls=[call])])
    if facts["commands"]:  # a shell tool known by its name's words and its command argument
        return call
    kept = json.dumps(args, ensure_ascii=False)
    if any(f not in kept for f in [*facts["read_files"], *facts["modified_files"]]):
        return call
    return {**call, "args": args}


def placeholder_text(memory: MemoryCore, i: int) -> str:
    m = memory._log[i]
    assert isinstance(m, ToolMessage)
    owner = memory._call_owner.get(m.tool_call_id)
    calls = [] if owner is None else getattr(memory._log[owner], "tool_calls", [])
    call: dict[str, Any] = next((tc for tc in calls if tc.get("id") == m.tool_call_id), {})
    # files from the call's arguments; error lines from the output when the call failed
    facts = extract(memory, [memory._log[owner], m]) if owner is not None else empty_facts()
    files = [*facts["read_files"], *facts["modified_files"]]
    failed = [c for c in facts["commands"] if c.get("ok") is False]
    # the chosen error line and the runner's verdict beside it (``1 failed, 12 passed``)
    error_lines = [ln for e in facts["errors"][-1:] for ln in shown_failure_lines(e)]
    args = json.dumps(call.get("args", {}), ensure_ascii=False)
    args = args if len(args) <= 160 else args[:157] + "..."
    text = m.text
    parts = [
        f"{PLACEHOLDER_MARK} to save context]",
        f"tool: {m.name or call.get('name') or '?'} {args}",
        f"size: {len(text)} chars, {memory._tok[i]} tokens",
    ]
    if files:
        parts.append("files: " + ", ".join(files[:5]))
    if failed or error_lines:
        code = failed[-1].get("exit_code") if failed else None
        exit_code = f" (exit {code})" if code is not None else ""
        parts.append(f"failed{exit_code}: " + "; ".join(error_lines))
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if first:
        parts.append(f"first line: {first[:120]}")
    parts.append("The full output is kept in the log; re-run the tool if you need it.")
    return "\n".join(parts)


def edit_floor(memory: MemoryCore) -> int:
    """Index of the latest projected thinking message (-1: none); nothing at or before it is edited."""
    if not memory._thinking:
        return -1
    last = memory._thinking[-1]
    return last if last >= memory._recent_start() else -1


ELIDED_ARG_CHARS = 400
"""String arguments of a tool call longer than this are elided by a placeholder edit."""
ELIDED_HEAD, ELIDED_TAIL = 160, 80
"""Characters of an elided argument kept before and after the note."""


def elide_args(value: Any) -> Any:
    """Tool-call arguments with every string over :data:`ELIDED_ARG_CHARS` cut to head and tail."""
    return map_strings(value, _elided)


def _elided(text: str) -> str:
    if len(text) <= ELIDED_ARG_CHARS:
        return text
    cut = len(text) - ELIDED_HEAD - ELIDED_TAIL
    return f"{text[:ELIDED_HEAD]}\n{ARGS_PLACEHOLDER_MARK} {cut} chars]\n{text[-ELIDED_TAIL:]}"


def map_strings(value: Any, fn: Callable[[str], str]) -> Any:
    """``value`` with ``fn`` applied to every string in it (nested dicts and lists kept)."""
    if isinstance(value, str):
        return fn(value)
    if isinstance(value, dict):
        return {k: map_strings(v, fn) for k, v in value.items()}
    if isinstance(value, list):
        return [map_strings(v, fn) for v in value]
    return value


def with_calls(content: str | list[Any], calls: Sequence[Any]) -> dict[str, Any]:
    """The update giving a message ``calls``; its tool-call blocks carry their new args alike."""
    args = {str(tc["id"]): tc["args"] for tc in calls}
    if not isinstance(content, str):
        content = [_elided_block(b, args) for b in content]
    return {"content": content, "tool_calls": calls}


def _elided_block(block: Any, args: dict[str, Any]) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "tool_use" and block.get("id") in args:
        return {**block, "input": args[block["id"]]}
    if block.get("type") == "tool_call" and block.get("id") in args:  # LangChain's v1 blocks
        return {**block, "args": args[block["id"]]}
    if block.get("type") == "function_call" and block.get("call_id") in args:
        return {**block, "arguments": json.dumps(args[block["call_id"]], ensure_ascii=False)}
    return block
