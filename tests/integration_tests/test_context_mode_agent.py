"""End to end: a scripted agent gets a giant tool output as a reference and fetches it.

``create_agent`` with ``LangctxMiddleware`` (memory, compaction) and ``ContextModeMiddleware``
(guard, Context-mode, ``fetch_context``). The scripted model calls a tool that returns a 200k-char
log, then greps the reference it was given (the ref id is parsed from the last ToolMessage), then
reads the slice at the matching offset, then finishes. Checked: the output was referenced, not
inline; each fetch returned a bounded slice; every model input fits the memory's budget with zero
orphan tool messages; the fetched reference's priority dropped to ``fetched_ref``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langctx.config import DEFAULT_PRIORITIES
from langctx.context_mode.middleware import ContextModeMiddleware, ContextModeToolProcessor
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.prompt import CONTEXT_MODE_SYSTEM_PROMPT
from langctx.context_mode.references import find_reference_ids
from langctx.context_mode.tools import fetch_context_tool, wrap_tools_with_context_mode
from langctx.langgraph import LangctxNode
from langctx.markers import CONTEXT_MODE_STAMP
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import MemorySettings, view_state
from langctx.stores.long_term import LongTermMemory
from langctx.testing import ScriptedChatModel, ai_tool_call
from langctx.tokens import resolve_token_counter
from tests._helpers import assert_pairs_intact
from tests.integration_tests._agents import node_agent

BUDGET = 6000
SYSTEM = "You are a build engineer."
ERROR_LINE = "OSError: [Errno 28] No space left on device: '/tmp/build/obj/parser.o'"


def giant_log() -> str:
    lines = [f"[{i:06d}] cc -O2 -c src/unit_{i}.c -o obj/unit_{i}.o ... ok" for i in range(3400)]
    lines.insert(2100, ERROR_LINE)
    lines.append("make: *** [Makefile:42: all] Error 2\nexit code 2")
    text = "\n".join(lines)
    assert len(text) > 200_000
    return text


LOG = giant_log()


@tool
def read_log(path: str) -> str:
    """Read a build log."""
    return LOG


def last_tool_text(messages: list[BaseMessage]) -> str:
    return next(m.text for m in reversed(messages) if isinstance(m, ToolMessage))


def ref_ids_seen(text: str) -> list[str]:
    """The reference ids a model reads in a tool result of its input (Context-mode's own markers
    reach the model intact: the projection trusts messages Context-mode stamped)."""
    return find_reference_ids(text)


def script() -> list[Any]:
    """read the log -> grep its reference -> read the slice at the match -> finish."""

    def grep(messages: list[BaseMessage]) -> AIMessage:
        (ref_id,) = ref_ids_seen(last_tool_text(messages))
        return ai_tool_call("fetch_context", {"ref_id": ref_id, "grep": "No space left"})

    def read_slice(messages: list[BaseMessage]) -> AIMessage:
        text = last_tool_text(messages)
        (ref_id,) = ref_ids_seen(text)
        offset = int(re.search(r"^L\d+ @(\d+):", text, re.M).group(1))  # type: ignore[union-attr]
        return ai_tool_call("fetch_context", {"ref_id": ref_id, "offset": offset})

    def finish(messages: list[BaseMessage]) -> str:
        assert ERROR_LINE in last_tool_text(messages)
        return "The build ran out of disk space while writing parser.o."

    return [ai_tool_call("read_log", {"path": "build.log"}), grep, read_slice, finish]


def check_run(
    out: dict[str, Any], model: ScriptedChatModel, settings: MemorySettings, thread: str
) -> None:
    tools = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.name for m in tools] == ["read_log", "fetch_context", "fetch_context"]
    reference, grep, page = tools
    counter = resolve_token_counter("approximate")
    # the giant output was referenced, not inline
    assert reference.text.startswith("[langctx ref=ctx_") and len(reference.text) < 10_000
    assert reference.response_metadata[CONTEXT_MODE_STAMP]["action"] == "referenced"
    assert "exit code 2" in reference.text
    # each fetch returned a bounded slice
    for fetched in (grep, page):
        assert fetched.status == "success" and counter.count_text(fetched.text) <= 1500
    assert ERROR_LINE in grep.text and ERROR_LINE in page.text
    # every model input fits the budget, no orphan tool message, the prompt explains references
    assert len(model.calls) == 4
    for call in model.calls:
        assert isinstance(call[0], SystemMessage) and call[0].text.startswith(SYSTEM)
        assert CONTEXT_MODE_SYSTEM_PROMPT in call[0].text
        assert_pairs_intact(call)
        assert counter.count_messages(call[1:]) <= BUDGET
    # the fetched reference's priority dropped, in the state and in the memory built from it
    assert out["langctx"]["priorities"][reference.id] == DEFAULT_PRIORITIES["fetched_ref"]
    memory = view_state(out, settings, thread_id=thread).memory
    assert memory.priority_of(str(reference.id)) == DEFAULT_PRIORITIES["fetched_ref"]


def agent_and_parts(**kwargs: Any) -> tuple[Any, ScriptedChatModel, LangctxMiddleware]:
    model = ScriptedChatModel(responses=script())
    memory_mw = LangctxMiddleware(max_tokens=BUDGET)
    agent = create_agent(
        model,
        tools=[read_log],
        system_prompt=SYSTEM,
        middleware=[memory_mw, ContextModeMiddleware(**kwargs)],
        checkpointer=InMemorySaver(),
    )
    return agent, model, memory_mw


def test_giant_output_is_referenced_fetched_and_fits_the_budget() -> None:
    agent, model, memory_mw = agent_and_parts(store=InMemoryStore())
    cfg = {"configurable": {"thread_id": "e2e-sync"}}
    out = agent.invoke({"messages": [HumanMessage("Why did the build fail?")]}, cfg)
    assert out["messages"][-1].text.startswith("The build ran out of disk space")
    check_run(out, model, memory_mw.settings, "e2e-sync")


async def test_giant_output_end_to_end_async() -> None:
    agent, model, memory_mw = agent_and_parts()
    cfg = {"configurable": {"thread_id": "e2e-async"}}
    out = await agent.ainvoke({"messages": [HumanMessage("Why did the build fail?")]}, cfg)
    check_run(out, model, memory_mw.settings, "e2e-async")


def test_a_second_thread_cannot_fetch_the_first_threads_reference() -> None:
    context_mode = ContextModeMiddleware()
    model = ScriptedChatModel(responses=script())
    agent = create_agent(
        model, tools=[read_log], middleware=[LangctxMiddleware(max_tokens=BUDGET), context_mode]
    )
    agent.invoke({"messages": [HumanMessage("Why?")]}, {"configurable": {"thread_id": "owner"}})
    (ref_id,) = ref_ids_seen(last_tool_text(model.calls[1]))
    thief = ScriptedChatModel(responses=[ai_tool_call("fetch_context", {"ref_id": ref_id}), "ok"])
    shared = ContextModeMiddleware(processor=context_mode.processor)  # the same store
    other = create_agent(
        thief, tools=[read_log], middleware=[LangctxMiddleware(max_tokens=BUDGET), shared]
    )
    out = other.invoke(
        {"messages": [HumanMessage("peek")]}, {"configurable": {"thread_id": "thief"}}
    )
    denied = out["messages"][2]
    assert isinstance(denied, ToolMessage) and denied.status == "error"
    assert "another thread" in denied.text


# ------------------------------------------------------------------------------ bad tools in an agent


@pytest.fixture
def release() -> Iterator[threading.Event]:
    event = threading.Event()
    yield event
    event.set()


def bad_tools(release: threading.Event) -> list[BaseTool]:
    @tool
    def hang(path: str) -> str:
        """Never returns."""
        release.wait()
        return "late"

    @tool
    def explode(path: str) -> str:
        """Raises."""
        raise PermissionError(f"cannot open {path}")

    return [hang, explode]


def test_a_hanging_and_a_raising_tool_do_not_crash_the_agent(release: threading.Event) -> None:
    calls = [
        {"id": "h1", "name": "hang", "args": {"path": "a"}, "type": "tool_call"},
        {"id": "e1", "name": "explode", "args": {"path": "/root/x"}, "type": "tool_call"},
    ]
    model = ScriptedChatModel(responses=[AIMessage("", tool_calls=calls), "Both tools failed."])
    agent = create_agent(
        model,
        tools=bad_tools(release),
        middleware=[LangctxMiddleware(max_tokens=BUDGET), ContextModeMiddleware(guard=_guard(0.2))],
    )
    out = agent.invoke({"messages": [HumanMessage("go")]}, {"configurable": {"thread_id": "bad"}})
    results = {m.tool_call_id: m for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["h1"].status == "error" and "timed out after 0.2 s" in results["h1"].text
    assert (
        results["e1"].status == "error"
        and "PermissionError: cannot open /root/x" in results["e1"].text
    )
    assert out["messages"][-1].text == "Both tools failed."
    assert_pairs_intact(model.calls[-1])


def _guard(timeout: float) -> Any:
    from langctx.context_mode.guard import ToolGuard

    return ToolGuard(timeout=timeout)


# ------------------------------------------------------------------------------ custom graph, extension point


def test_custom_graph_with_wrapped_tools_and_the_memory_node() -> None:
    model = ScriptedChatModel(responses=script())
    tools = wrap_tools_with_context_mode([read_log], store=InMemoryStore())
    graph = node_agent(model, tools, LangctxNode(max_tokens=BUDGET), InMemorySaver())
    cfg = {"configurable": {"thread_id": "graph"}}
    out = graph.invoke(
        {"messages": [SystemMessage(SYSTEM), HumanMessage("Why did the build fail?")]}, cfg
    )
    tool_messages = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    reference = tool_messages[0]
    assert reference.text.startswith("[langctx ref=")
    assert out["langctx"]["priorities"][reference.id] == DEFAULT_PRIORITIES["fetched_ref"]
    counter = resolve_token_counter("approximate")
    for call in model.calls:
        assert_pairs_intact(call)
        assert counter.count_messages(call) <= BUDGET


def test_the_langctx_middleware_extension_point() -> None:
    processor = ContextModeProcessor()
    model = ScriptedChatModel(responses=script())
    middleware = LangctxMiddleware(
        max_tokens=BUDGET, tool_output_processor=ContextModeToolProcessor(processor)
    )
    agent = create_agent(
        model,
        tools=[read_log, fetch_context_tool(processor)],
        system_prompt=f"{SYSTEM}\n\n{CONTEXT_MODE_SYSTEM_PROMPT}",
        middleware=[middleware],
    )
    out = agent.invoke(
        {"messages": [HumanMessage("Why?")]}, {"configurable": {"thread_id": "hook"}}
    )
    reference = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert reference.text.startswith("[langctx ref=")
    assert out["langctx"]["priorities"][reference.id] == DEFAULT_PRIORITIES["fetched_ref"]
    for call in model.calls:
        assert_pairs_intact(call)


# ------------------------------------------------------------------------------ the other two tiers


def test_working_memory_and_long_term_memory_tools_in_an_agent() -> None:
    @tool
    def bash(command: str) -> str:
        """Run a shell command."""
        return "FAILED tests/test_io.py::test_read - OSError\nexit code 1"

    store = InMemoryStore()
    long_term = LongTermMemory(store)
    cfg = {"configurable": {"thread_id": "tiers", "user_id": "ada"}}
    long_term.remember("The CI machine has a 2 GB /tmp.", config=cfg)

    def recall(messages: list[BaseMessage]) -> AIMessage:
        assert "Open errors:" in last_tool_text(messages)
        assert "- [turn 1] pytest -q -> exit 1" in last_tool_text(messages)
        return ai_tool_call("remember", {"fact": "Tests need more than 2 GB of /tmp."})

    model = ScriptedChatModel(
        responses=[
            ai_tool_call("bash", {"command": "pytest -q"}),
            ai_tool_call("working_memory", {"kind": "all"}),
            recall,
            "Noted.",
        ]
    )
    agent = create_agent(
        model,
        tools=[bash],
        system_prompt=SYSTEM,
        middleware=[
            LangctxMiddleware(max_tokens=BUDGET),
            ContextModeMiddleware(long_term=long_term),
        ],
    )
    agent.invoke({"messages": [HumanMessage("Why does /tmp fill up in CI?")]}, cfg)
    assert "The CI machine has a 2 GB /tmp." in model.calls[0][0].text  # retrieved into the prompt
    assert "working_memory" not in model.calls[0][0].text  # kept out of the prompt
    assert long_term.search("tmp tests", config=cfg)[0] == "Tests need more than 2 GB of /tmp."
    assert long_term.search("tmp", config={"configurable": {"user_id": "bob"}}) == []
