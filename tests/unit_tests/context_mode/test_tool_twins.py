"""The sync and async paths of the Context-mode tools give the same results.

``fetch_context`` (slices, grep, limits, unknown and foreign ids) and a ``ContextModeTool`` over a
tool that returns a string or a ``ToolMessage``, each called with ``invoke`` and ``ainvoke``.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool
from langgraph.types import Command

from langctx.context_mode.guard import ToolGuard
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.tools import fetch_context_tool
from langctx.context_mode.wrapped_tool import ContextModeTool

LOG = "".join(f"line {i}: {'ERROR disk full' if i % 97 == 0 else 'ok'}\n" for i in range(6000))


def _config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def _call(name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_call", "id": "c1", "name": name, "args": args}


def _plain(out: Any) -> tuple[Any, ...]:
    """What a tool result says: its messages' text and status, and the channel update."""
    if isinstance(out, Command):
        update = out.update
        assert isinstance(update, dict)
        return (*(_plain(m) for m in update["messages"]), update.get("langctx"))
    if isinstance(out, ToolMessage):
        return (out.text, out.status, out.response_metadata)
    return (out,)


@pytest.mark.parametrize(
    "args",
    [
        {},
        {"offset": 900, "limit": 120},
        {"grep": "error disk"},
        {"grep": "ERROR", "offset": 40_000},
        {"limit": -1},
    ],
)
async def test_fetch_context_sync_and_async_agree(args: dict[str, Any]) -> None:
    processor = ContextModeProcessor()
    ref = processor.process(LOG, tool_name="read_log", thread_id="t1").ref_id
    assert ref is not None
    fetch = fetch_context_tool(processor)
    call = _call("fetch_context", {"ref_id": ref, **args})
    sync = fetch.invoke(call, _config("t1"))
    assert _plain(sync) == _plain(await fetch.ainvoke(call, _config("t1")))
    foreign = fetch.invoke(call, _config("t2"))
    assert _plain(foreign) == _plain(await fetch.ainvoke(call, _config("t2")))
    assert foreign.status == "error"
    unknown = _call("fetch_context", {"ref_id": "ctx_00000000", **args})
    assert _plain(fetch.invoke(unknown, _config("t1"))) == _plain(
        await fetch.ainvoke(unknown, _config("t1"))
    )


@pytest.mark.parametrize("returns", ["text", "message"])
@pytest.mark.parametrize("guarded", [True, False])
async def test_context_mode_tool_sync_and_async_agree(returns: str, guarded: bool) -> None:
    @tool(response_format="content_and_artifact" if returns == "message" else "content")
    def read_log(path: str) -> Any:
        """Read a log file."""
        return (LOG, {"path": path}) if returns == "message" else LOG

    guard = ToolGuard() if guarded else None
    sync_tool = ContextModeTool.wrap(read_log, guard=guard, processor=ContextModeProcessor())
    async_tool = ContextModeTool.wrap(read_log, guard=guard, processor=ContextModeProcessor())
    given = _call("read_log", {"path": "build.log"}) if returns == "message" else {"path": "b"}
    sync = sync_tool.invoke(given, _config("t1"))
    aio = await async_tool.ainvoke(given, _config("t1"))
    assert _plain(sync) == _plain(aio)
    text = sync.text if isinstance(sync, ToolMessage) else sync
    assert "[langctx ref=ctx_" in text and len(text) < len(LOG) / 10
