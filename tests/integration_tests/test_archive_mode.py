"""Archive mode: folded messages leave the state for a store; the model sees exactly the same.

Each test runs one deterministic session twice, archived and not, and compares what the model got
at every call, message by message; the archive's full log must equal the plain run's messages.
Resume runs in a NEW process from SqliteSaver + SqliteStore files (and PostgresSaver +
PostgresStore) with ``LANGGRAPH_STRICT_MSGPACK=true``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import ensure_config
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.base import BaseStore, SearchOp
from langgraph.store.memory import InMemoryStore

from langctx.errors import ConfigError
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import view_state
from langctx.stores import archive as archive_module
from langctx.stores.archive import (
    ArchiveMissingError,
    afull_log,
    archive_namespace,
    aread_batches,
    full_log,
    read_batches,
)
from langctx.stores.archive_plan import ArchivePlan
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests.integration_tests._agents import (
    PG_URI,
    cold_settings,
    postgres_available,
    require_postgres,
    run_worker,
)
from tests.integration_tests._archive_agents import (
    adrive,
    build,
    dicts,
    drive,
    first_input,
    open_store,
    script,
    tools,
)

ROOT = Path(__file__).resolve().parents[2]
TURNS = 150
BUDGET = 5000


@dataclass
class Session:
    """One scripted session's model inputs, final state and archive."""

    calls: list[list[BaseMessage]]
    state: dict[str, Any]
    store: BaseStore
    thread_id: str
    live_sizes: list[int] = field(default_factory=list)
    store_snapshots: list[dict[str, Any]] = field(default_factory=list)


def _store_items(store: BaseStore, thread_id: str) -> dict[str, Any]:
    items = store.search(archive_namespace(thread_id), limit=100_000)
    return {i.key: (json.dumps(i.value, sort_keys=True), i.created_at, i.updated_at) for i in items}


def _session(
    kind: str, *, archive: bool, turns: int = TURNS, seed: int = 5, delta: bool = False
) -> Session:
    responses, outputs = script(turns, seed=seed)
    model = ScriptedChatModel(responses=responses)
    store = InMemoryStore()
    graph, _ = build(
        kind,
        model,
        outputs,
        budget=BUDGET,
        archive=store if archive else None,
        checkpointer=InMemorySaver(),
        store=store,
        delta=delta,
    )
    tid = f"archive-{uuid.uuid4().hex[:8]}"
    cfg = {"configurable": {"thread_id": tid}, "recursion_limit": 5000}
    session = Session([], {}, store, tid)

    def invoke(x: dict[str, Any]) -> dict[str, Any]:
        last: dict[str, Any] = {}
        for values in graph.stream(x, cfg, stream_mode="values"):
            session.live_sizes.append(len(values["messages"]))
            last = values
        return last

    def after_each(_: dict[str, Any]) -> None:
        session.store_snapshots.append(_store_items(store, tid))

    drive(invoke, model, first_input(kind), after_each=after_each)
    session.state = graph.get_state(cfg).values
    session.calls = model.calls
    return session


@pytest.fixture(scope="module")
def middleware_runs() -> tuple[Session, Session]:
    return _session("middleware", archive=True), _session("middleware", archive=False)


def test_model_sees_exactly_the_same_with_and_without_archive(
    middleware_runs: tuple[Session, Session],
) -> None:
    archived, plain = middleware_runs
    assert len(archived.calls) == len(plain.calls) > TURNS
    for n, (a, p) in enumerate(zip(archived.calls, plain.calls, strict=True)):
        assert dicts(a) == dicts(p), f"model call {n} differs"
    assert len(archived.state["langctx"]["compactions"]) < len(
        plain.state["langctx"]["compactions"]
    )


def test_full_log_equals_the_plain_log(middleware_runs: tuple[Session, Session]) -> None:
    archived, plain = middleware_runs
    log = full_log(archived.store, archived.thread_id, archived.state)
    assert dicts(log) == dicts(plain.state["messages"])
    record = archived.state["langctx"]["archive"]
    assert record["messages"] + len(archived.state["messages"]) == len(log)
    batches = read_batches(archived.store, archived.thread_id, archived.state)
    assert [b["seq"] for b in batches] == list(range(record["batches"]))
    saved = [e["id"] for b in batches for e in b["compactions"]]
    assert len(saved) == len(set(saved))  # every entry copied to the archive once
    assert set(saved) | {e["id"] for e in archived.state["langctx"]["compactions"]} >= {
        e["id"] for e in plain.state["langctx"]["compactions"]
    }  # nothing lost: every entry the plain run has is in the archive or the channel


class _UnlistedStore(InMemoryStore):
    """A store whose listing returns nothing: every batch must be fetched by key."""

    def batch(self, ops: Any) -> list[Any]:
        found = super().batch(ops)
        return [[] if isinstance(op, SearchOp) else r for op, r in zip(ops, found, strict=True)]

    async def abatch(self, ops: Any) -> list[Any]:
        return self.batch(ops)


async def test_async_reading_is_the_sync_reading(
    middleware_runs: tuple[Session, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    archived, _ = middleware_runs
    monkeypatch.setattr(archive_module, "_PAGE", 2)  # the listing takes many pages
    batches = read_batches(archived.store, archived.thread_id, archived.state)
    assert len(batches) > 4
    assert await aread_batches(archived.store, archived.thread_id, archived.state) == batches
    unlisted = _UnlistedStore()
    ns = archive_namespace(archived.thread_id)
    for item in archived.store.search(ns, limit=100_000):
        unlisted.put(ns, item.key, item.value, index=False)
    assert read_batches(unlisted, archived.thread_id, archived.state) == batches
    assert await aread_batches(unlisted, archived.thread_id, archived.state) == batches
    missing = {"messages": [], "langctx": {"v": 1, "archive": {"v": 1, "last": "00000003-abc"}}}
    with pytest.raises(ArchiveMissingError, match="00000003-abc"):
        await afull_log(InMemoryStore(), "t1", missing)


def test_live_state_and_channel_stay_bounded(middleware_runs: tuple[Session, Session]) -> None:
    archived, plain = middleware_runs
    biggest_projection = max(len(c) for c in archived.calls)
    assert max(archived.live_sizes) <= biggest_projection + 4  # pinned + recent + the newest turn
    assert max(archived.live_sizes) < 40 < max(plain.live_sizes)
    channel = archived.state["langctx"]
    assert len(channel["compactions"]) <= 10  # active summaries + the latest cut
    assert all(
        e["message_id"] in {m.id for m in archived.state["messages"]} for e in channel["edits"]
    )
    assert len(json.dumps(channel)) < 40_000 < len(json.dumps(plain.state["langctx"]))


def test_archive_is_append_only(middleware_runs: tuple[Session, Session]) -> None:
    archived, _ = middleware_runs
    snapshots = archived.store_snapshots
    assert len(snapshots[-1]) > 10
    for before, after in itertools.pairwise(snapshots):
        assert set(before) <= set(after)
        for key, item in before.items():
            assert after[key] == item, f"archived item {key} was rewritten"


async def test_node_graph_async_with_the_graphs_own_store() -> None:
    responses, outputs = script(120, seed=9)

    async def run(archive: bool) -> tuple[ScriptedChatModel, dict[str, Any], BaseStore, str]:
        model = ScriptedChatModel(responses=list(responses))
        store = stores.enter_context(open_store(":memory:"))  # sync-only: async calls fall back
        graph, _ = build(
            "node",
            model,
            outputs,
            budget=BUDGET,
            archive=True if archive else None,
            checkpointer=InMemorySaver(),
            store=store,
        )
        tid = f"node-{uuid.uuid4().hex[:8]}"
        cfg = {"configurable": {"thread_id": tid}, "recursion_limit": 5000}
        await adrive(lambda x: graph.ainvoke(x, cfg), model, first_input("node"))
        return model, (await graph.aget_state(cfg)).values, store, tid

    with contextlib.ExitStack() as stores:
        (ma, sa, store, tid), (mp, sp, _, _) = await run(True), await run(False)
        assert [dicts(c) for c in ma.calls] == [dicts(c) for c in mp.calls]
        assert dicts(await afull_log(store, tid, sa)) == dicts(sp["messages"])
        assert len(sa["messages"]) < 40 < len(sp["messages"])


def _in_memory_middleware_agent(
    model: ScriptedChatModel, outputs: Any, store: InMemoryStore, *, archive: bool
) -> tuple[Any, Any]:
    """A middleware agent on InMemorySaver, archiving to ``store`` when ``archive`` (keeping 30%
    of the budget after a fold and room for several summaries, so that an overflow retry has
    turns to fold)."""
    return build(
        "middleware",
        model,
        outputs,
        budget=BUDGET,
        archive=store if archive else None,
        checkpointer=InMemorySaver(),
        store=store,
        keep_recent_tokens=("fraction", 0.3),
        summary_share=0.3,
    )


def _compact_session(archive: bool, *, asynchronous: bool) -> tuple[list[Any], list[Any], int]:
    """A 40-turn session then ``/compact``: (full log, projection, live messages)."""
    responses, outputs = script(40, seed=4)
    model = ScriptedChatModel(responses=list(responses))
    store = InMemoryStore()
    graph, settings = _in_memory_middleware_agent(model, outputs, store, archive=archive)
    cfg = {"configurable": {"thread_id": "compact"}, "recursion_limit": 5000}
    command = {"messages": [HumanMessage("/compact keep the lexer notes", id="cmd")]}
    if asynchronous:

        async def main() -> dict[str, Any]:
            await adrive(lambda x: graph.ainvoke(x, cfg), model, first_input("middleware"))
            calls = len(model.calls)
            out: dict[str, Any] = await graph.ainvoke(command, cfg)
            assert len(model.calls) == calls  # the command never reaches the model
            return out

        out = asyncio.run(main())
    else:
        drive(lambda x: graph.invoke(x, cfg), model, first_input("middleware"))
        calls = len(model.calls)
        out = graph.invoke(command, cfg)
        assert len(model.calls) == calls
    assert out["messages"][-1].id.startswith("langctx-notice-")
    assert "cmd" not in {m.id for m in out["messages"]}
    projection = dicts(view_state(out, settings, thread_id="compact").projection())
    log = full_log(store, "compact", out) if archive else out["messages"]
    return dicts(log), projection, len(out["messages"])


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_compact_command_archives_and_keeps_the_log(asynchronous: bool) -> None:
    log_a, proj_a, live_a = _compact_session(True, asynchronous=asynchronous)
    log_p, proj_p, live_p = _compact_session(False, asynchronous=asynchronous)
    notice = "langctx-notice-"  # notices get fresh ids: compare the rest exactly, and their text
    assert [m for m in log_a if not m["data"]["id"].startswith(notice)] == [
        m for m in log_p if not m["data"]["id"].startswith(notice)
    ]
    assert [m["data"]["content"] for m in log_a if m["data"]["id"].startswith(notice)] == [
        m["data"]["content"] for m in log_p if m["data"]["id"].startswith(notice)
    ]
    assert proj_a == proj_p
    assert live_a < live_p


@pytest.mark.parametrize("archive", [False, True], ids=["plain", "archive"])
def test_the_middleware_adds_no_step_to_the_agent_loop(archive: bool) -> None:
    """Memory sync, archiving and /compact all run in the model call: no node, no checkpoint."""
    responses, outputs = script(30, seed=6)
    counts = []
    for with_langctx in (True, False):
        model = ScriptedChatModel(responses=list(responses))
        store = InMemoryStore()
        if with_langctx:
            graph, _ = build(
                "middleware",
                model,
                outputs,
                budget=3000,
                archive=store if archive else None,
                checkpointer=InMemorySaver(),
                store=store,
            )
            assert set(graph.nodes) == {"__start__", "model", "tools"}
        else:
            graph = create_agent(
                model, tools=tools(outputs), system_prompt="x", checkpointer=InMemorySaver()
            )
        cfg = {"configurable": {"thread_id": "steps"}, "recursion_limit": 5000}
        out = drive(lambda x, g=graph, c=cfg: g.invoke(x, c), model, first_input("middleware"))
        if with_langctx and archive:
            assert out["langctx"]["archive"]["batches"] >= 3
        counts.append(len(list(graph.get_state_history(cfg))))
    assert counts[0] == counts[1]


def _overflow_error() -> openai.BadRequestError:
    request = httpx.Request("POST", "https://api.openai.com/v1/chat/completions")
    body = {"message": "maximum context length exceeded", "code": "context_length_exceeded"}
    return openai.BadRequestError(
        "Error code: 400", response=httpx.Response(400, request=request), body=body
    )


def test_an_overflow_retry_in_an_archiving_model_call_keeps_both_updates(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The archive step is planned before the call; an overflow compaction during it is kept."""
    responses, outputs = script(60, seed=7)
    late: list[str] = []
    channel_with = ArchivePlan.channel_with

    def spy(plan: ArchivePlan, update: Any) -> Any:
        planned = {e["id"] for e in plan.channel["compactions"]}
        late.extend(
            e["id"] for e in (update or {}).get("compactions", []) if e["id"] not in planned
        )
        return channel_with(plan, update)

    monkeypatch.setattr(ArchivePlan, "channel_with", spy)
    runs = []
    for archive in (True, False):
        done = {"next": 0, "last": 0, "failed": False}

        def step(messages: list[BaseMessage], done: dict[str, Any] = done) -> Any:
            """The script, but the first call after a fold (whose archive step is planned) first
            fails as too long when the turns before the newest hold more than a summary adds."""
            folded, done["last"] = len(messages) < done["last"], len(messages)
            older = sum(len(m.text) for m in messages[3:-2])  # after the pinned pair and block
            if folded and older > 2_000 and not done["failed"]:
                done["failed"] = True
                raise _overflow_error()
            done["failed"] = False
            done["next"] += 1
            return responses[done["next"] - 1]

        model = ScriptedChatModel(responses=[step], cycle=True)
        store = InMemoryStore()
        graph, settings = _in_memory_middleware_agent(model, outputs, store, archive=archive)
        cfg = {"configurable": {"thread_id": "overflow"}, "recursion_limit": 5000}
        out = graph.invoke(first_input("middleware"), cfg)
        n = 1
        while done["next"] < len(responses):
            out = graph.invoke({"messages": [HumanMessage(f"Go on ({n}).", id=f"user-{n}")]}, cfg)
            n += 1
        projection = dicts(view_state(out, settings, thread_id="overflow").projection())
        log = full_log(store, "overflow", out) if archive else out["messages"]
        kept = {e["id"]: e["trigger"] for e in out["langctx"]["compactions"]}
        if archive:  # entry ids are random: each run is checked against its own entries
            for batch in read_batches(store, "overflow", out):
                kept.update({e["id"]: e["trigger"] for e in batch["compactions"]})
        runs.append((model.calls, dicts(log), projection, kept))
    (calls_a, log_a, proj_a, kept_a), (calls_p, log_p, proj_p, kept_p) = runs
    assert late  # some model call compacted again after its archive step was planned
    assert {kept_a[i] for i in late} <= {"overflow", "merge"}  # ... and its entries were kept
    assert [dicts(c) for c in calls_a] == [dicts(c) for c in calls_p]
    assert log_a == log_p and proj_a == proj_p
    overflow = [t for t in kept_a.values() if t == "overflow"]
    assert overflow and len(overflow) == sum(t == "overflow" for t in kept_p.values())


def test_archive_true_without_a_store_fails_clearly() -> None:
    responses, outputs = script(30, seed=2)
    model = ScriptedChatModel(responses=responses)
    graph, _ = build(
        "middleware", model, outputs, budget=3000, archive=True, checkpointer=InMemorySaver()
    )
    cfg = {"configurable": {"thread_id": "no-store"}, "recursion_limit": 5000}
    with pytest.raises(ConfigError, match="needs the graph's store"):
        drive(lambda x: graph.invoke(x, cfg), model, first_input("middleware"))


def test_nothing_is_archived_without_a_thread() -> None:
    responses, outputs = script(30, seed=2)
    model = ScriptedChatModel(responses=responses)
    store = InMemoryStore()
    graph, _ = build("middleware", model, outputs, budget=3000, archive=store)
    out = graph.invoke(first_input("middleware"), {"recursion_limit": 5000})
    assert out["langctx"]["compactions"] and "archive" not in out["langctx"]  # compacted only
    assert [m.id for m in out["messages"]][:2] == ["task", "ai-2-1"] and not store.search(
        ("langctx",)
    )


def test_bad_archive_option_and_missing_batches_fail_clearly() -> None:
    with pytest.raises(ConfigError, match="BaseStore"):
        LangctxMiddleware(archive="sqlite:///x.db")  # type: ignore[arg-type]
    state = {"messages": [], "langctx": {"v": 1, "archive": {"v": 1, "last": "00000003-abc"}}}
    with pytest.raises(ArchiveMissingError, match="00000003-abc"):
        full_log(InMemoryStore(), "t1", state)


# ---------------------------------------------------------------------- resume in a new process

FIRST, TOTAL = 30, 70
Case = tuple[str, str, bool]  # (backend, kind, delta)


def _first_process(case: Case, uri: str, store_uri: str, tid: str, seed: int) -> dict[str, Any]:
    _backend, kind, delta = case
    responses, outputs = script(FIRST, seed=seed, final_id="final-1")
    model = ScriptedChatModel(responses=responses)
    cfg = {"configurable": {"thread_id": tid}, "recursion_limit": 5000}
    users: list[int] = []
    with open_checkpointer(uri) as saver, open_store(store_uri) as store:
        graph, settings = build(
            kind,
            model,
            outputs,
            budget=BUDGET,
            archive=True if kind == "node" else store,
            checkpointer=saver,
            store=store,
            delta=delta,
        )
        drive(
            lambda x: graph.invoke(x, cfg),
            model,
            first_input(kind),
            after_each=lambda _: users.append(1),
        )
        state = graph.get_state(cfg).values
        view = view_state(state, settings, thread_id=tid)
        assert view.compact_if_due() is None and view.update() is None
        projection = dicts(view.projection())
    assert state["langctx"]["archive"]["batches"] >= 3
    return {"projection": projection, "calls": len(model.calls), "first_user": len(users)}


def _reference(kind: str, seed: int) -> tuple[list[Any], list[dict[str, Any]]]:
    """The same two-part session in one process without archive mode."""
    first, outputs = script(FIRST, seed=seed, final_id="final-1")
    rest, more = script(TOTAL, seed=seed, start=FIRST)
    model = ScriptedChatModel(responses=[*first, *rest])
    graph, _ = build(kind, model, {**outputs, **more}, budget=BUDGET, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "reference"}, "recursion_limit": 5000}
    out = drive(lambda x: graph.invoke(x, cfg), model, first_input(kind))
    return [dicts(c) for c in model.calls], dicts(out["messages"])


@pytest.fixture(scope="module")
def resumed(tmp_path_factory: pytest.TempPathFactory) -> dict[Case, Any]:
    cases: list[Case] = [
        ("sqlite", "middleware", False),
        ("sqlite", "middleware", True),
        ("sqlite", "node", False),
    ]
    if postgres_available():
        cases += [("postgres", "node", False), ("postgres", "middleware", True)]
    jobs, firsts = [], {}
    for n, case in enumerate(cases):
        backend, kind, delta = case
        if backend == "postgres":
            uri = store_uri = PG_URI
        else:
            folder = tmp_path_factory.mktemp(f"{kind}-{delta}")
            uri, store_uri = str(folder / "checkpoints.sqlite"), str(folder / "archive.sqlite")
        tid = f"archive-resume-{backend}-{kind}-{delta}-{uuid.uuid4().hex[:8]}"
        seed = 40 + n
        firsts[case] = _first_process(case, uri, store_uri, tid, seed)
        jobs.append(
            {
                "uri": uri,
                "store_uri": store_uri,
                "thread_id": tid,
                "kind": kind,
                "delta": delta,
                "budget": BUDGET,
                "seed": seed,
                "first": FIRST,
                "total": TOTAL,
                "first_user": firsts[case]["first_user"],
            }
        )
    seconds, stderr = run_worker("tests.integration_tests._archive_worker", jobs)
    return {
        case: (firsts[case], second, stderr, _reference(case[1], 40 + n))
        for n, (case, second) in enumerate(zip(cases, seconds, strict=True))
    }


def _check(first: dict[str, Any], second: dict[str, Any], stderr: str, reference: Any) -> None:
    ref_calls, ref_log = reference
    assert second["projection"] == first["projection"]  # the same context after the restart
    assert second["pending_update"] is None  # nothing stale, nothing missing in the channel
    assert second["calls"] == ref_calls[first["calls"] :]  # and the same from there on
    assert second["full_log"] == ref_log  # archived + live = the plain run's messages
    assert second["live"] < 40 and second["compactions_in_channel"] <= 10
    assert second["archived_messages"] + second["live"] == len(ref_log)
    lowered = stderr.lower()
    assert "unregistered" not in lowered and "blocked deserialization" not in lowered, stderr
    assert "traceback" not in lowered, stderr


@pytest.mark.slow  # the `resumed` fixture: worker processes, ~10 s
@pytest.mark.parametrize(
    "case",
    [("sqlite", "middleware", False), ("sqlite", "middleware", True), ("sqlite", "node", False)],
    ids=["middleware", "middleware-delta", "node"],
)
def test_resume_from_sqlite_files_in_a_new_process(resumed: dict[Case, Any], case: Case) -> None:
    _check(*resumed[case])


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.parametrize(
    "case", [("postgres", "node", False), ("postgres", "middleware", True)], ids=["node", "delta"]
)
def test_resume_from_postgres_in_a_new_process(resumed: dict[Case, Any], case: Case) -> None:
    require_postgres()
    _check(*resumed[case])


async def test_two_concurrent_runs_each_keep_their_own_archive_chain() -> None:
    """Both runs fork from one checkpoint; each state's full log is its own history."""

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return f"# {path}\n" + "def parse(tokens, pos):\n    return tokens[pos], pos + 1\n" * 120

    made: dict[str, int] = {}
    seen: dict[str, list[BaseMessage]] = {}  # each run's latest model input

    def step(messages: list[BaseMessage]) -> Any:
        label = ensure_config()["configurable"]["run_label"]
        made[label] = made.get(label, 0) + 1
        seen[label] = list(messages)
        if made[label] <= 8:
            return ai_tool_call("read_file", {"path": f"src/{label}{made[label]}.py"})
        return f"Handled run {label}"

    store = InMemoryStore()
    agent = create_agent(
        ScriptedChatModel(responses=[step], cycle=True),
        tools=[read_file],
        middleware=[LangctxMiddleware(max_tokens=3000, archive=True)],
        checkpointer=InMemorySaver(),
        store=store,
    )
    tid = f"concurrent-{uuid.uuid4().hex[:8]}"

    def run(label: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": tid, "run_label": label}, "recursion_limit": 500}

    await agent.ainvoke({"messages": [HumanMessage("Fix the parser.", id="task")]}, run("S"))
    fork = (await agent.aget_state(run("S"))).values
    before = [m.id for m in full_log(store, tid, fork)]
    a, b = await asyncio.gather(
        agent.ainvoke({"messages": [HumanMessage("run A", id="a")]}, run("A")),
        agent.ainvoke({"messages": [HumanMessage("run B", id="b")]}, run("B")),
    )
    for final, mine, other in ((a, "a", "b"), (b, "b", "a")):
        log = [m.id for m in full_log(store, tid, final)]
        assert log[: len(before)] == before  # the shared history, then this run's own
        assert mine in log and other not in log
        assert len(log) == len(set(log)) == len(before) + 1 + 2 * 8 + 1
        assert len(final["messages"]) < len(log) // 2  # this branch archived too
        view = view_state(final, cold_settings(max_tokens=3000), thread_id=tid)
        assert view.update() is None  # the channel fits this branch's messages
        # this run's last model call saw what its own final state projects (plus the answer)
        last = [m.id for m in seen[mine.upper()]]
        assert [m.id for m in view.projection()] == [*last, final["messages"][-1].id]


def _user_turns(n: int) -> list[dict[str, Any]]:
    """'Go on (k).' for k in 1 .. n - 1, with the ids `drive` gives them."""
    return [{"messages": [HumanMessage(f"Go on ({k}).", id=f"user-{k}")]} for k in range(1, n)]


def test_archive_mode_can_be_turned_on_and_off_on_a_running_thread() -> None:
    responses, outputs = script(90, seed=8)
    reference = ScriptedChatModel(responses=list(responses))
    graph, _ = build("middleware", reference, outputs, budget=BUDGET, checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "switch"}, "recursion_limit": 5000}
    plain = drive(lambda x: graph.invoke(x, cfg), reference, first_input("middleware"))

    model = ScriptedChatModel(responses=list(responses))
    saver, store = InMemorySaver(), InMemoryStore()
    inputs = iter([first_input("middleware"), *_user_turns(len(reference.calls))])
    lives = []
    for archive, runs in ((None, 6), (store, 6), (None, 100)):  # off, on, off again
        graph, _ = build(
            "middleware", model, outputs, budget=BUDGET, archive=archive, checkpointer=saver
        )
        for _ in range(runs):
            message = next(inputs, None)
            if message is None or model._index >= len(model.responses):
                break
            out = graph.invoke(message, cfg)
            lives.append(len(out["messages"]))
    assert [dicts(c) for c in model.calls] == [dicts(c) for c in reference.calls]
    assert dicts(full_log(store, "switch", out)) == dicts(plain["messages"])
    assert min(lives[6:12]) < lives[5]  # switching archive mode on archived the folded history
