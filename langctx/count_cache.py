"""What the stateless engine remembers across calls: message counts and descriptions, rendered
summary blocks and the token counts of their lines; bounded LRUs keyed by content, never by
identity.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langctx.tokens import ApproximateCounter
    >>> counter = CachedCounter(ApproximateCounter(), MessageCountCache(maxsize=8))
    >>> m = HumanMessage("Fix the parser in src/parse.py", id="h1")
    >>> counter.count_message(m) == counter.count_message(m), counter.cache.misses
    (True, 1)
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, NamedTuple, cast

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langctx.blocks import has_thinking, is_provider_compaction
from langctx.entries import EditEntry, covered_count
from langctx.lru import LRU
from langctx.machinery import is_substantive_task
from langctx.markers import CONTEXT_MODE_STAMP, needs_escape
from langctx.message_checks import refusal
from langctx.projection import view_message
from langctx.tokens import ApproximateCounter, TiktokenCounter, TokenCounter
from langctx.tokens.messages import DEFAULT_CACHE_SIZE, MessageCounter
from langctx.turns import tool_call_ids


class Described(NamedTuple):
    """What a message's content tells the log, computed once per content."""

    tokens: int
    view: BaseMessage | None
    """The projected form when it differs from the message (delimiters escaped), else None."""
    view_tokens: int
    thinking: bool
    """An AI message with a thinking block."""
    provider_compaction: bool
    call_ids: tuple[str, ...]
    """Ids of the tool calls it makes."""
    substantive: bool
    """A human message that :func:`~langctx.machinery.is_substantive_task` takes for a task."""
    refusal: str | None
    """Why no request may carry it (:func:`~langctx.message_checks.refusal`), or None."""


def _described(counter: TokenCounter, message: BaseMessage, tokens: int) -> Described:
    content = message.__dict__["content"]
    if isinstance(content, str):  # the common shape: no blocks, so no thinking, no compaction item
        escape = isinstance(message, ToolMessage | AIMessage) and needs_escape(content)
        view = view_message(message) if escape else message
        thinking = compaction = False
    else:
        view = view_message(message)
        thinking, compaction = has_thinking(message), is_provider_compaction(message)
    return Described(
        tokens,
        None if view is message else view,
        tokens if view is message else counter.count_message(view),
        thinking,
        compaction,
        tuple(tool_call_ids(message)) if isinstance(message, AIMessage) else (),
        isinstance(message, HumanMessage) and is_substantive_task(message),
        refusal(message),
    )


def describe(counter: TokenCounter, message: BaseMessage) -> Described:
    """``message``'s tokens, projected form, flags and tool call ids (cached by a CachedCounter)."""
    if isinstance(counter, CachedCounter):
        return counter.describe(message)
    return _described(counter, message, counter.count_message(message))


def describe_edited(
    counter: TokenCounter, message: BaseMessage, edit: EditEntry
) -> tuple[BaseMessage, int]:
    """``message`` with ``edit`` applied, and its tokens (cached for a :class:`CachedCounter`)."""
    if not isinstance(counter, CachedCounter) or message.id is None or counter._edited_slot is None:
        view = view_message(message, edit)
        return view, counter.count_message(view)
    fingerprint = hash((_fingerprint(message), _edit_digest(edit)))  # an edit id is no content
    key = (counter._edited_slot, f"{message.id}\x00{edit['id']}", fingerprint)
    found = counter.cache.get(key)
    if found is None:
        view = view_message(message, edit)
        found = (view, counter.count_message(view))
        counter.cache.put(key, found)
    return found


class MessageCountCache(LRU[tuple[int, str, int], Any]):
    """A bounded LRU: (counter slot, message id, content fingerprint) -> tokens or the message's
    :class:`Described`, with hit counts (a message's edited views are entries of their own)."""

    def __init__(self, maxsize: int = DEFAULT_CACHE_SIZE) -> None:
        super().__init__(maxsize)
        self.hits = self.misses = 0

    def get(self, key: tuple[int, str, int]) -> Any:
        """The value stored for the key (a count or a :class:`Described`), counted."""
        found = super().get(key)
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def clear(self) -> None:
        """Forget every count (a cold worker, for benchmarks)."""
        super().clear()
        self.hits = self.misses = 0


_SHARED = MessageCountCache()
_BLOCKS = LRU[Hashable, Any](256)
"""Rendered summary blocks, keyed by the entries' content digests (:func:`entry_digest`)."""


def shared_blocks() -> LRU[Hashable, Any]:
    """The process-wide cache of rendered summary blocks."""
    return _BLOCKS


_TEXTS = LRU[tuple[int, str], int](8192)
"""Token counts of the summary block's lines, keyed by counter and text (a fold renders again
the lines of requests the ledger already held)."""


def text_counter(counter: TokenCounter) -> Callable[[str], int]:
    """``counter.count_text``, shared by content across calls when the counter has a stable key
    (:func:`counter_key`); counted every time otherwise."""
    key = counter_key(counter)
    if key is None:
        return counter.count_text
    slot = _slot(key)

    def count(text: str) -> int:
        found = _TEXTS.get((slot, text))
        if found is None:
            found = counter.count_text(text)
            _TEXTS.put((slot, text), found)
        return found

    return count


_SLOTS = LRU[Hashable, int](4096)
_NEXT_SLOT = itertools.count()


def _slot(key: Hashable) -> int:
    """A small int standing for ``key`` in cache keys (never reused for another key)."""
    found = _SLOTS.get(key)
    if found is None:
        found = next(_NEXT_SLOT)
        _SLOTS.put(key, found)
    return found


def entry_digest(entry: Mapping[str, Any]) -> bytes:
    """A digest of what a summary block shows of an entry: id, level, size, summary, facts."""
    shown = (entry["id"], entry["level"], covered_count(entry), entry["summary"])
    facts = (entry.get("facts"), entry.get("read_files"), entry.get("modified_files"))
    text = repr((shown, facts)).encode("utf-8", "surrogatepass")
    return hashlib.blake2b(text, digest_size=16).digest()


def counter_key(counter: TokenCounter) -> Hashable | None:
    """What identifies a counter's counts, by value: a built-in's name and options, or the hashable
    ``cache_key`` a counter declares; None (never cached across calls) when it declares none.
    """
    if isinstance(counter, CachedCounter):
        return counter._key
    if type(counter) in (ApproximateCounter, TiktokenCounter):
        builtin = cast(MessageCounter, counter)
        return (builtin.name, builtin.message_overhead, builtin.image_tokens)
    declared = getattr(counter, "cache_key", None)
    try:
        hash(declared)
    except TypeError:
        return None
    return None if declared is None else ("declared", type(counter).__qualname__, declared)


def shared_cache() -> MessageCountCache:
    """The process-wide cache the integrations use."""
    return _SHARED


class CachedCounter:
    """A :class:`~langctx.tokens.TokenCounter` whose message counts come from a cache when known
    (messages without an id and texts are counted every time)."""

    def __init__(self, inner: TokenCounter, cache: MessageCountCache | None = None) -> None:
        self.inner = inner
        self.cache = cache if cache is not None else _SHARED
        self.name = inner.name
        # a new message is counted by the inner counter, past its own cache when it has one
        own = isinstance(inner, MessageCounter)
        own = own and type(inner).count_message is MessageCounter.count_message
        self._count_new = cast(MessageCounter, inner).count_uncached if own else inner.count_message
        key = self._key = counter_key(inner)
        # None: no stable key, nothing is cached; a message's count slot then holds its description
        self._slot = None if key is None else _slot((key, "count"))
        self._edited_slot = None if key is None else _slot((key, "edited"))

    def count_text(self, text: str) -> int:
        return self.inner.count_text(text)

    def count_message(self, message: BaseMessage) -> int:
        if message.id is None or self._slot is None:
            return self.inner.count_message(message)
        key = (self._slot, message.id, _fingerprint(message))
        found = self.cache.get(key)
        if found is None:
            found = self._count_new(message)
            self.cache.put(key, found)
        return found.tokens if isinstance(found, Described) else cast(int, found)

    def count_messages(self, messages: Sequence[BaseMessage]) -> int:
        return sum(self.count_message(m) for m in messages)

    def describe(self, message: BaseMessage) -> Described:
        """See :func:`describe`; messages without an id are described every time."""
        if message.id is None or self._slot is None:
            return _described(self, message, self.inner.count_message(message))
        key = (self._slot, message.id, _fingerprint(message))
        found = self.cache.get(key)  # a count, or its description
        if not isinstance(found, Described):
            tokens = self._count_new(message) if found is None else cast(int, found)
            found = _described(self, message, tokens)
            self.cache.put(key, found)
        return found


def _edit_digest(edit: EditEntry) -> int:
    """A hash of what an edit puts in place (its text or blocks, and its tool calls)."""
    content = edit["content"]
    calls = edit.get("tool_calls")
    return hash(
        (content if isinstance(content, str) else repr(content), repr(calls) if calls else None)
    )


def _fingerprint(message: BaseMessage) -> int:
    """A hash of everything a counter or the projection reads (non-strings through their repr)."""
    fields = message.__dict__  # the model's fields (getattr on a missing one is slow in pydantic)
    content = fields["content"]
    calls = fields.get("tool_calls")
    invalid = fields.get("invalid_tool_calls")
    extra = fields["additional_kwargs"]
    metadata = fields["response_metadata"]
    stamp = metadata.get(CONTEXT_MODE_STAMP) if metadata else None
    return hash(
        (
            fields["type"],
            content if isinstance(content, str) else repr(content),
            repr(calls) if calls else None,
            repr(invalid) if invalid else None,
            fields.get("name"),
            fields.get("tool_call_id"),  # a cached view of a tool result carries it
            fields.get("status"),
            repr(extra) if extra else None,
            stamp.get("digest") if isinstance(stamp, dict) else None,
        )
    )
