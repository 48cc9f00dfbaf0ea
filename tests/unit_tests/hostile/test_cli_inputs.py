"""Hostile files for the command line (issue 41, items 6 and 8): ``langctx inspect``, ``langctx
replay`` and ``langctx demo --db`` given random bytes, a truncated or bit-flipped checkpoint
database, a SQLite file of another schema, a checkpoint blob of any msgpack value, and session
files of any JSON lines. Run in process through the CLI's ``main``, as a shell would.

The property: exit 0, or exit 2 with one line on stderr; never a traceback."""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langctx.cli.main import main
from tests.unit_tests.hostile._hostile import HUGE_REPR, JSONISH

pytestmark = pytest.mark.filterwarnings(HUGE_REPR)

_CLI = settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = int(exc.code or 0)
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    assert code == 0 or (code == 2 and len(err.strip().splitlines()) == 1), (code, err)
    if currently_in_test_context():
        event(f"exit {code}")
    return code, err


@functools.cache
def _checkpoint_db_bytes() -> bytes:
    """A real SqliteSaver database of one thread "t1", as bytes."""
    import tempfile

    graph = StateGraph(MessagesState)
    graph.add_node("n", lambda s: {"messages": [AIMessage("ok")]})
    graph.add_edge(START, "n")
    graph.add_edge("n", END)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.sqlite"
        with SqliteSaver.from_conn_string(str(path)) as saver:
            app = graph.compile(checkpointer=saver)
            for turn in range(3):
                app.invoke(
                    {"messages": [("user", f"hi {turn}")]}, {"configurable": {"thread_id": "t1"}}
                )
        return path.read_bytes()


@pytest.fixture(autouse=True, scope="module")
def _real_database_built_before_any_example() -> None:
    """Built outside the strategies (building a graph draws from ``random``)."""
    _checkpoint_db_bytes()


@st.composite
def _database_file(draw: st.DrawFn) -> bytes:
    """Random bytes, a real checkpoint database truncated or with bytes flipped, or a header."""
    real = _checkpoint_db_bytes()
    kind = draw(st.sampled_from(["random", "truncated", "flipped", "header"]))
    if kind == "random":
        return draw(st.binary(max_size=600))
    if kind == "header":
        return b"SQLite format 3\x00" + draw(st.binary(max_size=600))
    if kind == "truncated":
        return real[: draw(st.integers(1, len(real) - 1))]
    flipped = bytearray(real)
    for _ in range(draw(st.integers(1, 8))):
        at = draw(st.integers(0, len(real) - 1))
        flipped[at] = draw(st.integers(0, 255))
    return bytes(flipped)


@_CLI
@given(content=_database_file(), thread=st.booleans())
def test_inspect_on_any_file_is_a_report_or_one_line(
    content: bytes,
    thread: bool,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path_factory.mktemp("db") / "c.sqlite"
    path.write_bytes(content)
    _run(["inspect", "--db", str(path), *(["--thread", "t1"] if thread else [])], capsys)


@pytest.mark.slow  # half the files are databases the demo runs on (about 1 s each)
@settings(_CLI, deadline=30_000)  # a whole demo session per example, not one call
@given(content=_database_file())
def test_demo_on_any_existing_file_is_one_line_and_leaves_it_alone(
    content: bytes, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path_factory.mktemp("db") / "x.db"
    path.write_bytes(content)
    code, _ = _run(["demo", "--db", str(path), "--turns", "1"], capsys)
    if code == 2:
        assert path.read_bytes() == content  # a refused file is not touched


_OTHER_SCHEMAS = [
    "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)",
    "CREATE TABLE checkpoints (thread_id TEXT)",
    "CREATE TABLE checkpoints (thread_id TEXT, checkpoint_ns TEXT, checkpoint_id TEXT, "
    "parent_checkpoint_id TEXT, type TEXT, checkpoint BLOB, metadata BLOB)",
    "CREATE TABLE checkpoints (thread_id INTEGER, checkpoint_ns BLOB, checkpoint_id REAL, "
    "parent_checkpoint_id TEXT, type TEXT, checkpoint TEXT, metadata TEXT); "
    "CREATE TABLE writes (x TEXT)",
    "CREATE VIEW checkpoints AS SELECT 1 AS thread_id",
]


@_CLI
@given(
    schema=st.sampled_from(_OTHER_SCHEMAS),
    rows=st.lists(
        st.tuples(
            *[
                st.one_of(
                    st.none(),
                    st.integers(-(2**63), 2**63 - 1),
                    st.text(max_size=5),
                    st.binary(max_size=8),
                )
            ]
            * 7
        ),
        max_size=3,
    ),
    command=st.sampled_from(["inspect", "inspect-thread", "demo"]),
)
def test_a_sqlite_file_of_another_schema_is_one_line(
    schema: str,
    rows: list[tuple[Any, ...]],
    command: str,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path_factory.mktemp("db") / "other.sqlite"
    with sqlite3.connect(path) as con:
        con.executescript(schema)
        columns = [r[1] for r in con.execute("PRAGMA table_info(checkpoints)")]
        if len(columns) == 7 and "VIEW" not in schema:
            con.executemany("INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    con.close()
    if command == "demo":
        argv = ["demo", "--db", str(path), "--turns", "1"]
    else:
        argv = [
            "inspect",
            "--db",
            str(path),
            *(["--thread", "1"] if command == "inspect-thread" else []),
        ]
    _run(argv, capsys)


@_CLI
@given(blob=JSONISH, kind=st.sampled_from(["msgpack", "json", "pickle", "", None]))
def test_inspect_on_any_checkpoint_blob_is_a_report_or_one_line(
    blob: Any,
    kind: str | None,
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path_factory.mktemp("db") / "c.sqlite"
    path.write_bytes(_checkpoint_db_bytes())
    try:
        packed = ormsgpack.packb(blob)
    except (TypeError, ormsgpack.MsgpackEncodeError):  # ints over 64 bits, lone surrogates
        packed = repr(blob).encode("utf-8", "surrogatepass")
    with sqlite3.connect(path) as con:
        con.execute("UPDATE checkpoints SET checkpoint = ?, type = ?", (packed, kind))
    con.close()
    _run(["inspect", "--db", str(path), "--thread", "t1", "--json"], capsys)


@_CLI
@given(lines=st.lists(st.one_of(JSONISH.map(json.dumps), st.text(max_size=30)), max_size=6))
def test_replay_on_any_session_file_is_a_report_or_one_line(
    lines: list[str], tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path_factory.mktemp("s") / "run.messages.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    _run(["replay", str(path), "--budget", "2000"], capsys)


# ---------------------------------------------------------------- what the properties found


def _with_table_name_not_utf8(path: Path) -> None:
    """A SQLite file whose table name (in its schema) is bytes that are not UTF-8 (the database
    is otherwise sound: the bytes of the same length are replaced in place)."""
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t_ZZ (x TEXT)")
    con.close()
    path.write_bytes(path.read_bytes().replace(b"t_ZZ", b"t_\x80\x80"))


def test_inspect_on_a_schema_that_is_not_utf8_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A flipped byte in the schema ended ``inspect`` in a UnicodeDecodeError traceback."""
    path = tmp_path / "c.sqlite"
    _with_table_name_not_utf8(path)
    code, err = _run(["inspect", "--db", str(path)], capsys)
    assert code == 2 and "is not a SQLite database" in err


def test_inspect_on_a_checkpoint_of_an_unknown_serializer_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A checkpoint row whose type is one LangGraph cannot decode ("pickle" without pickle
    fallback) ended in ``NotImplementedError: Unknown serialization type``."""
    path = tmp_path / "c.sqlite"
    path.write_bytes(_checkpoint_db_bytes())
    with sqlite3.connect(path) as con:
        con.execute("UPDATE checkpoints SET type = 'pickle'")
    con.close()
    code, err = _run(["inspect", "--db", str(path), "--thread", "t1"], capsys)
    assert code == 2 and "cannot be decoded" in err


@pytest.mark.parametrize(
    "schema",
    ["CREATE TABLE checkpoints (thread_id TEXT)", "CREATE TABLE notes (body TEXT)"],
    ids=["checkpoints-without-columns", "another-table"],
)
def test_demo_on_a_sqlite_file_of_another_schema_is_one_line(
    schema: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``demo --db`` on a SQLite file that is no checkpoint database ran the demo into
    ``sqlite3.OperationalError: no such column: checkpoint_id`` (a 30-line traceback)."""
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as con:
        con.execute(schema)
    con.close()
    before = path.read_bytes()
    code, err = _run(["demo", "--db", str(path), "--turns", "1"], capsys)
    assert code == 2 and "not a LangGraph checkpoint database" in err
    assert path.read_bytes() == before


def test_demo_on_a_damaged_sqlite_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A schema that is not UTF-8 ended ``demo --db`` in a UnicodeDecodeError traceback."""
    path = tmp_path / "x.db"
    _with_table_name_not_utf8(path)
    code, err = _run(["demo", "--db", str(path), "--turns", "1"], capsys)
    assert code == 2 and "is not a SQLite database" in err


def test_a_checkpoint_whose_messages_hold_none_is_one_line() -> None:
    """Found by the property above: langchain-core's coercion error adds a troubleshooting line,
    which the report quoted (two lines)."""
    from langctx.cli.inspect.report import build_report
    from langctx.errors import InvalidMessageError

    with pytest.raises(InvalidMessageError, match="not a chat message: Unsupported") as info:
        build_report({"messages": [None]})
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("how", ["format", "permissions", "folder"])
def test_demo_on_a_database_it_cannot_write_is_one_line(
    how: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Found by the property above: a SQLite file whose header marks it read-only (write version
    3) escaped as ``sqlite3.OperationalError: attempt to write a readonly database``; a file
    without write permission and a new path in a folder that cannot be written are the same
    cause. Each is one line, exit 2, the file untouched."""
    path = tmp_path / "ro" / "x.db"
    path.parent.mkdir()
    with closing(sqlite3.connect(path)) as con:
        con.execute("PRAGMA user_version = 1")  # an empty database (the demo fills it)
        con.commit()
    if how == "format":
        data = bytearray(path.read_bytes())
        data[18] = 3  # the file format's write version: newer than any SQLite writes
        path.write_bytes(bytes(data))
    elif how == "permissions":
        path.chmod(0o444)
    else:
        path.unlink()
        path.parent.chmod(0o555)
    if os.geteuid() == 0 and how != "format":
        pytest.skip("root writes whatever the permissions say")
    before = path.read_bytes() if path.exists() else None
    try:
        code, err = _run(["demo", "--db", str(path), "--turns", "1"], capsys)
    finally:
        path.parent.chmod(0o755)
    assert code == 2, err
    assert "cannot be" in err
    assert (path.read_bytes() if path.exists() else None) == before


@pytest.mark.parametrize("command", ["inspect", "demo"])
def test_a_driver_error_that_quotes_a_schema_is_told_on_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """SQLite quotes a damaged schema's token, newlines and all, in its error (a bit-flipped
    checkpoint database found it): the one line says what it quoted."""
    path = tmp_path / "c.sqlite"
    with closing(sqlite3.connect(path)) as con:
        con.execute("CREATE TABLE checkpoints (thread_id TEXT, checkpoint BLOB)")
        con.execute("PRAGMA writable_schema=ON")
        damaged = 'CREATE TABLE checkpoints (thread_id TEXT, "checkpoint\n  BLOB,\n  metadata'
        con.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'checkpoints'", (damaged,))
        con.commit()
    argv = ["inspect", "--db", str(path)] if command == "inspect" else ["demo", "--db", str(path)]
    code, err = _run(argv, capsys)
    assert code == 2 and "checkpoint BLOB, metadata" in err
