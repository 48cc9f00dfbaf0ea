"""The budget follows the model: ``profile["max_input_tokens"]`` gives the window when none is set.

A scripted coding session of 40 tool turns through ``create_agent`` + ``LangctxMiddleware()`` at its
defaults; every request is counted whole (system prompt, tool schemas, messages) with tiktoken's
``o200k_base``.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from langctx import LangctxMiddleware
from langctx.config import DEFAULT_WINDOW_BUDGET_CAP, DEFAULT_WINDOW_SHARE
from langctx.testing import ScriptedChatModel, ai_tool_call
from langctx.tokens import resolve_token_counter
from tests.integration_tests._agents import (
    config,
    drive,
    first_input,
    middleware_agent,
    session_script,
    session_tools,
)

TURNS = 40


def _session(window: int) -> tuple[ScriptedChatModel, LangctxMiddleware, Any]:
    script = session_script(TURNS, seed=3)
    model = ScriptedChatModel(responses=script.responses, profile={"max_input_tokens": window})
    middleware = LangctxMiddleware()
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg = config()
    drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))
    return model, middleware, agent


def _request_tokens(model: ScriptedChatModel, messages: list[Any]) -> int:
    """o200k tokens of one request: its messages, and the tool schemas bound to the model."""
    counter = resolve_token_counter("tiktoken")
    schemas = json.dumps([convert_to_openai_tool(t) for t in model.bound_tools])
    return counter.count_messages(messages) + counter.count_text(schemas)


@pytest.mark.parametrize("window", [12_000, 5_000])  # 5k: under what the 8k default would send
def test_a_small_model_never_gets_a_request_over_its_window(window: int) -> None:
    model, middleware, _ = _session(window)

    assert len(model.calls) > TURNS
    sizes = [_request_tokens(model, call) for call in model.calls]
    assert max(sizes) <= window, max(sizes)
    config_ = middleware.settings_for(model).config
    assert config_.context_window == window
    assert config_.max_tokens_resolved == int(window * DEFAULT_WINDOW_SHARE)


def test_a_200k_model_gets_the_capped_share_of_its_window() -> None:
    model, middleware, _ = _session(200_000)

    budget = min(DEFAULT_WINDOW_BUDGET_CAP, int(200_000 * DEFAULT_WINDOW_SHARE))
    assert middleware.settings_for(model).config.max_tokens_resolved == budget == 32_000
    counter = middleware.settings.counter
    projected = [counter.count_messages(call[1:]) for call in model.calls]  # without the prompt
    assert max(projected) <= budget
    assert max(projected) > 8_000  # more than the window-less default: the window was read


def test_fraction_budgets_resolve_against_the_profile() -> None:
    model = ScriptedChatModel(responses=["ok"], profile={"max_input_tokens": 40_000})
    middleware = LangctxMiddleware(max_context_tokens=("fraction", 0.25))
    assert middleware.settings_for(model).config.max_tokens_resolved == 10_000
    agent = middleware_agent(model, [], middleware)
    assert agent.invoke({"messages": [HumanMessage("Hi")]})["messages"][-1].content == "ok"


def test_a_fraction_budget_without_a_profile_is_a_clear_error() -> None:
    from langctx import ConfigError

    model = ScriptedChatModel(responses=["ok"])
    agent = middleware_agent(model, [], LangctxMiddleware(max_tokens=("fraction", 0.5)))
    with pytest.raises(ConfigError, match=r"profile\['max_input_tokens'\]"):
        agent.invoke({"messages": [HumanMessage("Hi")]})


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_pinned_task_over_its_share_is_cut_and_said_once_per_thread(
    mode: str, caplog: pytest.LogCaptureFixture
) -> None:
    def read_file(path: str) -> str:
        """Read a file."""
        return "x = 1\n" * 50

    calls = [ai_tool_call("read_file", {"path": f"src/m{k}.py"}) for k in range(4)]
    model = ScriptedChatModel(responses=[*calls, "Done.", "Still done."])
    middleware = LangctxMiddleware(max_tokens=2000)
    agent = middleware_agent(model, [tool(read_file)], middleware, InMemorySaver())
    cfg = config()
    task = "Fix the parser. " + "Nested lists must survive a round trip intact. " * 300
    caplog.set_level(logging.WARNING, logger="langctx")
    for text in (task, "And the lexer?"):  # two runs of one thread
        request = {"messages": [HumanMessage(text)]}
        if mode == "sync":
            agent.invoke(request, cfg)
        else:
            await agent.ainvoke(request, cfg)

    assert len(model.calls) == 6
    said = [r for r in caplog.records if "pinned messages truncated" in r.getMessage()]
    assert len(said) == 1
    sent_tasks = {str(call[1].content) for call in model.calls}
    assert len(sent_tasks) == 1  # cut once: every request carries the same bytes
    assert len(next(iter(sent_tasks))) < len(task)
