"""Turning any token-counter spec into a `TokenCounter`; user callables and chat models as counters."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage, HumanMessage

from langctx.errors import ConfigError
from langctx.tokens.estimate import ApproximateCounter
from langctx.tokens.messages import DEFAULT_CACHE_SIZE, MessageCounter
from langctx.tokens.protocol import TokenCounter
from langctx.tokens.tiktoken_counter import DEFAULT_ENCODING, TiktokenCounter, known_encodings


class CallableCounter(MessageCounter):
    """Adapts a ``(list[BaseMessage]) -> int`` callable or a chat model, like `trim_messages`.

    Each message is counted alone (``fn([message])``, with its own overhead) and cached.

    Args:
        fn: counts a list of messages, or a chat model (``get_num_tokens_from_messages``).
        text_counter: counts plain text; default the model's ``get_num_tokens``, else
            ``fn([HumanMessage(text)])``.
        name: defaults to ``"model:<class>"`` or ``"callable:<function>"``.

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
            text_counter = text_counter or fn.get_num_tokens
            name = name or f"model:{type(fn).__name__}"
            fn = fn.get_num_tokens_from_messages
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
        if self._text_counter is not None:
            return int(self._text_counter(text))
        return int(self._fn([HumanMessage(content=text)]))

    def _count_uncached(self, message: BaseMessage) -> int:
        return int(self._fn([message]))


TokenCounterSpec = str | TokenCounter | BaseLanguageModel[Any] | Callable[[list[BaseMessage]], int]
"""Everything `resolve_token_counter` accepts."""

_COUNTER_TYPES: set[type] = set()
"""Classes whose instances passed the `TokenCounter` check."""


def resolve_token_counter(spec: TokenCounterSpec) -> TokenCounter:
    """Turn any accepted token-counter spec into a `TokenCounter`.

    Args:
        spec: ``"approximate"``; ``"tiktoken"`` (``o200k_base``); a tiktoken encoding name; a
            `TokenCounter` (returned as is); a chat model; or a ``(list[BaseMessage]) -> int``.

    Example:
        >>> resolve_token_counter("cl100k_base").name, resolve_token_counter(len).name
        ('tiktoken:cl100k_base', 'callable:len')
    """
    if isinstance(spec, str):
        if spec == "approximate":
            return ApproximateCounter()
        if spec == "tiktoken":
            return TiktokenCounter(DEFAULT_ENCODING)
        if spec in known_encodings():
            return TiktokenCounter(spec)
    elif type(spec) in _COUNTER_TYPES or isinstance(spec, TokenCounter):
        _COUNTER_TYPES.add(type(spec))  # a protocol check is slow: memories are built per call
        return cast(TokenCounter, spec)
    elif isinstance(spec, BaseLanguageModel) or callable(spec):
        return CallableCounter(spec)
    msg = (
        f"Invalid token counter {spec!r}. Use 'approximate', 'tiktoken', a tiktoken encoding "
        f"name ({', '.join(known_encodings())}), a TokenCounter, a chat model, "
        "or a function (list[BaseMessage]) -> int."
    )
    raise ConfigError(msg)
