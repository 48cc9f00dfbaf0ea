"""ContextModeConfig: the thresholds and options of Context-mode, validated on construction.

Example:
    >>> ContextModeConfig(context_budget=8000).max_inline_tokens  # an eighth of the budget
    1000
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langctx.config import DEFAULT_OUTPUT_SHARE, DEFAULT_SUMMARY_TIMEOUT
from langctx.config_checks import check_timeout, positive
from langctx.context_mode.grep import DEFAULT_GREP_MAX_MATCHES
from langctx.context_mode.outputs import ContentKind
from langctx.context_mode.reduce import DEFAULT_MAX_INLINE_TOKENS, MIN_INLINE_TOKENS
from langctx.context_mode.references import DEFAULT_REFERENCE_MIN_TOKENS
from langctx.context_mode.summary import DEFAULT_SUMMARY_KINDS
from langctx.errors import ConfigError
from langctx.facts import DEFAULT_COMMAND_TOOLS
from langctx.facts.tools import command_tool_set

INLINE_SHARE = DEFAULT_OUTPUT_SHARE
"""Share of ``context_budget`` an inline output may take (as ``MemoryConfig.output_share``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextModeConfig:
    """Thresholds and options of Context-mode (validated on construction)."""

    max_inline_tokens: int = DEFAULT_MAX_INLINE_TOKENS
    """Outputs up to this many tokens pass through; every reduction, reference or slice fits it."""
    context_budget: int | None = None
    """Token budget of the context (the memory's max_tokens); caps max_inline_tokens at an eighth."""
    reference_min_tokens: int = DEFAULT_REFERENCE_MIN_TOKENS
    """Outputs over this many tokens are stored and referenced (at least ``max_inline_tokens``)."""
    references: bool = True
    """Store and reference outputs at all (False: reduce only; nothing is stored)."""
    reference_lost_facts: bool = True
    """Also reference an output whose reduction dropped an exit code, error type or file:line."""
    summary_kinds: frozenset[ContentKind] = field(default_factory=lambda: DEFAULT_SUMMARY_KINDS)
    """Content kinds a configured summarizer compresses (others keep the structural reduction)."""
    summary_timeout: float | None = DEFAULT_SUMMARY_TIMEOUT
    """Seconds a summarizer call may take before the reduction is used (None: no limit)."""
    grep_max_matches: int = DEFAULT_GREP_MAX_MATCHES
    """At most this many matching lines per grep result."""
    ttl_seconds: float | None = None
    """Stored outputs expire after this many seconds (None: never)."""
    command_tools: frozenset[str] = DEFAULT_COMMAND_TOOLS
    """Tools that run shell commands, whose output is reduced as a log (pass the memory's)."""

    def __post_init__(self) -> None:
        budget = self.context_budget
        if budget is not None:
            if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
                msg = f"context_budget must be a positive int (tokens) or None, got {budget!r}."
                raise ConfigError(msg)
            cap = max(MIN_INLINE_TOKENS, int(budget * INLINE_SHARE))
            if isinstance(self.max_inline_tokens, int) and self.max_inline_tokens > cap:
                object.__setattr__(self, "max_inline_tokens", cap)
        for name in ("max_inline_tokens", "reference_min_tokens", "grep_max_matches"):
            positive(name, getattr(self, name))
        if self.max_inline_tokens < MIN_INLINE_TOKENS:
            msg = f"max_inline_tokens={self.max_inline_tokens} is too small; use at least {MIN_INLINE_TOKENS}."
            raise ConfigError(msg)
        if self.reference_min_tokens < self.max_inline_tokens:
            msg = (
                f"reference_min_tokens ({self.reference_min_tokens}) must be at least "
                f"max_inline_tokens ({self.max_inline_tokens})."
            )
            raise ConfigError(msg)
        check_timeout("summary_timeout", self.summary_timeout)
        check_timeout("ttl_seconds", self.ttl_seconds)
        object.__setattr__(self, "summary_kinds", frozenset(self.summary_kinds))
        object.__setattr__(self, "command_tools", command_tool_set(self.command_tools))
