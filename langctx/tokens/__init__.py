"""Token counting: one protocol, a script-aware estimator, an exact tiktoken counter.

Every counter satisfies `TokenCounter` (:mod:`~langctx.tokens.protocol`); `resolve_token_counter`
(:mod:`~langctx.tokens.resolve`) turns any accepted spec into one.

* `ApproximateCounter` estimates from character classes, without a tokenizer. It imitates how
  BPE tokenizers split text: about one token per word or identifier piece, per run of
  punctuation, per newline, per run of indentation; about 0.76 tokens per CJK character. Code
  and logs are recognized by their punctuation, since every run of symbols costs about a token.
  On recorded agent sessions it lands within a few percent of `o200k_base` for English prose
  (~4.7 characters per token), Chinese technical prose (~1.6), source code (~3.9), command
  output (~3.4) and tool-call arguments (~3.6); see ``bench/results/estimator_ratio.md``.
* `TiktokenCounter` counts exactly with a tiktoken encoding. The vocabulary loads on first use;
  if it cannot be loaded (no network, no cache) the counter warns once and estimates instead
  (`counting_label` names what actually counts, for headers and reports).
* `CallableCounter` wraps a ``(list[BaseMessage]) -> int`` callable or a chat model's
  ``get_num_tokens_from_messages``.

A message costs its text (string content, text blocks, tool-call names and JSON arguments, its
``name``) plus `MESSAGE_OVERHEAD_TOKENS`, as in OpenAI's cookbook. Images cost a fixed
`IMAGE_TOKENS`. Counts are cached per message, so counting a growing history costs work
proportional to what is new.
"""

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
