"""``LangctxMiddleware``: layered, compacting memory for ``langchain.agents.create_agent``
(docs/agents.md); the response carries the step's state update."""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace
from typing import Any, NotRequired, Unpack, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage
from langchain_core.runnables import ensure_config
from langgraph.types import Command

from langctx.delta_state import ArchivedBatches, LangctxDeltaChannel
from langctx.errors import ConfigError
from langctx.events import deferred_callbacks, emitting
from langctx.langgraph import make_compact_tool
from langctx.memory_step import MemoryStep
from langctx.recovery import DEFAULT_MAX_OVERFLOW_RETRIES, Matcher, OverflowRecovery
from langctx.state_memory import NO_THREAD, MemoryOptions, MemorySettings, thread_id_of
from langctx.stores.archive import Archive, ArchiveOption
from langctx.summarize.prefix import MainRequest, main_request

__all__ = ["LangctxMiddleware", "LangctxMiddlewareState", "ToolOutputProcessor"]

ToolOutputProcessor = Callable[[ToolMessage, ToolCallRequest], ToolMessage | Awaitable[ToolMessage]]
"""Rewrites a tool's result before it reaches the state (the Context-mode extension point)."""


class LangctxMiddlewareState(AgentState[Any]):
    """The agent state with the ``langctx`` channel and the archive."""

    langctx: NotRequired[LangctxDeltaChannel]
    langctx_archive: NotRequired[ArchivedBatches]


class LangctxMiddleware(AgentMiddleware[LangctxMiddlewareState, Any, Any]):
    """Compaction and archiving in the model call, overflow recovery around it, a tool hook point.

    Args:
        overflow_matcher: recognises "request too long" errors (default: ``OverflowMatcher``).
        max_overflow_retries: compact-and-retry rounds before ``ContextOverflowError``.
        tool_output_processor: sync or async, given each tool's ``ToolMessage`` and the request;
            returns the message to keep.
        compact_tool: also give the model the ``compact_conversation`` tool.
        archive: where compacted messages go (:data:`~langctx.stores.archive.ArchiveOption`).
        prompt_cache_key: OpenAI's ``prompt_cache_key``: True for the thread id, a string, or False.
        **options: the memory's options (:class:`~langctx.state_memory.MemoryOptions`); with
            ``cache_prices`` unset, the price sheet of the model's provider (docs/caching.md);
            with ``context_window`` unset, the model's ``profile["max_input_tokens"]``, which
            sizes the default budget and ``("fraction", f)`` sizes (docs/configuration.md).
    """

    state_schema = LangctxMiddlewareState

    def __init__(
        self,
        *,
        overflow_matcher: Matcher | None = None,
        max_overflow_retries: int = DEFAULT_MAX_OVERFLOW_RETRIES,
        tool_output_processor: ToolOutputProcessor | None = None,
        compact_tool: bool = False,
        archive: ArchiveOption = "auto",
        prompt_cache_key: bool | str = True,
        **options: Unpack[MemoryOptions],
    ) -> None:
        super().__init__()
        _check_processor(tool_output_processor)
        self.prompt_cache_key = prompt_cache_key
        self._sizes = _window_sizes(options)
        self.settings = emitting(**_without(options, self._sizes))
        """The settings of a call to a model of no known provider or window."""
        self._by_provider = "cache_prices" not in options and "config" not in options
        self._by_window = self.settings.config.context_window is None
        self._memo: dict[tuple[str | None, int | None], MemorySettings] = {}
        self.archive = Archive.from_option(archive)
        self.recovery = OverflowRecovery(matcher=overflow_matcher, max_retries=max_overflow_retries)
        self.tool_output_processor = tool_output_processor
        self.tools = [make_compact_tool(self.settings)] if compact_tool else []

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Compact when due (or on ``/compact``), archive, send the projection; recover."""
        step, keyed = self._step(request)
        with self._main_model(keyed):
            step.compact()
            if step.handled is not None:
                return _with_update(ModelResponse(result=[step.handled[1]]), step)
            response = self.recovery.run(step.view, lambda: handler(_projected(keyed, step)))
        return self._with_run(_with_update(response, step), request)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async version of `wrap_model_call`."""
        step, keyed = self._step(request)
        async with deferred_callbacks():
            with self._main_model(keyed):
                await step.acompact()
                if step.handled is not None:
                    return _with_update(ModelResponse(result=[step.handled[1]]), step)
                response = await self.recovery.arun(
                    step.view, lambda: handler(_projected(keyed, step))
                )
            return self._with_run(_with_update(response, step), request)

    def _with_run(
        self,
        response: ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any],
        request: ModelRequest[Any],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """With a ``tool_output_processor``: a thread-less run's random id, where its tool
        outputs are stored (:func:`~langctx.context_mode.middleware.with_run_id`)."""
        if self.tool_output_processor is None:
            return response
        from langctx.context_mode.middleware import with_run_id

        return with_run_id(response, request)

    def _main_model(self, request: ModelRequest[Any]) -> AbstractContextManager[None]:
        """For a :class:`~langctx.summarize.PrefixSummarizer`: this step's model, bound as
        ``create_agent`` binds it, and its system prompt."""
        if not getattr(self.settings.summarizer, "wants_context", False):
            return nullcontext()

        def bind() -> Any:
            settings = request.model_settings
            if request.tools:
                return request.model.bind_tools(
                    request.tools, tool_choice=request.tool_choice, **settings
                )
            return request.model.bind(**settings)

        return main_request(MainRequest(bind, request.system_message))

    def _cache_keyed(self, request: ModelRequest[Any], thread_id: str | None) -> ModelRequest[Any]:
        key = self.prompt_cache_key
        if key is True:
            key = thread_id if thread_id and thread_id != NO_THREAD else False
        if not key or "prompt_cache_key" in request.model_settings or not _is_openai(request.model):
            return request
        return request.override(model_settings={**request.model_settings, "prompt_cache_key": key})

    def settings_for(self, model: object) -> MemorySettings:
        """The settings a call to ``model`` uses: its provider's cache prices and its profile's
        window, where the options leave them unset (memoised by their values).

        Raises:
            ConfigError: a ``("fraction", f)`` budget, no ``context_window`` and no profile.

        Example:
            >>> from langctx.testing import ScriptedChatModel
            >>> mw = LangctxMiddleware()
            >>> model = ScriptedChatModel(responses=[], profile={"max_input_tokens": 12_000})
            >>> config = mw.settings_for(model).config
            >>> config.cache_prices, config.context_window, config.max_tokens_resolved
            (None, 12000, 6600)
        """
        provider = _provider_sheet(model) if self._by_provider else None
        window = profile_window(model) if self._by_window else None
        key = provider, window
        if key not in self._memo:
            self._memo[key] = self._settings(provider, window, model)
        return self._memo[key]

    def _settings(self, provider: str | None, window: int | None, model: object) -> MemorySettings:
        settings = self.settings
        if provider is not None:
            settings = settings.with_cache_prices(provider)
        if window is None and _is_fraction(self._sizes.get("max_tokens")):
            name = type(getattr(model, "bound", model)).__name__
            msg = (
                f"a ('fraction', f) budget is a fraction of the model's window, and {name} has "
                "no profile['max_input_tokens']; pass context_window=..., a budget in tokens, "
                'or the model\'s profile (ChatModel(..., profile={"max_input_tokens": n})).'
            )
            raise ConfigError(msg)
        return settings if window is None else settings.with_window(window, self._sizes)

    def _step(self, request: ModelRequest[Any]) -> tuple[MemoryStep, ModelRequest[Any]]:
        """The call's memory step, and ``request`` with its ``prompt_cache_key``."""
        step = MemoryStep(
            request.state,
            self.settings_for(request.model),
            thread_id=thread_id_of(ensure_config()),
            archive=self.archive.at(getattr(request.runtime, "store", None))
            if self.archive
            else None,
            store=lambda: request.runtime.store,
        )
        return step, self._cache_keyed(request, step.thread_id)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run the tool, then ``tool_output_processor`` on its ``ToolMessage`` (if set)."""
        result = handler(request)
        processor = self.tool_output_processor
        if processor is None or not isinstance(result, ToolMessage):
            return result
        if inspect.iscoroutinefunction(processor):
            msg = "tool_output_processor is async; invoke the agent with ainvoke/astream."
            raise RuntimeError(msg)
        out = processor(result, request)
        assert isinstance(out, ToolMessage)
        return out

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async version of `wrap_tool_call` (the processor may be sync or async)."""
        result = await handler(request)
        processor = self.tool_output_processor
        if processor is None or not isinstance(result, ToolMessage):
            return result
        out = processor(result, request)
        if inspect.isawaitable(out):
            out = await out
        assert isinstance(out, ToolMessage)
        return out


def _check_processor(processor: object) -> None:
    """Refuse, at construction, a processor the first tool call would trip on."""
    if processor is not None and not callable(processor):
        msg = (
            "tool_output_processor must be a callable (sync or async) taking the ToolMessage "
            f"and the request, or None; got {type(processor).__name__}."
        )
        raise ConfigError(msg)


def profile_window(model: object) -> int | None:
    """``model.profile["max_input_tokens"]`` (of a bound model's inner model too), if an int > 0.

    Example:
        >>> from langctx.testing import ScriptedChatModel
        >>> profile_window(ScriptedChatModel(responses=[], profile={"max_input_tokens": 200_000}))
        200000
    """
    profile = getattr(getattr(model, "bound", model), "profile", None)
    window = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    ok = isinstance(window, int) and not isinstance(window, bool) and window > 0
    return window if ok else None


def _window_sizes(options: Mapping[str, Any]) -> dict[str, Any]:
    """The sizes given (the budget as ``max_tokens``), to resolve again against a model's window,
    if the options leave the window to the model."""
    if "context_window" in options or "config" in options:
        return {}
    given = {k: options[k] for k in _SIZES if options.get(k) is not None}
    if "max_context_tokens" in given and "max_tokens" not in given:
        given["max_tokens"] = given.pop("max_context_tokens")
    return given if "max_context_tokens" not in given else {}  # both: the config refuses them


def _is_fraction(size: object) -> bool:
    return isinstance(size, tuple) and len(size) == 2 and size[0] == "fraction"


def _without(options: Mapping[str, Any], sizes: Mapping[str, Any]) -> Any:
    """``options`` without a ``("fraction", f)`` budget (resolved per model, in ``sizes``)."""
    if not _is_fraction(sizes.get("max_tokens")):
        return options
    return {k: v for k, v in options.items() if k not in ("max_tokens", "max_context_tokens")}


_SIZES = ("max_tokens", "max_context_tokens", "keep_recent_tokens")


def _provider_sheet(model: object) -> str | None:
    """``"anthropic"`` or ``"openai"`` for their langchain packages' chat models (bound or not)."""
    module = type(getattr(model, "bound", model)).__module__
    return next((p for p in ("anthropic", "openai") if module.startswith(f"langchain_{p}.")), None)


def _is_openai(model: object) -> bool:
    """A langchain-openai chat model (bound or not) without a ``prompt_cache_key`` of its own."""
    inner = getattr(model, "bound", model)
    return getattr(inner, "prompt_cache_key", None) is None and _provider_sheet(model) == "openai"


def _projected(request: ModelRequest[Any], step: MemoryStep) -> ModelRequest[Any]:
    return request.override(messages=cast("list[AnyMessage]", step.view.projection()))


def _with_update(
    response: ModelResponse[Any] | AIMessage, step: MemoryStep
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    """The response plus this step's state update.

    The step's own ``messages`` writes (archived messages removed, a handled ``/compact``) go in
    the response's ``result`` between the model's message and that message again: ``messages``
    is written once per step, so ``stream_mode="updates"`` gives one dict whose ``messages[-1]``
    is the model's message, and a middleware listed before this one finds it at ``result[0]``
    (LangChain's "rewrite response" example) as well as at ``result[-1]``; ``add_messages`` keeps
    one copy (same id). ``create_agent`` writes the whole history back when it repairs invalid
    tool calls; on that step they stay in the command, applied after it.
    """
    update = step.update({"messages": [step.handled[0]]} if step.handled is not None else {})
    own = update.get("messages")
    base = response if isinstance(response, ModelResponse) else ModelResponse([response])
    if own and base.result and not _repairs_pending(step.state.get("messages")):
        del update["messages"]
        last = base.result[-1]
        if last.id is None:  # both copies must carry one id, whatever serializes them between
            last = last.model_copy(update={"id": f"lc_{uuid.uuid4()}"})
        base = response = replace(base, result=[*base.result[:-1], last, *own, last])
    if not update:
        return response
    return ExtendedModelResponse(model_response=base, command=Command(update=update))


def _repairs_pending(messages: Any) -> bool:
    """True when ``create_agent`` will answer an invalid tool call of ``messages`` this step (it
    then writes ``RemoveMessage(REMOVE_ALL_MESSAGES)`` and the whole history before the result)."""
    if not isinstance(messages, list):
        return False
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return any(
        tc.get("id") is not None and tc.get("id") not in answered
        for m in messages
        if isinstance(m, AIMessage)
        for tc in m.invalid_tool_calls
    )
