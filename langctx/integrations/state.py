"""LangGraph state schemas with the ``langctx`` channel (see :mod:`langctx.channel`)."""

from __future__ import annotations

from typing import Annotated, NotRequired

from langchain_core.messages import AnyMessage
from langgraph.channels import EphemeralValue
from langgraph.graph import MessagesState
from langgraph.managed import RemainingSteps

from langctx.channel import LangctxChannel, merge_langctx

__all__ = ["LangctxAgentState", "LangctxState"]


class LangctxState(MessagesState):
    """``MessagesState`` plus the ``langctx`` channel and the model's input.

    ``llm_input_messages`` is what :class:`~langctx.integrations.langgraph.LangctxNode` projects for
    the model. It is an ephemeral channel: it lives for the step after the memory node and is not
    kept in later checkpoints.
    """

    langctx: NotRequired[Annotated[LangctxChannel, merge_langctx]]
    llm_input_messages: NotRequired[Annotated[list[AnyMessage], EphemeralValue]]


class LangctxAgentState(LangctxState):
    """:class:`LangctxState` with ``remaining_steps``, as ``create_react_agent`` requires."""

    remaining_steps: NotRequired[RemainingSteps]
