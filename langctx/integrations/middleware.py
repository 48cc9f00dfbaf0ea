"""``LangctxMiddleware``: layered, compacting memory for ``langchain.agents.create_agent``.

What it does on each model call of the agent loop, all inside ``wrap_model_call`` (the middleware
adds no node, so no step and no checkpoint, to the agent loop):

- brings the thread's memory in line with the state (only new messages are added; the memory's
  threshold and proactive triggers run);
- handles a ``/compact [instructions]`` message: it compacts, and the model call answers with a
  short notice instead of calling the model (the command leaves ``messages``; the model never sees
  it, and without tool calls the run ends);
- in archive mode (:mod:`langctx.integrations.archive`), writes the folded messages to the store;
- replaces ``request.messages`` with the projection (pinned first human message, summaries, recent
  turns; ``create_agent`` passes the system prompt separately and it is kept). If the provider
  rejects the request as too long, the memory compacts with ``trigger="overflow"`` and the same
  request is retried (:mod:`langctx.integrations.recovery`);
- returns the model's response with the step's state update (``ExtendedModelResponse``): new
  compaction entries for the ``langctx`` channel, and in archive mode the ``RemoveMessage`` of
  every archived message. With ``stream_mode="updates"`` the ``model`` node's update is then a list
  of dicts when it writes ``messages`` twice (the model's message first, then the removals).

``wrap_tool_call`` is the Context-mode hook point. It calls the tool, then
``tool_output_processor`` (None by default) may rewrite the ``ToolMessage`` before it reaches the
state and the memory.

The compaction entries live in the graph state, so any checkpointer persists them and a resumed
thread (even in a new process) projects exactly the same context.

Example:
    >>> from langchain.agents import create_agent
    >>> from langctx.testing import ScriptedChatModel
    >>> agent = create_agent(
    ...     ScriptedChatModel(responses=["Done."]),
    ...     tools=[],
    ...     system_prompt="You are a coding agent.",
    ...     middleware=[LangctxMiddleware(max_tokens=8000)],
    ... )
    >>> agent.invoke({"messages": [("user", "Fix the parser.")]})["messages"][-1].content
    'Done.'
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, NotRequired, cast

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
    ToolCallRequest,
)
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, RemoveMessage, ToolMessage
from langchain_core.runnables import ensure_config
from langgraph.types import Command

from langctx.integrations.archive import Archive, ArchiveOption
from langctx.integrations.archive_plan import ArchivePlan
from langctx.integrations.control import handled_command, pending_command
from langctx.integrations.events import deferred_callbacks
from langctx.integrations.langgraph import make_compact_tool
from langctx.integrations.recovery import (
    DEFAULT_MAX_OVERFLOW_RETRIES,
    Matcher,
    OverflowRecovery,
)
from langctx.integrations.state import LangctxChannel, merge_langctx
from langctx.integrations.threads import MemoryLease, ThreadMemories

__all__ = ["LangctxMiddleware", "LangctxMiddlewareState", "ToolOutputProcessor"]

ToolOutputProcessor = Callable[[ToolMessage, ToolCallRequest], ToolMessage | Awaitable[ToolMessage]]
"""Rewrites a tool's result before it reaches the state (the Context-mode extension point)."""


class LangctxMiddlewareState(AgentState[Any]):
    """The agent state with the ``langctx`` channel (compaction entries as plain dicts)."""

    langctx: NotRequired[Annotated[LangctxChannel, merge_langctx]]


class LangctxMiddleware(AgentMiddleware[LangctxMiddlewareState, Any, Any]):
    """Compaction and archiving in the model call, overflow recovery around it, a tool hook point.

    Args:
        memories: the per-thread memory cache. Default: ``ThreadMemories(**memory_kwargs)``.
        overflow_matcher: recognises "request too long" errors (default
            :class:`~langctx.overflow.OverflowMatcher`; extend it with ``extra_patterns``).
        max_overflow_retries: compact-and-retry rounds before
            :class:`~langctx.ContextOverflowError`.
        tool_output_processor: called with each tool's ``ToolMessage`` and the request; returns
            the message to keep. Sync or async. None (default): results pass through unchanged.
        compact_tool: also give the model the ``compact_conversation`` tool
            (:func:`~langctx.integrations.langgraph.make_compact_tool`).
        archive: archive mode (:mod:`langctx.integrations.archive`): a LangGraph store, or True
            for the agent's store (``create_agent(store=...)``). After each compaction the folded
            messages leave ``messages`` and are kept, once, in the store; what the model sees is
            unchanged, and :func:`~langctx.integrations.archive.full_log` gives the whole
            conversation back. Default None (off).
        **memory_kwargs: options of :class:`~langctx.LayeredChatMemory` (``max_tokens``,
            ``summarizer``, ``token_counter``, ...) when ``memories`` is None.

    The memory's ``max_tokens`` budgets the conversation; the system prompt and the tool schemas
    come on top of it.
    """

    state_schema = LangctxMiddlewareState

    def __init__(
        self,
        memories: ThreadMemories | None = None,
        *,
        overflow_matcher: Matcher | None = None,
        max_overflow_retries: int = DEFAULT_MAX_OVERFLOW_RETRIES,
        tool_output_processor: ToolOutputProcessor | None = None,
        compact_tool: bool = False,
        archive: ArchiveOption = None,
        **memory_kwargs: Any,
    ) -> None:
        super().__init__()
        self.memories = memories if memories is not None else ThreadMemories(**memory_kwargs)
        self.archive = Archive.from_option(archive)
        self.recovery = OverflowRecovery(matcher=overflow_matcher, max_retries=max_overflow_retries)
        self.tool_output_processor = tool_output_processor
        self.tools = [make_compact_tool(self.memories)] if compact_tool else []

    # ------------------------------------------------------------------ around the model

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Sync the memory, archive, send the projection (or handle ``/compact``); recover."""
        state = request.state
        command = pending_command(state["messages"])
        with self.memories.lease(state, ensure_config()) as lease:
            if command is not None:
                before = lease.context_tokens()
                entry = lease.compact(command[1] or None)
                response = _command_handled(command, lease, before, entry)
            archive = self.archive
            plan = archive.plan(state, lease) if archive is not None else None
            if archive is not None and plan is not None:
                archive.write(archive.resolve(request.runtime.store), plan)
            if command is None:
                response = self.recovery.run(
                    lease, lambda: handler(request.override(messages=_projection(lease)))
                )
            return _with_update(response, lease, plan, command)

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Async version of `wrap_model_call`."""
        state = request.state
        command = pending_command(state["messages"])
        async with deferred_callbacks(), self.memories.alease(state, ensure_config()) as lease:
            if command is not None:
                before = lease.context_tokens()
                entry = await lease.acompact(command[1] or None)
                response = _command_handled(command, lease, before, entry)
            archive = self.archive
            plan = archive.plan(state, lease) if archive is not None else None
            if archive is not None and plan is not None:
                await archive.awrite(archive.resolve(request.runtime.store), plan)
            if command is None:
                response = await self.recovery.arun(
                    lease, lambda: handler(request.override(messages=_projection(lease)))
                )
            return _with_update(response, lease, plan, command)

    # ------------------------------------------------------------------ around tools

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


def _command_handled(
    command: tuple[BaseMessage, str], lease: MemoryLease, before: int, entry: Any
) -> ModelResponse[Any]:
    """The model call's result for a handled ``/compact``: the notice (no model call)."""
    _, notice = handled_command(command, entry, tokens=before, tokens_after=lease.context_tokens())
    return ModelResponse(result=[notice])


def _projection(lease: MemoryLease) -> list[AnyMessage]:
    return cast("list[AnyMessage]", lease.projection())


def _with_update(
    response: ModelResponse[Any] | AIMessage,
    lease: MemoryLease,
    plan: ArchivePlan | None,
    command: tuple[BaseMessage, str] | None,
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    """The response plus this step's state update (new entries, archive removals, the command)."""
    update: dict[str, Any] = {}
    removals: list[BaseMessage] = []
    if command is not None:
        removals.append(RemoveMessage(id=str(command[0].id)))
    channel = lease.update()
    if plan is not None:
        removals.extend(plan.removals)
        channel = plan.channel_with(channel)  # the lease may have compacted again (overflow)
    if removals:
        update["messages"] = removals
    if channel is not None:
        update["langctx"] = channel
    if not update:
        return response
    model_response = response if isinstance(response, ModelResponse) else ModelResponse([response])
    return ExtendedModelResponse(model_response=model_response, command=Command(update=update))
