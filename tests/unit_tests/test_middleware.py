"""LangctxMiddleware's hooks called directly: a hand-built ModelRequest, a recording handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest
from langchain.agents.middleware import ExtendedModelResponse, ModelRequest, ModelResponse
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from langctx import ContextOverflowError
from langctx.channel import merge_langctx
from langctx.commands import is_notice
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel
from tests._helpers import exchanges, ids_of

KEEP = 600
"""The low mark these budget tests are written for: 30% of 2,000 (the last exchange)."""

SYSTEM = SystemMessage("You are a coding agent.")
TASK = HumanMessage("Fix the parser in src/parse.py so that nested lists parse.", id="task")
OVERFLOW = "This model's maximum context length is 8192 tokens, you requested 9100 tokens."


def _request(
    messages: list[BaseMessage], model: ScriptedChatModel, channel: Any = None
) -> ModelRequest[Any]:
    """What create_agent's model node hands to wrap_model_call (the state holds no system)."""
    state: dict[str, Any] = {"messages": messages}
    if channel is not None:
        state["langctx"] = channel
    return ModelRequest(
        model=model,
        messages=cast("list[AnyMessage]", list(messages)),
        system_message=SYSTEM,
        tools=[],
        state=state,  # type: ignore[arg-type]
        runtime=None,
    )


class Recorder:
    """A model-call handler that records each request and asks its request's model."""

    def __init__(self) -> None:
        self.requests: list[ModelRequest[Any]] = []

    def sync(self, request: ModelRequest[Any]) -> ModelResponse[Any]:
        self.requests.append(request)
        return ModelResponse(result=[request.model.invoke(request.messages)])

    async def async_(self, request: ModelRequest[Any]) -> ModelResponse[Any]:
        self.requests.append(request)
        return ModelResponse(result=[await request.model.ainvoke(request.messages)])


async def _call(
    mw: LangctxMiddleware, request: ModelRequest[Any], rec: Recorder, mode: str
) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
    if mode == "sync":
        return mw.wrap_model_call(request, rec.sync)
    return await mw.awrap_model_call(request, rec.async_)


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


@MODES
async def test_below_budget_sends_the_state_and_returns_the_plain_response(mode: str) -> None:
    mw = LangctxMiddleware(max_tokens=2000, keep_recent_tokens=KEEP)
    model = ScriptedChatModel(responses=["Done."])
    messages = [TASK, *exchanges(2)]
    rec = Recorder()
    response = await _call(mw, _request(messages, model), rec, mode)
    assert isinstance(response, ModelResponse)
    assert [m.content for m in response.result] == ["Done."]
    assert len(rec.requests) == 1
    sent = rec.requests[0]
    assert [m.id for m in sent.messages] == ["task", "a0", "h0", "a1", "h1"]
    assert sent.system_message is SYSTEM
    assert [m.id for m in model.calls[0]] == ["task", "a0", "h0", "a1", "h1"]


@MODES
async def test_due_compaction_sends_pinned_task_and_summary_and_returns_the_update(
    mode: str,
) -> None:
    mw = LangctxMiddleware(max_tokens=2000, keep_recent_tokens=KEEP)
    model = ScriptedChatModel(responses=["Done."])
    messages = [TASK, *exchanges(12)]
    rec = Recorder()
    response = await _call(mw, _request(messages, model), rec, mode)

    sent = rec.requests[0].messages
    assert ids_of(sent) == ["task", None, "a11", "h11"]
    assert 'covers="22 messages"' in sent[1].text
    assert isinstance(response, ExtendedModelResponse)
    assert [m.content for m in response.model_response.result] == ["Done."]
    assert response.command is not None
    update = response.command.update
    assert isinstance(update, dict)
    assert set(update) == {"langctx"}  # no messages removed: not archive mode, no command
    (entry,) = update["langctx"]["compactions"]
    assert entry["trigger"] == "proactive"
    assert entry["first_kept_id"] == "a11"
    assert entry["task_id"] == "task"
    assert entry["covered_ids"] == [m.id for m in exchanges(11)]


@MODES
async def test_state_with_the_entry_projects_the_summary_without_a_new_update(mode: str) -> None:
    mw = LangctxMiddleware(max_tokens=2000, keep_recent_tokens=KEEP)
    messages = [TASK, *exchanges(12)]
    first = await _call(
        mw, _request(messages, ScriptedChatModel(responses=["x"])), Recorder(), mode
    )
    assert isinstance(first, ExtendedModelResponse) and first.command is not None
    channel = merge_langctx({}, first.command.update["langctx"])  # type: ignore[index]
    reply = AIMessage("I will look at the lexer next.", id="r1")
    later = [*messages, reply, HumanMessage("ok", id="h12")]

    rec = Recorder()
    model = ScriptedChatModel(responses=["Done."])
    response = await _call(mw, _request(later, model, channel), rec, mode)
    assert ids_of(rec.requests[0].messages) == ["task", None, "a11", "h11", "r1", "h12"]
    assert isinstance(response, ModelResponse)  # nothing new to write
    assert [m.content for m in response.result] == ["Done."]


@MODES
async def test_compact_command_answers_without_calling_the_handler(mode: str) -> None:
    mw = LangctxMiddleware(max_tokens=4000)
    command = HumanMessage("/compact keep the lexer notes", id="cmd")
    model = ScriptedChatModel(responses=[])
    rec = Recorder()
    response = await _call(mw, _request([TASK, *exchanges(8), command], model), rec, mode)

    assert rec.requests == [] and model.calls == []
    assert isinstance(response, ExtendedModelResponse)
    notice, removal, again = response.model_response.result  # `messages` written once
    assert (type(removal), removal.id) == (RemoveMessage, "cmd") and again is notice
    assert isinstance(notice, AIMessage) and is_notice(notice)
    assert notice.text.startswith("[langctx] Compacted ")
    assert notice.text.endswith("Focus: keep the lexer notes")
    assert response.command is not None
    update = response.command.update
    assert isinstance(update, dict) and set(update) == {"langctx"}
    (entry,) = update["langctx"]["compactions"]
    assert entry["trigger"] == "manual"
    assert entry["instructions"] == "keep the lexer notes"


@MODES
async def test_compact_command_with_nothing_to_compact_writes_no_entry(mode: str) -> None:
    mw = LangctxMiddleware(max_tokens=4000)
    rec = Recorder()
    command = HumanMessage("/compact", id="cmd")
    response = await _call(mw, _request([TASK, command], ScriptedChatModel()), rec, mode)
    assert rec.requests == []
    assert isinstance(response, ModelResponse)  # nothing but `messages` to write
    notice, removal, again = response.result
    assert (type(removal), removal.id) == (RemoveMessage, "cmd") and again is notice
    assert notice.text.startswith("[langctx] Nothing to compact yet")


def _archiving_request(messages: list[BaseMessage], model: ScriptedChatModel) -> Any:
    request = _request(messages, model)
    state = {**request.state, "langctx_archive": []}
    return request.override(state=state)  # type: ignore[arg-type]


@MODES
async def test_archived_messages_leave_in_the_result_between_the_models_message_and_itself(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        "langctx.middleware.ensure_config", lambda: {"configurable": {"thread_id": "t"}}
    )
    mw = LangctxMiddleware(max_tokens=2000, keep_recent_tokens=KEEP)
    model = ScriptedChatModel(responses=["Done."])
    messages = [TASK, *exchanges(12)]
    response = await _call(mw, _archiving_request(messages, model), Recorder(), mode)

    assert isinstance(response, ExtendedModelResponse) and response.command is not None
    reply, *removals, again = response.model_response.result
    assert reply.content == "Done." and again is reply and reply.id is not None
    assert [(type(m), m.id) for m in removals] == [(RemoveMessage, m.id) for m in exchanges(11)]
    assert set(response.command.update) == {"langctx", "langctx_archive"}  # type: ignore[arg-type]


@MODES
async def test_a_step_that_repairs_invalid_tool_calls_removes_in_the_command(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """create_agent writes the whole history back (after REMOVE_ALL) on that step: a removal in
    the same write would be stored as a message, so it goes in the command, applied after."""
    monkeypatch.setattr(
        "langctx.middleware.ensure_config", lambda: {"configurable": {"thread_id": "t"}}
    )
    mw = LangctxMiddleware(max_tokens=2000, keep_recent_tokens=KEEP)
    model = ScriptedChatModel(responses=["Done."])
    broken = AIMessage(
        "",
        id="bad",
        invalid_tool_calls=[{"type": "invalid_tool_call", "id": "c1", "name": "read", "args": "{"}],
    )
    messages = [TASK, *exchanges(12), broken, HumanMessage("go on", id="h-last")]
    response = await _call(mw, _archiving_request(messages, model), Recorder(), mode)

    assert isinstance(response, ExtendedModelResponse) and response.command is not None
    assert [m.content for m in response.model_response.result] == ["Done."]
    update = cast(dict[str, Any], response.command.update)
    assert all(isinstance(m, RemoveMessage) for m in update["messages"]) and update["messages"]


@MODES
async def test_overflow_compacts_with_trigger_overflow_and_retries(mode: str) -> None:
    mw = LangctxMiddleware(max_tokens=2000, keep_recent_tokens=KEEP)
    model = ScriptedChatModel(responses=[ValueError(OVERFLOW), "Done."])
    messages = [TASK, *exchanges(3)]  # below the 1600-token mark: no compaction before the call
    rec = Recorder()
    response = await _call(mw, _request(messages, model), rec, mode)

    assert len(rec.requests) == 2
    first, second = (r.messages for r in rec.requests)
    assert [m.id for m in first] == [m.id for m in messages]
    assert ids_of(second)[:2] == ["task", None]
    assert len(second) < len(first)
    assert isinstance(response, ExtendedModelResponse) and response.command is not None
    assert [m.content for m in response.model_response.result] == ["Done."]
    entries = response.command.update["langctx"]["compactions"]  # type: ignore[index]
    assert [e["trigger"] for e in entries] == ["overflow"]


@MODES
async def test_overflow_past_the_retries_raises_context_overflow(mode: str) -> None:
    mw = LangctxMiddleware(max_tokens=2000, max_overflow_retries=1)
    model = ScriptedChatModel(responses=[ValueError(OVERFLOW), ValueError(OVERFLOW)])
    rec = Recorder()
    with pytest.raises(ContextOverflowError) as info:
        await _call(mw, _request([TASK, *exchanges(3)], model), rec, mode)
    assert info.value.attempts == 1
    assert len(rec.requests) == 2


@MODES
async def test_rate_limit_error_is_reraised_untouched(mode: str) -> None:
    mw = LangctxMiddleware(max_tokens=2000, keep_recent_tokens=KEEP)
    error = RuntimeError("Rate limit reached for gpt-4o: 429 Too Many Requests")
    model = ScriptedChatModel(responses=[error, "never"])
    rec = Recorder()
    with pytest.raises(RuntimeError) as info:
        await _call(mw, _request([TASK, *exchanges(3)], model), rec, mode)
    assert info.value is error
    assert len(rec.requests) == 1 and len(model.calls) == 1


# ---------------------------------------------------------------------- wrap_tool_call


def _tool_request(call_id: str = "call_1") -> ToolCallRequest:
    call = {"name": "read_file", "args": {"path": "a.py"}, "id": call_id, "type": "tool_call"}
    return ToolCallRequest(tool_call=call, tool=None, state={"messages": []}, runtime=None)  # type: ignore[arg-type]


def _tool_handler(request: ToolCallRequest) -> ToolMessage:
    return ToolMessage("x" * 500, tool_call_id=request.tool_call["id"], name="read_file")


async def _atool_handler(request: ToolCallRequest) -> ToolMessage:
    return _tool_handler(request)


def _shorten(seen: list[tuple[ToolMessage, ToolCallRequest]]) -> Callable[..., ToolMessage]:
    def processor(message: ToolMessage, request: ToolCallRequest) -> ToolMessage:
        seen.append((message, request))
        return message.model_copy(update={"content": f"[{len(message.text)} chars]"})

    return processor


def _ashorten(
    seen: list[tuple[ToolMessage, ToolCallRequest]],
) -> Callable[..., Awaitable[ToolMessage]]:
    sync = _shorten(seen)

    async def processor(message: ToolMessage, request: ToolCallRequest) -> ToolMessage:
        return sync(message, request)

    return processor


def test_wrap_tool_call_runs_a_sync_processor() -> None:
    seen: list[tuple[ToolMessage, ToolCallRequest]] = []
    mw = LangctxMiddleware(tool_output_processor=_shorten(seen))
    request = _tool_request()
    out = mw.wrap_tool_call(request, _tool_handler)
    assert isinstance(out, ToolMessage)
    assert out.content == "[500 chars]" and out.tool_call_id == "call_1"
    assert len(seen) == 1 and seen[0][1] is request and seen[0][0].text == "x" * 500


def test_wrap_tool_call_refuses_an_async_processor() -> None:
    mw = LangctxMiddleware(tool_output_processor=_ashorten([]))
    with pytest.raises(RuntimeError, match="ainvoke"):
        mw.wrap_tool_call(_tool_request(), _tool_handler)


def test_wrap_tool_call_without_processor_and_commands_pass_through() -> None:
    plain = LangctxMiddleware()
    request = _tool_request()
    result = _tool_handler(request)
    assert plain.wrap_tool_call(request, lambda _: result) is result
    seen: list[tuple[ToolMessage, ToolCallRequest]] = []
    with_processor = LangctxMiddleware(tool_output_processor=_shorten(seen))
    command: Command[Any] = Command(update={"messages": [result]})
    assert with_processor.wrap_tool_call(request, lambda _: command) is command
    assert seen == []


@pytest.mark.parametrize("kind", ["sync", "async"])
async def test_awrap_tool_call_runs_sync_and_async_processors(kind: str) -> None:
    seen: list[tuple[ToolMessage, ToolCallRequest]] = []
    processor = _shorten(seen) if kind == "sync" else _ashorten(seen)
    mw = LangctxMiddleware(tool_output_processor=processor)
    request = _tool_request("call_9")
    out = await mw.awrap_tool_call(request, _atool_handler)
    assert isinstance(out, ToolMessage)
    assert out.content == "[500 chars]" and out.tool_call_id == "call_9"
    assert [r for _, r in seen] == [request]


def test_cache_prices_follow_the_models_provider_unless_given() -> None:
    from langchain_anthropic import ChatAnthropic
    from langchain_openai import ChatOpenAI

    from langctx import MemoryConfig

    claude = ChatAnthropic(model_name="claude-sonnet-4-5", api_key="sk-fake")  # type: ignore[call-arg]
    gpt = ChatOpenAI(model="gpt-5", api_key="sk-fake")  # type: ignore[arg-type]
    mw = LangctxMiddleware(max_tokens=32_000)

    def sheet(m: LangctxMiddleware, model: object) -> str | None:
        prices = m.settings_for(model).config.cache_prices
        return None if prices is None else prices.name  # type: ignore[union-attr]

    assert sheet(mw, claude) == "anthropic"
    assert sheet(mw, gpt) == sheet(mw, gpt.bind_tools([])) == "openai"
    assert sheet(mw, ScriptedChatModel()) is None
    assert mw.settings_for(claude) is mw.settings_for(claude)  # resolved once per provider
    assert sheet(LangctxMiddleware(max_tokens=32_000, cache_prices=None), claude) is None
    assert sheet(LangctxMiddleware(max_tokens=32_000, cache_prices="openai"), claude) == "openai"
    given = LangctxMiddleware(config=MemoryConfig(max_tokens=32_000))
    assert sheet(given, claude) is None  # a whole config is taken as it is


def test_a_claude_agent_folds_where_anthropics_cache_prices_say() -> None:
    """Through wrap_model_call: the same slowly growing run folds earlier (smaller requests) with
    a langchain-anthropic model than with the high mark only; the model itself is never called."""
    from langchain_anthropic import ChatAnthropic

    from tests.unit_tests.test_cache_mark import _slow_session

    claude = ChatAnthropic(model_name="claude-sonnet-4-5", api_key="sk-fake")  # type: ignore[call-arg]
    largest: dict[bool, int] = {}
    for default in (True, False):
        mw = LangctxMiddleware(max_tokens=32_000, **({} if default else {"cache_prices": None}))
        messages: list[BaseMessage] = []
        channel: dict[str, Any] = {}
        sizes = []
        for turn in _slow_session(300):
            messages = [*messages, *turn]
            request = _request(messages, ScriptedChatModel(), channel).override(model=claude)
            sent: list[ModelRequest[Any]] = []

            def handler(r: ModelRequest[Any], sent: list[ModelRequest[Any]] = sent) -> Any:
                sent.append(r)
                return ModelResponse(result=[AIMessage("ok")])

            response = mw.wrap_model_call(request, handler)
            if isinstance(response, ExtendedModelResponse) and response.command is not None:
                update = cast(dict[str, Any], response.command.update)
                channel = dict(merge_langctx(channel, update.get("langctx")))
            sizes.append(mw.settings.counter.count_messages(sent[-1].messages))
        largest[default] = max(sizes[100:])
    assert largest[True] < largest[False]
