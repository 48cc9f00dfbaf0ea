"""LangGraph: the memory node for ``StateGraph``, the ``pre_model_hook``, the compact tool, the
router (docs/langgraph-node.md; for ``create_agent`` use :mod:`langctx.middleware`)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Annotated, Any, NotRequired, Unpack

from langchain_core.messages import AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda, ensure_config
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.channels import EphemeralValue
from langgraph.config import get_store
from langgraph.graph import END, MessagesState
from langgraph.managed import RemainingSteps
from langgraph.prebuilt import InjectedState
from langgraph.store.base import BaseStore
from langgraph.types import Command

from langctx.commands import ACK_REQUEST, compact_notice, is_notice
from langctx.delta_state import ArchivedBatches, LangctxDeltaChannel
from langctx.entries import CompactionEntry
from langctx.events import deferred_callbacks, emitting
from langctx.markers import ACK_ID_PREFIX
from langctx.memory_step import MemoryStep
from langctx.state_memory import MemoryOptions, MemorySettings, ThreadView, thread_id_of, view_state
from langctx.stores.archive import Archive, ArchiveOption

__all__ = [
    "LangctxAgentState",
    "LangctxNode",
    "LangctxState",
    "make_compact_tool",
    "make_pre_model_hook",
    "route_after_memory",
]

DEFAULT_OUTPUT_KEY = "llm_input_messages"


class LangctxState(MessagesState):
    """``MessagesState`` plus the ``langctx`` channel, the archive and the model's input (the
    projection :class:`LangctxNode` writes, ephemeral)."""

    langctx: NotRequired[LangctxDeltaChannel]
    langctx_archive: NotRequired[ArchivedBatches]
    llm_input_messages: NotRequired[Annotated[list[AnyMessage], EphemeralValue]]


class LangctxAgentState(LangctxState):
    """:class:`LangctxState` with ``remaining_steps``, as ``create_react_agent`` requires."""

    remaining_steps: NotRequired[RemainingSteps]


class LangctxNode(RunnableLambda[LangctxState, dict[str, Any]]):
    """The memory node: compact when due, project for the model (from the state it is given).

    Its update has ``langctx`` (new entries), ``output_key`` (the projection) and, after a
    ``/compact``, ``messages`` (the command removed, a notice added). Give its ``settings`` to
    :func:`with_overflow_recovery` and :func:`make_compact_tool` so they compact the same way.

    Args:
        output_key: state key for the projection; None to not write it.
        archive: where compacted messages go (:data:`~langctx.stores.archive.ArchiveOption`).
        **options: the memory's options (:class:`~langctx.state_memory.MemoryOptions`).
    """

    def __init__(
        self,
        *,
        output_key: str | None = DEFAULT_OUTPUT_KEY,
        name: str = "langctx_memory",
        archive: ArchiveOption = "state",
        **options: Unpack[MemoryOptions],
    ) -> None:
        self.settings = emitting(**options)
        self.output_key = output_key
        self.archive = Archive.from_option(archive)
        super().__init__(self._sync, afunc=self._async, name=name)

    def _sync(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        step = self._step(state, config)
        step.compact()
        return self._update(step)

    async def _async(self, state: Mapping[str, Any], config: RunnableConfig) -> dict[str, Any]:
        step = self._step(state, config)
        async with deferred_callbacks():
            await step.acompact()
            return self._update(step)

    def _step(self, state: Mapping[str, Any], config: RunnableConfig) -> MemoryStep:
        return MemoryStep(
            state,
            self.settings,
            thread_id=thread_id_of(config),
            archive=self.archive,
            store=_graph_store,
        )

    def _update(self, step: MemoryStep) -> dict[str, Any]:
        """The node's state update: the handled command, the projection, the new entries."""
        out: dict[str, Any] = {}
        if step.handled is not None:
            out["messages"] = step.handled
        if self.output_key is not None:
            projection = step.view.projection()
            if step.handled is not None:
                projection.append(
                    HumanMessage(ACK_REQUEST, id=f"{ACK_ID_PREFIX}{uuid.uuid4().hex}")
                )
            out[self.output_key] = projection
        return step.update(out)


def _graph_store() -> BaseStore | None:
    try:
        return get_store()
    except (RuntimeError, KeyError):  # not inside a graph run (maybe inside a plain Runnable)
        return None


def make_pre_model_hook(
    *, archive: ArchiveOption = "state", **options: Unpack[MemoryOptions]
) -> LangctxNode:
    """A ``pre_model_hook`` for ``create_react_agent`` (``state_schema=LangctxAgentState``); after
    a ``/compact`` the model gets a one-line request to acknowledge it.

    Example:
        >>> make_pre_model_hook(max_tokens=8000).output_key
        'llm_input_messages'
    """
    return LangctxNode(name="pre_model_hook", archive=archive, **options)


def route_after_memory(next_node: str = "model") -> Callable[[Mapping[str, Any]], str]:
    """A router for the edge after :class:`LangctxNode`: END after a handled ``/compact``.

    Example:
        >>> route_after_memory("agent")({"messages": [("user", "hi")]})
        'agent'
    """

    def route(state: Mapping[str, Any]) -> str:
        messages = state.get("messages") or []
        last = messages[-1] if messages else None
        return END if isinstance(last, BaseMessage) and is_notice(last) else next_node

    return route


def make_compact_tool(
    settings: MemorySettings | None = None, *, name: str = "compact_conversation"
) -> BaseTool:
    """A tool the model may call to compact the conversation (optionally with focus instructions);
    give it the ``settings`` of the node or middleware that projects the thread.

    Example:
        >>> make_compact_tool(LangctxNode(max_tokens=8000).settings).name
        'compact_conversation'
    """
    resolved = settings if settings is not None else emitting()

    def compact(
        state: Annotated[dict[str, Any], InjectedState],
        tool_call_id: Annotated[str, InjectedToolCallId],
        instructions: str = "",
    ) -> Command[Any]:
        view = view_state(state, resolved, thread_id=thread_id_of(ensure_config()))
        before = view.context_tokens()
        entry = view.compact(instructions or None)
        return _tool_result(view, entry, before, instructions, tool_call_id)

    async def acompact(
        state: Annotated[dict[str, Any], InjectedState],
        tool_call_id: Annotated[str, InjectedToolCallId],
        instructions: str = "",
    ) -> Command[Any]:
        view = view_state(state, resolved, thread_id=thread_id_of(ensure_config()))
        before = view.context_tokens()
        async with deferred_callbacks():
            entry = await view.acompact(instructions or None)
            return _tool_result(view, entry, before, instructions, tool_call_id)

    return StructuredTool.from_function(
        func=compact,
        coroutine=acompact,
        name=name,
        description=(
            "Compact the conversation history into a summary to free context. Optional "
            "`instructions` say what the summary must focus on. Use it when the context is "
            "long and earlier details are no longer needed verbatim."
        ),
    )


def _tool_result(
    view: ThreadView, entry: CompactionEntry | None, before: int, instructions: str, call_id: str
) -> Command[Any]:
    """The compact tool's notice for ``entry`` (None: nothing compacted) and the new entries."""
    notice = compact_notice(
        entry, tokens=before, tokens_after=view.context_tokens(), instructions=instructions
    )
    update: dict[str, Any] = {
        "messages": [ToolMessage(notice.text, tool_call_id=call_id, name="compact")]
    }
    if (channel := view.update()) is not None:
        update["langctx"] = channel
    return Command(update=update)
