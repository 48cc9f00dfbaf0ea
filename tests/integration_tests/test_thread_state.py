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
from langctx.channel import merge_langctx
from langctx.cli.demo.session import coding_session
from langctx.entries import ENTRY_VERSION
from langctx.langgraph import LangctxNode
from langctx.state_memory import view_state
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests.integration_tests._agents import (
    check_calls,
    cold_settings,
    config,
    drive,
    first_input,
    node_agent,
    session_script,
    session_tools,
    thread_view,
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
    node = LangctxNode(max_tokens=BUDGET, archive=None)  # the whole log in messages, as then
    graph = node_agent(model, session_tools(script.outputs), node, saver)
    stored = graph.get_state(cfg).values["langctx"]["compactions"]
    assert {e["v"] for e in stored} == {0}

    out, _ = drive(lambda x: graph.invoke(x, cfg), model, None)
    assert {e["v"] for e in out["langctx"]["compactions"]} == {ENTRY_VERSION}  # migrated
    assert len(out["langctx"]["compactions"]) > len(stored)
    report = check_calls(model.calls, node.settings.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.violations == report.missing_task == 0
    memory = thread_view(graph, cfg, node.settings).memory
    assert memory.compactions[0]["covered_ids"] == stored[0]["covered"]


def test_checkpoint_with_an_unknown_entry_version_fails_clearly() -> None:
    saver, cfg = InMemorySaver(), config()
    _write_old_checkpoint(saver, cfg, version=42)
    model = ScriptedChatModel(responses=["unused"])
    graph = node_agent(model, [], LangctxNode(max_tokens=BUDGET), saver)
    with pytest.raises(StateVersionError, match=r"version 42.*Upgrade langctx, or clear"):
        graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert model.calls == []
    # the documented way out: reset the channel, then the thread runs again
    graph.update_state(cfg, {"langctx": {"v": 1, "reset": True}})
    out = graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "unused"


def _hand_edited_run(
    edit: Any, **memory_kwargs: Any
) -> tuple[Any, ScriptedChatModel, LangctxNode, dict[str, Any]]:
    script = session_script(16, seed=14)
    model = ScriptedChatModel(responses=script.responses)
    node = LangctxNode(max_tokens=BUDGET, archive=None, **memory_kwargs)  # edits of the whole log
    graph = node_agent(model, session_tools(script.outputs), node, InMemorySaver())
    cfg = config()
    drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=True))
    graph.update_state(cfg, {"messages": edit(graph.get_state(cfg).values)})
    model.responses.append("Carrying on.")
    return graph, model, node, cfg


def test_hand_edited_orphan_tool_message_is_left_out_not_fatal() -> None:
    stray = ToolMessage("stray output", tool_call_id="call_nobody", id="stray-1")
    graph, model, node, cfg = _hand_edited_run(lambda s: [stray])
    out = graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Carrying on."
    assert all("stray output" not in m.text for m in model.calls[-1])
    report = check_calls(model.calls, node.settings.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.unanswered == 0


def test_hand_edited_orphan_with_error_policy_raises() -> None:
    stray = ToolMessage("stray output", tool_call_id="call_nobody", id="stray-2")
    graph, _model, _, cfg = _hand_edited_run(lambda s: [stray], orphan_policy="error")
    with pytest.raises(InvalidHistoryError, match="call_nobody"):
        graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)


@pytest.mark.parametrize("which", ["latest", "oldest"])
def test_message_removed_by_hand_keeps_the_projection_sound(which: str) -> None:
    """The first kept message of a cut is removed by hand.

    The latest cut (kept turns): its entry no longer fits the state, so the channel is reset to
    the entries that do. The oldest cut (folded since by a later compaction): the summaries
    already stand for it, so nothing changes and no summary is dropped.
    """

    def remove_a_kept_turn(state: dict[str, Any]) -> list[Any]:
        ids = {str(m.id): m for m in state["messages"]}
        cuts = [
            e["first_kept_id"]
            for e in state["langctx"]["compactions"]
            if e["trigger"] != "merge" and e["first_kept_id"] in ids
        ]
        assert len(cuts) >= 2
        removed.append(cuts[-1] if which == "latest" else cuts[0])
        before.extend(e["id"] for e in state["langctx"]["compactions"])
        return [RemoveMessage(id=removed[-1])]

    removed: list[str] = []
    before: list[str] = []
    graph, model, node, cfg = _hand_edited_run(remove_a_kept_turn)
    out = graph.invoke({"messages": [HumanMessage("Go on.")]}, cfg)
    assert out["messages"][-1].content == "Carrying on."
    present = {str(m.id) for m in out["messages"]}
    entries = out["langctx"]["compactions"]
    latest = next(e for e in reversed(entries) if e["trigger"] != "merge")
    assert latest["first_kept_id"] in present
    if which == "latest":  # the channel was reset to entries that still fit
        for e in entries:
            assert e["trigger"] == "merge" or e["first_kept_id"] in present
    else:  # every summary written before the removal is still there
        assert set(before) <= {e["id"] for e in entries}
    report = check_calls(model.calls[-1:], node.settings.counter, BUDGET, skip_system_prompt=False)
    assert report.orphans == report.unanswered == report.violations == 0
    assert all(m.id != removed[0] for m in model.calls[-1])


def _looping_model(
    tool_turns: int, seen: dict[str, list[BaseMessage]] | None = None
) -> ScriptedChatModel:
    """Per run (``configurable.run_label``): ``tool_turns`` file reads, then a final answer.

    The count is kept here, not read from the input, because compaction folds old turns away.
    ``seen`` gets each run's latest model input.
    """
    made: dict[str, int] = {}

    def step(messages: list[BaseMessage]) -> AIMessage:
        label = ensure_config()["configurable"]["run_label"]
        made[label] = made.get(label, 0) + 1
        if seen is not None:
            seen[label] = list(messages)
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

    seen: dict[str, list[BaseMessage]] = {}
    model = _looping_model(tool_turns=6, seen=seen)
    node = LangctxNode(max_tokens=4000, archive=None)  # every cut stays in messages
    graph = node_agent(model, [read_file], node, InMemorySaver())
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
    assert [m.id for m in head["messages"]] in (
        [m.id for m in a["messages"]],
        [m.id for m in b["messages"]],
    )
    for final, label in ((a, "A"), (b, "B"), (head, None)):
        present = {str(m.id) for m in final["messages"]}
        for e in final["langctx"]["compactions"]:
            assert e["trigger"] == "merge" or e["first_kept_id"] in present
        view = view_state(final, cold_settings(max_tokens=4000), thread_id="x")
        assert view.update() is None  # nothing stale, nothing missing
        if label is not None:  # the run's last call saw what its own state projects, + answer
            last = [m.id for m in seen[label]]
            assert [m.id for m in view.projection()] == [*last, final["messages"][-1].id]
    assert len(a["langctx"]["compactions"]) >= 1 and len(b["langctx"]["compactions"]) >= 1
    report = check_calls(model.calls, node.settings.counter, 4000, skip_system_prompt=False)
    assert report.orphans == report.unanswered == report.violations == 0


async def test_overlapping_calls_during_a_slow_compaction_each_project_their_own_state() -> None:
    """A call whose state extends another's, made while that one waits for its summarizer: each
    compacts its own state, and what each returns is what a fresh process makes of it."""
    started, release = asyncio.Event(), asyncio.Event()

    async def slow_summarizer(request: SummaryRequest) -> str:
        started.set()
        await release.wait()
        return "Goal: fix the parser. Status: reading files."

    options: dict[str, Any] = {
        "max_tokens": BUDGET,
        "summary_threshold_tokens": 0,
        "background_summaries": False,  # the compaction waits for its summarizer
    }
    node = LangctxNode(summarizer=slow_summarizer, archive=None, **options)  # no graph, no archive
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
        await asyncio.sleep(0)
    assert not task1.done()  # the compaction is still running
    release.set()
    out1, out2 = await asyncio.gather(task1, task2)

    assert [m.id for m in out2["llm_input_messages"][-2:]] == ["q1", "q2"]
    assert not {"q1", "q2"} & {m.id for m in out1["llm_input_messages"]}
    for messages, out in ((first, out1), (list([*first, *queued]), out2)):
        entries = out["langctx"]["compactions"]
        assert entries and entries[0]["quality"] == "model"
        assert all(not {"q1", "q2"} & set(e["covered_ids"]) for e in entries)
        # the state the call wrote, read by a process with nothing cached, projects the same
        state = {"messages": messages, "langctx": merge_langctx(None, out["langctx"])}
        view = view_state(state, cold_settings(**options), thread_id="fresh")
        assert view.compact_if_due() is None and view.update() is None
        projected = view.projection()
        assert [m.id for m in projected] == [m.id for m in out["llm_input_messages"]]
        assert [m.content for m in projected] == [m.content for m in out["llm_input_messages"]]
