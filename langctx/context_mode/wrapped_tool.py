"""A tool wrapped with the guard and Context-mode (any ``BaseTool``, MCP tools included)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import Annotated, Any

from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig, ensure_config
from langchain_core.tools import BaseTool, InjectedToolArg
from pydantic import BaseModel, ConfigDict, create_model

from langctx.channel import run_of
from langctx.context_mode.guard import DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_TOOL_TIMEOUT, ToolGuard
from langctx.context_mode.processor import ContextModeProcessor
from langctx.markers import NO_THREAD, checked_thread_id, thread_less_namespace


def thread_id_from_config(config: RunnableConfig | None) -> str:
    """The run's ``configurable.thread_id`` (refused when reserved), or :data:`NO_THREAD`.

    Raises:
        ConfigError: the thread id names a reserved namespace (:func:`checked_thread_id`).
    """
    configurable = (config or {}).get("configurable") or {}
    tid = configurable.get("thread_id")
    return NO_THREAD if tid is None else checked_thread_id(tid)


def reference_namespace(config: RunnableConfig | None, state: Any = None) -> str | None:
    """Where a run's references are kept: its ``thread_id``; without one, the random run id the
    middlewares keep in the state's ``langctx`` channel; outside any graph run, the no-thread
    namespace; None when a graph run has neither (its outputs are not stored).

    A thread id cannot name the others (:func:`checked_thread_id`), nor can a message.
    """
    tid = thread_id_from_config(config)
    if tid != NO_THREAD:
        return tid
    run = run_of(state.get("langctx")) if isinstance(state, Mapping) else None
    if run is not None:
        return thread_less_namespace(run)
    return None if in_graph_run(config) else NO_THREAD


def namespace_args(config: RunnableConfig | None, state: Any = None) -> dict[str, Any]:
    """The processor's ``thread_id`` and ``keep`` for a run (see :func:`reference_namespace`)."""
    space = reference_namespace(config, state)
    return {"thread_id": space, "keep": space is not None}


def in_graph_run(config: RunnableConfig | None) -> bool:
    """Whether ``config`` is a LangGraph run's (Pregel puts its ``__pregel_*`` keys in every
    task's ``configurable``; read here without importing LangGraph)."""
    configurable = (config or {}).get("configurable") or {}
    return any(str(key).startswith("__pregel_") for key in configurable)


_RUNTIME = "runtime"  # the argument ToolNode fills with the call's ToolRuntime (state included)


def _with_runtime(schema: Any) -> tuple[Any, bool]:
    """``schema`` with an injected ``runtime`` argument (to learn the run's state), and whether it
    was added (not to a JSON-schema dict, nor to a tool that takes ``runtime`` itself)."""
    is_model = isinstance(schema, type) and issubclass(schema, BaseModel)
    if not is_model or _RUNTIME in schema.model_fields:
        return schema, False
    field: Any = (Annotated[Any, InjectedToolArg], None)
    return create_model(schema.__name__, __base__=schema, **{_RUNTIME: field}), True


def _call_of(value: Any) -> tuple[str | None, Mapping[str, Any] | None]:
    if isinstance(value, dict) and value.get("type") == "tool_call" and "id" in value:
        args = value.get("args")
        return value.get("id"), args if isinstance(args, Mapping) else None
    return None, value if isinstance(value, Mapping) else None


class ContextModeTool(BaseTool):
    """A ``BaseTool`` that runs another under a guard, then through Context-mode."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    tool: BaseTool
    guard: ToolGuard | None = None
    """Timeout and output cap (None: the tool runs unguarded)."""
    processor: ContextModeProcessor | None = None
    """Context-mode for the tool's output (None: the output is only guarded)."""
    adds_runtime: bool = False
    """The wrapper asks for ``runtime`` (and takes it out before the wrapped tool runs)."""

    @classmethod
    def wrap(
        cls,
        tool: BaseTool,
        *,
        guard: ToolGuard | None = None,
        processor: ContextModeProcessor | None = None,
    ) -> ContextModeTool:
        """Wrap ``tool`` (a wrapped tool is unwrapped first).

        Example:
            >>> from langchain_core.tools import StructuredTool
            >>> echo = StructuredTool.from_function(lambda text: text, name="echo", description="Echo.")
            >>> w = ContextModeTool.wrap(ContextModeTool.wrap(echo))
            >>> w.tool is echo, w.name, w.invoke({"text": "hi"})
            (True, 'echo', 'hi')
        """
        inner = tool.tool if isinstance(tool, ContextModeTool) else tool
        schema, adds = _with_runtime(
            inner.args_schema if inner.args_schema is not None else inner.get_input_schema()
        )
        return cls(
            name=inner.name,
            description=inner.description,
            args_schema=schema,
            adds_runtime=adds,
            return_direct=inner.return_direct,
            tags=inner.tags,
            metadata=inner.metadata,
            extras=getattr(inner, "extras", None),
            tool=inner,
            guard=guard,
            processor=processor,
        )

    # ToolNode reads the wrapped function's annotations to find injected arguments.
    @property
    def func(self) -> Callable[..., Any] | None:
        """The wrapped tool's function, if it has one."""
        return getattr(self.tool, "func", None)

    @property
    def coroutine(self) -> Callable[..., Any] | None:
        """The wrapped tool's coroutine, if it has one."""
        return getattr(self.tool, "coroutine", None)

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        msg = "ContextModeTool runs through invoke()/ainvoke(); call those."
        raise NotImplementedError(msg)

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Run the wrapped tool under the guard, then Context-mode."""
        input, state = self._take_runtime(input)
        call_id, args = _call_of(input)
        run = partial(self.tool.invoke, input, config, **kwargs)
        guard = self.guard
        out = guard.run(run, tool_name=self.name, tool_call_id=call_id) if guard else run()
        processor = self.processor
        if processor is None or not isinstance(out, ToolMessage | str | bytes):
            return out
        where = namespace_args(ensure_config(config), state)
        if isinstance(out, ToolMessage):
            return processor.process_message(out, args=args, **where)
        return processor.process(out, tool_name=self.name, args=args, **where).text

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Async version of `invoke`."""
        input, state = self._take_runtime(input)
        call_id, args = _call_of(input)
        run = partial(self.tool.ainvoke, input, config, **kwargs)
        guard = self.guard
        out = await (guard.arun(run, tool_name=self.name, tool_call_id=call_id) if guard else run())
        processor = self.processor
        if processor is None or not isinstance(out, ToolMessage | str | bytes):
            return out
        where = namespace_args(ensure_config(config), state)
        if isinstance(out, ToolMessage):
            return await processor.aprocess_message(out, args=args, **where)
        reduced = await processor.aprocess(out, tool_name=self.name, args=args, **where)
        return reduced.text

    def _take_runtime(self, input: Any) -> tuple[Any, Any]:
        """``input`` without the ``runtime`` the wrapper added, and the run's state (or None)."""
        args = input.get("args") if _call_of(input)[0] is not None else input
        if not isinstance(args, Mapping) or _RUNTIME not in args:
            return input, None
        state = getattr(args[_RUNTIME], "state", None)
        if not self.adds_runtime:
            return input, state  # the wrapped tool takes runtime itself
        rest = {k: v for k, v in args.items() if k != _RUNTIME}
        return ({**input, "args": rest} if args is not input else rest), state


def guard_tool(
    tool: BaseTool,
    *,
    timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
) -> ContextModeTool:
    """``tool`` with a timeout and an output cap (a :class:`~langctx.context_mode.guard.ToolGuard`).

    Example:
        >>> from langchain_core.tools import StructuredTool
        >>> big = StructuredTool.from_function(lambda: "x" * 1000, name="big", description="Text.")
        >>> out = guard_tool(big, max_output_chars=50).invoke({})
        >>> len(out) < 1000, "950 chars cut by the tool guard" in out
        (True, True)
    """
    processor = tool.processor if isinstance(tool, ContextModeTool) else None
    guard = ToolGuard(timeout=timeout, max_output_chars=max_output_chars)
    return ContextModeTool.wrap(tool, guard=guard, processor=processor)


def guarded_tools(
    tools: Sequence[BaseTool],
    *,
    timeout: float | None = DEFAULT_TOOL_TIMEOUT,
    max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS,
) -> list[ContextModeTool]:
    """:func:`guard_tool` over a list of tools.

    Example:
        >>> guarded_tools([])
        []
    """
    return [guard_tool(t, timeout=timeout, max_output_chars=max_output_chars) for t in tools]
