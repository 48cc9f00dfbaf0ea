"""The values Context-mode passes around: a content kind, what is known about an output, a reduction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, get_args

from langctx.tokens import TextCounter, count_tokens_approximately

ContentKind = Literal["html", "table", "json", "log", "stack_trace", "source", "text", "binary"]
"""What a tool output holds; each kind has its own reducer (``binary`` only from ``reduce_output``)."""

CONTENT_KINDS: tuple[ContentKind, ...] = get_args(ContentKind)
"""Every :data:`ContentKind`, in declaration order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OutputMeta:
    """What is known about a tool output besides its text (reducers copy it into their header)."""

    tool_name: str | None = None
    args: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """Arguments of the tool call (hints such as the path of a file that was read)."""
    path: str | None = None
    """Path of the file the output shows (from the tool arguments or the output)."""
    original_chars: int = 0
    original_tokens: int = 0
    """As ``count_tokens`` counts them."""
    exit_code: int | None = None
    """Exit code of the command, when reported or stated in the output."""
    duration: str | None = None
    """How long the command took, as the output states it (for example ``"1.2s"``)."""
    count_tokens: TextCounter = count_tokens_approximately


@dataclass(frozen=True, slots=True, kw_only=True)
class Reduction:
    """A tool output reduced to fit the context.

    Example:
        >>> Reduction(text="[...]", kind="text", original_chars=9000, original_tokens=2250,
        ...           reduced_tokens=2, removed="lines 40-260").saved_tokens
        2248
    """

    text: str
    """A metadata header, the kept content, a footer saying what was cut."""
    kind: ContentKind
    original_chars: int
    original_tokens: int
    reduced_tokens: int
    """Tokens of :attr:`text` (same counter as :attr:`original_tokens`)."""
    removed: str
    """One line describing what was dropped."""

    @property
    def saved_tokens(self) -> int:
        """Tokens saved by the reduction (never negative)."""
        return max(0, self.original_tokens - self.reduced_tokens)
