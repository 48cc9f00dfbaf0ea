"""The default archive: folded messages leave ``messages`` for the state's ``langctx_archive``.

Against the same session with ``archive=None`` (the whole log in ``messages``): the model gets the
same inputs, ``full_log`` gives the same log, and the thread stays readable after a restart, a
fork (``update_state`` on an old checkpoint) and time travel. A thread written with the whole log
in ``messages`` continues under the default; a store that fails mid-archive loses nothing.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, NotRequired

import pytest
from langchain_core.messages import (
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolMessage,
    message_to_dict,
)
from langgraph.channels import EphemeralValue
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.managed import RemainingSteps
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from langctx.channel import ARCHIVE_KEY, LangctxChannel, merge_langctx
from langctx.delta_state import ArchivedBatches
from langctx.errors import ConfigError
from langctx.langgraph import LangctxNode, LangctxState, make_pre_model_hook, route_after_memory
from langctx.middleware import LangctxMiddleware
from langctx.recovery import with_overflow_recovery
from langctx.state_memory import view_state
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    check_calls,
    config,
    every_compaction,
    first_input,
    middleware_agent,
    session_script,
)
from tests.integration_tests._archive_agents import tools

BUDGET = 3000
TURNS = 60


def _dicts(messages: list[BaseMessage]) -> list[Any]:
    """The messages as dicts without their ids (LangGraph gives tool results random ones, and
    entry ids derive from message ids)."""
    out = [message_to_dict(m) for m in messages]
    for d in out:
        d["data"].pop("id", None)
    return json.loads(re.sub(r"cmp-[0-9a-f]{12}", "cmp-?", json.dumps(out)))


def _drive(invoke: Any, model: ScriptedChatModel, first: Any) -> tuple[Any, int]:
    """:func:`drive` with ids on the user's messages: two runs must give the same ids (a
    truncation marker names a message's id, and the counter counts it)."""
    out = invoke(first) if first is not None else {}
    turns = 1 if first is not None else 0
    while model._index < len(model.responses):
        out = invoke({"messages": [HumanMessage(f"Go on ({turns}).", id=f"user-{turns}")]})
        turns += 1
    return out, turns


def _run(archive: Any, saver: Any, cfg: dict[str, Any], *, turns: int = TURNS) -> Any:
    script = session_script(turns, seed=5)
    model = ScriptedChatModel(responses=script.responses)
    mw = LangctxMiddleware(max_tokens=BUDGET, archive=archive)
    agent = middleware_agent(model, tools(script.outputs), mw, saver)
    out, _ = _drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))
    return agent, model, mw, out


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    """The same session with the whole log in ``messages`` and with the default archive."""
    whole = _run(None, InMemorySaver(), config("whole"))
    default = _run("state", InMemorySaver(), config("default"))
    return whole, default


def test_the_model_sees_the_same_and_full_log_is_the_whole_log(pair: tuple[Any, Any]) -> None:
    (_, whole_model, _, whole), (_, model, mw, out) = pair
    assert [_dicts(c) for c in model.calls] == [_dicts(c) for c in whole_model.calls]
    assert _dicts(full_log(out)) == _dicts(whole["messages"])
    assert len(out[ARCHIVE_KEY]) >= 5 and len(out["messages"]) < len(whole["messages"]) / 4
    kinds = [(e["trigger"], e["level"], e["tokens_before"]) for e in every_compaction(out)]
    assert kinds == [
        (e["trigger"], e["level"], e["tokens_before"]) for e in every_compaction(whole)
    ]
    report = check_calls(model.calls, mw.settings.counter, BUDGET, skip_system_prompt=True)
    assert report.orphans == report.unanswered == report.violations == report.missing_task == 0


def test_every_checkpoint_projects_what_the_model_was_sent(pair: tuple[Any, Any]) -> None:
    """Time travel: an old checkpoint's state, read again, projects the input its step sent."""
    _, (agent, model, mw, _) = pair
    cfg = config("default")
    before_model = [s for s in agent.get_state_history(cfg) if s.next == ("model",)]
    assert len(before_model) == len(model.calls)
    for snapshot, call in zip(reversed(before_model), model.calls, strict=True):
        view = view_state(snapshot.values, mw.settings, thread_id="default")
        view.compact_if_due()
        assert _dicts(view.projection()) == _dicts(call[1:])  # call[0]: the system prompt


def test_a_fork_of_an_old_checkpoint_continues_from_its_own_archive(pair: tuple[Any, Any]) -> None:
    _, (agent, model, mw, out) = pair
    cfg = config("default")
    history = [s for s in agent.get_state_history(cfg) if s.next == ("model",)]
    old = history[len(history) // 2]  # newest first: a checkpoint halfway through the thread
    assert old.values[ARCHIVE_KEY] and len(old.values[ARCHIVE_KEY]) < len(out[ARCHIVE_KEY])
    fork = agent.update_state(old.config, {"messages": [HumanMessage("Stop; explain.", id="u")]})
    model.responses.append("Here is where things stand.")
    calls = len(model.calls)
    forked = agent.invoke(None, fork)
    assert forked["messages"][-1].content == "Here is where things stand."
    before = full_log(old.values)
    assert _dicts(full_log(forked)[: len(before)]) == _dicts(before)
    assert len(full_log(forked)) == len(before) + 2 < len(full_log(out))
    latest = agent.get_state(cfg).values  # the thread's head is the fork now
    assert _dicts(full_log(latest)) == _dicts(full_log(forked))
    report = check_calls(model.calls[calls:], mw.settings.counter, BUDGET, skip_system_prompt=True)
    assert report.orphans == report.unanswered == report.violations == 0


def test_a_restarted_process_resumes_on_sqlite(tmp_path: Path) -> None:
    """Each user turn by a new agent and a new connection to the file: the same model inputs."""
    script = session_script(40, seed=8)
    whole_model = ScriptedChatModel(responses=list(script.responses))
    with SqliteSaver.from_conn_string(str(tmp_path / "one.sqlite")) as saver:
        mw = LangctxMiddleware(max_tokens=BUDGET)
        agent = middleware_agent(whole_model, tools(script.outputs), mw, saver)
        cfg = config("one")
        once, _ = _drive(
            lambda x: agent.invoke(x, cfg), whole_model, first_input(with_system=False)
        )

    model = ScriptedChatModel(responses=list(script.responses))
    db, cfg = str(tmp_path / "many.sqlite"), config("many")

    def fresh_process(x: dict[str, Any]) -> dict[str, Any]:
        with SqliteSaver.from_conn_string(db) as saver:
            mw = LangctxMiddleware(max_tokens=BUDGET)
            return middleware_agent(model, tools(script.outputs), mw, saver).invoke(x, cfg)

    out, turns = _drive(fresh_process, model, first_input(with_system=False))
    assert turns > 3 and out[ARCHIVE_KEY]
    assert [_dicts(c) for c in model.calls] == [_dicts(c) for c in whole_model.calls]
    assert _dicts(full_log(out)) == _dicts(full_log(once))


def test_a_thread_of_the_whole_log_continues_under_the_default() -> None:
    """A thread written with every message in ``messages`` (the earlier default) continues."""
    script = session_script(70, seed=6)
    scripted = tools(script.outputs)
    saver = InMemorySaver()
    runs = {}
    for archive in (None, "state"):
        model = ScriptedChatModel(responses=list(script.responses))
        cfg = config(f"old-{archive}")
        old = middleware_agent(
            model, scripted, LangctxMiddleware(max_tokens=BUDGET, archive=None), saver
        )
        old.invoke(first_input(with_system=False), cfg)
        for n in range(3):
            old.invoke({"messages": [HumanMessage(f"Go on ({n}).", id=f"old-{n}")]}, cfg)
        written = len(model.calls)
        new = middleware_agent(
            model, scripted, LangctxMiddleware(max_tokens=BUDGET, archive=archive), saver
        )
        out, _ = _drive(lambda x, new=new, cfg=cfg: new.invoke(x, cfg), model, None)
        runs[archive] = (model.calls[written:], out)
    (calls, whole), (migrated_calls, migrated) = runs[None], runs["state"]
    assert [_dicts(c) for c in migrated_calls] == [_dicts(c) for c in calls]
    assert _dicts(full_log(migrated)) == _dicts(whole["messages"])
    assert len(migrated["messages"]) < len(whole["messages"]) / 4


class _FailingStore(InMemoryStore):
    """A store whose writes fail while ``down`` is set."""

    down = True

    def batch(self, ops: Any) -> list[Any]:
        ops = list(ops)
        if self.down and any(isinstance(op, PutOp) for op in ops):
            raise ConnectionError("store unavailable")
        return super().batch(ops)


def test_a_store_that_fails_mid_archive_loses_nothing() -> None:
    script = session_script(30, seed=9)
    model = ScriptedChatModel(responses=script.responses)
    store, cfg = _FailingStore(), config("failing")
    mw = LangctxMiddleware(max_tokens=BUDGET, archive=store)
    agent = middleware_agent(model, tools(script.outputs), mw, InMemorySaver())
    with pytest.raises(ConnectionError):
        _drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))
    state = agent.get_state(cfg).values
    assert not (state.get("langctx") or {}).get("archive")  # nothing recorded as archived
    written = len(state["messages"])
    store.down = False
    model._index -= 1  # the failed model call is made again
    out, _ = _drive(lambda x: agent.invoke(x, cfg), model, {"messages": []})
    log = full_log(store, "failing", out)
    assert len(log) > written
    assert [m.id for m in log[:written]] == [m.id for m in state["messages"]]
    # what the failed step would have archived left the state once the store was back
    assert {m.id for m in state["messages"]} - {m.id for m in out["messages"]}


class _HookState(MessagesState):
    remaining_steps: RemainingSteps
    langctx: NotRequired[Annotated[LangctxChannel, merge_langctx]]


class _ArchivingHookState(_HookState):
    langctx_archive: NotRequired[ArchivedBatches]


def _hook_run(schema: Any, **options: Any) -> Any:
    script = session_script(20, seed=3)
    model = ScriptedChatModel(responses=script.responses)
    agent = create_react_agent(
        model,
        tools(script.outputs),
        pre_model_hook=make_pre_model_hook(max_tokens=BUDGET, **options),
        state_schema=schema,
        checkpointer=InMemorySaver(),
    )
    cfg = config("hook")
    out, _ = _drive(lambda x: agent.invoke(x, cfg), model, first_input(with_system=False))
    return out


@pytest.mark.filterwarnings("ignore:create_react_agent has been moved")
def test_a_hook_over_a_state_without_the_archive_key_says_what_to_add() -> None:
    with pytest.raises(ConfigError, match=r"langctx_archive: NotRequired\[ArchivedBatches\]"):
        _hook_run(_HookState)  # archive="state", the default
    out = _hook_run(_HookState, archive=None)
    assert every_compaction(out) and ARCHIVE_KEY not in out
    assert len(out["messages"]) == len(full_log(out)) > 40
    archived = _hook_run(_ArchivingHookState)
    assert archived[ARCHIVE_KEY] and len(archived["messages"]) < 20
    assert [m.id for m in full_log(archived)] == [m.id for m in full_log(out)]


def test_a_2000_turn_thread_of_the_whole_log_loads_and_continues() -> None:
    """2,000 turns written with every message in ``messages`` (one checkpoint holds them), then
    the default: the first call archives the folded history in one batch and the thread goes on."""
    script = session_script(2030, seed=12)
    outputs = dict(script.outputs)
    history: list[BaseMessage] = [*first_input(with_system=False)["messages"]]
    for response in script.responses[:2000]:
        history.append(response)
        history.extend(
            ToolMessage(outputs[c["id"]], tool_call_id=c["id"], id=f"tool-{c['id']}")
            for c in response.tool_calls
        )
    model = ScriptedChatModel(responses=script.responses[2000:])
    mw = LangctxMiddleware(max_tokens=BUDGET)
    agent = middleware_agent(model, tools(outputs), mw, InMemorySaver())
    cfg = config("long-whole-log")
    agent.update_state(cfg, {"messages": history}, as_node="tools")
    out, _ = _drive(lambda x: agent.invoke(x, cfg), model, {"messages": []})
    log = full_log(out)
    assert _dicts(log[: len(history)]) == _dicts(history)
    assert len(log) > len(history) and len(out["messages"]) < 40
    assert len(out[ARCHIVE_KEY]) >= 2  # the history in one batch, then the folds that followed
    report = check_calls(
        model.calls,
        LangctxMiddleware(max_tokens=BUDGET).settings.counter,
        BUDGET,
        skip_system_prompt=True,
    )
    assert report.orphans == report.unanswered == report.violations == report.missing_task == 0


class _MyState(MessagesState):
    """A user's own schema, as docs/persistence.md declares it."""

    langctx: NotRequired[Annotated[LangctxChannel, merge_langctx]]
    langctx_archive: NotRequired[ArchivedBatches]
    llm_input_messages: NotRequired[Annotated[list[AnyMessage], EphemeralValue]]


def _node_graph(schema: Any, script: Any, saver: Any, **options: Any) -> Any:
    model = ScriptedChatModel(responses=script.responses)
    node = LangctxNode(max_tokens=BUDGET, **options)
    llm = with_overflow_recovery(model.bind_tools(tools(script.outputs)), node.settings)

    def call_model(state: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["llm_input_messages"])]}

    builder = StateGraph(schema)
    builder.add_node("memory", node)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools(script.outputs)))
    builder.add_edge(START, "memory")
    builder.add_conditional_edges("memory", route_after_memory("model"), ["model", END])
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "memory")
    return builder.compile(checkpointer=saver), model


def test_a_state_graph_over_a_users_schema_archives_like_langctx_state() -> None:
    script = session_script(TURNS, seed=6)
    outs = []
    for schema in (LangctxState, _MyState):
        graph, model = _node_graph(schema, script, InMemorySaver())
        cfg = config()
        out, _ = _drive(
            lambda x, g=graph, c=cfg: g.invoke(x, c), model, first_input(with_system=False)
        )
        outs.append(out)
    ours, mine = outs
    assert len(mine["messages"]) == len(ours["messages"]) < 20 and mine[ARCHIVE_KEY]
    assert _dicts(full_log(mine)) == _dicts(full_log(ours)) and len(full_log(mine)) > 100


def test_a_state_graph_over_a_schema_without_the_archive_key_fails_on_its_first_step() -> None:
    class Recipe(MessagesState):  # the archive key missing
        langctx: NotRequired[Annotated[LangctxChannel, merge_langctx]]
        llm_input_messages: NotRequired[Annotated[list[AnyMessage], EphemeralValue]]

    saver = InMemorySaver()
    graph, model = _node_graph(Recipe, session_script(4, seed=6), saver)
    cfg = config()
    with pytest.raises(ConfigError, match="langctx_archive"):
        graph.invoke(first_input(with_system=False), cfg)
    assert model.calls == []  # before any model call
    graph, model = _node_graph(Recipe, session_script(TURNS, seed=6), InMemorySaver(), archive=None)
    out, _ = _drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=False))
    assert every_compaction(out) and len(out["messages"]) == len(full_log(out)) > 100


def test_the_projection_is_in_the_checkpoint_after_each_memory_step_only() -> None:
    """``llm_input_messages`` (an ``EphemeralValue``) is written to the checkpoint that follows
    the memory step and cleared by the next step (docs/langgraph-node.md, docs/persistence.md)."""
    saver = InMemorySaver()
    graph, model = _node_graph(_MyState, session_script(10, seed=6), saver)
    cfg = config()
    _drive(lambda x: graph.invoke(x, cfg), model, first_input(with_system=False))
    history = list(graph.get_state_history(cfg))
    holding = [h for h in history if "llm_input_messages" in h.values]
    assert holding and len(holding) == len(model.calls)
    assert all(h.next == ("model",) for h in holding)  # written by the memory node, next: model
    assert "llm_input_messages" not in history[0].values
