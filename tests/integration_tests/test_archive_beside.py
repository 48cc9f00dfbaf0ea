"""``langctx.create_agent`` given a checkpointer and no store keeps the folded log in a store in
the checkpointer's own database (issue 43, item 2): the state's archive stays empty, each batch is
written once, the model sees what it saw with the in-state archive, and a thread written with the
in-state archive continues with nothing lost."""

from __future__ import annotations

import re
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


def _model(start: int, turns: int) -> ScriptedChatModel:
    calls = [ai_tool_call("read_file", {"path": f"src/m{k}.py"}) for k in range(start, turns)]
    return ScriptedChatModel(responses=[*calls, f"Done {turns}."])


_IDS = re.compile(r"[0-9a-f]{8}-[0-9a-f-]{27}|cmp-[0-9a-f]{12}")


def _texts(seen: list[list[BaseMessage]]) -> list[list[str]]:
    """The requests' texts, random message ids (and the entry ids made from them) numbered."""
    names: dict[str, str] = {}

    def name(m: re.Match[str]) -> str:
        return names.setdefault(m.group(), f"<id{len(names)}>")

    return [[_IDS.sub(name, f"{m.type}:{m.text}") for m in request] for request in seen]


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
            model = _model(start, stop)
            agent = create_agent(
                model,
                [read_file],
                memory=LangctxMiddleware(max_tokens=3000, archive=archive),
                checkpointer=saver,
            )
            state = agent.invoke({"messages": [("user", f"Fix the parser, part {run}.")]}, cfg)
            seen += model.calls
            log = [m.text for m in full_log(agent.store, "t", state)]
    return _texts(seen), log, state


def test_the_store_beside_the_checkpoints_sends_what_the_state_archive_sent(tmp_path: Path) -> None:
    beside, beside_log, state = _runs(tmp_path / "auto.sqlite", ("auto", "auto"))
    in_state, state_log, _ = _runs(tmp_path / "state.sqlite", ("state", "state"))
    assert len(beside) == TURNS + 2 and beside == in_state  # every model call, the same request
    assert any("<langctx:summary" in m for request in beside for m in request)  # it folded
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
    assert len(moved) == TURNS + 2 and moved == stayed  # the model sees the same requests
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
        model = _model(0, TURNS)
        agent = create_agent(
            model,
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
    in_state = _model(0, TURNS)
    create_agent(
        in_state,
        [read_file],
        memory=LangctxMiddleware(max_tokens=3000, archive="state"),
        checkpointer=InMemorySaver(),
    ).invoke({"messages": [("user", "Fix the parser, part 0.")]}, cfg)
    assert len(model.calls) == TURNS + 1 and _texts(model.calls) == _texts(in_state.calls)


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


@pytest.mark.slow
def test_model_summaries_reach_the_model_across_processes_as_with_the_state_archive(
    tmp_path: Path,
) -> None:
    """A fold's background summary that its process did not finish is made in the next process
    from the folded messages, which the store holds (a step reads them when the state does not)."""
    import json
    import subprocess
    import sys

    requests: dict[str, list[list[str]]] = {}
    for archive in ("auto", "state"):
        requests[archive] = []
        for part in range(3):  # each run in a new process
            out = tmp_path / f"{archive}-{part}.jsonl"
            args = [str(tmp_path / f"{archive}.sqlite"), archive, str(part), str(out)]
            subprocess.run(
                [sys.executable, "-m", "tests.integration_tests._beside_worker", *args],
                check=True,
                cwd=Path(__file__).resolve().parents[2],
                timeout=120,
            )
            requests[archive] += [json.loads(line) for line in out.read_text().splitlines()]
    names: dict[str, str] = {}
    numbered = {
        k: [[_IDS.sub(lambda m: names.setdefault(m.group(), "<id>"), t) for t in r] for r in v]
        for k, v in requests.items()
    }
    assert len(numbered["auto"]) == 45 and numbered["auto"] == numbered["state"]
    later = numbered["auto"][15:]  # the second and third runs, each in a new process
    assert any("MODEL SUMMARY 0." in t for r in later for t in r)  # the first run's summaries
    assert any("MODEL SUMMARY 1." in t for r in later for t in r)
