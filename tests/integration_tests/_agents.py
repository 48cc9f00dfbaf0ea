"""Scripted agents for the integration tests: a 200-turn coding session driven through real graphs.

The scripted model plays the AI turns of :func:`langctx.cli.demo.session.iter_turns`; the tools return
the session's (often huge) outputs by tool-call id. Whenever the agent stops (an AI turn without
tool calls) the "user" says "Go on." until the script is spent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Unpack

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, InjectedToolCallId, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from langctx.cli.demo.session import SYSTEM_PROMPT, TASK, iter_turns
from langctx.count_cache import CachedCounter, MessageCountCache, shared_blocks
from langctx.langgraph import LangctxNode, LangctxState, route_after_memory
from langctx.middleware import LangctxMiddleware
from langctx.recovery import with_overflow_recovery
from langctx.state_memory import MemoryOptions, MemorySettings, ThreadView, view_state
from langctx.stores.archive import read_batches, thread_entries
from langctx.testing import ScriptedChatModel
from langctx.tokens import ApproximateCounter, TokenCounter
from tests._helpers import PG_URI

FINAL = "All tests pass now; the parser keeps nested lists."


@dataclass
class Script:
    """AI responses and tool outputs of a scripted session (turns ``start`` .. ``stop``)."""

    responses: list[Any]
    outputs: dict[str, str] = field(default_factory=dict)


def session_script(turns: int, *, seed: int = 0, start: int = 0, final: bool = True) -> Script:
    """The AI turns ``start`` .. ``turns`` of the demo session; tool outputs keyed by call id."""
    script = Script(responses=[])
    for k, turn in enumerate(iter_turns(turns, seed=seed)):
        for m in turn[1:]:
            assert isinstance(m, ToolMessage)
            script.outputs[m.tool_call_id] = str(m.content)
        if k >= start:
            script.responses.append(turn[0])
    if final:
        script.responses.append(AIMessage(FINAL))
    return script


def session_tools(outputs: dict[str, str]) -> list[BaseTool]:
    """read_file / run_command / edit_file returning the scripted outputs."""

    @tool
    def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Read a file of the repository."""
        return outputs[tool_call_id]

    @tool
    def run_command(command: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Run a shell command in the sandbox."""
        return outputs[tool_call_id]

    @tool
    def edit_file(
        path: str, old: str, new: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Replace text in a file."""
        return outputs[tool_call_id]

    return [read_file, run_command, edit_file]


def middleware_agent(
    model: ScriptedChatModel,
    tools: Sequence[BaseTool],
    middleware: LangctxMiddleware,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> Any:
    """``create_agent`` + ``LangctxMiddleware``."""
    return create_agent(
        model,
        tools=list(tools),
        system_prompt=SYSTEM_PROMPT,
        middleware=[middleware],
        checkpointer=checkpointer,
    )


def node_agent(
    model: ScriptedChatModel,
    tools: Sequence[BaseTool],
    node: LangctxNode,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
) -> Any:
    """``StateGraph`` + ``node`` + a model node with overflow recovery + ``ToolNode``."""
    llm = with_overflow_recovery(model.bind_tools(list(tools)), node.settings)

    def call_model(state: LangctxState, config: Any) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["llm_input_messages"], config)]}

    async def acall_model(state: LangctxState, config: Any) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["llm_input_messages"], config)]}

    builder = StateGraph(LangctxState)
    builder.add_node("memory", node)
    builder.add_node("model", RunnableLambda(call_model, afunc=acall_model))
    builder.add_node("tools", ToolNode(list(tools)))
    builder.add_edge(START, "memory")
    builder.add_conditional_edges("memory", route_after_memory("model"), ["model", END])
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "memory")
    return builder.compile(checkpointer=checkpointer)


def config(thread_id: str | None = None) -> dict[str, Any]:
    """A run config with a fresh (or given) thread id and room for long sessions."""
    return {
        "configurable": {"thread_id": thread_id or f"t-{uuid.uuid4().hex[:10]}"},
        "recursion_limit": 5000,
    }


def thread_view(graph: Any, cfg: dict[str, Any], settings: MemorySettings) -> ThreadView:
    """The memory of the thread's latest checkpoint, computed afresh (no compaction runs)."""
    state = graph.get_state(cfg).values
    return view_state(state, settings, thread_id=cfg["configurable"]["thread_id"])


def cold_settings(**options: Unpack[MemoryOptions]) -> MemorySettings:
    """Settings as a new process would have them: no message count or summary block cached."""
    shared_blocks().clear()
    counter = CachedCounter(ApproximateCounter(), MessageCountCache())
    return MemorySettings.of(token_counter=counter, **options)


def first_input(*, with_system: bool) -> dict[str, Any]:
    """The first user input: the task (and the system prompt for graphs that keep it in state)."""
    msgs: list[BaseMessage] = [HumanMessage(TASK, id="task")]
    if with_system:
        msgs.insert(0, SystemMessage(SYSTEM_PROMPT, id="system"))
    return {"messages": msgs}


def drive(
    invoke: Callable[[dict[str, Any]], dict[str, Any]],
    model: ScriptedChatModel,
    first: dict[str, Any] | None,
) -> tuple[dict[str, Any], int]:
    """Invoke until the script is spent; returns the last state and the number of user turns."""
    out = invoke(first) if first is not None else {}
    user_turns = 1 if first is not None else 0
    while model._index < len(model.responses):  # the script decides when the session ends
        out = invoke({"messages": [HumanMessage(f"Go on ({user_turns}).")]})
        user_turns += 1
    return out, user_turns


@dataclass
class CallReport:
    """What every model input of a session looked like."""

    calls: int
    orphans: int
    unanswered: int
    violations: int
    max_tokens: int
    missing_task: int


def check_calls(
    calls: Sequence[Sequence[BaseMessage]],
    counter: TokenCounter,
    budget: int,
    *,
    skip_system_prompt: bool,
) -> CallReport:
    """Orphans, unanswered calls, budget violations and task presence over every model input."""
    orphans = unanswered = violations = missing = 0
    biggest = 0
    for call in calls:
        msgs = list(call)
        if skip_system_prompt:  # create_agent adds the system prompt outside the memory's budget
            assert isinstance(msgs[0], SystemMessage) and msgs[0].content == SYSTEM_PROMPT
            msgs = msgs[1:]
        open_ids: set[str] = set()
        answered: set[str] = set()
        for m in msgs:
            if isinstance(m, AIMessage):
                open_ids.update(str(tc["id"]) for tc in m.tool_calls)
            if isinstance(m, ToolMessage):
                if m.tool_call_id not in open_ids:
                    orphans += 1
                answered.add(m.tool_call_id)
        unanswered += len(open_ids - answered)
        tokens = counter.count_messages(msgs)
        biggest = max(biggest, tokens)
        violations += tokens > budget
        missing += not any(isinstance(m, HumanMessage) and m.content == TASK for m in msgs)
    return CallReport(len(calls), orphans, unanswered, violations, biggest, missing)


def postgres_available() -> bool:
    """True when a PostgreSQL server answers at :data:`PG_URI`."""
    import psycopg

    try:
        with psycopg.connect(PG_URI, connect_timeout=3):
            return True
    except psycopg.OperationalError:
        return False


def require_postgres() -> str:
    """The PostgreSQL URI, or a visible skip (a failure when LANGCTX_REQUIRE_PG is set)."""
    import psycopg

    try:
        with psycopg.connect(PG_URI, connect_timeout=3):
            return PG_URI
    except psycopg.OperationalError as exc:
        if os.environ.get("LANGCTX_REQUIRE_PG"):
            pytest.fail(f"LANGCTX_REQUIRE_PG is set but PostgreSQL at {PG_URI} is down: {exc}")
        pytest.skip(f"no PostgreSQL server answers at {PG_URI} ({str(exc).splitlines()[0]})")


def messages_of(state: dict[str, Any]) -> Iterator[BaseMessage]:
    """The messages of a state (for readability in tests)."""
    yield from state["messages"]


def run_worker(module: str, jobs: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Run ``python -m module JOBS`` in a new process (strict msgpack on); its results and stderr.

    The worker prints one JSON list, a result per job, as its last line of output.
    """
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-m", module, json.dumps(list(jobs))],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1]), proc.stderr


def every_compaction(state: Any) -> list[dict[str, Any]]:
    """A thread's compaction entries, in order: those its archive took out of the ``langctx``
    channel (the default archive mode keeps them in the state's batches), then the channel's."""
    return thread_entries(read_batches(None, None, state), state.get("langctx"))[0]


def write_calls(path: str, calls: Sequence[Sequence[BaseMessage]]) -> None:
    """Every model call's input texts, one JSON list per line (what a worker process reports)."""
    with open(path, "w") as f:
        for call in calls:
            f.write(json.dumps([m.text for m in call]) + "\n")
