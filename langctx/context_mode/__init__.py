"""Context-mode: tool outputs are reduced before they reach memory.

Deterministic, offline core: :func:`reduce_output` passes small outputs through and reduces large ones
by content kind (:func:`detect_kind`): HTML to visible text and interactive elements, tables and JSON
to columns and first rows, logs to errors, warnings and tracebacks, stack traces to exception and
frames, source files to their outline, anything else to head and tail. Every reduction keeps the
output's metadata and says what it removed.

Example:
    >>> from langctx.context_mode import reduce_output
    >>> reduce_output("ok") is None
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
from langctx.context_mode.sanitize import clean_terminal, escape_delimiters

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
