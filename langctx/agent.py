"""``langctx.create_agent``: LangChain's ``create_agent`` with langctx's memory and a delta
``messages`` state, the documented way to build an agent with langctx (docs/agents.md).

Example:
    >>> from langgraph.checkpoint.memory import InMemorySaver
    >>> from langctx import create_agent
    >>> from langctx.testing import ScriptedChatModel
    >>> agent = create_agent(ScriptedChatModel(responses=["Hi."]), checkpointer=InMemorySaver())
    >>> cfg = {"configurable": {"thread_id": "t1"}}
    >>> agent.invoke({"messages": [("user", "Hello")]}, cfg)["messages"][-1].content
    'Hi.'
"""

from __future__ import annotations

import typing
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from langchain.agents import create_agent as _create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.channels.delta import DeltaChannel
from langgraph.store.base import BaseStore

from langctx.delta_state import LangctxDeltaAgentState
from langctx.errors import ConfigError, LangctxWarning
from langctx.middleware import LangctxMiddleware
from langctx.stores.beside import store_beside

__all__ = ["create_agent"]


def create_agent(
    model: str | BaseChatModel,
    tools: Sequence[BaseTool | Callable[..., Any] | dict[str, Any]] | None = None,
    *,
    memory: LangctxMiddleware | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any]] = (),
    state_schema: type[Any] | None = None,
    store: BaseStore | None = None,
    **kwargs: Any,
) -> Any:
    """``langchain.agents.create_agent`` with ``memory`` as its innermost middleware.

    Args:
        model: as for ``langchain.agents.create_agent``.
        tools: as for ``langchain.agents.create_agent``.
        memory: the memory (default: ``LangctxMiddleware()``). At its default ``archive="auto"``
            the folded log goes to the graph's store: ``store``, else a store in the
            checkpointer's own database (:func:`~langctx.stores.beside.store_beside`:
            ``InMemorySaver``, ``SqliteSaver`` on a file, ``PostgresSaver``; the graph and its
            tools get it as their store), else the state. A memory given ``archive="state"``
            keeps it there (warned when a store is given). It runs after ``middleware``
            (closest to the model, so it sizes what is finally sent).
        middleware: the other middleware, in LangChain's order.
        state_schema: default :class:`~langctx.LangctxDeltaAgentState` (``messages`` stored as
            the step's writes); a schema of your own must subclass it.
        store: the graph's store, as for ``langchain.agents.create_agent``.
        **kwargs: every other argument of ``langchain.agents.create_agent``
            (``checkpointer``, ``system_prompt``, ``response_format``, ``name``, ...).

    Raises:
        ConfigError: ``state_schema`` does not subclass ``LangctxDeltaAgentState``, ``memory``
            is not a ``LangctxMiddleware``, or two langctx memories are given.
    """
    others = list(middleware)
    listed = [m for m in others if isinstance(m, LangctxMiddleware)]
    if memory is not None and not isinstance(memory, LangctxMiddleware):
        msg = f"memory= takes a LangctxMiddleware, got {type(memory).__name__}."
        raise ConfigError(msg)
    if len(listed) > 1 or (listed and memory is not None and listed[0] is not memory):
        msg = "give one langctx memory: memory=LangctxMiddleware(...), not another in middleware=."
        raise ConfigError(msg)
    if listed:  # the caller placed it: keep that order
        memory = listed[0]
    if store is not None and memory is not None and memory.archive and memory.archive.in_state:
        msg = (
            "langctx.create_agent: store= is given but the memory keeps the folded log in the "
            'state (archive="state"), where every snapshot holds the whole log; pass '
            "LangctxMiddleware(..., archive=True) to put it in the store."
        )
        warnings.warn(msg, LangctxWarning, stacklevel=2)
    if not listed:
        memory = memory or LangctxMiddleware()
        others.append(memory)
    if store is None and memory is not None and memory.archive and memory.archive.auto:
        store = store_beside(kwargs.get("checkpointer"))  # the folded log beside the checkpoints
    schema = LangctxDeltaAgentState if state_schema is None else _checked_schema(state_schema)
    return _create_agent(
        model, tools, middleware=others, state_schema=schema, store=store, **kwargs
    )


def _checked_schema(schema: type[Any]) -> type[Any]:
    """``schema`` when its ``messages`` is a delta channel, as in ``LangctxDeltaAgentState``."""
    try:
        hints = typing.get_type_hints(schema, include_extras=True)
    except Exception:  # an unresolvable annotation: not the delta schema either
        hints = {}
    if not any(isinstance(meta, DeltaChannel) for meta in _metadata(hints.get("messages"))):
        name = getattr(schema, "__name__", repr(schema))
        msg = (
            f"state_schema={name} must subclass langctx.LangctxDeltaAgentState (its `messages` "
            "is a delta channel): declare `class {name}(LangctxDeltaAgentState): ...`, or use "
            "langchain.agents.create_agent with LangctxMiddleware for another schema."
        ).replace("{name}", name)
        raise ConfigError(msg)
    return schema


def _metadata(annotation: Any) -> tuple[Any, ...]:
    """The ``Annotated`` metadata of ``annotation``, through ``Required`` / ``NotRequired``."""
    while typing.get_origin(annotation) in (typing.Required, typing.NotRequired):
        annotation = typing.get_args(annotation)[0]
    return getattr(annotation, "__metadata__", ())
