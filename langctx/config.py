"""Configuration of a :class:`~langctx.LayeredChatMemory`: a frozen dataclass, checked on creation.

The budget: ``max_context_tokens`` (or its older name ``max_tokens``) when given; else
55% of the model's window capped at 32,000 tokens when the window is known (``context_window``,
or the chat model's ``profile["max_input_tokens"]`` in ``LangctxMiddleware``); else 8,000.

Example:
    >>> MemoryConfig(max_context_tokens=32_000).keep_recent_tokens_resolved
    6400
    >>> MemoryConfig(context_window=12_000).max_tokens_resolved
    6600
    >>> MemoryConfig(context_window=200_000).max_tokens_resolved
    32000
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any, Generic, Literal, TypedDict, TypeVar, get_args, overload

from langchain_core.messages import BaseMessage

from langctx.config_checks import (
    budget,
    check_timeout,
    non_negative,
    positive,
    ratio,
    share_or_none,
    tool_names,
)
from langctx.config_checks import size as to_size
from langctx.errors import ConfigError
from langctx.machinery import is_substantive_task
from langctx.pricing import PriceSheet, price_sheet

DEFAULT_MAX_TOKENS = 8_000
DEFAULT_WINDOW_SHARE = 0.55
DEFAULT_WINDOW_BUDGET_CAP = 32_000
"""With a known window and no budget given: ``min(cap, share * window)`` (every call pays for
what the budget lets through; 32k keeps 96-99% of the probes in ``bench/frontier.py``)."""
DEFAULT_RESERVE_SHARE = 0.25
DEFAULT_RESERVE_RATIO = 0.3
DEFAULT_RESERVE_TOKENS = 16_000
DEFAULT_PROACTIVE_RATIO = 0.8
DEFAULT_MAX_SUMMARIES = 5
DEFAULT_MERGE_COUNT = 2
DEFAULT_MAX_LEVEL2 = 2
DEFAULT_MAX_SUMMARY_TOKENS = 200
DEFAULT_SUMMARY_SHARE = 0.05
DEFAULT_USER_MESSAGES_SHARE = 0.15
DEFAULT_FILES_SHARE = 0.05
DEFAULT_REPORTS_SHARE = 0.05
DEFAULT_SUBAGENT_TOOLS: tuple[str, ...] = ("task",)
"""Tools whose result is a sub-agent's report (deepagents' ``task``; :mod:`langctx.subagent_reports`)."""
DEFAULT_KEEP_RECENT_RATIO = 0.2
DEFAULT_OUTPUT_SHARE = 0.125
DEFAULT_PLACEHOLDER_MIN_TOKENS = 400
DEFAULT_SUMMARY_TIMEOUT = 60.0
DEFAULT_SUMMARY_WAIT = 0.25
"""Seconds a fold waits for pending background summaries: a summary that lands this late is
applied now rather than one fold later; beyond it the wait is pure latency. With a 5 s summarizer
(``bench/summary_wait.py``) the worst wait added to a model call went from 2.97 s (one worker) and
5.08 s (two) to 0.27 s and 0.28 s (docs/memory.md)."""
DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS = 24_000
DEFAULT_SUMMARY_THRESHOLD_TOKENS = 0
"""Evicted tokens that wait for a model summary: 0, every fold of a configured summarizer's."""
DEFAULT_PRIORITIES: Mapping[str, int] = {
    "system": 100,
    "first_human": 90,
    "summary": 70,
    "recent_human": 60,
    "recent_ai": 50,
    "tool_result": 30,
    "context_ref": 20,
    "fetched_ref": 10,
}
"""Priorities of the article; lower is shed first inside the evictable region."""

ContextSize = tuple[Literal["tokens", "fraction"], float]  # ("tokens", 4000) or ("fraction", 0.5)

SummaryRole = Literal["human", "ai", "system"]
OversizePolicy = Literal["truncate", "error"]
OrphanPolicy = Literal["repair", "error"]

_CHOICES = {
    "summary_role": get_args(SummaryRole),
    "oversize_policy": get_args(OversizePolicy),
    "orphan_policy": get_args(OrphanPolicy),
}

_T = TypeVar("_T")


class _resolved(Generic[_T]):
    """A derived value of a frozen config, computed on first read and kept in its ``_memo``."""

    def __init__(self, fn: Callable[[Any], _T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    @overload
    def __get__(self, obj: None, owner: type) -> _resolved[_T]: ...
    @overload
    def __get__(self, obj: object, owner: type) -> _T: ...
    def __get__(self, obj: object | None, owner: type) -> _T | _resolved[_T]:
        if obj is None:
            return self
        memo: dict[str, _T] = obj._memo  # type: ignore[attr-defined]
        if self.name not in memo:
            memo[self.name] = self.fn(obj)
        return memo[self.name]


@dataclass(frozen=True, slots=True, kw_only=True)
class MemoryConfig:
    """Budget, triggers and summary limits of a layered memory (token sizes in the memory's
    counter's units; every field is described in docs/configuration.md)."""

    max_tokens: int | ContextSize | None = None
    """Budget of the projection (messages sent, not the model's output limit): tokens or a size of
    `context_window` (default 55% of it, at most 32k; 8k without a window). Also
    `max_context_tokens=`."""
    reserve_ratio: float = DEFAULT_RESERVE_RATIO
    """Share of `max_tokens` guaranteed to the newest messages."""
    context_window: int | None = None
    """The model's window: compaction also triggers above `context_window - reserve_tokens`."""
    reserve_tokens: int | None = None
    """Room left in `context_window` for the system prompt, tools and the response (default
    16k, at most a quarter of the window)."""
    keep_recent_tokens: int | ContextSize | None = None
    """The low mark: recent tokens kept after a compaction (default 20% of `max_tokens`)."""
    output_share: float = DEFAULT_OUTPUT_SHARE
    """Share of `max_tokens` one tool output may keep after a compaction (cut to head and tail)."""
    proactive_ratio: float = DEFAULT_PROACTIVE_RATIO
    """The high mark: compact when the context passes this share of `max_tokens`."""
    summary_threshold_tokens: int | None = None
    """Evicted tokens that wait for one model summary (None: 0, every fold is summarized)."""
    background_summaries: bool = True
    """Compute model summaries off the critical path (replacing the local one at the next fold)."""
    max_summaries: int = DEFAULT_MAX_SUMMARIES
    """Level-1 summaries kept before the oldest `merge_count` merge into one level-2 summary."""
    merge_count: int = DEFAULT_MERGE_COUNT
    """How many summaries merge into one of the next level."""
    max_level2: int = DEFAULT_MAX_LEVEL2
    """Level-2 summaries kept before the oldest merge into the single level-3 summary."""
    summary_share: float = DEFAULT_SUMMARY_SHARE
    """Share of `max_tokens` the summaries may take together; over it the oldest merge earlier."""
    max_summary_tokens: int | None = None
    """Hard cap per summary (default 200, less on small budgets)."""
    max_facts_tokens: int | None = None
    """Cap of the mechanical facts ledger under the summaries (0: no ledger)."""
    user_messages_share: float = DEFAULT_USER_MESSAGES_SHARE
    """Share of `max_tokens` for the folded user messages quoted in the summary block."""
    files_share: float = DEFAULT_FILES_SHARE
    """Share of `max_tokens` for the files in hand after a fold: the latest content the agent saw
    of the files it read or wrote most recently (0: none)."""
    reports_share: float = DEFAULT_REPORTS_SHARE
    """Share of `max_tokens` for the sub-agent reports after a fold: the latest report of each
    sub-agent, head and tail (0: none)."""
    subagent_tools: tuple[str, ...] = DEFAULT_SUBAGENT_TOOLS
    """Names of the tools that run a sub-agent: their results are sub-agent reports, kept after a
    fold until the same sub-agent reports again (:mod:`langctx.subagent_reports`)."""
    placeholder_min_tokens: int = DEFAULT_PLACEHOLDER_MIN_TOKENS
    """Tool outputs at least this large may become placeholders before turns are folded."""
    summary_role: SummaryRole = "human"
    """Role of the projected summary message."""
    oversize_policy: OversizePolicy = "truncate"
    """Pinned messages over their share: "truncate" (head and tail, marked) or "error"."""
    orphan_policy: OrphanPolicy = "repair"
    """A tool result whose call is unknown: "repair" (not projected, logged) or "error"."""
    summary_timeout: float | None = DEFAULT_SUMMARY_TIMEOUT
    """Seconds a summarizer call may take before the local fallback is used (None: no limit); a
    background summary still running after it is given up."""
    summary_wait: float | None = DEFAULT_SUMMARY_WAIT
    """Seconds a fold waits, in all, for background summaries still running (0: never); a
    summary not ready by then is applied at a later fold. None waits up to `summary_timeout` (the
    blocking behaviour of langctx 0.1: a slow summarizer's latency sits on the agent's path)."""
    max_summarizer_input_tokens: int = DEFAULT_MAX_SUMMARIZER_INPUT_TOKENS
    """Cap on what one summarizer call is given."""
    is_task: Callable[[BaseMessage], bool] = field(default=is_substantive_task)
    """Predicate choosing the pinned task: the first human message for which it is true."""
    cache_prices: str | PriceSheet | None = None
    """Prompt-cache prices (sheet or name): fold where cheapest (:mod:`langctx.cache_mark`)."""

    max_context_tokens: InitVar[int | ContextSize | None] = None
    """The clearer name of `max_tokens` (give one of them)."""

    _memo: dict[str, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
    )

    def __post_init__(self, max_context_tokens: int | ContextSize | None) -> None:
        if max_context_tokens is not None:
            if self.max_tokens is not None:
                msg = (
                    "max_context_tokens and max_tokens name the same budget; give one of them "
                    f"(got {max_context_tokens!r} and {self.max_tokens!r})."
                )
                raise ConfigError(msg)
            object.__setattr__(self, "max_tokens", max_context_tokens)
        self._normalize_sizes()
        self._check_numbers()
        self._check_merge_count()
        self._check_choices()
        self._check_budget()
        self._check_room_for_pinned()

    def _normalize_sizes(self) -> None:
        """``("tokens", n)`` and ``("fraction", f)`` sizes to tokens."""
        budget("context_window", self.context_window, optional=True)
        size = to_size("max_tokens", self.max_tokens, self.context_window, "context_window")
        object.__setattr__(self, "max_tokens", size)  # before max_tokens_resolved is first read
        size = to_size(
            "keep_recent_tokens", self.keep_recent_tokens, self.max_tokens_resolved, "max_tokens"
        )
        object.__setattr__(self, "keep_recent_tokens", size)

    def _check_numbers(self) -> None:
        for name in ("max_tokens", "keep_recent_tokens"):  # (context_window: checked above)
            budget(name, getattr(self, name), optional=True)
        for name in ("reserve_ratio", "proactive_ratio", "summary_share", "user_messages_share"):
            ratio(name, getattr(self, name))
        ratio("output_share", self.output_share)
        share_or_none("files_share", self.files_share, "no files")
        share_or_none("reports_share", self.reports_share, "no reports")
        object.__setattr__(
            self, "subagent_tools", tool_names("subagent_tools", self.subagent_tools)
        )
        if self.summary_threshold_tokens is not None:
            non_negative("summary_threshold_tokens", self.summary_threshold_tokens, "an int >= 0")
        if self.max_facts_tokens is not None:  # False would read as 0: say what 0 does
            non_negative("max_facts_tokens", self.max_facts_tokens, "an int >= 0 (0: no ledger)")
        non_negative("placeholder_min_tokens", self.placeholder_min_tokens, "an int >= 0")
        if self.reserve_tokens is not None:
            non_negative("reserve_tokens", self.reserve_tokens, "an int >= 0")
            budget("reserve_tokens", self.reserve_tokens or 1)
        for name in ("max_summaries", "max_level2"):
            positive(name, getattr(self, name))
        positive("max_summary_tokens", self.max_summary_tokens, optional=True)
        positive("max_summarizer_input_tokens", self.max_summarizer_input_tokens)

    def _check_merge_count(self) -> None:
        if not isinstance(self.merge_count, int) or self.merge_count < 2:
            msg = f"merge_count must be an int >= 2, got {self.merge_count!r}."
            raise ConfigError(msg)
        if self.merge_count > self.max_summaries + 1 or self.merge_count > self.max_level2 + 1:
            msg = (
                f"merge_count ({self.merge_count}) must be at most max_summaries + 1 and "
                "max_level2 + 1; lower merge_count or raise the caps."
            )
            raise ConfigError(msg)

    def _check_choices(self) -> None:
        """The policies, the timeout, the price sheet (normalized), the flags and the predicate."""
        for name, allowed in _CHOICES.items():
            value = getattr(self, name)
            if value not in allowed:
                said = ", ".join(map(repr, allowed[:-1])) + f" or {allowed[-1]!r}"
                msg = f"{name} must be {said}, got {value!r}."
                raise ConfigError(msg)
        check_timeout("summary_timeout", self.summary_timeout)
        check_timeout("summary_wait", self.summary_wait, zero=True)
        if self.cache_prices is not None:  # (ConfigError for an unknown sheet)
            object.__setattr__(self, "cache_prices", price_sheet(self.cache_prices))
        if not isinstance(self.background_summaries, bool):
            msg = f"background_summaries must be True or False, got {self.background_summaries!r}."
            raise ConfigError(msg)
        if not callable(self.is_task):
            msg = "is_task must be a callable taking a message and returning bool."
            raise ConfigError(msg)

    def _check_budget(self) -> None:
        """The reserve fits the window; the low mark fits the budget, below the high mark."""
        if self.context_window is not None and self.reserve_tokens_resolved >= self.context_window:
            msg = (
                f"reserve_tokens ({self.reserve_tokens}) must be smaller than context_window "
                f"({self.context_window}); lower reserve_tokens."
            )
            raise ConfigError(msg)
        if self.keep_recent_tokens_resolved > self.max_tokens_resolved:
            msg = (
                f"keep_recent_tokens ({self.keep_recent_tokens_resolved}) exceeds max_tokens "
                f"({self.max_tokens_resolved}); lower keep_recent_tokens."
            )
            raise ConfigError(msg)
        if self.keep_recent_tokens_resolved >= self.high_mark:
            msg = (
                f"keep_recent_tokens ({self.keep_recent_tokens_resolved}) must be below the "
                f"compaction mark proactive_ratio * max_tokens ({self.high_mark}), or every "
                "turn would compact; lower keep_recent_tokens or raise proactive_ratio."
            )
            raise ConfigError(msg)

    def _check_room_for_pinned(self) -> None:
        """The summary block leaves room for the pinned system prompt and task."""
        if self.pinned_cap_tokens >= PINNED_FLOOR_TOKENS:
            return
        from langctx.budgets import smallest_block_budget  # (it builds configs)

        smallest = smallest_block_budget(self)
        msg = (
            f"a budget of {self.max_tokens_resolved} leaves {self.head_budget} tokens after the "
            f"reserve, but the summary block may take {self.block_cap_tokens} "
            f"((max_summaries + max_level2 + 1) summaries of {self.max_summary_tokens_resolved}, "
            f"the facts ledger, preamble and tags) and the pinned system prompt and task need "
            f"{PINNED_FLOOR_TOKENS} beside it; raise max_context_tokens"
            + (f" to at least {smallest}" if smallest else "")
            + " or lower max_summary_tokens / max_summaries / max_level2."
        )
        raise ConfigError(msg)

    @_resolved
    def max_tokens_resolved(self) -> int:
        """The budget in effect."""
        if isinstance(self.max_tokens, int):
            return self.max_tokens
        if self.context_window is not None:
            return min(DEFAULT_WINDOW_BUDGET_CAP, int(self.context_window * DEFAULT_WINDOW_SHARE))
        return DEFAULT_MAX_TOKENS

    @_resolved
    def reserve_tokens_resolved(self) -> int:
        """Room left in `context_window` beside the context (see `reserve_tokens`)."""
        if self.reserve_tokens is not None:
            return self.reserve_tokens
        if self.context_window is None:
            return DEFAULT_RESERVE_TOKENS
        return min(DEFAULT_RESERVE_TOKENS, int(self.context_window * DEFAULT_RESERVE_SHARE))

    @_resolved
    def keep_recent_tokens_resolved(self) -> int:
        """The low mark: verbatim recent tokens kept after a compaction."""
        if isinstance(self.keep_recent_tokens, int):
            return self.keep_recent_tokens
        return int(DEFAULT_KEEP_RECENT_RATIO * self.max_tokens_resolved)

    @_resolved
    def output_cap_tokens(self) -> int:
        """Tokens one tool output may keep after a compaction by the marks (`output_share`)."""
        return max(1, int(self.output_share * self.max_tokens_resolved))

    @_resolved
    def high_mark(self) -> int:
        """Context tokens above which a compaction triggers."""
        mark = int(self.proactive_ratio * self.max_tokens_resolved)
        if self.context_window is not None:
            mark = min(mark, self.context_window - self.reserve_tokens_resolved)
        return mark

    @_resolved
    def cache_write_ratio(self) -> float | None:
        """Price of a token written to the prompt cache over one read from it (None: unpriced)."""
        if not isinstance(self.cache_prices, PriceSheet):
            return None
        main = self.cache_prices.main
        return main.cache_write / main.cached_input if main.cached_input > 0 else None

    @_resolved
    def summary_threshold_resolved(self) -> int:
        """Evicted tokens that wait for one model summary call (see `summary_threshold_tokens`)."""
        if self.summary_threshold_tokens is not None:
            return self.summary_threshold_tokens
        return DEFAULT_SUMMARY_THRESHOLD_TOKENS

    @_resolved
    def summary_share_tokens(self) -> int:
        """Tokens the summaries may take together (`summary_share`; at least two full summaries)."""
        share = int(self.summary_share * self.max_tokens_resolved)
        return max(share, 2 * self.max_summary_tokens_resolved)

    @_resolved
    def head_budget(self) -> int:
        """Tokens that pinned messages and summaries may use together."""
        return self.max_tokens_resolved - int(self.reserve_ratio * self.max_tokens_resolved)

    @_resolved
    def max_summary_tokens_resolved(self) -> int:
        """The cap per summary in effect."""
        if self.max_summary_tokens is not None:
            return self.max_summary_tokens
        room = self.head_budget - self._block_overhead
        share = room // (self.max_summaries + self.max_level2 + 5)
        return max(16, min(DEFAULT_MAX_SUMMARY_TOKENS, share))

    @_resolved
    def _block_overhead(self) -> int:
        """The summary block's tokens beyond its contents: preamble, tags of each summary."""
        caps = self.max_summaries + self.max_level2 + 1
        return BLOCK_PREAMBLE_TOKENS + (caps + 1) * SUMMARY_TAG_TOKENS

    @_resolved
    def max_facts_tokens_resolved(self) -> int:
        """The cap of the facts ledger in effect."""
        if self.max_facts_tokens is not None:
            return self.max_facts_tokens
        return max(self.max_summary_tokens_resolved * 3 // 2, min(self.head_budget // 20, 1_000))

    @_resolved
    def user_messages_tokens(self) -> int:
        """Tokens of the folded user messages quoted verbatim (`user_messages_share`)."""
        return int(self.user_messages_share * self.max_tokens_resolved)

    @_resolved
    def files_tokens(self) -> int:
        """Tokens of the files in hand shown after a fold (`files_share`)."""
        return int(self.files_share * self.max_tokens_resolved)

    @_resolved
    def reports_tokens(self) -> int:
        """Tokens of the sub-agent reports shown after a fold (`reports_share`)."""
        return int(self.reports_share * self.max_tokens_resolved)

    @_resolved
    def summary_cap_tokens(self) -> int:
        """Upper bound of all projected summaries and the facts ledger together (content only)."""
        caps = self.max_summaries + self.max_level2 + 1
        return caps * self.max_summary_tokens_resolved + self.max_facts_tokens_resolved

    @_resolved
    def block_cap_tokens(self) -> int:
        """Upper bound of the whole summary block: contents, preamble and tags."""
        return self.summary_cap_tokens + self._block_overhead

    @_resolved
    def pinned_cap_tokens(self) -> int:
        """Tokens the pinned messages (system + task) may take beside the summary block."""
        return self.head_budget - self.block_cap_tokens


class ConfigOptions(TypedDict, total=False):
    """The fields of :class:`MemoryConfig` as keywords (``**options: Unpack[ConfigOptions]``)."""

    max_tokens: int | ContextSize | None
    max_context_tokens: int | ContextSize | None
    reserve_ratio: float
    context_window: int | None
    reserve_tokens: int | None
    keep_recent_tokens: int | ContextSize | None
    output_share: float
    proactive_ratio: float
    summary_threshold_tokens: int | None
    background_summaries: bool
    max_summaries: int
    merge_count: int
    max_level2: int
    summary_share: float
    user_messages_share: float
    files_share: float
    reports_share: float
    subagent_tools: tuple[str, ...]
    max_summary_tokens: int | None
    max_facts_tokens: int | None
    placeholder_min_tokens: int
    summary_role: SummaryRole
    oversize_policy: OversizePolicy
    orphan_policy: OrphanPolicy
    summary_timeout: float | None
    summary_wait: float | None
    max_summarizer_input_tokens: int
    is_task: Callable[[BaseMessage], bool]
    cache_prices: str | PriceSheet | None


BLOCK_PREAMBLE_TOKENS = 64
"""Tokens of the summary block's preamble (about 60)."""
SUMMARY_TAG_TOKENS = 32
"""Tokens of one summary's opening and closing tags (about 30)."""
PINNED_FLOOR_TOKENS = 64
"""What the pinned messages may take at least beside the summary block."""


def config_from(
    config: MemoryConfig | None, options: ConfigOptions | dict[str, object]
) -> MemoryConfig:
    """``config``, or a :class:`MemoryConfig` built from ``options`` (ConfigError when both are)."""
    if config is not None:
        if options:
            msg = f"pass either config=MemoryConfig(...) or its options, not both (got {sorted(options)})."
            raise ConfigError(msg)
        if not isinstance(config, MemoryConfig):
            msg = f"config must be a MemoryConfig, got {type(config).__name__}."
            raise ConfigError(msg)
        return config
    unknown = sorted(set(options) - set(ConfigOptions.__annotations__))
    if unknown:
        msg = f"unknown memory option(s) {unknown}; see MemoryConfig for the fields."
        raise ConfigError(msg)
    return MemoryConfig(**options)
