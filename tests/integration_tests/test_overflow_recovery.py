"""Overflow recovery in real agents: compact with trigger="overflow" and retry the same request.

The provider errors are real ``openai.BadRequestError`` objects with the ``context_length_exceeded``
code, raised by the scripted model.
"""

from __future__ import annotations

import warnings
from typing import Any

import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx import ContextOverflowError
from langctx.cli.demo.session import TASK
from langctx.langgraph import LangctxAgentState, LangctxNode, make_pre_model_hook
from langctx.middleware import LangctxMiddleware
from langctx.overflow import OverflowMatcher
from langctx.recovery import with_overflow_recovery
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    check_calls,
    config,
    drive,
    first_input,
    middleware_agent,
    node_agent,
    session_script,
    session_tools,
)

BUDGET = 6000
TURNS = 24


def overflow_error() -> openai.BadRequestError:
    """What OpenAI raises when the prompt does not fit the model's window."""
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    body = {
        "message": "This model's maximum context length is 8192 tokens. However, your messages "
        "resulted in 9120 tokens. Please reduce the length of the messages.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
    return openai.BadRequestError(
        f"Error code: 400 - {{'error': {body}}}",
        response=httpx.Response(400, request=request),
        body=body,
    )


def _warm_middleware_agent(
    extra: list[Any], turns: int = TURNS, **middleware_kwargs: Any
) -> tuple[Any, ScriptedChatModel, LangctxMiddleware, dict[str, Any]]:
    """A create_agent thread that already ran ``turns`` turns; ``extra`` scripts the next calls."""
    script = session_script(turns, seed=5)
    model = ScriptedChatModel(responses=[*script.responses, *extra])
    middleware = LangctxMiddleware(max_tokens=BUDGET, **middleware_kwargs)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, InMemorySaver())
    cfg = config()
    agent.invoke(first_input(with_system=False), cfg)
    while model._index < turns + 1:
        agent.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    return agent, model, middleware, cfg


def test_middleware_retries_once_after_context_length_exceeded() -> None:
    agent, model, middleware, cfg = _warm_middleware_agent([overflow_error(), "Recovered."])
    calls_before = len(model.calls)
    out = agent.invoke({"messages": [HumanMessage("Summarise where we are.")]}, cfg)

    assert out["messages"][-1].content == "Recovered."
    failed, retried = model.calls[calls_before:]
    counter = middleware.settings.counter
    assert counter.count_messages(retried) < counter.count_messages(failed)
    overflow = [e for e in out["langctx"]["compactions"] if e["trigger"] == "overflow"]
    assert len(overflow) == 1  # written to the channel through the middleware's Command
    report = check_calls([failed, retried], counter, BUDGET, skip_system_prompt=True)
    assert report.orphans == report.unanswered == report.missing_task == 0


SPENT_TURNS = TURNS - 1
"""A window with turns left to fold twice: the 24th turn of this session ends with a fold."""


def test_middleware_raises_context_overflow_error_after_max_retries() -> None:
    agent, model, _, cfg = _warm_middleware_agent(
        [overflow_error()] * 3, SPENT_TURNS, max_overflow_retries=2
    )
    calls_before = len(model.calls)
    with pytest.raises(ContextOverflowError) as info:
        agent.invoke({"messages": [HumanMessage("Go on.")]}, cfg)

    assert info.value.attempts == 2
    assert info.value.tokens_after < info.value.tokens_before
    assert len(model.calls) - calls_before == 3  # the first call and two retries
    assert isinstance(info.value.__cause__, openai.BadRequestError)


def test_middleware_does_not_retry_unrelated_errors() -> None:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    rate_limited = openai.RateLimitError(
        "Rate limit reached for gpt-4o", response=httpx.Response(429, request=request), body=None
    )
    agent, model, _, cfg = _warm_middleware_agent([rate_limited])
    calls_before = len(model.calls)
    compactions = len(agent.get_state(cfg).values["langctx"]["compactions"])
    with pytest.raises(openai.RateLimitError):
        agent.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert len(model.calls) - calls_before == 1
    after = agent.get_state(cfg).values["langctx"]["compactions"]
    assert not [e for e in after if e["trigger"] == "overflow"]
    assert len(after) == compactions


async def test_async_middleware_retries_gives_up_and_passes_other_errors_the_same_way() -> None:
    agent, model, _, cfg = _warm_middleware_agent([overflow_error(), "Recovered."])
    out = await agent.ainvoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Recovered."
    assert [e["trigger"] for e in out["langctx"]["compactions"]].count("overflow") == 1

    agent, model, _, cfg = _warm_middleware_agent(
        [overflow_error()] * 3, SPENT_TURNS, max_overflow_retries=2
    )
    calls_before = len(model.calls)
    with pytest.raises(ContextOverflowError) as info:
        await agent.ainvoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert info.value.attempts == 2 and len(model.calls) - calls_before == 3
    assert isinstance(info.value.__cause__, openai.BadRequestError)

    agent, model, _, cfg = _warm_middleware_agent([RuntimeError("rate limited")])
    calls_before = len(model.calls)
    with pytest.raises(RuntimeError, match="rate limited"):
        await agent.ainvoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert len(model.calls) - calls_before == 1


def test_summarizer_failing_during_recovery_falls_back_and_still_retries() -> None:
    def broken(request: Any) -> str:
        raise RuntimeError("summarizer service is down")

    agent, _model, _, cfg = _warm_middleware_agent(
        [overflow_error(), "Recovered."],
        summarizer=broken,
        summary_threshold_tokens=0,
    )
    out = agent.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Recovered."
    overflow = [e for e in out["langctx"]["compactions"] if e["trigger"] == "overflow"]
    assert [e["quality"] for e in overflow] == ["fallback"]
    assert "Goal" in overflow[0]["summary"] or overflow[0]["summary"]


def test_custom_matcher_extends_the_phrasings() -> None:
    agent, _model, _, cfg = _warm_middleware_agent(
        [RuntimeError("payload exceeds our gateway's token cap"), "Recovered."],
        overflow_matcher=OverflowMatcher(extra_patterns=[r"gateway's token cap"]),
    )
    out = agent.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Recovered."


def _check_wrapper_retry(
    calls: list[list[BaseMessage]], failed_at: int, counter: Any, channel: dict[str, Any]
) -> None:
    """Call ``failed_at`` overflowed; the next one is the same request, compacted in private."""
    failed, retried = calls[failed_at], calls[failed_at + 1]
    assert counter.count_messages(retried) < counter.count_messages(failed)
    assert retried[0] == failed[0] and isinstance(retried[0], SystemMessage)  # pinned
    assert retried[-1].id == failed[-1].id  # the same request: its newest message is kept
    assert any(isinstance(m, HumanMessage) and m.content == TASK for m in retried)
    # the wrapper compacts a memory built from the model's input: nothing reaches the channel
    assert "overflow" not in [e["trigger"] for e in channel["compactions"]]


def test_node_agent_model_wrapper_recovers_from_its_own_input() -> None:
    script = session_script(TURNS, seed=6, final=False)
    responses = [*script.responses[:-1], overflow_error(), *script.responses[-1:], "Done."]
    model = ScriptedChatModel(responses=responses)
    node = LangctxNode(max_tokens=BUDGET)
    graph = node_agent(model, session_tools(script.outputs), node, InMemorySaver())
    cfg = config()
    out, _ = drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=True))

    assert out["messages"][-1].content == "Done."
    assert len(model.calls) == len(responses)
    _check_wrapper_retry(
        model.calls, len(script.responses) - 1, node.settings.counter, out["langctx"]
    )
    report = check_calls(model.calls, node.settings.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.unanswered == report.violations == 0


async def test_create_react_agent_hook_and_wrapper_recover_async() -> None:
    from langgraph.prebuilt import create_react_agent

    script = session_script(TURNS, seed=7, final=False)
    responses = [*script.responses, overflow_error(), AIMessage("Done.")]
    model = ScriptedChatModel(responses=responses)
    hook = make_pre_model_hook(max_tokens=BUDGET)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # create_react_agent is deprecated
        agent = create_react_agent(
            with_overflow_recovery(model, hook.settings),
            session_tools(script.outputs),
            pre_model_hook=hook,
            state_schema=LangctxAgentState,
            checkpointer=InMemorySaver(),
        )
    cfg = config()
    out = await agent.ainvoke(first_input(with_system=True), cfg)
    while model._index < len(responses):
        out = await agent.ainvoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Done."
    assert len(model.calls) == len(responses)
    _check_wrapper_retry(model.calls, len(script.responses), hook.settings.counter, out["langctx"])
    report = check_calls(model.calls, hook.settings.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.unanswered == report.violations == report.missing_task == 0


def _long_thread(turns: int = 12) -> list[BaseMessage]:
    """A task and ``turns`` tool turns of about 400 tokens each: below the default high mark."""
    messages: list[BaseMessage] = [HumanMessage("Fix the failing parser test.", id="task")]
    for k in range(turns):
        call = {"id": f"c{k}", "name": "read_file", "args": {"path": f"src/m{k}.py"}}
        messages += [
            AIMessage("", tool_calls=[call], id=f"a{k}"),
            ToolMessage(
                f"# src/m{k}.py\n" + "def f(x):\n    return x\n" * 30, tool_call_id=f"c{k}"
            ),
        ]
    return [*messages, HumanMessage("Where are we?", id="ask")]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_langchain_cores_typed_overflow_error_is_compacted_and_retried(mode: str) -> None:
    """The wording says nothing the patterns know; the type says it all."""
    from langchain.agents import create_agent
    from langchain_core.exceptions import ContextOverflowError as CoreOverflow

    model = ScriptedChatModel(responses=[CoreOverflow("request exceeds limit"), "Recovered."])
    middleware = LangctxMiddleware()
    agent = create_agent(model, tools=[], middleware=[middleware], checkpointer=InMemorySaver())
    request = {"messages": _long_thread()}
    if mode == "sync":
        out = agent.invoke(request, config())
    else:
        out = await agent.ainvoke(request, config())

    assert out["messages"][-1].content == "Recovered."
    failed, retried = model.calls
    counter = middleware.settings.counter
    assert counter.count_messages(retried) < counter.count_messages(failed)
    assert [e["trigger"] for e in out["langctx"]["compactions"]] == ["overflow"]


def test_langctx_overflow_error_is_langchain_cores() -> None:
    from langchain_core.exceptions import ContextOverflowError as CoreOverflow

    from langctx.errors import LangctxError

    assert issubclass(ContextOverflowError, CoreOverflow)
    assert issubclass(ContextOverflowError, LangctxError)
