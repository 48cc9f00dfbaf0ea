"""Two processes serve one thread in turn and send exactly the model inputs one process sends.

Two long-lived worker processes (:mod:`tests.integration_tests._turn_worker`) share a checkpointer
(a SqliteSaver file, or PostgresSaver) and a store (SqliteStore / PostgresStore): worker A runs
user turn 0, B turn 1, A turn 2, ... of a scripted coding session (tool outputs up to ~60 KB, a
3,500-token budget, one ``/compact``), each keeping its agent and its process state across the
turns it serves, and each serving the threads of every case at once. The same script runs in this
process alone, on the same thread id in other databases. Every model input, message by message
(type, id, content, tool calls), the compaction count after every turn and the final state must
be equal. Cases: Context-mode on/off (``ContextModeMiddleware`` with a ``fetch_context`` call) x
archive mode on/off x SQLite/PostgreSQL; without archive mode the summarizer is a model
(``model_summary``) with background summaries on, so a summary one worker started is applied by
the other. Workers run with ``LANGGRAPH_STRICT_MSGPACK=true``.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import IO, Any

import pytest

from tests.integration_tests._agents import PG_URI, postgres_available, require_postgres
from tests.integration_tests._turn_worker import REPLY, TurnWorker, user_turns

pytestmark = pytest.mark.slow  # every test reads one module fixture: ~30 s of worker processes

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.integration_tests._turn_worker"
TIMEOUT = 120.0
KEYS = [
    f"{backend}-{'ctx' if cm else 'plain'}-{'archive' if ar else 'live'}"
    for backend, cm, ar in product(["sqlite", "postgres"], [False, True], [False, True])
]


class Worker:
    """A worker process: one JSON request a line on stdin, one reply line on stdout."""

    def __init__(self, name: str, stderr: IO[str]) -> None:
        self.name = name
        self.stderr = stderr
        self.proc = subprocess.Popen(
            [sys.executable, "-m", MODULE],
            cwd=ROOT,
            env={**os.environ, "LANGGRAPH_STRICT_MSGPACK": "true", "PYTHONPATH": str(ROOT)},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        self.replies: queue.Queue[str | None] = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(REPLY):
                self.replies.put(line[len(REPLY) :])
        self.replies.put(None)

    def send(self, request: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()

    def receive(self) -> Any:
        try:
            line = self.replies.get(timeout=TIMEOUT)
        except queue.Empty:
            pytest.fail(f"worker {self.name} did not answer in {TIMEOUT:.0f} s")
        if line is None:
            pytest.fail(f"worker {self.name} exited: {self.stderr_text()[-3000:]}")
        reply = json.loads(line)
        if isinstance(reply, dict) and "error" in reply:
            pytest.fail(f"worker {self.name} failed:\n{reply['error']}")
        return reply

    def ask(self, request: dict[str, Any]) -> Any:
        self.send(request)
        return self.receive()

    def stderr_text(self) -> str:
        self.stderr.flush()
        return Path(self.stderr.name).read_text(encoding="utf-8")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.send({"op": "exit"})
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()


@dataclass
class Run:
    """What one case gave, in the workers and in the single process."""

    turns: list[dict[str, Any]] = field(default_factory=list)
    reference: list[dict[str, Any]] = field(default_factory=list)
    finals: list[dict[str, Any]] = field(default_factory=list)
    """The final state as read by worker A, worker B and the single process."""
    stderr: str = ""


def _with_search_path(uri: str, schema: str) -> str:
    sep = "&" if "?" in uri else "?"
    return f"{uri}{sep}options=-csearch_path%3D{schema}"


@contextmanager
def _pg_schemas(names: list[str]) -> Iterator[None]:
    """Fresh schemas (the same thread id in two databases), dropped at the end."""
    import psycopg

    with psycopg.connect(PG_URI, autocommit=True) as conn:
        for name in names:
            conn.execute(f"CREATE SCHEMA {name}")
    try:
        yield
    finally:
        with psycopg.connect(PG_URI, autocommit=True) as conn:
            for name in names:
                conn.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def _cases(tmp: Path, keys: list[str], stack: ExitStack) -> dict[str, tuple[dict, dict]]:
    """Per case: the shared (two-worker) and the reference (one-process) configuration."""
    cases = {}
    schemas = []
    for key in keys:
        backend, mode, archive = key.split("-")
        common = {
            "key": key,
            "thread_id": f"mw-{key}-{uuid.uuid4().hex[:8]}",
            "context_mode": mode == "ctx",
            "archive": archive == "archive",
        }
        uris = []
        for role in ("shared", "single"):
            if backend == "sqlite":
                uris.append((f"{tmp}/{key}-{role}.sqlite", f"{tmp}/{key}-{role}-store.sqlite"))
            else:
                schema = f"lcx_mw_{role}_{uuid.uuid4().hex[:8]}"
                schemas.append(schema)
                uri = _with_search_path(PG_URI, schema)
                uris.append((uri, uri))
        (shared, shared_store), (single, single_store) = uris
        cases[key] = (
            {**common, "uri": shared, "store_uri": shared_store},
            {**common, "uri": single, "store_uri": single_store},
        )
    if schemas:
        stack.enter_context(_pg_schemas(schemas))
    return cases


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Run]:
    """Every case's session, by workers A and B in turn and by this process alone."""
    keys = [k for k in KEYS if k.startswith("sqlite") or postgres_available()]
    tmp = tmp_path_factory.mktemp("multi_worker")
    out = {key: Run() for key in keys}
    with ExitStack() as stack:
        cases = _cases(tmp, keys, stack)
        workers = []
        for name in "AB":
            stderr = stack.enter_context((tmp / f"worker-{name}.stderr").open("w+"))
            worker = Worker(name, stderr)
            stack.callback(worker.close)
            workers.append(worker)
        for worker in workers:  # one after the other: both set the same tables up
            for shared, _ in cases.values():
                assert worker.ask({"op": "open", "case": shared}) == "ok"
        single = {}
        for key, (_, case) in cases.items():
            single[key] = TurnWorker(case)
            stack.callback(single[key].close)
        turns = {key: len(user_turns(case["context_mode"])[0]) for key, (case, _) in cases.items()}
        for n in range(max(turns.values())):
            for key in keys:
                if n < turns[key]:
                    worker = workers[n % 2]
                    worker.send({"op": "turn", "key": key, "turn": n})  # runs while we run ours
                    out[key].reference.append(single[key].turn(n))
                    out[key].turns.append(worker.receive())
        for key in keys:
            finals = [w.ask({"op": "final", "key": key}) for w in workers]
            out[key].finals = [*finals, single[key].final()]
        for worker in workers:
            worker.close()
        logs = "\n".join(w.stderr_text() for w in workers)
    for run in out.values():
        run.stderr = logs
    return out


def _run(runs: dict[str, Run], key: str) -> Run:
    if key.startswith("postgres"):
        require_postgres()
    return runs[key]


def _first_difference(got: list[Any], want: list[Any]) -> str:
    """Where two turns' model inputs first differ (turn, call, message)."""
    for t, (g, w) in enumerate(zip(got, want, strict=True)):
        if len(g["calls"]) != len(w["calls"]):
            return f"turn {t}: {len(g['calls'])} model calls, one process made {len(w['calls'])}"
        for c, (gc, wc) in enumerate(zip(g["calls"], w["calls"], strict=True)):
            if len(gc) != len(wc):
                return f"turn {t}, call {c}: {len(gc)} messages, one process sent {len(wc)}"
            for m, (gm, wm) in enumerate(zip(gc, wc, strict=True)):
                if gm != wm:
                    return f"turn {t}, call {c}, message {m}:\n{gm}\n!=\n{wm}"
    return "no difference in the model inputs"


@pytest.mark.parametrize("key", KEYS)
def test_two_workers_send_the_model_what_one_process_sends(runs: dict[str, Run], key: str) -> None:
    run = _run(runs, key)
    got = [{"calls": t["calls"]} for t in run.turns]
    want = [{"calls": t["calls"]} for t in run.reference]
    assert len(got) == len(want) >= 10
    assert got == want, _first_difference(got, want)
    assert sum(len(t["calls"]) for t in run.turns) >= 50


@pytest.mark.parametrize("key", KEYS)
def test_compactions_happen_in_both_workers_and_match(runs: dict[str, Run], key: str) -> None:
    run = _run(runs, key)
    counts = [t["compactions"] for t in run.turns]
    assert counts == [t["compactions"] for t in run.reference]
    grew = {n % 2 for n, c in enumerate(counts) if c > (counts[n - 1] if n else 0)}
    assert grew == {0, 1}, counts  # A (even turns) and B (odd turns) both compacted
    assert max(counts) >= 3, counts


@pytest.mark.parametrize("key", KEYS)
def test_the_final_state_is_the_same_from_every_process(runs: dict[str, Run], key: str) -> None:
    run = _run(runs, key)
    by_a, by_b, single = run.finals
    assert by_a == by_b == single
    assert len(single["entries"]) > 0
    if key.endswith("archive"):
        assert len(single["messages"]) < len(single["full_log"]) / 5  # folded turns left the state
    else:
        assert single["messages"] == single["full_log"]


@pytest.mark.parametrize("key", [k for k in KEYS if "-ctx-" in k])
def test_context_mode_references_are_fetched_across_workers(runs: dict[str, Run], key: str) -> None:
    run = _run(runs, key)
    inputs = [m for t in run.turns for call in t["calls"] for m in call]
    assert any(
        m["type"] == "tool" and str(m["content"]).startswith("[langctx ref=") for m in inputs
    )
    fetched = [m for m in inputs if m["type"] == "tool" and m["tool_call_id"] == "call_fetch"]
    assert fetched and "Error" in str(fetched[0]["content"])
    assert "grep" in str(fetched[0]["content"])


def test_workers_ran_with_strict_msgpack_and_no_warning(runs: dict[str, Run]) -> None:
    stderr = next(iter(runs.values())).stderr.lower()
    assert "unregistered" not in stderr and "blocked deserialization" not in stderr, stderr
    assert "traceback" not in stderr and "warning" not in stderr, stderr
