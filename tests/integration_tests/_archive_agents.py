"""Deterministic scripted agents for the archive-mode tests (the same session, archived or not).

Every message gets a fixed id (AI turns from the demo session, tool results ``tool-<call id>``,
user turns ``user-<n>``), so two runs of one script produce byte-identical states and model inputs,
and an archived run can be compared with a plain one message by message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.messages import messages_to_dict as _to_dict
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.base import BaseStore

from langctx.cli.demo.session import SYSTEM_PROMPT, TASK
from langctx.delta_state import LangctxDeltaAgentState, LangctxDeltaState
from langctx.langgraph import LangctxNode, LangctxState, route_after_memory
from langctx.middleware import LangctxMiddleware
from langctx.recovery import with_overflow_recovery
from langctx.state_memory import MemorySettings
from langctx.stores.archive import ArchiveOption
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import FINAL, session_script

FINAL_ID = "final"


def script(
    turns: int, *, seed: int, start: int = 0, final_id: str = FINAL_ID
) -> tuple[list[Any], dict[str, str]]:
    """AI responses of turns ``start`` .. ``turns`` (then the final answer) and the tool outputs."""
    s = session_script(turns, seed=seed, start=start)
    responses = [*s.responses[:-1], AIMessage(FINAL, id=final_id)]
    return responses, s.outputs


@contextmanager
def open_store(uri: str) -> Iterator[BaseStore]:
    """A set-up SqliteStore (a file path) or PostgresStore (a postgresql:// URI)."""
    if uri.startswith(("postgresql://", "postgres://")):
        from langgraph.store.postgres import PostgresStore

        with PostgresStore.from_conn_string(uri) as store:
            store.setup()
            yield store
    else:
        from langgraph.store.sqlite import SqliteStore

        with SqliteStore.from_conn_string(uri) as store:
            store.setup()
            yield store


def tools(outputs: dict[str, str]) -> list[BaseTool]:
    """read_file / run_command / edit_file returning ToolMessages with fixed ids."""

    def result(tool_call_id: str) -> ToolMessage:
        return ToolMessage(
            outputs[tool_call_id], tool_call_id=tool_call_id, id=f"tool-{tool_call_id}"
        )

    @tool
    def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Read a file of the repository."""
        return result(tool_call_id)

    @tool
    def run_command(command: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Run a shell command in the sandbox."""
        return result(tool_call_id)

    @tool
    def edit_file(
        path: str, old: str, new: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> ToolMessage:
        """Replace text in a file."""
        return result(tool_call_id)

    return [read_file, run_command, edit_file]


def build(
    kind: str,
    model: ScriptedChatModel,
    outputs: dict[str, str],
    *,
    budget: int,
    archive: ArchiveOption = None,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    store: BaseStore | None = None,
    delta: bool = False,
    **options: Any,
) -> tuple[Any, MemorySettings]:
    """A ``create_agent`` + middleware agent ("middleware") or a ``StateGraph`` + node ("node"),
    and the memory settings it projects with."""
    ts = tools(outputs)
    if kind == "middleware":
        middleware = LangctxMiddleware(max_tokens=budget, archive=archive, **options)
        kwargs: dict[str, Any] = {"state_schema": LangctxDeltaAgentState} if delta else {}
        agent = create_agent(
            model,
            tools=ts,
            system_prompt=SYSTEM_PROMPT,
            middleware=[middleware],
            checkpointer=checkpointer,
            store=store,
            **kwargs,
        )
        return agent, middleware.settings
    node = LangctxNode(max_tokens=budget, archive=archive, **options)
    llm = with_overflow_recovery(model.bind_tools(ts), node.settings)

    def call_model(state: LangctxState, config: Any) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["llm_input_messages"], config)]}

    async def acall_model(state: LangctxState, config: Any) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["llm_input_messages"], config)]}

    builder = StateGraph(LangctxDeltaState if delta else LangctxState)
    builder.add_node("memory", node)
    builder.add_node("model", RunnableLambda(call_model, afunc=acall_model))
    builder.add_node("tools", ToolNode(ts))
    builder.add_edge(START, "memory")
    builder.add_conditional_edges("memory", route_after_memory("model"), ["model", END])
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "memory")
    return builder.compile(checkpointer=checkpointer, store=store), node.settings


def first_input(kind: str) -> dict[str, Any]:
    """The task (and, for the node graph, the system prompt kept in state)."""
    msgs: list[BaseMessage] = [HumanMessage(TASK, id="task")]
    if kind == "node":
        msgs.insert(0, SystemMessage(SYSTEM_PROMPT, id="system"))
    return {"messages": msgs}


def user_turns(model: ScriptedChatModel, first: int = 1) -> Iterator[dict[str, Any]]:
    """'Go on (n).' with a fixed id, until the script is spent."""
    n = first
    while model._index < len(model.responses):
        yield {"messages": [HumanMessage(f"Go on ({n}).", id=f"user-{n}")]}
        n += 1


def drive(
    invoke: Callable[[dict[str, Any]], dict[str, Any]],
    model: ScriptedChatModel,
    first: dict[str, Any] | None,
    *,
    first_user: int = 1,
    after_each: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Invoke until the script is spent; ``after_each`` sees every run's final state."""
    out = invoke(first) if first is not None else {}
    if after_each is not None and first is not None:
        after_each(out)
    for message in user_turns(model, first=first_user):
        out = invoke(message)
        if after_each is not None:
            after_each(out)
    return out


async def adrive(
    ainvoke: Callable[[dict[str, Any]], Any],
    model: ScriptedChatModel,
    first: dict[str, Any],
) -> dict[str, Any]:
    """Async version of `drive`."""
    out: dict[str, Any] = await ainvoke(first)
    for message in user_turns(model):
        out = await ainvoke(message)
    return out


def dicts(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """Messages as comparable plain dicts."""
    return _to_dict(list(messages))
