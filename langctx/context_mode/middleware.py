"""``ContextModeMiddleware``: Context-mode for ``create_agent``, beside ``LangctxMiddleware``.

Example:
    >>> [t.name for t in ContextModeMiddleware().tools]
    ['fetch_context', 'working_memory']
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any, NotRequired

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import ensure_config
from langgraph.types import Command

from langctx.channel import run_of, run_update
from langctx.context_mode.guard import ToolGuard
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.prompt import CONTEXT_MODE_SYSTEM_PROMPT
from langctx.context_mode.tools import (
    fetch_context_tool,
    reference_store,
    remember_tool,
    working_memory_tool,
)
from langctx.context_mode.wrapped_tool import namespace_args, thread_id_from_config
from langctx.delta_state import LangctxDeltaChannel
from langctx.errors import ConfigError
from langctx.markers import NO_THREAD
from langctx.stores.long_term import LongTermMemory
from langctx.stores.references import GraphReferenceStore

__all__ = ["ContextModeMiddleware", "ContextModeState", "ContextModeToolProcessor", "with_run_id"]


class ContextModeState(AgentState[Any]):
    """The agent state with the ``langctx`` channel (for the priority ledger)."""

    langctx: NotRequired[LangctxDeltaChannel]


def _query(request: ModelRequest[Any]) -> str:
    """What long-term memory is searched with: the latest human message's text."""
    messages = (request.state or {}).get("messages") or request.messages
    texts = (m.text for m in reversed(list(messages or [])) if isinstance(m, HumanMessage))
    return next(texts, "")


def _named(request: ToolCallRequest) -> dict[str, Any]:
    return {"tool_name": request.tool_call["name"], "tool_call_id": request.tool_call["id"]}


def _where(request: ToolCallRequest) -> dict[str, Any]:
    """The thread and arguments Context-mode processes a tool call's result for."""
    config = getattr(request.runtime, "config", None)
    where = namespace_args(config if config is not None else ensure_config(), request.state)
    return {**where, "args": request.tool_call.get("args") or {}}


ModelResult = ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]


def with_run_id(response: ModelResult, request: ModelRequest[Any]) -> ModelResult:
    """``response``, plus a random run id in the ``langctx`` channel when the run has no thread
    and no run id yet: its tool outputs are stored under it, where no other run can reach.

    Raises:
        ConfigError: the run's thread id is reserved (see :func:`~langctx.markers.checked_thread_id`).
    """
    if thread_id_from_config(ensure_config()) != NO_THREAD:
        return response
    if run_of((request.state or {}).get("langctx")) is not None:
        return response
    run = run_update()
    if not isinstance(response, ExtendedModelResponse):
        model_response = (
            response if isinstance(response, ModelResponse) else ModelResponse([response])
        )
        return ExtendedModelResponse(
            model_response=model_response, command=Command(update={"langctx": run})
        )
    command = response.command
    update = command.update if command is not None and isinstance(command.update, dict) else None
    if command is None or update is None:  # pragma: no cover - langctx's commands: a dict
        return response
    channel = {**(update.get("langctx") or {}), **run}
    command = replace(command, update={**update, "langctx": channel})
    return ExtendedModelResponse(model_response=response.model_response, command=command)


def _extend_system(system: SystemMessage | None, extra: str) -> SystemMessage:
    if system is None:
        return SystemMessage(extra)
    if isinstance(system.content, str):
        if extra in system.content:
            return system
        return system.model_copy(update={"content": f"{system.content}\n\n{extra}"})
    return system.model_copy(update={"content": [*system.content, {"type": "text", "text": extra}]})


class ContextModeMiddleware(AgentMiddleware[ContextModeState, Any, Any]):
    """Guard and Context-mode for every tool call, the fetch/working-memory tools, the prompt text.

    Args:
        processor: default: a new one over ``store``, configured by ``**config_kwargs``.
        store: a ``BaseStore`` or ReferenceStore for references (default: the graph's store,
            else this process's memory; see :class:`~langctx.stores.references.GraphReferenceStore`).
        guard: timeout and output cap of tool calls (None: tools run unguarded).
        system_prompt: text appended to the system prompt (None: nothing).
        long_term: adds the ``remember`` tool and injects relevant facts.
        **config_kwargs: :class:`~langctx.context_mode.config.ContextModeConfig` fields.
    """

    state_schema = ContextModeState

    def __init__(
        self,
        processor: ContextModeProcessor | None = None,
        *,
        store: Any = None,
        guard: ToolGuard | None = ToolGuard(),  # noqa: B008 - frozen, immutable
        system_prompt: str | None = CONTEXT_MODE_SYSTEM_PROMPT,
        working_memory: bool = True,
        long_term: LongTermMemory | None = None,
        **config_kwargs: Any,
    ) -> None:
        super().__init__()
        if processor is None:
            rstore = GraphReferenceStore() if store is None else reference_store(store)
            processor = ContextModeProcessor(store=rstore, **config_kwargs)
        elif store is not None or config_kwargs:
            msg = "pass either processor= or store=/config options, not both."
            raise ConfigError(msg)
        self.processor = processor
        self.guard = guard
        self.system_prompt = system_prompt
        self.long_term = long_term
        tools = [fetch_context_tool(processor)]
        if working_memory:
            tools.append(working_memory_tool())
        if long_term is not None:
            tools.append(remember_tool(long_term))
        self.tools = tools
        self._own = frozenset(t.name for t in tools)

    def _system(self, request: ModelRequest[Any], block: str | None) -> ModelRequest[Any]:
        extra = [s for s in (self.system_prompt, block) if s]
        if not extra:
            return request
        system = request.system_message
        for text in extra:
            system = _extend_system(system, text)
        return request.override(system_message=system)

    def wrap_model_call(
        self, request: ModelRequest[Any], handler: Callable[[ModelRequest[Any]], ModelResponse[Any]]
    ) -> ModelResult:
        """Explain references in the system prompt; add relevant long-term facts."""
        ltm = self.long_term
        block = None if ltm is None else ltm.context_block(_query(request), config=ensure_config())
        return with_run_id(handler(self._system(request, block)), request)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResult:
        """Async version of `wrap_model_call`."""
        ltm, config = self.long_term, ensure_config()
        block = None if ltm is None else await ltm.acontext_block(_query(request), config=config)
        return with_run_id(await handler(self._system(request, block)), request)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Guard the tool call, then pass its output through Context-mode."""
        if request.tool_call["name"] in self._own:
            return handler(request)
        guard, run = self.guard, partial(handler, request)
        result = guard.run(run, **_named(request)) if guard is not None else run()
        if not isinstance(result, ToolMessage):
            return result  # type: ignore[return-value]  # a Command: the tool manages its state
        return self.processor.process_message(result, **_where(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """Async version of `wrap_tool_call`."""
        if request.tool_call["name"] in self._own:
            return await handler(request)
        guard, run = self.guard, partial(handler, request)
        result = await (guard.arun(run, **_named(request)) if guard is not None else run())
        if not isinstance(result, ToolMessage):
            return result  # type: ignore[return-value]
        return await self.processor.aprocess_message(result, **_where(request))


class ContextModeToolProcessor:
    """A ``tool_output_processor`` for ``LangctxMiddleware``: Context-mode without a second middleware.

    No guard (the tool already ran); add ``fetch_context_tool(processor)`` and the prompt yourself.

    Example:
        >>> from langctx.middleware import LangctxMiddleware
        >>> processor = ContextModeProcessor()
        >>> mw = LangctxMiddleware(max_tokens=8000, tool_output_processor=ContextModeToolProcessor(processor))
        >>> mw.tool_output_processor.processor is processor
        True
    """

    def __init__(self, processor: ContextModeProcessor) -> None:
        self.processor = processor

    def __call__(self, message: ToolMessage, request: ToolCallRequest) -> ToolMessage:
        """Process one tool result for the request's thread."""
        return self.processor.process_message(message, **_where(request))
