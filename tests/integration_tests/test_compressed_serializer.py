"""``CompressedSerializer`` on a real saver: the same state back, smaller files, old values read."""

from __future__ import annotations

import sqlite3
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.serde.encrypted import EncryptedSerializer
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from langctx import (
    CompressedSerializer,
    LangctxMiddleware,
    StateVersionError,
    create_agent,
    full_log,
)
from langctx.errors import ConfigError
from langctx.testing import ScriptedChatModel, ai_tool_call

TURNS = 30


def read_file(path: str) -> str:
    """Read a file."""
    return f"# {path}\n" + "".join(f"def f{i}(x):\n    return x * {i}\n" for i in range(80))


def _run(db: Path, serde: Any, turns: int = TURNS, thread: str = "t") -> dict[str, Any]:
    """The thread's state after a run, with its whole log under ``"log"`` (the folded part is
    in the store ``create_agent`` keeps in the same file)."""
    calls = [ai_tool_call("read_file", {"path": f"src/m{k}.py"}) for k in range(turns)]
    model = ScriptedChatModel(responses=[*calls, "Done."])
    with SqliteSaver.from_conn_string(str(db)) as saver:
        saver.serde = serde if serde is not None else saver.serde
        agent = create_agent(
            model, [read_file], memory=LangctxMiddleware(max_tokens=3000), checkpointer=saver
        )
        cfg = {"configurable": {"thread_id": thread}}
        agent.invoke({"messages": [("user", "Fix the parser.")]}, cfg)
        values = agent.get_state(cfg).values
        return {**values, "log": full_log(agent.store, thread, values)}


def _shape(state: dict[str, Any]) -> tuple[Any, ...]:
    """The window, the whole log and the compactions (message ids are random: left out)."""
    entries = [
        (e["trigger"], e["covered_count"], e["read_files"]) for e in state["langctx"]["compactions"]
    ]
    return [m.text for m in state["messages"]], [m.text for m in state["log"]], entries


def test_same_state_smaller_file(tmp_path: Path) -> None:
    plain = _run(tmp_path / "plain.sqlite", None)
    packed = _run(tmp_path / "packed.sqlite", CompressedSerializer())
    assert _shape(plain) == _shape(packed)
    blob = (
        "SELECT sum(length(checkpoint)) + (SELECT sum(length(value)) FROM writes) FROM checkpoints"
    )
    sizes = [
        sqlite3.connect(tmp_path / f"{n}.sqlite").execute(blob).fetchone()[0]
        for n in ("plain", "packed")
    ]
    assert sizes[1] < 0.6 * sizes[0], sizes


def test_a_database_written_uncompressed_reads_and_continues(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    _run(db, None, turns=10)
    state = _run(db, CompressedSerializer(), turns=10)  # the same thread, the next run
    assert [m.text for m in state["log"]].count("Fix the parser.") == 2  # nothing lost


def test_under_encryption_and_across_threads() -> None:
    class Xor:
        def encrypt(self, plaintext: bytes) -> tuple[str, bytes]:
            return "xor", bytes(b ^ 7 for b in plaintext)

        def decrypt(self, ciphername: str, ciphertext: bytes) -> bytes:
            return bytes(b ^ 7 for b in ciphertext)

    serde = EncryptedSerializer(Xor(), CompressedSerializer())
    value = {"text": "line\n" * 500, "n": 1}
    assert serde.loads_typed(serde.dumps_typed(value)) == value
    inner = CompressedSerializer(JsonPlusSerializer())
    values = [{"k": k, "text": f"{k} " * (100 + k)} for k in range(64)]
    with ThreadPoolExecutor(4) as pool:
        back = list(pool.map(lambda v: inner.loads_typed(inner.dumps_typed(v)), values))
    assert back == values


def test_bad_input() -> None:
    with pytest.raises(ConfigError, match="level must be an int from 1 to 9"):
        CompressedSerializer(level=0)
    with pytest.raises(ConfigError):
        CompressedSerializer(level=True)
    with pytest.raises(StateVersionError, match="is not zlib data"):
        CompressedSerializer().loads_typed(("msgpack~zlib", b"not zlib"))
    small = CompressedSerializer().dumps_typed("hi")
    assert not small[0].endswith("~zlib")  # too short to pay
