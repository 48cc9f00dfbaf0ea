"""Token counting: the `TokenCounter` protocol, a script-aware estimator, a tiktoken counter."""

from langctx.tokens.estimate import ApproximateCounter, count_tokens_approximately
from langctx.tokens.messages import (
    DEFAULT_CACHE_SIZE,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    TOOL_CALL_OVERHEAD_TOKENS,
    TOOL_RESULT_OVERHEAD_TOKENS,
)
from langctx.tokens.protocol import TextCounter, TokenCounter, counting_label, text_counter
from langctx.tokens.resolve import CallableCounter, TokenCounterSpec, resolve_token_counter
from langctx.tokens.tiktoken_counter import DEFAULT_ENCODING, TiktokenCounter

__all__ = [
    "DEFAULT_CACHE_SIZE",
    "DEFAULT_ENCODING",
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD_TOKENS",
    "TOOL_CALL_OVERHEAD_TOKENS",
    "TOOL_RESULT_OVERHEAD_TOKENS",
    "ApproximateCounter",
    "CallableCounter",
    "TextCounter",
    "TiktokenCounter",
    "TokenCounter",
    "TokenCounterSpec",
    "count_tokens_approximately",
    "counting_label",
    "resolve_token_counter",
    "text_counter",
]
