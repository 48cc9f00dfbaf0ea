"""Context-mode tools for LangGraph agents: ``fetch_context``, ``working_memory``, ``remember``, and
:func:`wrap_tools_with_context_mode` for the tools of a custom graph or ``ToolNode``."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Annotated, Any

from langchain_core.messages import AnyMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool
from langgraph.prebuilt import InjectedState, ToolRuntime
from langgraph.types import Command
from pydantic import BaseModel, Field

from langctx.channel import channel_update
from langctx.config import DEFAULT_PRIORITIES
from langctx.context_mode.guard import ToolGuard
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.prompt import CONTEXT_MODE_SYSTEM_PROMPT
from langctx.context_mode.references import FetchResult, ReferenceStore, not_found
from langctx.context_mode.tiers import QueryKind, WorkingMemory
from langctx.context_mode.wrapped_tool import (
    ContextModeTool,
    guard_tool,
    guarded_tools,
    reference_namespace,
)
from langctx.errors import ConfigError, LangctxError
from langctx.facts import FileToolSpec
from langctx.markers import CONTEXT_MODE_STAMP, REF_MARKER, REFERENCE_ID_PREFIX, stamp_digest
from langctx.stores.long_term import LongTermMemory
from langctx.stores.references import BaseStoreReferenceStore, GraphReferenceStore

__all__ = [
    "CONTEXT_MODE_SYSTEM_PROMPT",
    "FETCH_CONTEXT_DESCRIPTION",
    "ContextModeTool",
    "fetch_context_tool",
    "guard_tool",
    "guarded_tools",
    "reference_store",
    "remember_tool",
    "working_memory_tool",
    "wrap_tools_with_context_mode",
]

FETCH_CONTEXT_DESCRIPTION = (
    "Read a tool output that was stored instead of shown in full (it was marked "
    f'"{REF_MARKER}{REFERENCE_ID_PREFIX}...]"). Give its ref_id. Without grep: returns the slice starting at byte '
    "`offset` (as much as fits, or `limit` bytes); each slice says where the next one starts. "
    "With grep (a regex, or plain text; case-insensitive unless it has capitals): returns the "
    "matching lines with line numbers and byte offsets, from `offset` on."
)
"""The ``fetch_context`` tool's description (what the model reads)."""


class FetchContextArgs(BaseModel):
    """Arguments of ``fetch_context``."""

    ref_id: str = Field(description='The reference id, e.g. "ctx_1a2b3c4d".')
    offset: int = Field(default=0, description="Byte offset to start at (0 = the beginning).")
    limit: int | None = Field(
        default=None, description="Most bytes to return; omit to get as much as fits."
    )
    grep: str | None = Field(
        default=None, description="Return only the lines matching this regex (or plain text)."
    )
    tool_call_id: Annotated[str, InjectedToolCallId]


def reference_store(store: Any) -> ReferenceStore:
    """Normalise a store argument: a LangGraph ``BaseStore`` is wrapped, a ReferenceStore kept.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> type(reference_store(InMemoryStore())).__name__
        'BaseStoreReferenceStore'
    """
    from langgraph.store.base import BaseStore

    if isinstance(store, BaseStore):
        return BaseStoreReferenceStore(store)
    if isinstance(store, ReferenceStore):
        return store
    msg = f"store must be a langgraph BaseStore or a ReferenceStore, got {type(store).__name__}."
    raise TypeError(msg)


def _fetched(
    result: FetchResult, tool_call_id: str, name: str, record_priority: bool
) -> Command[Any] | ToolMessage:
    stamp = {"v": 1, "action": "fetched", "ref_id": result.ref_id, "kind": result.kind}
    message = ToolMessage(
        result.text,
        tool_call_id=tool_call_id,
        name=name,
        status="success" if result.ok else "error",
        response_metadata={CONTEXT_MODE_STAMP: {**stamp, "digest": stamp_digest(result.text)}},
    )
    if not (record_priority and result.ok and result.message_id):
        return message
    priorities = {result.message_id: DEFAULT_PRIORITIES["fetched_ref"]}
    return Command(update={"messages": [message], "langctx": channel_update(priorities=priorities)})


_FETCH_ERRORS = (LangctxError, KeyError, ValueError, OSError)  # these become an error result


def _namespace(config: RunnableConfig, runtime: ToolRuntime | None) -> str | None:
    """The run's namespace (see :func:`reference_namespace`)."""
    return reference_namespace(config, runtime.state if runtime is not None else None)


def _failed(exc: Exception, tool_call_id: str, name: str) -> ToolMessage:
    return ToolMessage(
        f"[{name} error: {exc}]", tool_call_id=tool_call_id, name=name, status="error"
    )


def fetch_context_tool(
    processor: ContextModeProcessor, *, name: str = "fetch_context", record_priority: bool = True
) -> BaseTool:
    """The ``fetch_context(ref_id, offset=0, limit=None, grep=None)`` tool over ``processor``'s store.

    A bad id or argument gives an error tool result, never an exception.

    Args:
        record_priority: after a successful fetch, return a ``Command`` that lowers the reference
            message's priority (``fetched_ref``) in the ``langctx`` channel.

    Example:
        >>> processor = ContextModeProcessor()
        >>> out = processor.process("data row\\n" * 9000, tool_name="query", thread_id="t1")
        >>> call = {"type": "tool_call", "id": "c9", "name": "fetch_context",
        ...         "args": {"ref_id": out.ref_id, "limit": 18}}
        >>> cmd = fetch_context_tool(processor).invoke(call, {"configurable": {"thread_id": "t1"}})
        >>> cmd.update["messages"][0].content.splitlines()[1], cmd.update["langctx"]["priorities"]
        ('data row', {'langctx-ref-...': 10})
    """

    def fetch_context(
        ref_id: str,
        tool_call_id: str,
        config: RunnableConfig,
        runtime: ToolRuntime = None,  # type: ignore[assignment]  # exactly ToolRuntime: injected
        **where: Any,
    ) -> Command[Any] | ToolMessage:
        try:
            space = _namespace(config, runtime)
            if space is None:
                raise not_found(ref_id)
            result = processor.fetch(ref_id, thread_id=space, **where)
        except _FETCH_ERRORS as exc:
            return _failed(exc, tool_call_id, name)
        return _fetched(result, tool_call_id, name, record_priority)

    async def afetch_context(
        ref_id: str,
        tool_call_id: str,
        config: RunnableConfig,
        runtime: ToolRuntime = None,  # type: ignore[assignment]  # exactly ToolRuntime: injected
        **where: Any,
    ) -> Command[Any] | ToolMessage:
        try:
            space = _namespace(config, runtime)
            if space is None:
                raise not_found(ref_id)
            result = await processor.afetch(ref_id, thread_id=space, **where)
        except _FETCH_ERRORS as exc:
            return _failed(exc, tool_call_id, name)
        return _fetched(result, tool_call_id, name, record_priority)

    return StructuredTool.from_function(
        func=fetch_context,
        coroutine=afetch_context,
        name=name,
        description=FETCH_CONTEXT_DESCRIPTION,
        args_schema=FetchContextArgs,
    )


class WorkingMemoryArgs(BaseModel):
    """Arguments of ``working_memory``."""

    kind: QueryKind = Field(
        default="all", description="What to list: all, files, commands or errors."
    )
    path: str | None = Field(
        default=None, description="Only entries whose path or command contains this text."
    )
    messages: Annotated[list[AnyMessage], InjectedState("messages")]


def working_memory_tool(
    *,
    name: str = "working_memory",
    file_tools: Mapping[str, FileToolSpec] | None = None,
    command_tools: Collection[str] | None = None,
) -> BaseTool:
    """The ``working_memory(kind="all", path=None)`` tool over the state's messages.

    Example:
        >>> from langchain_core.messages import AIMessage, ToolMessage
        >>> msgs = [AIMessage("", tool_calls=[{"id": "c1", "name": "bash", "args": {"command": "make"}}]),
        ...         ToolMessage("make: *** [all] Error 2\\nexit code 2", tool_call_id="c1")]
        >>> working_memory_tool().invoke({"kind": "commands", "messages": msgs}).splitlines()[-1]
        '- [turn 1] make -> exit 2'
    """

    def working_memory(
        messages: list[AnyMessage], kind: QueryKind = "all", path: str | None = None
    ) -> str:
        memory = WorkingMemory.from_messages(
            messages, file_tools=file_tools, command_tools=command_tools
        )
        return memory.render(kind, path=path)

    return StructuredTool.from_function(
        func=working_memory,
        name=name,
        description=(
            "Look up the execution record of this session, kept out of the conversation: files "
            "read and modified (with the turn and size), commands run with their exit codes, and "
            "errors not fixed yet. Use it instead of re-reading or re-running to check."
        ),
        args_schema=WorkingMemoryArgs,
    )


class RememberArgs(BaseModel):
    """Arguments of ``remember``."""

    fact: str = Field(description="One self-contained fact worth knowing in later sessions.")


def remember_tool(long_term: LongTermMemory, *, name: str = "remember") -> BaseTool:
    """The ``remember(fact)`` tool: stores a fact in long-term memory for the run's user.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> ltm = LongTermMemory(InMemoryStore())
        >>> remember_tool(ltm).invoke({"fact": "The staging DB is read-only."})
        'Remembered: The staging DB is read-only.'
        >>> ltm.search("staging db")
        ['The staging DB is read-only.']
    """

    def remember(fact: str, config: RunnableConfig) -> str:
        try:
            long_term.remember(fact, config=config)
        except LangctxError as exc:
            return f"Not remembered: {exc}"
        return f"Remembered: {' '.join(fact.split())}"

    async def aremember(fact: str, config: RunnableConfig) -> str:
        try:
            await long_term.aremember(fact, config=config)
        except LangctxError as exc:
            return f"Not remembered: {exc}"
        return f"Remembered: {' '.join(fact.split())}"

    return StructuredTool.from_function(
        func=remember,
        coroutine=aremember,
        name=name,
        description=(
            "Store one fact in long-term memory so it is available in later sessions: a user "
            "preference, a project convention, a decision. Not for temporary state."
        ),
        args_schema=RememberArgs,
    )


def wrap_tools_with_context_mode(
    tools: Sequence[BaseTool],
    processor: ContextModeProcessor | None = None,
    store: Any = None,
    *,
    guard: ToolGuard | None = None,
    fetch_tool: bool = True,
    record_priority: bool = True,
) -> list[BaseTool]:
    """``tools`` guarded and passed through Context-mode (per ``thread_id``), plus ``fetch_context``.

    Args:
        processor: default: a new one over ``store``.
        store: a ``BaseStore`` or ReferenceStore (default: the graph's store, else this process's
            memory; see :class:`~langctx.stores.references.GraphReferenceStore`).
        guard: timeout and output cap (default ``ToolGuard()``).
        record_priority: see :func:`fetch_context_tool`.

    Example:
        >>> from langchain_core.tools import StructuredTool
        >>> make = StructuredTool.from_function(lambda command: "compiling...\\n" * 3000,
        ...                                     name="run_command", description="Run a command.")
        >>> tools = wrap_tools_with_context_mode([make])
        >>> call = {"type": "tool_call", "id": "c1", "name": "run_command", "args": {"command": "make"}}
        >>> [t.name for t in tools], tools[0].invoke(call).content.startswith("[langctx ref=ctx_")
        (['run_command', 'fetch_context'], True)
    """
    if processor is not None and store is not None:
        msg = "pass either processor= or store=, not both (the processor has its store)."
        raise ConfigError(msg)
    if processor is None:
        store = GraphReferenceStore() if store is None else reference_store(store)
        processor = ContextModeProcessor(store=store)
    guard = guard if guard is not None else ToolGuard()
    wrapped = [ContextModeTool.wrap(t, guard=guard, processor=processor) for t in tools]
    fetch = [fetch_context_tool(processor, record_priority=record_priority)] if fetch_tool else []
    return [*wrapped, *fetch]
