"""``langctx.create_agent`` given a checkpointer and no store keeps the folded log in a store in
the checkpointer's own database (issue 43, item 2): the state's archive stays empty, each batch is
written once, the model sees what it saw with the in-state archive, and a thread written with the
in-state archive continues with nothing lost."""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path
from typing import Any, Literal

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langctx import LangctxMiddleware, create_agent, full_log
from langctx.stores.archive import archive_namespace
from langctx.stores.beside import store_beside
from langctx.testing import ScriptedChatModel, ai_tool_call

TURNS = 24


def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(60))


def _model(seen: list[list[BaseMessage]], start: int, turns: int) -> ScriptedChatModel:
    calls = [ai_tool_call("read_file", {"path": f"src/m{k}.py"}) for k in range(start, turns)]
    return ScriptedChatModel(responses=[*calls, f"Done {turns}."], on_request=seen.append)


def _texts(seen: list[list[BaseMessage]]) -> list[list[str]]:
    return [[f"{m.type}:{m.text}" for m in request] for request in seen]


def _runs(
    db: Path, archives: tuple[Literal["state", "auto"], Literal["state", "auto"]]
) -> tuple[list[list[str]], list[str], Any]:
    """Two runs of one thread on a SqliteSaver file, the memory's archive= per run; the model's
    requests, the whole log and the last state."""
    seen: list[list[BaseMessage]] = []
    cfg = {"configurable": {"thread_id": "t"}}
    log: list[str] = []
    state: Any = None
    for run, (archive, (start, stop)) in enumerate(
        zip(archives, ((0, 12), (12, TURNS)), strict=True)
    ):
        with SqliteSaver.from_conn_string(str(db)) as saver:
            agent = create_agent(
                _model(seen, start, stop),
                [read_file],
                memory=LangctxMiddleware(max_tokens=3000, archive=archive),
                checkpointer=saver,
            )
            state = agent.invoke({"messages": [("user", f"Fix the parser, part {run}.")]}, cfg)
            log = [m.text for m in full_log(agent.store, "t", state)]
    return _texts(seen), log, state


def test_the_store_beside_the_checkpoints_sends_what_the_state_archive_sent(tmp_path: Path) -> None:
    beside, beside_log, state = _runs(tmp_path / "auto.sqlite", ("auto", "auto"))
    in_state, state_log, _ = _runs(tmp_path / "state.sqlite", ("state", "state"))
    assert beside == in_state
    assert beside_log == state_log and len(beside_log) == 2 * (2 + TURNS)
    assert not state.get("langctx_archive")  # nothing archived in the state
    con = sqlite3.connect(tmp_path / "auto.sqlite")  # one file: checkpoints and the folded log
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"checkpoints", "writes", "store"} <= tables
    batches = con.execute("SELECT count(*) FROM store WHERE prefix LIKE 'langctx.archive.%'")
    assert batches.fetchone()[0] == state["langctx"]["archive"]["batches"] > 0


def test_a_thread_archived_in_the_state_continues_beside_with_nothing_lost(tmp_path: Path) -> None:
    moved, moved_log, state = _runs(tmp_path / "moved.sqlite", ("state", "auto"))
    stayed, stayed_log, _ = _runs(tmp_path / "stayed.sqlite", ("state", "state"))
    assert moved == stayed  # the model sees the same requests
    assert moved_log == stayed_log  # the whole log: batches in the state, then in the store
    assert state["langctx_archive"]  # the first run's batches stay where they were written


def test_which_checkpointers_get_a_store() -> None:
    assert isinstance(store_beside(InMemorySaver()), InMemoryStore)
    with SqliteSaver.from_conn_string(":memory:") as saver:
        assert store_beside(saver) is None  # no file to share: the folded log stays in the state
    assert store_beside(object()) is None and store_beside(None) is None


def test_a_store_of_your_own_wins(tmp_path: Path) -> None:
    store = InMemoryStore()
    with SqliteSaver.from_conn_string(str(tmp_path / "db.sqlite")) as saver:
        agent = create_agent(ScriptedChatModel(responses=["Hi."]), checkpointer=saver, store=store)
        assert agent.store is store
        agent = create_agent(
            ScriptedChatModel(responses=["Hi."]),
            checkpointer=saver,
            memory=LangctxMiddleware(archive="state"),  # as it was: no store made
        )
        assert agent.store is None
        agent = create_agent(ScriptedChatModel(responses=["Hi."]), checkpointer=saver)
        assert isinstance(agent.store, SqliteStore)


@pytest.mark.parametrize("archive", ["stat", 3])
def test_a_bad_archive_option_is_one_line(archive: Any) -> None:
    from langctx.errors import ConfigError

    with pytest.raises(ConfigError, match='archive= takes "auto", "state"'):
        LangctxMiddleware(archive=archive)


@pytest.mark.postgres
def test_postgres_keeps_the_folded_log_beside_its_checkpoints() -> None:
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    from tests.integration_tests._agents import require_postgres

    thread = f"beside-{uuid.uuid4().hex}"
    cfg = {"configurable": {"thread_id": thread}}
    with Connection.connect(
        require_postgres(), autocommit=True, prepare_threshold=0, row_factory=dict_row
    ) as conn:
        saver = PostgresSaver(conn)
        saver.setup()
        seen: list[list[BaseMessage]] = []
        agent = create_agent(
            _model(seen, 0, TURNS),
            [read_file],
            memory=LangctxMiddleware(max_tokens=3000),
            checkpointer=saver,
        )
        state = agent.invoke({"messages": [("user", "Fix the parser, part 0.")]}, cfg)
        assert type(agent.store).__name__ == "PostgresStore"
        assert not state.get("langctx_archive")
        log = full_log(agent.store, thread, state)
        rows = conn.execute(
            "SELECT count(*) AS n FROM store WHERE prefix = %s",
            (".".join(archive_namespace(thread)),),
        ).fetchone()
    assert len(log) == 2 + 2 * TURNS
    assert rows is not None and rows["n"] == state["langctx"]["archive"]["batches"] > 0
    in_state: list[list[BaseMessage]] = []
    create_agent(
        _model(in_state, 0, TURNS),
        [read_file],
        memory=LangctxMiddleware(max_tokens=3000, archive="state"),
        checkpointer=InMemorySaver(),
    ).invoke({"messages": [("user", "Fix the parser, part 0.")]}, cfg)
    assert _texts(seen) == _texts(in_state)


def test_inspect_reads_the_window_and_the_store_in_the_checkpoint_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from langctx.cli.main import main

    db = tmp_path / "auto.sqlite"
    _, log, _ = _runs(db, ("auto", "auto"))
    capsys.readouterr()
    assert main(["inspect", "--db", str(db), "--thread", "t", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["figures"]
    assert figures["archive_read"] is True
    assert figures["messages_logged"] == len(log) == 2 * (2 + TURNS)
    assert figures["messages_in_state"] + figures["messages_archived"] == len(log)
    assert figures["messages_in_state"] > 0  # the delta `messages` rebuilt from its writes
