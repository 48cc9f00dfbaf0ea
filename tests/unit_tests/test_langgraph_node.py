"""LangctxNode and make_compact_tool invoked directly (no graph): what they return for a state."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, RemoveMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.types import Command

from langctx.channel import merge_langctx
from langctx.commands import ACK_REQUEST, is_notice
from langctx.errors import ConfigError
from langctx.langgraph import LangctxNode, make_compact_tool, route_after_memory
from langctx.markers import ACK_ID_PREFIX, SUMMARY_ID_PREFIX
from tests._helpers import exchanges, ids_of

KEEP = 600
"""The low mark these budget tests are written for: 30% of 2,000 (the last exchange)."""

TASK = HumanMessage("Fix the parser in src/parse.py so that nested lists parse.", id="task")
CONFIG: Any = {"configurable": {"thread_id": "t1"}}


async def _run(node: LangctxNode, state: dict[str, Any], mode: str) -> dict[str, Any]:
    if mode == "sync":
        return node.invoke(state, CONFIG)  # type: ignore[arg-type]
    return await node.ainvoke(state, CONFIG)  # type: ignore[arg-type]


MODES = pytest.mark.parametrize("mode", ["sync", "async"])


@MODES
async def test_below_budget_returns_the_projection_only(mode: str) -> None:
    node = LangctxNode(max_tokens=2000, keep_recent_tokens=KEEP, archive=None)
    out = await _run(node, {"messages": [TASK, *exchanges(2)]}, mode)
    assert set(out) == {"llm_input_messages"}
    assert [m.id for m in out["llm_input_messages"]] == ["task", "a0", "h0", "a1", "h1"]


@MODES
async def test_due_returns_the_compacted_projection_and_the_channel_update(mode: str) -> None:
    node = LangctxNode(max_tokens=2000, keep_recent_tokens=KEEP, archive=None)
    messages = [TASK, *exchanges(12)]
    out = await _run(node, {"messages": messages}, mode)
    assert set(out) == {"llm_input_messages", "langctx"}
    assert ids_of(out["llm_input_messages"]) == ["task", None, "a11", "h11"]
    (entry,) = out["langctx"]["compactions"]
    assert (entry["trigger"], entry["first_kept_id"]) == ("proactive", "a11")

    # the stored entry gives the same projection on the next call, and nothing new to write
    state = {"messages": messages, "langctx": merge_langctx({}, out["langctx"])}
    again = await _run(node, state, mode)
    assert set(again) == {"llm_input_messages"}
    assert [m.model_dump() for m in again["llm_input_messages"]] == [
        m.model_dump() for m in out["llm_input_messages"]
    ]


@MODES
async def test_output_key_none_writes_only_the_update(mode: str) -> None:
    node = LangctxNode(max_tokens=2000, output_key=None, archive=None)
    out = await _run(node, {"messages": [TASK, *exchanges(12)]}, mode)
    assert set(out) == {"langctx"}


@MODES
async def test_compact_command_returns_the_notice_update(mode: str) -> None:
    node = LangctxNode(max_tokens=4000, archive=None)
    command = HumanMessage("/compact keep the lexer notes", id="cmd")
    out = await _run(node, {"messages": [TASK, *exchanges(8), command]}, mode)

    removal, notice = out["messages"]
    assert isinstance(removal, RemoveMessage) and removal.id == "cmd"
    assert isinstance(notice, AIMessage) and is_notice(notice)
    assert notice.text.startswith("[langctx] Compacted ")
    assert notice.text.endswith("Focus: keep the lexer notes")
    (entry,) = out["langctx"]["compactions"]
    assert (entry["trigger"], entry["instructions"]) == ("manual", "keep the lexer notes")
    projection = out["llm_input_messages"]
    assert projection[0].id == "task" and projection[1].id.startswith(SUMMARY_ID_PREFIX)
    assert projection[-1].content == ACK_REQUEST
    assert projection[-1].id.startswith(ACK_ID_PREFIX)
    assert "cmd" not in {m.id for m in projection}
    after = {"messages": [TASK, *exchanges(8), notice]}
    assert route_after_memory("model")(after) == "__end__"


@MODES
async def test_archive_in_a_state_without_its_key_says_what_to_add(mode: str) -> None:
    node = LangctxNode(max_tokens=2000)  # archive="state", the default
    state = {"messages": [TASK, *exchanges(2)]}
    with pytest.raises(ConfigError, match=r"add `langctx_archive: NotRequired\[ArchivedBatches\]`"):
        await _run(node, state, mode)
    assert "llm_input_messages" in await _run(node, {**state, "langctx_archive": []}, mode)
    no_thread = node.invoke(state) if mode == "sync" else await node.ainvoke(state)
    assert "llm_input_messages" in no_thread  # nothing to archive for: no thread


def _tool_call(state: dict[str, Any], instructions: str = "") -> dict[str, Any]:
    args: dict[str, Any] = {"state": state}
    if instructions:
        args["instructions"] = instructions
    return {"name": "compact_conversation", "args": args, "id": "call_7", "type": "tool_call"}


@MODES
async def test_compact_tool_with_an_injected_state(mode: str) -> None:
    node = LangctxNode(max_tokens=4000)
    tool = make_compact_tool(node.settings)
    state = {"messages": [TASK, *exchanges(8)]}
    call = _tool_call(state, "keep the lexer notes")
    result = tool.invoke(call) if mode == "sync" else await tool.ainvoke(call)

    assert isinstance(result, Command)
    update = result.update
    assert isinstance(update, dict)
    (message,) = update["messages"]
    assert isinstance(message, ToolMessage)
    assert message.tool_call_id == "call_7" and message.name == "compact"
    assert message.text.startswith("[langctx] Compacted ")
    assert message.text.endswith("Focus: keep the lexer notes")
    (entry,) = update["langctx"]["compactions"]
    assert (entry["trigger"], entry["instructions"]) == ("manual", "keep the lexer notes")
    shown = convert_to_openai_tool(tool)["function"]["parameters"]["properties"]
    assert set(shown) == {"instructions"}  # the model never sees the injected state


def test_compact_tool_with_nothing_to_compact_writes_no_entry() -> None:
    tool = make_compact_tool(LangctxNode(max_tokens=4000).settings)
    result = tool.invoke(_tool_call({"messages": [TASK]}))
    assert isinstance(result, Command) and isinstance(result.update, dict)
    assert set(result.update) == {"messages"}
    assert result.update["messages"][0].text.startswith("[langctx] Nothing to compact yet")


def test_archive_true_inside_a_plain_runnable_names_the_missing_store() -> None:
    from langchain_core.runnables import RunnableLambda

    node = LangctxNode(archive=True, max_tokens=2000)
    msgs: list[BaseMessage] = [HumanMessage("Fix the parser.", id="h0")]
    for i in range(60):
        msgs += [
            AIMessage(f"step {i} " + "word " * 60, id=f"a{i}"),
            HumanMessage("go on", id=f"u{i}"),
        ]
    msgs.append(AIMessage("done", id="end"))
    outer = RunnableLambda(lambda state, config: node.invoke(state, config))
    with pytest.raises(ConfigError, match="needs the graph's store"):
        outer.invoke({"messages": msgs}, {"configurable": {"thread_id": "t"}})
