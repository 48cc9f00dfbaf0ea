"""Observability never fails the work (issue 41, item 4).

A span processor whose ``on_start`` or ``on_end`` raises, a tracer provider whose ``get_tracer``
raises, an ``on_compaction`` listener or a LangChain callback handler that raises: the agent's
run completes through every compaction, and the failure is one log line (the next ones: DEBUG).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import AsyncCallbackHandler, BaseCallbackHandler
from langgraph.checkpoint.memory import InMemorySaver

from langctx import LangctxMiddleware
from langctx.telemetry import set_tracer_provider
from langctx.testing import ScriptedChatModel, ai_tool_call

sdk_trace = pytest.importorskip("opentelemetry.sdk.trace")


def read_file(path: str) -> str:
    """Read a file."""
    return "\n".join(
        f"def f_{path[:-3]}_{i}(x):  # line {i}\n    return x * {i}" for i in range(90)
    )


class RaisingProcessor(sdk_trace.SpanProcessor):  # type: ignore[misc,name-defined]
    def __init__(self, where: str) -> None:
        self.where = where

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        if self.where == "on_start":
            raise RuntimeError("processor on_start")

    def on_end(self, span: Any) -> None:
        if self.where == "on_end":
            raise RuntimeError("processor on_end")


class NoTracers:
    def get_tracer(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no tracer")


class RaisingHandler(BaseCallbackHandler):
    raise_error = True

    def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        raise ValueError("handler")


class RaisingAsyncHandler(AsyncCallbackHandler):
    raise_error = True

    async def on_custom_event(self, name: str, data: Any, **kwargs: Any) -> None:
        raise ValueError("async handler")


def _listener(event: Any) -> None:
    raise KeyError("listener")


@pytest.fixture(autouse=True)
def _no_provider_after() -> Iterator[None]:
    yield
    set_tracer_provider(None)


def _provider(where: str) -> Any:
    if where == "get_tracer":
        return NoTracers()
    provider = sdk_trace.TracerProvider()
    provider.add_span_processor(RaisingProcessor(where))
    return provider


@pytest.mark.parametrize(
    "hook",
    ["on_start", "on_end", "get_tracer", "listener", "handler", "async handler"],
)
async def test_a_raising_hook_never_fails_the_agent_and_is_one_log_line(
    hook: str, caplog: pytest.LogCaptureFixture
) -> None:
    if hook in ("on_start", "on_end", "get_tracer"):
        set_tracer_provider(_provider(hook))
    middleware = LangctxMiddleware(**({"on_compaction": _listener} if hook == "listener" else {}))
    calls = [ai_tool_call("read_file", {"path": f"m{i}.py"}) for i in range(24)]
    agent = create_agent(
        ScriptedChatModel(responses=[*calls, "Done."]),
        tools=[read_file],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    handlers = {"handler": [RaisingHandler()], "async handler": [RaisingAsyncHandler()]}
    config: dict[str, Any] = {
        "configurable": {"thread_id": hook},
        "callbacks": handlers.get(hook, []),
        "recursion_limit": 100,
    }
    state = {"messages": [("user", "Read the modules one by one.")]}
    with caplog.at_level(logging.DEBUG, logger="langctx"):
        if hook == "async handler":
            result = await agent.ainvoke(state, config)
        else:
            result = agent.invoke(state, config)
    assert result["messages"][-1].text == "Done."
    ours = [
        r for r in caplog.records if r.name.startswith("langctx") and "raised" in r.getMessage()
    ]
    warned = [r.getMessage() for r in ours if r.levelno == logging.WARNING]
    assert len(warned) == 1, warned
    assert len(ours) > 1  # it failed again at a later compaction, logged at DEBUG
    assert "RuntimeError" in warned[0] or "Error('" in warned[0]
