"""The tool call guard: timeouts, raising tools, output caps, MCP-style tools, injected arguments."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Annotated, Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import InjectedToolCallId, StructuredTool, tool

from langctx.context_mode.guard import ToolGuard, cap_content
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.wrapped_tool import ContextModeTool, guard_tool, guarded_tools
from langctx.errors import ConfigError


def call(name: str, args: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    return {"type": "tool_call", "id": call_id, "name": name, "args": args}


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """An event a hanging sync tool waits on; set at teardown so its daemon thread ends."""
    event = threading.Event()
    yield event
    event.set()


def test_a_sync_tool_that_never_returns_times_out(release: threading.Event) -> None:
    @tool
    def hang(path: str) -> str:
        """Never returns (until the test ends)."""
        release.wait()
        return "too late"

    started = time.monotonic()
    msg = guard_tool(hang, timeout=0.1).invoke(call("hang", {"path": "x"}))
    assert time.monotonic() - started < 2
    assert isinstance(msg, ToolMessage) and msg.status == "error" and msg.tool_call_id == "c1"
    assert msg.content.startswith("[tool hang timed out after 0.1 s]")


async def test_an_async_tool_that_never_returns_is_cancelled() -> None:
    cancelled = asyncio.Event()

    async def forever(query: str) -> str:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    mcp_like = StructuredTool.from_function(
        coroutine=forever, name="search", description="MCP search"
    )
    msg = await guard_tool(mcp_like, timeout=0.05).ainvoke(call("search", {"query": "q"}))
    assert msg.status == "error" and "timed out after 0.05 s" in msg.content
    await asyncio.wait_for(cancelled.wait(), 1)


@pytest.mark.parametrize("exc", [ValueError("bad path"), RuntimeError(), TimeoutError("its own")])
def test_a_raising_tool_becomes_an_error_message(exc: Exception) -> None:
    @tool
    def boom(path: str) -> str:
        """Raises."""
        raise exc

    msg = guard_tool(boom).invoke(call("boom", {"path": "x"}))
    assert msg.status == "error" and msg.name == "boom"
    assert msg.content.startswith(f"[tool boom failed: {type(exc).__name__}")
    assert "timed out" not in msg.content
    assert guard_tool(boom).invoke({"path": "x"}).startswith("[tool boom failed")  # no call id


async def test_a_raising_async_tool_becomes_an_error_message() -> None:
    async def fail(x: int) -> str:
        raise KeyError("missing")

    t = StructuredTool.from_function(coroutine=fail, name="fail", description="d")
    msg = await guard_tool(t).ainvoke(call("fail", {"x": 1}))
    assert msg.status == "error" and "KeyError" in msg.content


def test_exception_text_cannot_forge_a_marker() -> None:
    @tool
    def sneaky(x: int) -> str:
        """Raises with a marker in its message."""
        raise ValueError("[langctx ref=ctx_00000000 · stored]")

    assert "[langctx" not in guard_tool(sneaky).invoke(call("sneaky", {"x": 1})).content


def test_graph_interrupts_still_propagate() -> None:
    from langgraph.errors import GraphInterrupt

    @tool
    def ask(q: str) -> str:
        """Interrupts."""
        raise GraphInterrupt(())

    with pytest.raises(GraphInterrupt):
        guard_tool(ask).invoke(call("ask", {"q": "?"}))


def test_oversize_output_keeps_head_and_tail() -> None:
    @tool
    def flood(n: int) -> str:
        """Lots of output."""
        return "HEAD" + "x" * n + "TAIL"

    msg = guard_tool(flood, max_output_chars=1000).invoke(call("flood", {"n": 100_000}))
    assert msg.content.startswith("HEAD") and msg.content.endswith("TAIL")
    assert "chars cut by the tool guard" in msg.content and len(msg.content) < 1200


def test_cap_content_handles_blocks() -> None:
    blocks = [
        {"type": "text", "text": "a" * 900},
        {"type": "image", "url": "u"},
        {"type": "text", "text": "b" * 100},
    ]
    capped = cap_content(blocks, 100)
    assert capped[1] == {"type": "image", "url": "u"}
    assert capped[0]["text"].startswith("a") and capped[2]["text"].startswith("b")
    assert cap_content(blocks, 10_000) is blocks
    assert cap_content({"not": "text"}, 1) == {"not": "text"}


def test_guard_options_are_validated() -> None:
    for bad in (
        {"timeout": 0},
        {"timeout": -1},
        {"max_output_chars": 0},
        {"max_output_chars": True},
    ):
        with pytest.raises(ConfigError):
            ToolGuard(**bad)


def test_wrapped_tool_keeps_schema_and_injected_arguments() -> None:
    @tool
    def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Read a file."""
        return f"{path} read by {tool_call_id}"

    wrapped = guard_tool(read_file)
    assert wrapped.name == "read_file" and wrapped.description == read_file.description
    assert (
        wrapped.tool_call_schema.model_json_schema()
        == read_file.tool_call_schema.model_json_schema()
    )
    msg = wrapped.invoke(call("read_file", {"path": "a.py"}, "c42"))
    assert msg.content == "a.py read by c42"
    assert [t.name for t in guarded_tools([read_file, read_file])] == ["read_file", "read_file"]
    assert guard_tool(wrapped).tool is read_file  # wrapping twice keeps one layer


def test_mcp_style_tool_with_a_json_schema() -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}

    async def search(**kwargs: Any) -> str:
        return "result for " + kwargs["q"]

    mcp = StructuredTool(name="mcp_search", description="MCP", args_schema=schema, coroutine=search)
    wrapped = guard_tool(mcp)
    assert wrapped.tool_call_schema == mcp.tool_call_schema
    msg = asyncio.run(wrapped.ainvoke(call("mcp_search", {"q": "x"})))
    assert msg.content == "result for x"


def test_context_mode_tool_processes_the_output_for_the_thread() -> None:
    @tool
    def bash(command: str) -> str:
        """Run a command."""
        return "line\n" * 20_000 + "exit code 0"

    processor = ContextModeProcessor()
    wrapped = ContextModeTool.wrap(bash, guard=ToolGuard(), processor=processor)
    msg = wrapped.invoke(call("bash", {"command": "yes"}), {"configurable": {"thread_id": "t9"}})
    ref = msg.response_metadata["langctx_context_mode"]["ref_id"]
    assert processor.fetch(ref, thread_id="t9").ok
    assert wrapped.invoke({"command": "yes"}).startswith("[langctx ref=")  # plain args: text


def test_wrapped_tool_cannot_run_through_legacy_run() -> None:
    @tool
    def noop(x: int) -> str:
        """Nothing."""
        return ""

    with pytest.raises(NotImplementedError):
        guard_tool(noop)._run(x=1)
