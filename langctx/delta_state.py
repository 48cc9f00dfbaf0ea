"""State schemas whose ``messages`` and ``langctx`` are LangGraph ``DeltaChannel``\\ s (beta): a
checkpoint stores the step's writes, not the whole state (docs/persistence.md).

Example:
    >>> from langgraph.graph import START, StateGraph
    >>> echo = lambda s: {"messages": [("ai", s["messages"][-1].content)]}
    >>> graph = StateGraph(LangctxDeltaState).add_node("echo", echo).add_edge(START, "echo").compile()
    >>> [m.content for m in graph.invoke({"messages": [("user", "hi")]})["messages"]]
    ['hi', 'hi']
"""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, NotRequired, Required, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.channels import EphemeralValue
from langgraph.channels.delta import DeltaChannel

# LangGraph's own batch reducer for message DeltaChannels (its documented example imports it)
from langgraph.graph.message import _messages_delta_reducer

from langctx.channel import LangctxChannel, merge_langctx_many
from langctx.errors import StateVersionError

__all__ = [
    "DEFAULT_SNAPSHOT_FREQUENCY",
    "ArchivedBatches",
    "LangctxDeltaAgentState",
    "LangctxDeltaChannel",
    "LangctxDeltaState",
    "append_batches",
    "merge_langctx_writes",
]

DEFAULT_SNAPSHOT_FREQUENCY = 100
"""Updates of a channel between two full snapshots (LangGraph's default)."""


def merge_langctx_writes(
    state: Mapping[str, Any] | None, writes: Sequence[Mapping[str, Any] | None]
) -> LangctxChannel:
    """The ``langctx`` reducer in ``DeltaChannel`` form: apply a batch of updates in order.

    Example:
        >>> merge_langctx_writes({}, [{"v": 1, "priorities": {"m1": 10}}])["priorities"]
        {'m1': 10}
    """
    return merge_langctx_many(state, writes)


def append_batches(
    state: Sequence[Mapping[str, Any]] | None,
    writes: Sequence[Mapping[str, Any] | Sequence[Mapping[str, Any]] | None],
) -> list[Mapping[str, Any]]:
    """The archive channel's reducer: each write (one batch, or a list of them) is appended.

    Example:
        >>> append_batches([{"seq": 0}], [[{"seq": 1}], {"seq": 2}])
        [{'seq': 0}, {'seq': 1}, {'seq': 2}]
    """
    out = list(state or [])
    for write in writes:
        if isinstance(write, Mapping):
            out.append(write)
        elif isinstance(write, list | tuple) and all(isinstance(b, Mapping) for b in write):
            out.extend(write)
        elif write is not None:
            msg = (
                "the langctx_archive key takes an archived batch (a dict) or a list of them, "
                f"got {type(write).__name__}."
            )
            raise StateVersionError(msg)
    return out


def _delta(reducer: Any) -> DeltaChannel[Any]:
    return DeltaChannel(reducer, snapshot_frequency=DEFAULT_SNAPSHOT_FREQUENCY)


LangctxDeltaChannel = Annotated[LangctxChannel, _delta(merge_langctx_writes)]
"""The type of the ``langctx`` state key as a ``DeltaChannel`` (or declare
``Annotated[LangctxChannel, merge_langctx]``: the whole value in every checkpoint)."""

ArchivedBatches = Annotated[list[Mapping[str, Any]], _delta(append_batches)]
"""The type of the ``langctx_archive`` state key, a ``DeltaChannel`` of archived batches."""


class LangctxDeltaState(TypedDict):
    """:class:`~langctx.langgraph.LangctxState` with delta-stored ``messages`` and ``langctx``."""

    messages: Annotated[list[AnyMessage], _delta(_messages_delta_reducer)]
    langctx: NotRequired[LangctxDeltaChannel]
    langctx_archive: NotRequired[ArchivedBatches]
    llm_input_messages: NotRequired[Annotated[list[AnyMessage], EphemeralValue]]


def _agent_state() -> type:
    from langchain.agents.middleware import AgentState

    class LangctxDeltaAgentState(AgentState[Any]):
        """``AgentState`` with delta-stored ``messages`` and ``langctx`` (``state_schema=``)."""

        messages: Required[Annotated[list[AnyMessage], _delta(_messages_delta_reducer)]]
        langctx: NotRequired[LangctxDeltaChannel]
        langctx_archive: NotRequired[ArchivedBatches]

    LangctxDeltaAgentState.__module__ = __name__
    return LangctxDeltaAgentState


if TYPE_CHECKING:
    LangctxDeltaAgentState: type
else:

    def __getattr__(name: str) -> Any:
        if name == "LangctxDeltaAgentState":
            value = _agent_state()
            globals()[name] = value
            return value
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
