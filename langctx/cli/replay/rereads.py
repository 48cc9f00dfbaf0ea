"""The re-read tax: for every read of a file the transcript makes after a fold, whether the
file's latest content was already in langctx's request (a re-read a model would not have needed).

A read counts when its result is the file (:func:`~langctx.files_in_hand.shows_content`, the
facts' tool rules) and the agent had seen the file's latest content before it: an earlier such
read or a whole write, with no modification since. The content is in the request when its text
is in one of the request's messages (a kept tool result, or the files in hand of the summary
block); an outline does not count.

Example:
    >>> from langchain_core.messages import AIMessage, ToolMessage
    >>> call = lambda i: AIMessage("", tool_calls=[{"id": i, "name": "read_file", "args": {"path": "a.py"}}])
    >>> log = [call("c1"), ToolMessage("x = 1", tool_call_id="c1"), call("c2")]
    >>> tracker = Rereads(log)
    >>> tracker.add(log[:2])
    >>> tracker.check(log[2], [ToolMessage("x = 1", tool_call_id="c1")])
    (1, 1)
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langctx.facts import FileTouch, file_touches
from langctx.facts.calls import text_of
from langctx.files_in_hand import shows_content, written_text


class Rereads:
    """The latest content the agent saw of each file, message by message of a session."""

    def __init__(self, log: Sequence[BaseMessage]) -> None:
        self._by_call: dict[str | None, list[FileTouch]] = {}
        for touch in file_touches(log):
            self._by_call.setdefault(touch.call_id, []).append(touch)
        self._latest: dict[str, str | None] = {}  # None: modified since it was seen
        self._pending: dict[str, str] = {}

    def _reads(self, message: AIMessage) -> list[FileTouch]:
        out: list[FileTouch] = []
        for call in message.tool_calls:
            touches = self._by_call.get(call.get("id"), [])
            reads = sum(1 for t in touches if t.role == "read")
            out += [t for t in touches if shows_content(t, reads)]
        return out

    def add(self, batch: Sequence[BaseMessage]) -> None:
        """Follow ``batch`` (as the memory was given it)."""
        for message in batch:
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    touches = self._by_call.get(call.get("id"), [])
                    for touch in touches:
                        if touch.role == "modified":
                            self._latest[touch.path] = written_text(touch, len(touches))
                for touch in self._reads(message):
                    self._pending[str(touch.call_id)] = touch.path
            elif isinstance(message, ToolMessage):
                path = self._pending.pop(message.tool_call_id, None)
                text = text_of(message.content).strip()
                if path is not None and text and message.status != "error":
                    self._latest[path] = text

    def check(self, message: BaseMessage, request: Sequence[BaseMessage]) -> tuple[int, int]:
        """``(re-reads of seen, unchanged files, of them already in the request)`` made by the
        calls of ``message`` (an AI message), given the ``request`` it was produced from."""
        if not isinstance(message, AIMessage):
            return 0, 0
        seen = [t for t in self._reads(message) if self._latest.get(t.path)]
        if not seen:
            return 0, 0
        texts = [m.text for m in request]
        held = sum(1 for t in seen if any(str(self._latest[t.path]) in x for x in texts))
        return len(seen), held
