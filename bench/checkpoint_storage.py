"""Checkpoint storage benchmark: plain ``MessagesState`` vs langctx, by where the archive goes.

Run by hand from the repository root::

    uv run python bench/checkpoint_storage.py                # 200 and 1,000 turns (~1.5 min)
    uv run python bench/checkpoint_storage.py --turns 200    # a quick look

A scripted ``create_agent`` agent (``langctx.testing.ScriptedChatModel``) works through a long
tool-calling session on ``SqliteSaver`` (a file database, default durability): every turn is one
model call with one ``read_file`` call whose result is ~3 KB of realistic text (source files, test
logs and tracebacks from ``langctx.cli.demo.session``). Every 25 tool turns the agent answers and the
user says "Go on", so a thread is many runs, as in a chat. Side by side, in the same run, on fresh
files:

- ``plain``: ``create_agent`` without langctx (``AgentState``: a ``MessagesState``);
- ``plain-delta``: the same with ``messages`` as a LangGraph ``DeltaChannel`` (LangGraph's own
  answer to checkpoint growth, for reference);
- ``langctx``: ``LangctxMiddleware()``, the defaults (8,000-token budget, folded messages archived
  in the state's ``langctx_archive`` key, a ``DeltaChannel``);
- ``langctx-delta``: the defaults plus ``state_schema=LangctxDeltaAgentState`` (``messages`` and
  ``langctx`` as ``DeltaChannel``\\ s too);
- ``langctx-whole``: ``LangctxMiddleware(archive=None)``, the earlier default (the whole log stays in
  ``messages``);
- ``archive``: ``LangctxMiddleware(archive=store)``, ``store`` a ``SqliteStore`` in a sibling file;
- ``archive-delta``: ``archive=store`` plus ``state_schema=LangctxDeltaAgentState``;
- ``plain-exit`` / ``langctx-exit`` / ``archive-exit``: ``plain`` / ``langctx`` / ``archive`` run
  with ``durability="exit"`` (LangGraph saves one checkpoint per run instead of one per step; a
  crash loses the running run).

Measured: the database files' bytes after the connections are closed (``-wal``/``-shm``
included, checkpoints and archive store together), the raw content bytes (UTF-8 bytes of every
message's content in the whole log, ``full_log``), and the wall time of each turn (the model call,
the tool call, langctx's work and the checkpoint writes; from one "tools" update of
``stream_mode="updates"`` to the next). The variants whose checkpoints hold the whole conversation
grow quadratically; they are measured at ``--quadratic-turns`` (default 200 and 500) and
extrapolated (clearly marked) to larger turn counts, because 1,000 turns would take gigabytes and
many minutes. Writes ``bench/results/checkpoint_storage.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Required

import _common
from langchain.agents import create_agent
from langchain.agents.middleware import AgentState
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.channels.delta import DeltaChannel
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph.message import _messages_delta_reducer
from langgraph.store.sqlite import SqliteStore

from langctx.agent import create_agent as langctx_create_agent
from langctx.cli.demo.session import SYSTEM_PROMPT, TASK, iter_turns
from langctx.delta_state import LangctxDeltaAgentState
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.stores.compressed import CompressedSerializer
from langctx.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
RESULTS_MD = ROOT / "bench" / "results" / "checkpoint_storage.md"
RESULTS_JSON = ROOT / "bench" / "results" / "checkpoint_storage.json"

TURNS = (200, 1_000)
QUADRATIC_TURNS = (200, 500)
OUTPUT_BYTES = 3_000
"""Bytes of each tool result."""
CHUNK = 25
"""Tool turns per run (then the agent answers and the user says "Go on")."""
EDGE = 50
"""Turns in the first-N / last-N step-time windows."""
SEED = 11


@dataclass(frozen=True, slots=True)
class Variant:
    """One configuration of the agent."""

    name: str
    archive: Literal["state", "store"] | None = "state"
    """Where langctx archives: the state (the default), a ``SqliteStore``, nowhere (None)."""
    langctx: bool = True
    """Whether the agent has ``LangctxMiddleware``."""
    delta: bool = False
    """``messages`` (and ``langctx``) as ``DeltaChannel``\\ s."""
    exit: bool = False
    """Run with ``durability="exit"`` instead of the default ``"async"``."""
    quadratic: bool = False
    """Checkpoints hold the whole log: measured at --quadratic-turns and extrapolated."""
    entry: bool = False
    """Built with ``langctx.create_agent`` (its defaults) instead of the bare middleware."""
    compressed: bool = False
    """The saver's serializer wrapped in ``langctx.CompressedSerializer``."""


VARIANTS: dict[str, Variant] = {
    "plain": Variant("MessagesState (no langctx)", None, langctx=False, quadratic=True),
    "plain-delta": Variant(
        "MessagesState + DeltaChannel (no langctx)", None, langctx=False, delta=True
    ),
    "plain-exit": Variant(
        'MessagesState, durability="exit" (no langctx)', None, langctx=False, exit=True
    ),
    "entry": Variant("langctx.create_agent defaults", delta=True, entry=True),
    "entry-zlib": Variant(
        "langctx.create_agent + CompressedSerializer", delta=True, entry=True, compressed=True
    ),
    "langctx": Variant("langctx defaults (archive in the state)"),
    "langctx-delta": Variant("langctx defaults + delta channels", delta=True),
    "langctx-exit": Variant('langctx defaults, durability="exit"', exit=True),
    "langctx-whole": Variant("langctx, archive=None (whole log in messages)", None, quadratic=True),
    "archive": Variant("langctx, archive=store (SqliteStore)", "store"),
    "archive-delta": Variant("langctx, archive=store + delta channels", "store", delta=True),
    "archive-exit": Variant('langctx, archive=store, durability="exit"', "store", exit=True),
}


class PlainDeltaState(AgentState[Any]):
    """``AgentState`` with ``messages`` as a ``DeltaChannel`` (no langctx)."""

    messages: Required[Annotated[list[Any], DeltaChannel(_messages_delta_reducer)]]


# ---------------------------------------------------------------------- the session


def tool_outputs(turns: int) -> list[str]:
    """``turns`` tool results of ~OUTPUT_BYTES each, cut from the demo session's outputs."""
    corpus = "\n".join(
        str(m.content) for turn in iter_turns(240, seed=SEED) for m in turn[1:]
    ).encode()
    out = []
    step = 997  # a prime stride, so consecutive outputs differ
    for k in range(turns):
        start = (k * step) % (len(corpus) - OUTPUT_BYTES)
        text = corpus[start : start + OUTPUT_BYTES].decode("utf-8", "ignore")
        out.append(f"# src/calc/module_{k % 40}.py (read {k})\n{text}")
    return out


def script(turns: int) -> tuple[list[AIMessage], dict[str, str], int]:
    """AI responses (tool calls, an answer every CHUNK turns), outputs by call id, and runs."""
    outputs = tool_outputs(turns)
    responses: list[AIMessage] = []
    by_call: dict[str, str] = {}
    runs = 0
    for k in range(turns):
        cid = f"call_{k}"
        by_call[cid] = outputs[k]
        responses.append(
            AIMessage(
                f"Reading module {k % 40} to follow the nested-list path.",
                tool_calls=[
                    {
                        "id": cid,
                        "name": "read_file",
                        "args": {"path": f"src/calc/module_{k % 40}.py"},
                        "type": "tool_call",
                    }
                ],
                id=f"ai-{k}",
            )
        )
        if (k + 1) % CHUNK == 0 or k == turns - 1:
            runs += 1
            responses.append(
                AIMessage(f"Checkpoint {runs}: still investigating.", id=f"ans-{runs}")
            )
    return responses, by_call, runs


def read_file_tool(by_call: dict[str, str]) -> Any:
    """The session's ``read_file`` tool: the scripted output of each call, with a fixed id."""

    @tool
    def read_file(path: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> ToolMessage:
        """Read a file of the repository."""
        return ToolMessage(
            by_call[tool_call_id], tool_call_id=tool_call_id, id=f"tool-{tool_call_id}"
        )

    return read_file


# ---------------------------------------------------------------------- one measured run


@dataclass
class Run:
    key: str
    name: str
    turns: int
    db_bytes: int = 0
    checkpoint_file_bytes: int = 0
    store_file_bytes: int = 0
    raw_content_bytes: int = 0
    full_log_messages: int = 0
    live_messages: int = 0
    checkpoints: int = 0
    checkpoint_blob_bytes: int = 0
    writes: int = 0
    write_blob_bytes: int = 0
    store_items: int = 0
    checkpoint_metadata_bytes: int = 0
    store_value_bytes: int = 0
    index_bytes: int = 0
    """Used bytes of the SQLite index pages (both files)."""
    unused_bytes: int = 0
    """Page space holding no data (both files): SQLite's per-page slack and free pages."""
    wal_open_bytes: int = 0
    """``-wal`` files just before the connections closed (SQLite removes them on close)."""
    wall_s: float = 0.0
    step_ms: list[float] = field(default_factory=list)
    extrapolated: bool = False

    def stats(self) -> dict[str, Any]:
        s = self.step_ms
        first = statistics.median(s[:EDGE]) if s else 0.0
        last = statistics.median(s[-EDGE:]) if s else 0.0
        return {
            "bytes_per_turn": self.db_bytes / self.turns if self.turns else 0.0,
            "db_over_raw": self.db_bytes / self.raw_content_bytes if self.raw_content_bytes else 0,
            "first_median_ms": first,
            "last_median_ms": last,
            "last_over_first": last / first if first else 0.0,
            "median_ms": statistics.median(s) if s else 0.0,
        }


def _files_bytes(path: Path) -> int:
    return sum(
        os.path.getsize(f"{path}{suffix}")
        for suffix in ("", "-wal", "-shm")
        if os.path.exists(f"{path}{suffix}")
    )


def _page_stats(path: Path) -> tuple[int, int]:
    """(index bytes, unused bytes) of a closed SQLite file, from the ``dbstat`` table.

    Index bytes are the used part of the index pages; unused bytes cover every page.

    Falls back to (0, free pages) when this SQLite has no ``dbstat``.
    """
    with sqlite3.connect(path) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0] * page_size
        try:
            index, unused = conn.execute(
                "SELECT coalesce(sum(CASE WHEN name IN (SELECT name FROM sqlite_master "
                "WHERE type = 'index') OR name LIKE 'sqlite_autoindex%' THEN pgsize - unused END), 0), "
                "coalesce(sum(unused), 0) FROM dbstat"
            ).fetchone()
        except sqlite3.OperationalError:
            index, unused = 0, 0
    conn.close()
    return int(index), int(unused) + free


def _agent(v: Variant, model: ScriptedChatModel, tools: list[Any], saver: Any, store: Any) -> Any:
    if v.compressed:
        saver.serde = CompressedSerializer(saver.serde)
    if v.entry:
        return langctx_create_agent(
            model, tools, system_prompt=SYSTEM_PROMPT, checkpointer=saver, store=store
        )
    middleware: list[Any] = []
    if v.langctx and v.archive == "state":
        middleware.append(LangctxMiddleware())  # the defaults, as a user gets them
    elif v.langctx:
        middleware.append(LangctxMiddleware(archive=store))  # a store, or None
    kwargs: dict[str, Any] = {}
    if v.delta:
        kwargs["state_schema"] = LangctxDeltaAgentState if v.langctx else PlainDeltaState
    return create_agent(
        model,
        tools=tools,
        system_prompt=SYSTEM_PROMPT,
        middleware=middleware,
        checkpointer=saver,
        store=store,
        **kwargs,
    )


def run(key: str, turns: int, workdir: Path) -> Run:
    variant = VARIANTS[key]
    name = variant.name
    responses, by_call, runs = script(turns)
    read_file = read_file_tool(by_call)
    model = ScriptedChatModel(responses=responses)
    db, store_db = workdir / f"{key}-{turns}.sqlite", workdir / f"{key}-{turns}-archive.sqlite"
    result = Run(key, name, turns)
    thread_id = f"bench-{key}"
    cfg: Any = {"configurable": {"thread_id": thread_id}, "recursion_limit": 10 * CHUNK + 20}
    gc.collect()
    started = time.perf_counter()
    with ExitStack() as stack:
        saver = stack.enter_context(SqliteSaver.from_conn_string(str(db)))
        store = None
        if variant.archive == "store":
            store = stack.enter_context(SqliteStore.from_conn_string(str(store_db)))
            store.setup()
        agent = _agent(variant, model, [read_file], saver, store)
        inputs: Iterator[HumanMessage] = (
            HumanMessage(TASK if n == 0 else f"Go on ({n}).", id=f"user-{n}") for n in range(runs)
        )
        durability = "exit" if variant.exit else "async"  # "async": the default
        for message in inputs:
            last = time.perf_counter()
            for update in agent.stream(
                {"messages": [message]}, cfg, stream_mode="updates", durability=durability
            ):
                if "tools" in update:
                    now = time.perf_counter()
                    result.step_ms.append((now - last) * 1000)
                    last = now
        state = agent.get_state(cfg).values
        # the whole log: archived (in the state or the store) and live messages
        beside = agent.store if store is None else None  # the entry point's, in the saver's file
        holder = store if store is not None else beside
        log = full_log(holder, thread_id, state) if holder is not None else full_log(state)
        result.live_messages = len(state["messages"])
        result.full_log_messages = len(log)
        result.raw_content_bytes = sum(len(str(m.content).encode()) for m in log)
        result.wal_open_bytes = sum(
            os.path.getsize(f"{path}-wal")
            for path in (db, store_db)
            if Path(f"{path}-wal").exists()
        )
        if beside is not None and hasattr(beside, "conn"):
            beside.conn.close()  # closed with the saver: its WAL goes into the file
    result.wall_s = time.perf_counter() - started
    result.checkpoint_file_bytes = _files_bytes(db)
    result.store_file_bytes = _files_bytes(store_db) if store is not None else 0
    result.db_bytes = result.checkpoint_file_bytes + result.store_file_bytes
    with sqlite3.connect(db) as conn:
        result.checkpoints, result.checkpoint_blob_bytes, result.checkpoint_metadata_bytes = (
            conn.execute(
                "SELECT count(*), coalesce(sum(length(checkpoint)), 0), "
                "coalesce(sum(length(metadata)), 0) FROM checkpoints"
            ).fetchone()
        )
        result.writes, result.write_blob_bytes = conn.execute(
            "SELECT count(*), coalesce(sum(length(value)), 0) FROM writes"
        ).fetchone()
    conn.close()
    if store is not None or beside is not None:
        with sqlite3.connect(store_db if store is not None else db) as conn:
            result.store_items, result.store_value_bytes = conn.execute(
                "SELECT count(*), coalesce(sum(length(CAST(value AS BLOB))), 0) FROM store"
            ).fetchone()
        conn.close()
    for path in (db, store_db) if store is not None else (db,):
        index, unused = _page_stats(path)
        result.index_bytes += index
        result.unused_bytes += unused
    expected = 2 * turns + 2 * runs  # each turn: AI + tool result; each run: user + answer
    if result.full_log_messages != expected:
        msg = f"{key}: the full log has {result.full_log_messages} messages, not {expected}"
        raise AssertionError(msg)
    for path in (db, store_db):
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return result


def extrapolate(measured: Sequence[Run], turns: int) -> Run:
    """A quadratic through (0, 0) and the measured points, for a turn count not measured."""
    (a, ra), (b, rb) = [(r.turns, r) for r in sorted(measured, key=lambda r: r.turns)[-2:]]

    def fit(fa: float, fb: float) -> float:
        # f(n) = p*n^2 + q*n through (a, fa) and (b, fb)
        p = (fb / b - fa / a) / (b - a)
        q = fa / a - p * a
        return p * turns * turns + q * turns

    def lin(fa: float, fb: float) -> float:
        return fa + (fb - fa) * (turns - a) / (b - a)

    out = Run(ra.key, ra.name, turns, extrapolated=True)
    out.db_bytes = int(fit(ra.db_bytes, rb.db_bytes))
    out.checkpoint_file_bytes = out.db_bytes
    out.raw_content_bytes = int(lin(ra.raw_content_bytes, rb.raw_content_bytes))
    out.checkpoints = int(lin(ra.checkpoints, rb.checkpoints))
    out.full_log_messages = int(lin(ra.full_log_messages, rb.full_log_messages))
    out.live_messages = out.full_log_messages
    # step time grows ~linearly with the state: extend the last-50 median on the same line
    first = statistics.median(ra.step_ms[:EDGE])
    la, lb = statistics.median(ra.step_ms[-EDGE:]), statistics.median(rb.step_ms[-EDGE:])
    last = lin(la, lb)
    out.step_ms = [first] * EDGE + [last] * EDGE
    out.wall_s = fit(ra.wall_s, rb.wall_s)
    return out


# ---------------------------------------------------------------------- report


def environment() -> dict[str, Any]:
    return _common.environment(
        (
            "langchain-core",
            "langchain",
            "langgraph",
            "langgraph-checkpoint-sqlite",
            "langgraph-checkpoint",
        ),
        sqlite=sqlite3.sqlite_version,
    )


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e5 else f"{n / 1e3:,.1f} KB"


def table(runs: Sequence[Run]) -> list[str]:
    lines = [
        "| variant | turns | DB bytes (checkpoints + archive) | bytes / turn | raw content | DB / raw "
        "| step ms first-50 / last-50 (median) | last / first | live messages | checkpoints |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in sorted(runs, key=lambda r: (r.turns, list(VARIANTS).index(r.key))):
        s = r.stats()
        mark = " *(extrapolated)*" if r.extrapolated else ""
        store = (
            f" ({_mb(r.checkpoint_file_bytes)} + {_mb(r.store_file_bytes)})"
            if r.store_file_bytes
            else ""
        )
        lines.append(
            f"| {r.name}{mark} | {r.turns:,} | {_mb(r.db_bytes)}{store} | {_mb(s['bytes_per_turn'])} "
            f"| {_mb(r.raw_content_bytes)} | {s['db_over_raw']:,.1f}x "
            f"| {s['first_median_ms']:.1f} / {s['last_median_ms']:.1f} | {s['last_over_first']:.2f} "
            f"| {r.live_messages:,} | {r.checkpoints:,} |"
        )
    return lines


def breakdown(runs: Sequence[Run]) -> list[str]:
    """Where the bytes of the measured runs go (SQLite's ``dbstat`` for indexes and slack)."""
    lines = [
        "| variant | turns | checkpoints (rows: blob + metadata) | writes (rows: values) "
        "| archive store (items: values / file) | indexes | unused page space "
        "| other (keys, row headers) | WAL while open |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in sorted(runs, key=lambda r: (r.turns, list(VARIANTS).index(r.key))):
        if r.extrapolated:
            continue
        data = (
            r.checkpoint_blob_bytes
            + r.checkpoint_metadata_bytes
            + r.write_blob_bytes
            + r.store_value_bytes
        )
        other = r.db_bytes - data - r.index_bytes - r.unused_bytes
        store = (
            f"{r.store_items:,}: {_mb(r.store_value_bytes)} / {_mb(r.store_file_bytes)}"
            if r.store_file_bytes
            else "-"
        )
        lines.append(
            f"| {r.name} | {r.turns:,} | {r.checkpoints:,}: {_mb(r.checkpoint_blob_bytes)} + "
            f"{_mb(r.checkpoint_metadata_bytes)} | {r.writes:,}: {_mb(r.write_blob_bytes)} "
            f"| {store} | {_mb(r.index_bytes)} | {_mb(r.unused_bytes)} | {_mb(other)} "
            f"| {_mb(r.wal_open_bytes)} |"
        )
    return lines


def targets(runs: Sequence[Run]) -> list[str]:
    """The archiving variants at 1,000 turns or more against the size and step-time targets."""
    out = []
    for r in sorted(runs, key=lambda r: (r.turns, list(VARIANTS).index(r.key))):
        if VARIANTS[r.key].archive is None or r.turns < 1000 or r.extrapolated:
            continue
        s = r.stats()
        ratio = s["db_over_raw"]

        def yes(ok: bool) -> str:
            return f"**{'yes' if ok else 'no'}**"

        out.append(
            f"- {r.name}, {r.turns:,} turns: DB / raw content {ratio:.2f}x: within 2x "
            f"{yes(ratio <= 2)}, within 5x {yes(ratio <= 5)}; step time flat (last-50 / "
            f"first-50 = {s['last_over_first']:.2f} <= 1.5): {yes(s['last_over_first'] <= 1.5)}"
        )
    return out


def report(runs: Sequence[Run], env: dict[str, Any], wall: float, argv: str) -> str:
    lines = [
        "# Checkpoint storage: plain MessagesState vs langctx, by where the archive goes",
        "",
        f"Generated by `uv run python bench/checkpoint_storage.py{argv}` ({wall / 60:.1f} min "
        f"wall). Machine: {env['machine']}; load average at start {env['load_average_at_start']} "
        "(other jobs shared the machine: compare ratios, not absolute times). SQLite "
        f"{env['sqlite']}. Versions: "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + ".",
        "",
        f"A scripted `create_agent` agent on `SqliteSaver` (file, default durability): every turn "
        f"is one model call with one `read_file` call returning ~{OUTPUT_BYTES:,} bytes of "
        f'realistic text; every {CHUNK} turns the agent answers and the user says "Go on" (a new '
        "run on the same thread). langctx runs with its defaults (8,000-token budget, local "
        "summaries; *langctx defaults*: `LangctxMiddleware()`, which archives the folded messages "
        "in the state's `langctx_archive` key, a `DeltaChannel`); `archive=None` keeps the whole "
        "log in `messages` (the earlier default), `archive=store` archives to a `SqliteStore`. "
        "*DB bytes*: the checkpoint database plus, with `archive=store`, the `SqliteStore` file "
        "(sizes in parentheses), `-wal`/`-shm` included, after the connections closed. *Raw "
        "content*: UTF-8 bytes of every message's content in the whole log (`full_log`, which "
        "reads the archive too). *Step ms*: wall time per turn (model call, tool call, langctx, "
        "checkpoint writes), "
        f"median of the first and of the last {EDGE} turns. Rows marked *extrapolated* grow "
        "quadratically and were not run at that size: bytes and wall time from a quadratic "
        "through the two measured sizes, the last-50 step time from a straight line (the state "
        "each step serialises grows linearly).",
        "",
        *table(runs),
        "",
        "## Where the bytes go",
        "",
        "Measured runs only. *Checkpoints*: `checkpoints` rows, their serialised checkpoint and "
        "their JSON metadata; *writes*: pending-write rows and their serialised values; *archive "
        "store*: `SqliteStore` items, their JSON values and the store file; *indexes*: the used "
        "bytes of the SQLite index pages (primary keys) of both files; *unused page space*: bytes of the files' pages "
        "that hold no data (SQLite's `dbstat`; rows of ~3 KB leave slack in 4 KB pages), free "
        "pages included; *other*: the rest (key columns, row and page headers). *WAL while open*: "
        "the `-wal` files just before the connections closed: SQLite checkpoints them into the "
        "database and removes them on close, so they are not in *DB bytes*; while a process runs "
        "they stay at about the auto-checkpoint size (~4 MB a file), whatever the thread length.",
        "",
        *breakdown(runs),
        "",
        "## Targets",
        "",
        "The database within 2x of the raw content with `SqliteSaver` at langctx's defaults (the "
        '*langctx defaults* row); within 5x with delta channels or `durability="exit"` (issue '
        "3, deliverable 4); the step time flat.",
        "",
        *(targets(runs) or ["- no 1,000-turn archive run in this report"]),
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=list(TURNS))
    parser.add_argument("--quadratic-turns", type=int, nargs=2, default=list(QUADRATIC_TURNS))
    parser.add_argument("--only", nargs="+", choices=list(VARIANTS), default=None)
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    args = parser.parse_args(argv)
    env = environment()
    started = time.perf_counter()
    runs: list[Run] = []
    workdir = Path(tempfile.mkdtemp(prefix="langctx-bench-"))
    log: Callable[[Run], None] = lambda r: print(  # noqa: E731
        f"{r.name:45s} {r.turns:6,d} turns  {_mb(r.db_bytes):>10s}  "
        f"{r.stats()['db_over_raw']:7.1f}x raw  step {r.stats()['first_median_ms']:6.1f} -> "
        f"{r.stats()['last_median_ms']:6.1f} ms  ({r.wall_s:5.1f} s)"
        + ("  [extrapolated]" if r.extrapolated else ""),
        flush=True,
    )
    try:
        for key in args.only or VARIANTS:
            sizes = sorted(set(args.turns))
            if VARIANTS[key].quadratic:
                measured_sizes = sorted(
                    {*args.quadratic_turns, *(t for t in sizes if t <= max(args.quadratic_turns))}
                )
            else:
                measured_sizes = sizes
            measured = []
            for turns in measured_sizes:
                r = run(key, turns, workdir)
                log(r)
                measured.append(r)
                runs.append(r)
            for turns in sizes:
                if turns not in measured_sizes:
                    r = extrapolate(measured, turns)
                    log(r)
                    runs.append(r)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    wall = time.perf_counter() - started
    cli = "".join(f" {a}" for a in (sys.argv[1:] if argv is None else argv))
    text = report(runs, env, wall, cli)
    print(text)
    if not args.no_write:
        RESULTS_MD.parent.mkdir(parents=True, exist_ok=True)
        RESULTS_MD.write_text(text, encoding="utf-8")
        payload = {
            "output_bytes": OUTPUT_BYTES,
            "chunk": CHUNK,
            "environment": env,
            "wall_s": wall,
            "runs": [
                {k: v for k, v in asdict(r).items() if k != "step_ms"}
                | r.stats()
                | {"step_ms": [round(t, 3) for t in r.step_ms]}
                for r in runs
            ],
        }
        _common.write_json(RESULTS_JSON, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
