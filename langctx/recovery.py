"""Overflow recovery: the provider said "too long", so compact and retry the same request
(each retry keeps half the recent tokens of the one before; docs/agents.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_core.prompt_values import PromptValue
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config

from langctx.errors import ConfigError, ContextOverflowError
from langctx.events import deferred_callbacks
from langctx.overflow import OverflowMatcher
from langctx.state_memory import NO_THREAD, MemorySettings, ThreadView

__all__ = [
    "DEFAULT_MAX_OVERFLOW_RETRIES",
    "OverflowRecoveringModel",
    "OverflowRecovery",
    "with_overflow_recovery",
]

DEFAULT_MAX_OVERFLOW_RETRIES = 2
_MAX_HALVINGS = 5

T = TypeVar("T")
Matcher = Callable[[BaseException], bool]


class OverflowRecovery:
    """The retry policy: which errors to retry, how many times, and how hard to compact.

    Args:
        matcher: whether an exception means "too long" (default ``OverflowMatcher()``).
        max_retries: compact-and-retry rounds before :class:`~langctx.ContextOverflowError`.

    Example:
        >>> policy = OverflowRecovery(max_retries=1)
        >>> policy.is_overflow(ValueError("maximum context length")), policy.is_overflow(ValueError())
        (True, False)
    """

    def __init__(
        self, *, matcher: Matcher | None = None, max_retries: int = DEFAULT_MAX_OVERFLOW_RETRIES
    ) -> None:
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            msg = f"max_retries must be an int >= 0, got {max_retries!r}."
            raise ConfigError(msg)
        if matcher is not None and not callable(matcher):
            msg = "matcher must be a callable taking an exception and returning bool."
            raise ConfigError(msg)
        self.matcher: Matcher = matcher or OverflowMatcher()
        self.max_retries = max_retries

    def is_overflow(self, exc: BaseException) -> bool:
        """True when ``exc`` should be recovered from by compacting."""
        return not isinstance(exc, ContextOverflowError) and self.matcher(exc)

    def keep_levels(self, view: ThreadView, attempt: int) -> list[int | None]:
        """Recent tokens to keep on retry ``attempt`` (1-based), gentlest first: the low mark, then
        halved (within a retry, smaller marks are tried until a compaction frees something)."""
        keep = view.memory.config.keep_recent_tokens_resolved
        levels: list[int | None] = [None] if attempt <= 1 else []
        levels += [max(1, keep >> k) for k in range(max(1, attempt - 1), _MAX_HALVINGS + 1)]
        return levels

    def run(self, view: ThreadView, call: Callable[[], T], *, failed: Exception | None = None) -> T:
        """Call ``call()`` (it reads the view's projection); on overflow compact ``view``, retry
        (``failed``: the overflow error of a first attempt already made outside)."""
        rounds, error = _Rounds(self, view), failed
        while True:
            if error is None:
                try:
                    return call()
                except Exception as exc:
                    error = exc
            for keep in rounds.after(error):
                view.compact(trigger="overflow", keep_recent_tokens=keep)
            error = None

    async def arun(
        self, view: ThreadView, call: Callable[[], Awaitable[T]], *, failed: Exception | None = None
    ) -> T:
        """Async version of `run`."""
        rounds, error = _Rounds(self, view), failed
        while True:
            if error is None:
                try:
                    return await call()
                except Exception as exc:
                    error = exc
            async with deferred_callbacks():
                for keep in rounds.after(error):
                    await view.acompact(trigger="overflow", keep_recent_tokens=keep)
            error = None


class _Rounds:
    """The compact-and-retry rounds of one request."""

    def __init__(self, policy: OverflowRecovery, view: ThreadView) -> None:
        self.policy, self.view = policy, view
        self.attempt, self.figures = 0, (view.context_tokens(),) * 2

    def after(self, error: Exception) -> Iterator[int | None]:
        """After a failed call: the recent tokens to keep, one per compaction (raises the error
        unless an overflow; ``ContextOverflowError`` when spent or nothing was freed)."""
        # checked here, not in the generator: a StopIteration must stay one
        if not self.policy.is_overflow(error):
            raise error
        if self.attempt >= self.policy.max_retries:
            before, after = self.figures
            msg = (
                f"the model still rejects the request as too long after {self.attempt} "
                f"compact-and-retry round(s) (context {before} -> {after} tokens by langctx's "
                "count). Lower max_context_tokens (or set context_window) so the budget fits the model, "
                "or shorten the system prompt and tool schemas."
            )
            raise ContextOverflowError(
                msg, tokens_before=before, tokens_after=after, attempts=self.attempt
            ) from error
        self.attempt += 1
        return self._levels(self.view.context_tokens())

    def _levels(self, before: int) -> Iterator[int | None]:
        for keep in self.policy.keep_levels(self.view, self.attempt):
            yield keep
            if self.view.context_tokens() < before:
                break
        after = self.view.context_tokens()
        if after >= before:
            msg = (
                f"the model rejects the request as too long and there is nothing left to compact "
                f"(context {before} tokens: pinned messages, summaries and the newest turn). "
                "Lower max_context_tokens, shorten the task or the system prompt, or use a model with a "
                "larger window."
            )
            raise ContextOverflowError(
                msg, tokens_before=before, tokens_after=after, attempts=self.attempt
            )
        self.figures = before, after


class OverflowRecoveringModel(Runnable[LanguageModelInput, BaseMessage]):
    """A chat model with overflow recovery: a memory of the call's own input is compacted and the
    call retried (nothing persisted). Use :func:`with_overflow_recovery`."""

    def __init__(
        self, bound: Runnable[Any, Any], settings: MemorySettings, policy: OverflowRecovery
    ) -> None:
        self.bound, self.settings, self.policy = bound, settings, policy
        self.name = f"OverflowRecovering[{getattr(bound, 'name', None) or type(bound).__name__}]"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OverflowRecoveringModel:
        """Bind tools on the wrapped model; the result keeps the recovery."""
        bound = self.bound.bind_tools(tools, **kwargs)  # type: ignore[attr-defined]
        return OverflowRecoveringModel(bound, self.settings, self.policy)

    def _view(self, messages: list[BaseMessage]) -> ThreadView:
        memory = self.settings.new_memory()
        memory.restore(messages)
        return ThreadView(memory, thread_id=NO_THREAD)

    def invoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> BaseMessage:
        """Call the model; on overflow compact the input and retry."""
        config, messages = ensure_config(config), _as_messages(input)
        try:
            return self.bound.invoke(messages, config, **kwargs)
        except Exception as exc:
            if not self.policy.is_overflow(exc):
                raise
            failed = exc
        view = self._view(messages)
        return self.policy.run(
            view, lambda: self.bound.invoke(view.projection(), config, **kwargs), failed=failed
        )

    async def ainvoke(
        self, input: LanguageModelInput, config: RunnableConfig | None = None, **kwargs: Any
    ) -> BaseMessage:
        """Async version of `invoke`."""
        config, messages = ensure_config(config), _as_messages(input)
        try:
            return await self.bound.ainvoke(messages, config, **kwargs)
        except Exception as exc:
            if not self.policy.is_overflow(exc):
                raise
            failed = exc
        view = self._view(messages)
        return await self.policy.arun(
            view, lambda: self.bound.ainvoke(view.projection(), config, **kwargs), failed=failed
        )


def with_overflow_recovery(
    model: Runnable[Any, Any],
    settings: MemorySettings | None = None,
    *,
    matcher: Matcher | None = None,
    max_retries: int = DEFAULT_MAX_OVERFLOW_RETRIES,
) -> OverflowRecoveringModel:
    """Wrap a chat model so that "prompt too long" errors compact its input and retry.

    Args:
        model: the chat model (tools may be bound before or after wrapping).
        settings: the memory settings of the thread's node (``LangctxNode(...).settings``).
        matcher, max_retries: as :class:`OverflowRecovery`.

    Example:
        >>> from langctx.testing import ScriptedChatModel
        >>> with_overflow_recovery(ScriptedChatModel(), max_retries=1).policy.max_retries
        1
    """
    return OverflowRecoveringModel(
        model,
        settings if settings is not None else MemorySettings.of(),
        OverflowRecovery(matcher=matcher, max_retries=max_retries),
    )


def _as_messages(value: LanguageModelInput) -> list[BaseMessage]:
    if isinstance(value, PromptValue):
        return value.to_messages()
    if isinstance(value, str):
        return convert_to_messages([value])
    return convert_to_messages(list(value))
