"""Context-mode: tool outputs reduced by content kind (:func:`detect_kind`) before they reach memory.

Example:
    >>> reduce_output("ok") is None  # small outputs pass through
    True
"""

from langctx.context_mode.detect import detect_kind
from langctx.context_mode.outputs import CONTENT_KINDS, ContentKind, OutputMeta, Reduction
from langctx.context_mode.reduce import (
    DEFAULT_MAX_INLINE_TOKENS,
    MIN_INLINE_TOKENS,
    build_meta,
    reduce_output,
)
from langctx.context_mode.reducers import REDUCERS, Reducer
from langctx.context_mode.sanitize import clean_terminal
from langctx.markers import escape_delimiters

__all__ = [
    "CONTENT_KINDS",
    "DEFAULT_MAX_INLINE_TOKENS",
    "MIN_INLINE_TOKENS",
    "REDUCERS",
    "ContentKind",
    "OutputMeta",
    "Reducer",
    "Reduction",
    "build_meta",
    "clean_terminal",
    "detect_kind",
    "escape_delimiters",
    "reduce_output",
]
