"""One reducer per content kind, each ``(text, *, meta, budget_tokens) -> Reduction``.

Example:
    >>> from langctx.context_mode.reducers import REDUCERS
    >>> sorted(REDUCERS)
    ['binary', 'html', 'json', 'log', 'source', 'stack_trace', 'table', 'text']
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Protocol

from langctx.context_mode.outputs import ContentKind, OutputMeta, Reduction
from langctx.context_mode.reducers.binary import reduce_binary
from langctx.context_mode.reducers.html import reduce_html
from langctx.context_mode.reducers.json_data import reduce_json
from langctx.context_mode.reducers.log import reduce_log
from langctx.context_mode.reducers.source import reduce_source
from langctx.context_mode.reducers.stack_trace import reduce_stack_trace
from langctx.context_mode.reducers.table import reduce_table
from langctx.context_mode.reducers.text import reduce_text

__all__ = ["REDUCERS", "Reducer"]


class Reducer(Protocol):
    """Reduces one kind of output (``meta``: tool, sizes, exit code) to ``budget_tokens`` tokens."""

    def __call__(self, text: str, *, meta: OutputMeta, budget_tokens: int) -> Reduction: ...


REDUCERS: Mapping[ContentKind, Reducer] = MappingProxyType(
    {
        "html": reduce_html,
        "table": reduce_table,
        "json": reduce_json,
        "log": reduce_log,
        "stack_trace": reduce_stack_trace,
        "source": reduce_source,
        "text": reduce_text,
        "binary": reduce_binary,
    }
)
"""The reducer of each content kind."""
