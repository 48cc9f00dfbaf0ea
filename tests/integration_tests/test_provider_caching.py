"""langctx with provider prompt caching as users set it up, on the providers' own payload code.

The requests reach a capturing middleware placed after langctx (and after LangChain's
``AnthropicPromptCachingMiddleware``), which answers from the script instead of calling the
model; the payloads are then built offline by langchain-openai / langchain-anthropic.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx import LangctxMiddleware
from langctx.stores.archive import read_batches, thread_entries
from tests.integration_tests._agents import (
    drive,
    every_compaction,
    first_input,
    session_script,
    session_tools,
)

BUDGET = 4000


class Capture(AgentMiddleware):  # type: ignore[type-arg]
    """Records every request as sent and answers from the script (no network)."""

    def __init__(self, responses: list[Any]) -> None:
        super().__init__()
        self.responses = list(responses)
        self.requests: list[ModelRequest[Any]] = []

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        self.requests.append(request)
        answer = self.responses.pop(0) if self.responses else AIMessage("Done.")
        return ModelResponse(result=[answer])


class _Index:
    """Lets ``drive`` see when the script is spent."""

    def __init__(self, capture: Capture) -> None:
        self.capture = capture
        self.responses = [None] * (len(capture.responses) + 1)

    @property
    def _index(self) -> int:
        return len(self.responses) - len(self.capture.responses)


def _run(model: Any, extra: list[Any], turns: int = 40) -> tuple[Capture, dict[str, Any]]:
    script = session_script(turns, seed=21)
    capture = Capture(script.responses)
    agent = create_agent(
        model,
        tools=session_tools(script.outputs),
        system_prompt="You are a coding agent.",
        middleware=[LangctxMiddleware(max_tokens=BUDGET), *extra, capture],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "cached-thread"}, "recursion_limit": 5000}
    out, _ = drive(lambda x: agent.invoke(x, cfg), _Index(capture), first_input(with_system=False))  # type: ignore[arg-type]
    return capture, out


def _first_block(message: dict[str, Any]) -> Any:
    """A message's first content block (a plain string is one text block to the provider)."""
    content = message["content"]
    return {"type": "text", "text": content} if isinstance(content, str) else content[0]


def _strip_breakpoints(messages: list[dict[str, Any]]) -> list[str]:
    """Each message's JSON without ``cache_control`` (the breakpoint moves to the newest one)."""
    out = json.loads(json.dumps(messages).replace('"cache_control"', '"_cc"'))
    for m in out:
        for block in m["content"] if isinstance(m["content"], list) else ():
            block.pop("_cc", None)
    return [json.dumps(m, sort_keys=True) for m in out]


def _changes(out: dict[str, Any]) -> int:
    """Compactions that change what was sent before: folds and in-place edits."""
    comps, edits, _ = thread_entries(read_batches(None, None, out), out["langctx"])
    folds = sum(1 for e in comps if e["trigger"] != "merge")
    return folds + len(edits)


def _prefix_growth(payloads: list[list[Any]]) -> tuple[int, int]:
    """(requests that extend the previous one, requests that do not)."""
    extend = other = 0
    for prev, cur in itertools.pairwise(payloads):
        if cur[: len(prev)] == prev:
            extend += 1
        else:
            other += 1
    return extend, other


def test_openai_requests_carry_the_thread_as_prompt_cache_key_and_extend_each_other() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4o-mini", api_key="sk-fake")  # type: ignore[arg-type]
    capture, out = _run(model, [])
    assert len(capture.requests) > 30
    payloads = []
    for request in capture.requests:
        assert request.model_settings["prompt_cache_key"] == "cached-thread"
        payload = model._get_request_payload(
            [request.system_message, *request.messages], **request.model_settings
        )
        assert payload["prompt_cache_key"] == "cached-thread"
        payloads.append([json.dumps(m, sort_keys=True) for m in payload["messages"]])
    folds = _changes(out)
    extend, other = _prefix_growth(payloads)
    assert folds > 0 and other <= folds  # only a fold or an in-place edit changes what was sent
    assert extend >= len(payloads) - 1 - folds
    # a fold keeps the system prompt and the task byte-identical
    assert len({p[0] for p in payloads}) == 1 and len({p[1] for p in payloads}) == 1


def test_a_key_the_user_set_wins_and_false_sets_none() -> None:
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4o-mini", api_key="sk-fake")  # type: ignore[arg-type]
    mw = LangctxMiddleware(max_tokens=BUDGET, prompt_cache_key=False)
    request = ModelRequest(model=model, messages=[], model_settings={})  # type: ignore[call-arg]
    assert mw._cache_keyed(request, "t").model_settings == {}
    mw = LangctxMiddleware(max_tokens=BUDGET)
    mine = ModelRequest(model=model, messages=[], model_settings={"prompt_cache_key": "mine"})  # type: ignore[call-arg]
    assert mw._cache_keyed(mine, "t").model_settings == {"prompt_cache_key": "mine"}
    assert mw._cache_keyed(request, "t").model_settings == {"prompt_cache_key": "t"}


def test_with_anthropic_prompt_caching_the_cached_prefix_survives_between_folds() -> None:
    pytest.importorskip("langchain_anthropic")
    from langchain_anthropic import ChatAnthropic
    from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

    model = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-fake")  # type: ignore[call-arg]
    capture, out = _run(model, [AnthropicPromptCachingMiddleware()])
    payloads = []
    systems = set()
    for request in capture.requests:
        assert "prompt_cache_key" not in request.model_settings  # not an OpenAI model
        assert request.model_settings["cache_control"]["type"] == "ephemeral"
        payload = model._get_request_payload(
            [request.system_message, *request.messages], **request.model_settings
        )
        systems.add(json.dumps(payload["system"], sort_keys=True))
        # the breakpoint sits on the newest message: compare without it
        payloads.append(_strip_breakpoints(payload["messages"]))
        assert "cache_control" in json.dumps(payload)
    assert len(systems) == 1  # the cached system prompt never changes
    folds = _changes(out)
    extend, other = _prefix_growth(payloads)
    assert folds > 0 and other <= folds and extend >= len(payloads) - 1 - folds
    # Anthropic joins the task and the summary block (both user turns) into one message: the
    # task stays its first block, so the cached token prefix runs through it
    firsts = {json.dumps(_first_block(json.loads(p[0])), sort_keys=True) for p in payloads}
    assert len(firsts) == 1 and "Fix the parser" in next(iter(firsts))


def test_the_prefix_summarizer_sends_anthropic_the_payload_it_has_cached() -> None:
    """PrefixSummarizer's call, built by langchain-anthropic's own payload code: the same tools,
    the same system prompt with its breakpoint, and the previous request's messages first."""
    pytest.importorskip("langchain_anthropic")
    import anthropic
    from langchain_anthropic import ChatAnthropic
    from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

    from langctx import PrefixSummarizer

    sent: list[dict[str, Any]] = []
    answer = anthropic.types.Message(
        id="msg_summary",
        type="message",
        role="assistant",
        model="claude-sonnet-4-5",
        content=[{"type": "text", "text": "Goal:\n- fix the parser\nNext step:\n- rerun pytest"}],
        stop_reason="end_turn",
        stop_sequence=None,
        usage={"input_tokens": 1, "output_tokens": 1},
    )

    class Recording(ChatAnthropic):
        def _create(self, payload: dict[str, Any]) -> Any:  # the summary calls, offline
            sent.append(payload)
            return type("Raw", (), {"parse": lambda self: answer})()

    model = Recording(model="claude-sonnet-4-5", api_key="sk-ant-fake")  # type: ignore[call-arg]
    script = session_script(40, seed=21)
    capture = Capture(script.responses)
    memory = LangctxMiddleware(
        max_tokens=BUDGET,
        summarizer=PrefixSummarizer(model),
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    agent = create_agent(
        model,
        tools=session_tools(script.outputs),
        system_prompt="You are a coding agent.",
        middleware=[AnthropicPromptCachingMiddleware(), memory, capture],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "prefix-thread"}, "recursion_limit": 5000}
    drive(lambda x: agent.invoke(x, cfg), _Index(capture), first_input(with_system=False))  # type: ignore[arg-type]
    main = []
    for request in capture.requests:  # what create_agent would send: bound the same way
        bound = model.bind_tools(
            request.tools, tool_choice=request.tool_choice, **request.model_settings
        )
        main.append(
            model._get_request_payload(
                [request.system_message, *request.messages],
                **bound.kwargs,  # type: ignore[attr-defined]
            )
        )
    assert sent, "no fold was summarized by the main model"
    for payload in sent:
        assert "cache_control" in json.dumps(payload)  # it reads the cache (a breakpoint)
        earlier = [p for p in main if json.dumps(p["tools"]) == json.dumps(payload["tools"])]
        assert earlier, "the summary call's tools differ from every main request's"
        assert all(p["system"] == payload["system"] for p in earlier)
        mine = _strip_breakpoints(payload["messages"])
        best = max(
            sum(1 for a, b in zip(_strip_breakpoints(p["messages"]), mine, strict=False) if a == b)
            for p in earlier
        )
        # the previous request's messages, all but its last user turn (Anthropic joins the
        # instruction's user turn onto it), come first, unchanged
        assert any(
            _strip_breakpoints(p["messages"])[:-1] == mine[: len(p["messages"]) - 1]
            and len(p["messages"]) > 2
            for p in earlier
        ), best
    entries = every_compaction(agent.get_state(cfg).values)
    assert any("fix the parser" in e["summary"] and e["quality"] == "model" for e in entries)
