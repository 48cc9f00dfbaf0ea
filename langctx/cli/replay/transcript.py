"""Sessions in no format langctx knows by name: any JSON or JSONL list of role/content records.

Agents and datasets write their transcripts as lists of records that each say who spoke and what:
``{"role": "user", "content": ...}`` under ``messages``, ``history`` or ``trajectory``
(SWE-agent, mini-swe-agent), ``{"type": "gemini", "content": ...}`` (Gemini CLI),
``{"from": "human", "value": ...}`` under ``conversations`` (ShareGPT), ``{"speaker": ...,
"text": ...}``. :func:`find_turns` finds the longest such list in a document (at most three levels
down); :func:`read_turns` reads it as messages: the speaker by a role-like key (``role``,
``from``, ``author``, ``speaker``, ``sender``, ``type``, ``source``) mapped by its words, the text
by a content-like key (``content``, ``text``, ``value``, ``message``, ``parts``). Tool calls in
OpenAI, Anthropic or Gemini shapes become calls; a tool result is answered to its call by id, else
to the oldest unanswered call before it; one with no call open is added to the AI message before
it as a call of the tool it names (said in the notes), so the messages stay provider-valid.

Example:
    >>> turns = find_turns({"history": [{"role": "user", "content": "Fix it"},
    ...                                  {"role": "assistant", "content": "Done"}]})
    >>> from langctx.cli.replay.formats import _flatten, _tool_call
    >>> [m.type for m in read_turns(turns, "s", tool_call=_tool_call, flatten=_flatten)[0]]
    ['human', 'ai']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

__all__ = ["find_turns", "read_turns", "speaker"]

ROLE_KEYS = ("role", "from", "author", "speaker", "sender", "type", "source")
CONTENT_KEYS = ("content", "text", "value", "message", "parts", "output")
_SPEAKERS: Mapping[str, str] = {
    **dict.fromkeys(("user", "human", "customer", "person", "me"), "human"),
    **dict.fromkeys(
        ("assistant", "ai", "model", "gemini", "bot", "gpt", "agent", "chatbot", "claude", "llm"),
        "ai",
    ),
    **dict.fromkeys(("system", "developer", "instruction", "instructions", "prompt"), "system"),
    **dict.fromkeys(
        ("tool", "function", "observation", "tool_result", "ipython", "environment", "env"), "tool"
    ),
}
_MIN_SHARE = 0.8  # of a list's items that must name a speaker for it to be a transcript


def speaker(record: object) -> str | None:
    """``"human"``, ``"ai"``, ``"system"`` or ``"tool"`` for a record that names its speaker.

    Example:
        >>> speaker({"from": "gpt", "value": "hi"}), speaker({"author": {"role": "user"}})
        ('ai', 'human')
    """
    if not isinstance(record, Mapping):
        return None
    for key in ROLE_KEYS:
        value = record.get(key)
        if isinstance(value, Mapping):
            value = value.get("role") or value.get("name")
        if isinstance(value, str) and (found := _SPEAKERS.get(value.strip().lower())):
            return found
    return None


def find_turns(doc: object, depth: int = 3) -> list[Mapping[str, Any]] | None:
    """The longest list of records in ``doc`` (itself, or a value at most ``depth`` levels down)
    whose items name a speaker (at least 80% of them), or ``None``."""
    best: list[Mapping[str, Any]] | None = None
    for candidate in _lists(doc, depth):
        named = sum(speaker(item) is not None for item in candidate)
        if candidate and named >= _MIN_SHARE * len(candidate) and len(candidate) > len(best or ()):
            best = [item for item in candidate if isinstance(item, Mapping)]
    return best


def _lists(doc: object, depth: int) -> Iterable[list[Any]]:
    if isinstance(doc, list):
        yield doc
    if depth > 0 and isinstance(doc, Mapping | list):
        for value in doc.values() if isinstance(doc, Mapping) else doc[:1]:
            yield from _lists(value, depth - 1)


def read_turns(
    turns: Sequence[Mapping[str, Any]],
    name: str,
    *,
    tool_call: Callable[[Any, str], dict[str, Any] | None] | None = None,
    flatten: Callable[[Any], str] | None = None,
) -> tuple[list[BaseMessage], list[str]]:
    """The messages of ``turns`` (ids ``"<name>:t<index>"``) and notes on what was assumed."""
    from langctx.cli.replay.formats import _flatten, _tool_call  # they import this module

    reading = _Turns(name, tool_call or _tool_call, flatten or _flatten)
    for i, record in enumerate(turns):
        reading.add(record, i)
    return reading.out, reading.notes


class _Turns:
    def __init__(self, name: str, tool_call: Callable[..., Any], flatten: Callable[..., str]):
        self.name, self.tool_call, self.flatten = name, tool_call, flatten
        self.out: list[BaseMessage] = []
        self.notes: list[str] = []
        self.open: list[str] = []  # ids of the calls not answered yet, oldest first

    def add(self, record: Mapping[str, Any], i: int) -> None:
        who, mid = speaker(record), f"{self.name}:t{i}"
        text = self._text(record)
        if who == "ai":
            self._ai(record, text, mid)
        elif who == "tool":
            self._tool(record, text, mid)
        elif who == "system":
            self.out.append(SystemMessage(text, id=mid))
        elif who == "human":
            self.out.append(HumanMessage(text, id=mid))

    def _text(self, record: Mapping[str, Any]) -> str:
        for key in CONTENT_KEYS:
            value = record.get(key)
            if key == "parts" and isinstance(value, list):  # Gemini: [{"text": ...}, ...]
                return "\n".join(
                    str(p["text"]) for p in value if isinstance(p, Mapping) and "text" in p
                )
            if value is not None and not (key == "message" and isinstance(value, Mapping)):
                return self.flatten(value)
        return ""

    def _ai(self, record: Mapping[str, Any], text: str, mid: str) -> None:
        raw = [*(record.get("tool_calls") or ()), *(record.get("toolCalls") or ())]
        content = record.get("content")
        if isinstance(content, list):  # Anthropic tool_use blocks
            raw += [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        calls = [c for k, r in enumerate(raw) if (c := self.tool_call(r, f"{mid}-call{k}"))]
        self.out.append(AIMessage(text, id=mid, tool_calls=calls))
        self.open = [c["id"] for c in calls]
        for k, r in enumerate(raw):  # Gemini CLI records a call's result inside the call
            if isinstance(r, Mapping) and r.get("result") is not None and k < len(calls):
                result = json.dumps(r["result"], ensure_ascii=False)
                self._answer(calls[k]["id"], result, f"{mid}-result{k}", calls[k]["name"])

    def _tool(self, record: Mapping[str, Any], text: str, mid: str) -> None:
        call_id = next(
            (str(record[k]) for k in ("tool_call_id", "toolCallId", "call_id") if record.get(k)),
            None,
        )
        tool = record.get("name") or record.get("tool") or "tool"
        if call_id not in self.open:
            call_id = self.open[0] if self.open else self._add_call(str(tool), mid)
        self._answer(call_id, text, mid, str(tool))

    def _answer(self, call_id: str, text: str, mid: str, tool: str) -> None:
        self.out.append(ToolMessage(text, id=mid, tool_call_id=call_id, name=tool))
        if call_id in self.open:
            self.open.remove(call_id)

    def _add_call(self, tool: str, mid: str) -> str:
        """A call for a result that answers none: on the AI message before it, or a new one."""
        call: Any = {"id": f"{mid}-call", "name": tool, "args": {}, "type": "tool_call"}
        ai = self._last_ai()
        if ai is not None:
            ai.tool_calls = [*ai.tool_calls, call]
        else:
            self.out.append(AIMessage("", id=f"{mid}-ai", tool_calls=[call]))
        self.notes.append(f"{mid}: a {tool} result that answers no call got one")
        return str(call["id"])

    def _last_ai(self) -> AIMessage | None:
        """The last AI message when only tool results follow it."""
        for m in reversed(self.out):
            if isinstance(m, AIMessage):
                return m
            if not isinstance(m, ToolMessage):
                return None
        return None
