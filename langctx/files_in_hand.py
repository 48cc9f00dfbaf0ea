"""Files in hand: the latest content the agent saw of the files it read or wrote most recently,
kept by each fold (a bounded part of its entry) and shown in the summary block.

A fold walks what it folds, then what it keeps verbatim, with the rules of
:func:`~langctx.facts.extract_facts`: a read whose result is the file (a read tool naming one
file, ``cat``/``sed -n``/``head``) gives its content, a write giving the whole text gives what was
written, any other modification makes the content stale (dropped, and said), a read in the kept
messages leaves the content where it is. Newest first, at most :data:`MAX_FILES`, within
``files_share`` of the budget; a file larger than the room left is shown by Context-mode's outline.

Example:
    >>> from langchain_core.messages import AIMessage, ToolMessage
    >>> call = {"id": "c1", "name": "read_file", "args": {"path": "a.py"}}
    >>> folded = [AIMessage("", tool_calls=[call]), ToolMessage("x = 1", tool_call_id="c1")]
    >>> part = fold_files(None, folded, [], max_tokens=500, count=len)
    >>> [(f["path"], f["seen"], f["text"]) for f in part["items"]]
    [('a.py', 'read', 'x = 1')]
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langctx.facts import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    FileToolSpec,
    FileTouch,
    file_touches,
    tool_name_words,
)
from langctx.facts.calls import clip, text_of
from langctx.markers import (
    FILE_CLOSE,
    FILES_CLOSE,
    FILES_OPEN,
    SUMMARY_ID_PREFIX,
    escape_delimiters,
    file_open,
)
from langctx.monotone import largest
from langctx.source_outline import language_for_path, outline_source, split_listing

FILES_VERSION = 1
"""Version of an entry's ``files`` part."""
MAX_FILES = 5
"""Most files shown (Claude Code restores up to 5 after it compacts)."""
MAX_DROPPED = 8
"""Most dropped files named (the rest counted)."""
NOTES_TOKENS = 80
"""Room kept for the lines naming the files not shown."""
MIN_OUTLINE_TOKENS = 100
"""The least room an outline is made for (Context-mode's smallest inline size)."""
_PEEK_LINES = 40

Seen = Literal["read", "written", "outline"]
Count = Callable[[str], int]


class FileItem(TypedDict):
    """One file shown: its path, what the agent saw (or its outline) and its tokens."""

    path: str
    seen: Seen
    text: str
    tokens: int


class DroppedFile(TypedDict):
    """A file whose content the agent saw but is not shown, and why."""

    path: str
    why: str


class FilesPart(TypedDict):
    """The files in hand as of one fold (``CompactionEntry["files"]``), newest first."""

    v: int
    items: list[FileItem]
    dropped: list[DroppedFile]
    more_dropped: int


STALE = "modified after it was read, not read again"
NO_ROOM = "no room left in the files share"
OLDER = f"beyond the {MAX_FILES} most recent files"

_VIEWERS = frozenset("cat nl head tail sed bat batcat less more".split())
_NOT_CONTENT_WORDS = frozenset("grep search find glob list ls tree diff".split())
_WRITTEN_KEYS = ("content", "file_text", "contents")
_EDIT_WORDS = frozenset(
    "append insert edit replace patch delete remove move copy rename undo multiedit".split()
)
_EDIT_KEYS = frozenset("old_str old_string diff patch edits insert_line new_str".split())


@dataclass(slots=True)
class _Seen:
    text: str | None  # None: stale (why says it) or in the kept messages
    seen: Seen = "read"
    why: str = ""


def shows_content(touch: FileTouch, reads_in_call: int) -> bool:
    """Whether the result of a read is the file's content (one file, a viewer, not a search)."""
    if touch.role != "read" or touch.call_id is None or reads_in_call != 1:
        return False
    if touch.shell is not None:
        shell = touch.shell
        return shell.inspects_only and not shell.modified and set(shell.programs) <= _VIEWERS
    return not set(tool_name_words(touch.name)) & _NOT_CONTENT_WORDS


def written_text(touch: FileTouch, touches_in_call: int) -> str | None:
    """The whole text a write put in the file, when its call gives it (None: an edit)."""
    if touch.role != "modified" or touch.shell is not None or touches_in_call != 1:
        return None
    args = touch.args
    text = next((args[k] for k in _WRITTEN_KEYS if isinstance(args.get(k), str)), None)
    if text is None or _EDIT_KEYS & args.keys():
        return None
    if args.get("command") == "create":  # an editor tool's create (str_replace_editor)
        return text
    return None if set(tool_name_words(touch.name)) & _EDIT_WORDS else text


class _Walk:
    """The files seen, oldest first, updated message by message."""

    def __init__(self, tools: Mapping[str, FileToolSpec], commands: Collection[str]) -> None:
        self.files: dict[str, _Seen] = {}
        self._tools, self._commands = tools, commands
        self._pending: dict[str, str] = {}  # call id -> the path its result shows

    def _put(self, path: str, seen: _Seen) -> None:
        self.files.pop(path, None)
        self.files[path] = seen

    def walk(self, messages: Sequence[BaseMessage], *, kept: bool) -> None:
        touches = file_touches(messages, file_tools=self._tools, command_tools=self._commands)
        by_call: dict[str | None, list[FileTouch]] = {}
        for touch in touches:
            by_call.setdefault(touch.call_id, []).append(touch)
        for message in messages:
            if isinstance(message, AIMessage):
                ids = {tc.get("id") for tc in message.tool_calls}
                for call_id in ids & by_call.keys():
                    self._calls(by_call[call_id], kept=kept)
            elif isinstance(message, ToolMessage):
                self._result(message, kept=kept)

    def _calls(self, touches: list[FileTouch], *, kept: bool) -> None:
        reads = sum(1 for t in touches if t.role == "read")
        for touch in touches:
            if touch.role == "read":
                if shows_content(touch, reads):
                    self._pending[str(touch.call_id)] = touch.path
                continue
            text = written_text(touch, len(touches))
            if text is not None and not kept:
                self._put(touch.path, _Seen(text, "written"))
            elif kept and text is not None:
                self._put(touch.path, _Seen(None))  # what was written is in the kept messages
            elif touch.path in self.files and self.files[touch.path].text is not None:
                self._put(touch.path, _Seen(None, why=STALE))
            else:
                self.files.pop(touch.path, None)

    def _result(self, message: ToolMessage, *, kept: bool) -> None:
        path = self._pending.pop(message.tool_call_id, None)
        if path is None or message.status == "error":
            return
        if message.additional_kwargs.get("synthetic") is True:
            return
        text = text_of(message.content)
        if text.strip():
            self._put(path, _Seen(None) if kept else _Seen(text))


def fold_files(
    previous: Mapping[str, Any] | None,
    folded: Sequence[BaseMessage],
    kept: Sequence[BaseMessage],
    *,
    max_tokens: int,
    count: Count,
    file_tools: Mapping[str, FileToolSpec] = DEFAULT_FILE_TOOLS,
    command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS,
) -> FilesPart:
    """The files in hand after a fold: ``previous`` (the last fold's part), then what it folds,
    then what it keeps verbatim (stale edits and re-reads), chosen within ``max_tokens``."""
    run = _Walk(file_tools, command_tools)
    for item in reversed(stored_items(previous)):
        run.files[item["path"]] = _Seen(item["text"], item["seen"])
    run.walk(folded, kept=False)
    run.walk(kept, kept=True)
    return _chosen(list(reversed(run.files.items())), max_tokens, count)


def _chosen(newest: list[tuple[str, _Seen]], max_tokens: int, count: Count) -> FilesPart:
    items: list[FileItem] = []
    dropped: list[DroppedFile] = []
    room = max_tokens - count(_text([], [], 0)) - NOTES_TOKENS
    for path, seen in newest:
        if seen.text is None:
            if seen.why:
                dropped.append(DroppedFile(path=path, why=seen.why))
            continue
        if len(items) == MAX_FILES:
            dropped.append(DroppedFile(path=path, why=OLDER))
            continue
        item = _fitted(path, seen, room, max_tokens, count)
        if item is None:
            dropped.append(DroppedFile(path=path, why=NO_ROOM))
            continue
        items.append(item)
        room -= count(_file_block(item))
    more = max(0, len(dropped) - MAX_DROPPED)
    return FilesPart(v=FILES_VERSION, items=items, dropped=dropped[:MAX_DROPPED], more_dropped=more)


def _fitted(path: str, seen: _Seen, room: int, share: int, count: Count) -> FileItem | None:
    """The file whole when it fits ``room``, else its outline (at most half the share)."""
    text = str(seen.text)
    tokens = count(text)
    room -= count(_file_block(FileItem(path=path, seen="outline", text="", tokens=0)))
    if tokens <= room:
        return FileItem(path=path, seen=seen.seen, text=text, tokens=tokens)
    cap = min(room, max(MIN_OUTLINE_TOKENS, share // 2))
    if cap < MIN_OUTLINE_TOKENS:
        return None
    outline = outline_file(path, text, max_tokens=cap, count=count)
    tokens = count(outline)
    return (
        FileItem(path=path, seen="outline", text=outline, tokens=tokens) if tokens <= room else None
    )


def outline_file(path: str, text: str, *, max_tokens: int, count: Count) -> str:
    """Context-mode's outline of a file's ``text`` (imports, declarations by line; its first
    lines when it declares nothing), as many lines as fit ``max_tokens``.

    Example:
        >>> outline_file("a.py", "import os\\n\\ndef f():\\n    return 1\\n", max_tokens=100, count=len)
        'python · 5 lines, outlined (the body is not shown)\\nImports: os\\nL3 def f():'
    """
    listing = split_listing(text)
    language = language_for_path(path)
    outline = outline_source(listing.code, language=language, numbers=listing.numbers)
    head = [f"{language or 'text'} · {len(listing.code):,} lines, outlined (the body is not shown)"]
    if outline.imports:
        head.append(clip("Imports: " + ", ".join(outline.imports), 320))
    body = [f"L{d.line} {'  ' * d.depth}{clip(d.text, 110)}" for d in outline.declarations]
    if not body:
        pairs = zip(listing.numbers, listing.code, strict=False)
        body = [f"L{n} {clip(code, 160)}" for n, code in pairs if code.strip()][:_PEEK_LINES]

    def text_of_first(k: int) -> str:
        more = [f"(+{len(body) - k:,} more lines of the outline)"] if k < len(body) else []
        return "\n".join([*head, *body[:k], *more])

    return text_of_first(largest(lambda k: count(text_of_first(k)) <= max_tokens, len(body)))


def stored_items(part: Mapping[str, Any] | None) -> list[FileItem]:
    """The well-formed items of a stored part (state is untrusted: the rest is ignored)."""
    items = part.get("items") if isinstance(part, Mapping) else None
    if not isinstance(items, list):
        return []
    return [
        FileItem(path=i["path"], seen=i["seen"], text=i["text"], tokens=i["tokens"])
        for i in items[:MAX_FILES]
        if isinstance(i, Mapping)
        and isinstance(i.get("path"), str)
        and i.get("seen") in ("read", "written", "outline")
        and isinstance(i.get("text"), str)
        and isinstance(i.get("tokens"), int)
    ]


def _stored_dropped(part: Mapping[str, Any]) -> tuple[list[DroppedFile], int]:
    dropped = part.get("dropped")
    rows = [
        DroppedFile(path=d["path"], why=d["why"])
        for d in (dropped if isinstance(dropped, list) else [])[:MAX_DROPPED]
        if isinstance(d, Mapping)
        and isinstance(d.get("path"), str)
        and isinstance(d.get("why"), str)
    ]
    more = part.get("more_dropped")
    return rows, more if isinstance(more, int) and more >= 0 else 0


FILES_NOTE = (
    "The latest content the agent saw of the files it read or wrote most recently, as of the "
    "last compaction, newest first (a later edit in the conversation below supersedes it):"
)
_SEEN_TEXT = {"read": "read", "written": "written", "outline": "outline of the content read"}


def render_files(part: Mapping[str, Any] | None, *, max_tokens: int, count: Count) -> str:
    """The files in hand of ``part`` within ``max_tokens`` (newest first; the others named with
    why they are not shown), or "" when there is nothing to say or no room for it."""
    if not isinstance(part, Mapping) or max_tokens <= 0:
        return ""
    items = stored_items(part)
    dropped, more = _stored_dropped(part)
    shown: list[str] = []
    for n, item in enumerate(items):
        block = _file_block(item)
        if count(_text([*shown, block], dropped, more)) <= max_tokens:
            shown.append(block)
        else:
            dropped = [DroppedFile(path=i["path"], why=NO_ROOM) for i in items[n:]] + dropped
            break
    while True:
        text = _text(shown, dropped, more)
        if count(text) <= max_tokens:
            return text if shown or dropped or more else ""
        if not dropped:
            return ""
        more += 1
        dropped = dropped[:-1]


def _file_block(item: FileItem) -> str:
    opened = file_open(path=item["path"], seen=_SEEN_TEXT[item["seen"]])
    return f"{opened}\n{escape_delimiters(item['text'])}\n{FILE_CLOSE}"


def _text(shown: Iterable[str], dropped: Sequence[DroppedFile], more: int) -> str:
    whys: dict[str, list[str]] = {}
    for d in dropped:
        whys.setdefault(d["why"], []).append(escape_delimiters(d["path"]))
    notes = [f"Not shown ({why}): {', '.join(paths)}." for why, paths in whys.items()]
    if more:
        notes.append(f"Not shown either: {more} earlier files.")
    return "\n".join([FILES_OPEN, FILES_NOTE, *shown, *notes, FILES_CLOSE])


def files_text(request: Sequence[BaseMessage]) -> str:
    """The files in hand of the request's summary block ("" when it shows none)."""
    for m in request:
        if str(m.id or "").startswith(SUMMARY_ID_PREFIX):
            text = m.text
            start, end = text.find(FILES_OPEN), text.rfind(FILES_CLOSE)
            if start >= 0 and end > start:
                return text[start : end + len(FILES_CLOSE)]
    return ""
