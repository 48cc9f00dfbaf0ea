"""``langctx inspect`` on real checkpoint databases written by LangGraph runs (SQLite, PostgreSQL).

The databases are written by scripted coding sessions through a ``StateGraph`` + ``LangctxNode``
and through ``create_agent`` + ``LangctxMiddleware``, with a small budget so that compactions,
merges, placeholders and truncations all happen. The command runs through
``langctx.cli.main([...])``; its JSON is checked against the checkpoint and the live memory, and
every bad input must exit 2 with one clear line and change nothing.
"""

from __future__ import annotations

import hashlib
import json
import re
import socket
import sqlite3
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, TypedDict

import psycopg
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, StateGraph, add_messages
from langgraph.store.memory import InMemoryStore

from langctx.cli import main
from langctx.entries import covered_count
from langctx.langgraph import LangctxNode
from langctx.memory import LayeredChatMemory
from langctx.middleware import LangctxMiddleware
from langctx.state_memory import MemorySettings, view_state
from langctx.stores.archive import full_log, read_batches, thread_entries
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    PG_URI,
    drive,
    first_input,
    middleware_agent,
    node_agent,
    require_postgres,
    session_script,
    session_tools,
)

BUDGET = 4000
SHOWCASE: dict[str, Any] = {
    "keep_recent_tokens": ("fraction", 0.3),
    "output_share": 0.3,
    "summary_share": 0.3,
}
"""A high low mark, kept outputs whole up to it and room for several summaries, so every layer
and section shows up (recent outputs replaced in place, level-1 summaries beside merged ones)."""
NODE, MIDDLEWARE, PLAIN, BROKEN = (
    "node-thread",
    "middleware-thread",
    "plain-thread",
    "broken-thread",
)


@dataclass
class Written:
    """What the sessions left behind: the agents' memories and the states, per thread."""

    uri: str
    memories: dict[str, LayeredChatMemory] = field(default_factory=dict)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    checkpoints: dict[str, list[str]] = field(default_factory=dict)


class _PlainState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


class _OldState(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    langctx: dict[str, Any]


def _cfg(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}, "recursion_limit": 5000}


def _synced(settings: MemorySettings, state: dict[str, Any], thread_id: str) -> LayeredChatMemory:
    """The memory the agent's next model call would compute from the final state."""
    view = view_state(state, settings, thread_id=thread_id)
    assert view.compact_if_due() is None  # nothing new to compact: the checkpoint holds it all
    assert view.update() is None
    return view.memory


def _write_sessions(saver: BaseCheckpointSaver[Any], uri: str, *, tag: str = "") -> Written:
    written = Written(uri)
    # StateGraph + LangctxNode: the system prompt lives in state
    script = session_script(30, seed=41)
    model = ScriptedChatModel(responses=script.responses)
    node = LangctxNode(max_tokens=BUDGET, **SHOWCASE)
    graph = node_agent(model, session_tools(script.outputs), node, saver)
    drive(lambda x: graph.invoke(x, _cfg(tag + NODE)), model, first_input(with_system=True))
    written.states[NODE] = graph.get_state(_cfg(tag + NODE)).values
    written.memories[NODE] = _synced(node.settings, written.states[NODE], tag + NODE)
    # create_agent + LangctxMiddleware: the system prompt is outside state
    script = session_script(20, seed=42)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(max_tokens=BUDGET, **SHOWCASE)
    agent = middleware_agent(model, session_tools(script.outputs), middleware, saver)
    drive(lambda x: agent.invoke(x, _cfg(tag + MIDDLEWARE)), model, first_input(with_system=False))
    written.states[MIDDLEWARE] = agent.get_state(_cfg(tag + MIDDLEWARE)).values
    written.memories[MIDDLEWARE] = _synced(
        middleware.settings, written.states[MIDDLEWARE], tag + MIDDLEWARE
    )
    # a graph without langctx
    builder = StateGraph(_PlainState)
    builder.add_node("echo", lambda s: {"messages": [AIMessage("Hello!", id="hello")]})
    builder.add_edge(START, "echo")
    builder.compile(checkpointer=saver).invoke(
        _PlainState(messages=[HumanMessage("Hi there", id="hi")]), _cfg(tag + PLAIN)
    )
    # a channel written by an unknown (future) langctx version
    old = StateGraph(_OldState)
    old.add_node("noop", lambda s: {})
    old.add_edge(START, "noop")
    old.compile(checkpointer=saver).invoke(
        _OldState(messages=[HumanMessage("Hi", id="h")], langctx={"v": 99, "compactions": []}),
        _cfg(tag + BROKEN),
    )
    for name in (NODE, MIDDLEWARE, PLAIN, BROKEN):
        cfg: RunnableConfig = {"configurable": {"thread_id": tag + name}}
        written.checkpoints[name] = [
            str(t.config["configurable"]["checkpoint_id"]) for t in saver.list(cfg)
        ]
    return written


@pytest.fixture(scope="module")
def sqlite_db(tmp_path_factory: pytest.TempPathFactory) -> Written:
    path = tmp_path_factory.mktemp("inspect") / "checkpoints.sqlite"
    with open_checkpointer(str(path)) as saver:
        return _write_sessions(saver, str(path))


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["inspect", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = _run(capsys, *args, "--json")
    assert code == 0, err
    data: dict[str, Any] = json.loads(out)
    return data


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# ---------------------------------------------------------------------- listing threads


def test_lists_threads_with_checkpoint_counts(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, "--db", sqlite_db.uri)
    counts = {t["thread_id"]: t["checkpoints"] for t in data["threads"]}
    assert counts == {name: len(ids) for name, ids in sqlite_db.checkpoints.items()}
    assert data["total"] == 4 and data["source"] == {"kind": "sqlite", "location": sqlite_db.uri}
    latest = {t["thread_id"]: t["latest_checkpoint_id"] for t in data["threads"]}
    assert latest[NODE] == sqlite_db.checkpoints[NODE][0]
    assert all(t["updated_at"].startswith("20") for t in data["threads"])

    code, out, _ = _run(capsys, "--db", sqlite_db.uri, "--plain")
    assert code == 0
    assert "4 threads" in out and NODE in out and MIDDLEWARE in out
    assert f"langctx inspect --db {sqlite_db.uri} --thread ID" in out

    limited = _json(capsys, "--db", sqlite_db.uri, "--limit", "1")
    assert len(limited["threads"]) == 1 and limited["omitted"] == 3


def test_lists_threads_with_rich(sqlite_db: Written, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--db", sqlite_db.uri)
    assert code == 0
    assert "thread id" in out and "checkpoints" in out and PLAIN in out


# ---------------------------------------------------------------------- one thread


def test_node_thread_json_matches_the_checkpoint_and_the_live_memory(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, "--db", sqlite_db.uri, "--thread", NODE, "--budget", str(BUDGET))
    state, live = sqlite_db.states[NODE], sqlite_db.memories[NODE]
    channel = state["langctx"]
    assert data["v"] == 1 and data["thread_id"] == NODE
    cp = data["checkpoint"]
    assert cp["id"] == sqlite_db.checkpoints[NODE][0] and cp["latest"] is True
    assert cp["checkpoints_in_thread"] == len(sqlite_db.checkpoints[NODE])

    f = data["figures"]
    assert f["messages_in_state"] == len(state["messages"])
    assert f["context_tokens"] == live.context_tokens()
    assert f["budget"] == BUDGET and 0 < f["budget_used"] <= 1
    assert f["full_history_tokens"] > f["context_tokens"]
    every = _every_entry(state)
    assert f["compactions"] == sum(1 for e in every if e["trigger"] != "merge")
    assert f["merges"] >= 1 and f["placeholders"] >= 1

    layers = data["layers"]
    assert [p["id"] for p in layers["pinned"]] == ["system", "task"]
    assert all(p["layer"] == "pinned" for p in layers["pinned"])
    assert [s["id"] for s in layers["summaries"]] == [e["id"] for e in live.summaries]
    assert [s["text"] for s in layers["summaries"]] == [e["summary"] for e in live.summaries]
    levels = [s["level"] for s in layers["summaries"]]
    assert levels == sorted(levels, reverse=True) and max(levels) >= 2
    assert layers["recent"]["first_kept_id"] == live.first_kept_id
    assert layers["recent"]["messages"] >= 1 and layers["recent"]["tokens"] > 0
    assert "Files modified so far" in layers["facts"]

    timeline = data["timeline"]
    every_edit = thread_entries(read_batches(None, None, state), channel)[1]
    assert [e["id"] for e in timeline] == [e["id"] for e in every]
    for row, entry in zip(timeline, every, strict=True):
        assert row["trigger"] == entry["trigger"] and row["level"] == entry["level"]
        assert row["quality"] == entry["quality"]
        assert (row["tokens_before"], row["tokens_after"]) == (
            entry["tokens_before"],
            entry["tokens_after"],
        )
        assert row["messages_covered"] == covered_count(entry)
        assert row["read_files"] == entry["read_files"]
        assert row["modified_files"] == entry["modified_files"]
        assert row["created_at"] == entry["created_at"]
    assert any(r["read_files"] for r in timeline) and any(r["modified_files"] for r in timeline)

    assert [e["id"] for e in data["edits"]] == [e["id"] for e in every_edit]
    assert {e["reason"] for e in data["edits"]} <= {"placeholder", "truncate"}
    actions = [r["action"] for r in data["eviction_log"]]
    assert len(actions) == len(timeline) + len(data["edits"])
    assert {"compact", "merge", "placeholder"} <= set(actions)
    assert "omitted" not in data  # --json lists everything unless --limit is given


def test_text_layout_shows_every_section(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    live = sqlite_db.memories[NODE]
    code, out, err = _run(
        capsys, "--db", sqlite_db.uri, "--thread", NODE, "--plain", "--limit", "3"
    )
    assert code == 0 and err == ""
    for heading in (
        f"langctx inspect: thread '{NODE}'",
        "figures",
        "pinned (system messages and the task, verbatim)",
        "summaries (highest level first",
        "facts ledger",
        "recent (verbatim)",
        "compaction timeline (oldest first)",
        "eviction log",
    ):
        assert heading in out, heading
    assert f"first kept id '{live.first_kept_id}'" in out
    assert live.summaries[0]["summary"].splitlines()[0] in out
    assert "earlier rows not shown (--limit 0 shows all)" in out
    assert "budget unknown" in out and "--budget" in out  # the note says how to give it

    code, out, _ = _run(capsys, "--db", sqlite_db.uri, "--thread", NODE, "--limit", "0")
    assert code == 0
    for heading in ("summaries", "recent (verbatim)", "compaction timeline", "eviction log"):
        assert heading in out
    assert "level 1" in out and "not shown" not in out


def test_limit_trims_the_json_lists(sqlite_db: Written, capsys: pytest.CaptureFixture[str]) -> None:
    full = _json(capsys, "--db", sqlite_db.uri, "--thread", NODE)
    data = _json(capsys, "--db", sqlite_db.uri, "--thread", NODE, "--limit", "2")
    assert [e["id"] for e in data["timeline"]] == [e["id"] for e in full["timeline"][-2:]]
    assert data["omitted"]["timeline"] == len(full["timeline"]) - 2
    assert len(data["eviction_log"]) == 2


def test_an_older_checkpoint(sqlite_db: Written, capsys: pytest.CaptureFixture[str]) -> None:
    ids = sqlite_db.checkpoints[NODE]
    older = ids[len(ids) // 2]
    data = _json(capsys, "--db", sqlite_db.uri, "--thread", NODE, "--checkpoint", older)
    latest = _json(capsys, "--db", sqlite_db.uri, "--thread", NODE)
    assert data["checkpoint"]["id"] == older and data["checkpoint"]["latest"] is False
    assert data["figures"]["messages_in_state"] < latest["figures"]["messages_in_state"]
    assert len(data["timeline"]) < len(latest["timeline"])


def test_middleware_thread_pins_the_task_only(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, "--db", sqlite_db.uri, "--thread", MIDDLEWARE, "--budget", "4k")
    live = sqlite_db.memories[MIDDLEWARE]
    assert [p["id"] for p in data["layers"]["pinned"]] == ["task"]  # the prompt is not in state
    assert data["figures"]["context_tokens"] == live.context_tokens()
    assert data["layers"]["recent"]["first_kept_id"] == live.first_kept_id
    assert data["figures"]["compactions"] >= 1


def test_archive_mode_message_counts_say_what_they_count(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    """The middleware's default archives folded messages into the state: the counts add up."""
    state = sqlite_db.states[MIDDLEWARE]
    archived = state["langctx"]["archive"]["messages"]
    assert archived > 0  # the default archive ran: the window in 'messages' is the tail
    f = _json(capsys, "--db", sqlite_db.uri, "--thread", MIDDLEWARE)["figures"]
    assert f["messages_in_state"] == len(state["messages"])
    assert f["control_messages"] == 0 and f["messages_archived"] == archived
    assert f["messages_logged"] == len(full_log(state))
    assert f["messages_in_state"] + f["messages_archived"] == f["messages_logged"]
    code, out, _ = _run(capsys, "--db", sqlite_db.uri, "--thread", MIDDLEWARE, "--plain")
    line = next(x for x in out.splitlines() if x.strip().startswith("messages "))
    assert code == 0 and not re.search(r"-\d", line), line
    assert f"{len(state['messages'])} in state, {archived} archived, " in line
    assert f"{f['messages_logged']} in the full history; " in line


def test_thread_without_langctx_channel(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _json(capsys, "--db", sqlite_db.uri, "--thread", PLAIN)
    assert data["figures"]["messages_in_state"] == 2 and data["timeline"] == []
    assert data["layers"]["summaries"] == [] and data["layers"]["recent"]["messages"] == 2
    assert any("no 'langctx' channel" in n for n in data["notes"])
    code, out, _ = _run(capsys, "--db", sqlite_db.uri, "--thread", PLAIN, "--plain")
    assert code == 0 and "(no compactions)" in out and "(none: nothing was compacted)" in out


def test_archive_mode_thread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Folded messages left the state for a store: the layers are still what the model saw."""
    script = session_script(20, seed=43)
    model = ScriptedChatModel(responses=script.responses)
    middleware = LangctxMiddleware(max_tokens=BUDGET, archive=InMemoryStore())
    path = tmp_path / "archive.sqlite"
    with open_checkpointer(str(path)) as saver:
        agent = middleware_agent(model, session_tools(script.outputs), middleware, saver)
        drive(lambda x: agent.invoke(x, _cfg("archived")), model, first_input(with_system=False))
        state = agent.get_state(_cfg("archived")).values
    assert state["langctx"]["archive"]["messages"] > 0
    data = _json(capsys, "--db", str(path), "--thread", "archived")
    assert data["figures"]["messages_in_state"] == len(state["messages"])
    assert any(n.startswith("archive mode:") for n in data["notes"])
    assert data["figures"]["messages_archived"] == state["langctx"]["archive"]["messages"]
    assert data["figures"]["archive_read"] is False  # the store was not passed
    assert not any("no longer in 'messages'" in n for n in data["notes"])
    last_call = model.calls[-1][1:]  # what the model saw last, without create_agent's prompt
    block = next(m for m in last_call if str(m.id).startswith("langctx-summary-"))
    assert [s["id"] for s in data["layers"]["summaries"]] == re.findall(
        r'<langctx:summary level="\d" covers="\d+ messages" id="([\w-]+)">', str(block.content)
    )
    assert data["layers"]["recent"]["first_kept_id"] in [str(m.id) for m in last_call]
    assert [p["id"] for p in data["layers"]["pinned"]] == ["task"]


# ---------------------------------------------------------------------- bad input, SQLite


def test_unknown_thread_lists_existing_ones(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = _run(capsys, "--db", sqlite_db.uri, "--thread", "no-such-thread")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("langctx: error: no thread 'no-such-thread'")
    for name in (NODE, MIDDLEWARE, PLAIN):
        assert repr(name) in err
    assert "Run without --thread to list them." in err


def test_unknown_checkpoint_lists_recent_ones(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "--db", sqlite_db.uri, "--thread", NODE, "--checkpoint", "nope")
    assert code == 2 and "has no checkpoint 'nope'" in err
    assert repr(sqlite_db.checkpoints[NODE][0]) in err and "Omit --checkpoint" in err


def test_unknown_channel_version_is_a_clear_error(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "--db", sqlite_db.uri, "--thread", BROKEN)
    assert code == 2 and err.count("\n") == 1
    assert "version 99" in err and "Upgrade langctx" in err


def test_missing_file_is_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "missing.sqlite"
    code, _, err = _run(capsys, "--db", str(path), "--thread", NODE)
    assert code == 2 and f"no such file: '{path}'" in err and "never creates" in err
    assert not path.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kind", ["text", "empty", "other-app", "directory"])
def test_not_a_checkpoint_database_is_left_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "data.db"
    if kind == "text":
        path.write_text("id,name\n1,parser\n", encoding="utf-8")
    elif kind == "empty":
        path.write_bytes(b"")
    elif kind == "other-app":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.close()
    else:
        path.mkdir()
    before = None if kind == "directory" else _digest(path)
    for args in (["--db", str(path)], ["--db", str(path), "--thread", "t1"]):
        code, out, err = _run(capsys, *args)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert "not a" in err and str(path) in err
    if kind == "directory":
        assert list(path.iterdir()) == []
        return
    assert _digest(path) == before  # no table, no journal mode change, nothing
    if kind != "text":
        conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        conn.close()
        assert tables == ([] if kind == "empty" else ["users"])


def test_reading_leaves_the_database_file_unchanged(
    sqlite_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    path = Path(sqlite_db.uri)
    before = _digest(path)
    _json(capsys, "--db", sqlite_db.uri, "--thread", NODE)
    _json(capsys, "--db", sqlite_db.uri)
    assert _digest(path) == before


def test_option_errors(sqlite_db: Written, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "--db", sqlite_db.uri, "--checkpoint", "x")
    assert code == 2 and "--checkpoint needs --thread" in err
    code, _, err = _run(capsys, "--postgres", sqlite_db.uri)
    assert code == 2 and "expects a postgresql:// connection string" in err
    with pytest.raises(SystemExit) as info:
        main(["inspect", "--db", sqlite_db.uri, "--limit", "-1"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["inspect", "--db", sqlite_db.uri, "--postgres", PG_URI])
    assert info.value.code == 2
    capsys.readouterr()


# ---------------------------------------------------------------------- PostgreSQL


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_postgres_names_the_uri(capsys: pytest.CaptureFixture[str]) -> None:
    port = _closed_port()
    code, out, err = _run(capsys, "--postgres", f"postgresql://agent:s3cret@127.0.0.1:{port}/app")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert f"postgresql://agent:***@127.0.0.1:{port}/app" in err and "s3cret" not in err
    assert "Check that the server is running" in err


def _schema_uri(schema: str) -> str:
    sep = "&" if "?" in PG_URI else "?"
    return f"{PG_URI}{sep}options=-csearch_path%3D{schema}"


@pytest.fixture(scope="module")
def pg_db() -> Iterator[Written]:
    """Sessions written to a PostgreSQL schema of their own (dropped afterwards)."""
    require_postgres()
    schema = f"langctx_inspect_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_URI, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        uri = _schema_uri(schema)
        with open_checkpointer(uri) as saver:  # setup=True: the tables go into the schema
            written = _write_sessions(saver, uri)
        yield written
    finally:
        with psycopg.connect(PG_URI, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.mark.postgres
def test_postgres_thread_and_listing(pg_db: Written, capsys: pytest.CaptureFixture[str]) -> None:
    listing = _json(capsys, "--postgres", pg_db.uri)
    assert listing["source"]["kind"] == "postgres"
    assert {t["thread_id"]: t["checkpoints"] for t in listing["threads"]} == {
        name: len(ids) for name, ids in pg_db.checkpoints.items()
    }
    data = _json(capsys, "--postgres", pg_db.uri, "--thread", NODE, "--budget", str(BUDGET))
    live = pg_db.memories[NODE]
    assert data["checkpoint"]["id"] == pg_db.checkpoints[NODE][0]
    assert data["figures"]["context_tokens"] == live.context_tokens()
    every = _every_entry(pg_db.states[NODE])
    assert [e["id"] for e in data["timeline"]] == [e["id"] for e in every]
    assert [s["id"] for s in data["layers"]["summaries"]] == [e["id"] for e in live.summaries]
    code, out, _ = _run(capsys, "--postgres", pg_db.uri, "--thread", NODE, "--plain")
    assert code == 0 and "compaction timeline" in out


@pytest.mark.postgres
def test_postgres_bad_thread_and_empty_database(
    pg_db: Written, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = _run(capsys, "--postgres", pg_db.uri, "--thread", "nope")
    assert code == 2 and "no thread 'nope'" in err and repr(NODE) in err
    schema = f"langctx_empty_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG_URI, autocommit=True) as admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        code, out, err = _run(capsys, "--postgres", _schema_uri(schema), "--thread", "t1")
        assert code == 2 and out == "" and "is not a LangGraph checkpoint database" in err
        with psycopg.connect(PG_URI, autocommit=True) as admin:
            row = admin.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchone()
        assert row is not None and row[0] == 0  # nothing was set up
    finally:
        with psycopg.connect(PG_URI, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


def _every_entry(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The thread's compaction entries, those its archive took out of the channel included."""
    return thread_entries(read_batches(None, None, state), state.get("langctx"))[0]
