"""Graph state as the truth: old entry versions, hand edits, concurrent runs, queued input."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    ToolMessage,
)
from langchain_core.runnables import ensure_config
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph, add_messages

from langctx import InvalidHistoryError, LayeredChatMemory, StateVersionError
from langctx.demo.session import coding_session
from langctx.entries import ENTRY_VERSION
from langctx.integrations.langgraph import LangctxNode
from langctx.integrations.threads import ThreadMemories
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests.integration_tests._agents import (
    check_calls,
    config,
    drive,
    first_input,
    node_agent,
    session_script,
    session_tools,
)

BUDGET = 6000


class _OldState(TypedDict):
    """What an older langctx stored: the channel as a plain value, entries written raw."""

    messages: Annotated[list[AnyMessage], add_messages]
    langctx: dict[str, Any]


def _old_entries(messages: list[BaseMessage], version: int) -> dict[str, Any]:
    memory = LayeredChatMemory(max_tokens=BUDGET)
    memory.add_messages(messages)
    assert memory.compactions
    old = []
    full: dict[str, list[str]] = {}  # before version 2, a merge listed every id it stood for
    for e in memory.compactions:
        full[e["id"]] = [i for m in e["merged_from"] for i in full[m]] + list(e["covered_ids"])
        d = {
            k: v for k, v in e.items() if k not in ("kind", "covered_ids", "covered_count", "facts")
        }
        d.update(v=version, covered=full[e["id"]])
        old.append(d)
    return {"v": 1, "compactions": old, "edits": [], "priorities": {}}


def _write_old_checkpoint(saver: InMemorySaver, cfg: dict[str, Any], version: int) -> None:
    messages = coding_session(30, seed=13)
    channel = _old_entries(messages, version)
    builder = StateGraph(_OldState)
    builder.add_node("noop", lambda s: {})
    builder.add_edge(START, "noop")
    builder.compile(checkpointer=saver).invoke({"messages": messages, "langctx": channel}, cfg)


def test_checkpoint_with_v0_entries_is_migrated_and_continues() -> None:
    saver, cfg = InMemorySaver(), config()
    _write_old_checkpoint(saver, cfg, version=0)
    script = session_script(8, seed=113)  # other ids than the old session
    model = ScriptedChatModel(responses=script.responses)
    memories = ThreadMemories(max_tokens=BUDGET)
    graph = node_agent(model, session_tools(script.outputs), memories, saver)
    stored = graph.get_state(cfg).values["langctx"]["compactions"]
    assert {e["v"] for e in stored} == {0}

    out, _ = drive(lambda x: graph.invoke(x, cfg), model, None)
    assert {e["v"] for e in out["langctx"]["compactions"]} == {ENTRY_VERSION}  # migrated
    assert len(out["langctx"]["compactions"]) > len(stored)
    memory = memories.get(cfg["configurable"]["thread_id"])
    assert memory is not None
    report = check_calls(model.calls, memory.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.violations == report.missing_task == 0
    assert memory.compactions[0]["covered_ids"] == stored[0]["covered"]


def test_checkpoint_with_an_unknown_entry_version_fails_clearly() -> None:
    saver, cfg = InMemorySaver(), config()
    _write_old_checkpoint(saver, cfg, version=42)
    model = ScriptedChatModel(responses=["unused"])
    graph = node_agent(model, [], ThreadMemories(max_tokens=BUDGET), saver)
    with pytest.raises(StateVersionError, match=r"version 42.*Upgrade langctx, or clear"):
        graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert model.calls == []
    # the documented way out: reset the channel, then the thread runs again
    graph.update_state(cfg, {"langctx": {"v": 1, "reset": True}})
    out = graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "unused"


def _hand_edited_run(
    edit: Any, **memory_kwargs: Any
) -> tuple[Any, ScriptedChatModel, ThreadMemories, dict[str, Any]]:
    script = session_script(16, seed=14)
    model = ScriptedChatModel(responses=script.responses)
    memories = ThreadMemories(max_tokens=BUDGET, **memory_kwargs)
    graph = node_agent(model, session_tools(script.outputs), memories, InMemorySaver())
    cfg = config()
    drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=True))
    graph.update_state(cfg, {"messages": edit(graph.get_state(cfg).values)})
    model.responses.append("Carrying on.")
    return graph, model, memories, cfg


def test_hand_edited_orphan_tool_message_is_left_out_not_fatal() -> None:
    stray = ToolMessage("stray output", tool_call_id="call_nobody", id="stray-1")
    graph, model, memories, cfg = _hand_edited_run(lambda s: [stray])
    out = graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Carrying on."
    assert all("stray output" not in m.text for m in model.calls[-1])
    memory = memories.get(cfg["configurable"]["thread_id"])
    assert memory is not None
    report = check_calls(model.calls, memory.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.unanswered == 0


def test_hand_edited_orphan_with_error_policy_raises() -> None:
    stray = ToolMessage("stray output", tool_call_id="call_nobody", id="stray-2")
    graph, _model, _, cfg = _hand_edited_run(lambda s: [stray], orphan_policy="error")
    with pytest.raises(InvalidHistoryError, match="call_nobody"):
        graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)


def test_message_removed_by_hand_rebuilds_and_resets_stale_entries() -> None:
    def remove_a_kept_turn(state: dict[str, Any]) -> list[Any]:
        ids = {str(m.id): m for m in state["messages"]}
        target = next(
            e["first_kept_entry_id"]
            for e in state["langctx"]["compactions"]
            if e["trigger"] != "merge" and e["first_kept_entry_id"] in ids
        )
        return [RemoveMessage(id=target)]

    graph, model, memories, cfg = _hand_edited_run(remove_a_kept_turn)
    out = graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Carrying on."
    present = {str(m.id) for m in out["messages"]}
    for e in out["langctx"]["compactions"]:  # the channel was reset to entries that still fit
        assert e["trigger"] == "merge" or e["first_kept_entry_id"] in present
    memory = memories.get(cfg["configurable"]["thread_id"])
    assert memory is not None
    report = check_calls(model.calls[-1:], memory.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.unanswered == report.violations == 0


def _looping_model(tool_turns: int) -> ScriptedChatModel:
    """Per run (``configurable.run_label``): ``tool_turns`` file reads, then a final answer.

    The count is kept here, not read from the input, because compaction folds old turns away.
    """
    made: dict[str, int] = {}

    def step(messages: list[BaseMessage]) -> AIMessage:
        label = ensure_config()["configurable"]["run_label"]
        made[label] = made.get(label, 0) + 1
        if made[label] <= tool_turns:
            return ai_tool_call("read_file", {"path": f"src/calc/{label}{made[label]}.py"})
        return AIMessage(f"Handled run {label}")

    return ScriptedChatModel(responses=[step], cycle=True)


async def test_two_concurrent_runs_on_one_thread_keep_the_channel_consistent() -> None:
    from langchain_core.tools import tool

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return f"# {path}\n" + "def parse(tokens, pos):\n    return tokens[pos], pos + 1\n" * 120

    model = _looping_model(tool_turns=6)
    memories = ThreadMemories(max_tokens=4000)
    graph = node_agent(model, [read_file], memories, InMemorySaver())
    cfg = config()

    def run(label: str) -> dict[str, Any]:
        return {**cfg, "configurable": {**cfg["configurable"], "run_label": label}}

    await graph.ainvoke(first_input(with_system=True), run("S"))
    a, b = await asyncio.gather(
        graph.ainvoke({"messages": [HumanMessage("run A")]}, run("A")),
        graph.ainvoke({"messages": [HumanMessage("run B")]}, run("B")),
    )
    assert a["messages"][-1].content == "Handled run A"
    assert b["messages"][-1].content == "Handled run B"
    # each run forked from the same checkpoint; the thread's head is the run that wrote last.
    head = graph.get_state(cfg).values
    for final in (a, b, head):
        present = {str(m.id) for m in final["messages"]}
        for e in final["langctx"]["compactions"]:
            assert e["trigger"] == "merge" or e["first_kept_entry_id"] in present
        with ThreadMemories(max_tokens=4000).lease(final, cfg) as lease:
            assert lease.update() is None  # nothing stale, nothing missing
    report = check_calls(model.calls, memories.new_memory().counter, 4000, skip_system_prompt=False)
    assert report.orphans == report.unanswered == report.violations == 0


async def test_messages_added_during_an_async_compaction_are_queued_after_it() -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow_summarizer(request: SummaryRequest) -> str:
        started.set()
        await release.wait()
        return "Goal: fix the parser. Status: reading files."

    memories = ThreadMemories(
        max_tokens=BUDGET, summarizer=slow_summarizer, summary_threshold_tokens=0
    )
    node = LangctxNode(memories)
    cfg = config()
    first = coding_session(25, seed=15)
    queued = [
        HumanMessage("also keep the CLI working", id="q1"),
        HumanMessage("and log it", id="q2"),
    ]

    task1 = asyncio.create_task(node.ainvoke({"messages": first}, cfg))
    await started.wait()  # the compaction is waiting for the summarizer
    task2 = asyncio.create_task(node.ainvoke({"messages": [*first, *queued]}, cfg))
    for _ in range(5):
        await asyncio.sleep(0)  # let task2 append its messages
    memory = memories.get(cfg["configurable"]["thread_id"])
    assert memory is not None
    assert [m.id for m in memory.messages[-2:]] == ["q1", "q2"]  # appended at once, in order
    assert not memory.compactions  # the compaction is still running
    release.set()
    out1, out2 = await asyncio.gather(task1, task2)

    assert [str(m.id) for m in memory.messages] == [str(m.id) for m in [*first, *queued]]
    entry = memory.compactions[0]
    assert entry["quality"] == "model"
    assert not {"q1", "q2"} & set(entry["covered_ids"])  # not folded into the running compaction
    assert [m.id for m in out2["llm_input_messages"][-2:]] == ["q1", "q2"]
    assert not {"q1", "q2"} & {m.id for m in out1["llm_input_messages"]}
    assert out1["langctx"]["compactions"][0]["id"] == entry["id"]
