"""``langctx demo``: the demo coding agent on SQLite, narrated turn by turn."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any

from langchain_core.messages import HumanMessage, ToolMessage

from langctx.cli.demo.script import DEMO_TASK
from langctx.cli.inspect.errors import NotACheckpointDatabaseError
from langctx.cli.inspect.store import sqlite_columns
from langctx.errors import ConfigError
from langctx.markers import context_mode_stamp
from langctx.state_memory import view_state
from langctx.tokens import counting_label

__all__ = ["run_agent_demo"]


def _check_sqlite(given: str) -> None:
    """Refuse a path that is a directory or a file that is not a SQLite database (a new path is
    fine: the demo creates it)."""
    path = Path(given).expanduser()
    if path.is_dir():
        msg = f"{given!r} is a directory; give --db a SQLite file (a new path is created)."
        raise ConfigError(msg)
    if not path.exists():
        if not os.access(path.parent, os.W_OK | os.X_OK):
            msg = f"{given!r} cannot be created (its folder is missing or not writable); give --db a new path in a writable folder."
            raise ConfigError(msg)
        return
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as con:
            problems = [r[0] for r in con.execute("PRAGMA quick_check").fetchall() if r[0] != "ok"]
            if problems:
                raise sqlite3.DatabaseError(f"damaged: {' '.join(str(problems[0]).split())[:120]}")
            if con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                sqlite_columns(con, given)  # anything in it: the checkpoint tables
    except (sqlite3.Error, UnicodeDecodeError) as exc:  # UnicodeDecodeError: a corrupt schema
        msg = f"{given!r} is not a SQLite database ({exc}); give --db a SQLite file or a new path."
        raise ConfigError(msg) from exc
    except NotACheckpointDatabaseError as exc:
        msg = f"{exc} Give --db a checkpoint database the demo wrote, or a new path."
        raise ConfigError(msg) from exc
    try:  # the demo writes it: a file or a format that is read-only fails here, untouched
        with closing(sqlite3.connect(path, isolation_level=None)) as con:
            con.execute("BEGIN IMMEDIATE")
            con.execute("ROLLBACK")
    except sqlite3.Error as exc:
        msg = (
            f"{given!r} cannot be written ({exc}); give --db a writable SQLite file or a new path."
        )
        raise ConfigError(msg) from exc


def run_agent_demo(
    *,
    turns: int = 120,
    budget: int = 8000,
    db: str | None = None,
    thread_id: str | None = None,
    model: str | None = None,
    summary_model: str | None = None,
    out: Callable[[str], Any] = print,
) -> dict[str, Any]:
    """Run the coding agent (scripted and offline unless ``model`` names an OpenAI model) and
    return the final figures. The sandbox project, and the database unless ``db`` names one, live
    in a temporary folder removed at the end."""
    with tempfile.TemporaryDirectory(prefix="langctx-demo-") as folder:
        return _run(turns, budget, db, thread_id, model, summary_model, out, Path(folder))


def _run(
    turns: int,
    budget: int,
    db: str | None,
    thread_id: str | None,
    model_name: str | None,
    summary_model: str | None,
    out: Callable[[str], Any],
    workdir: Path,
) -> dict[str, Any]:
    from langgraph.store.sqlite import SqliteStore

    from langctx._tiktoken_offline import seed_tiktoken_cache
    from langctx.cli.demo.agent import build_coding_agent, default_models
    from langctx.middleware import LangctxMiddleware
    from langctx.stores.archive import full_log, read_batches
    from langctx.stores.checkpoints import open_checkpointer

    db_path = db or str(workdir / "checkpoints.sqlite")
    archive_path = str(Path(db_path).with_suffix(".archive.sqlite"))
    for path in (db_path, archive_path) if db else ():
        _check_sqlite(path)
    seed_tiktoken_cache()
    model, summarizer, label = default_models(
        turns=turns, model=model_name, summary_model=summary_model
    )
    thread = thread_id or (f"demo-{uuid.uuid4().hex[:8]}" if db else "demo")
    config = {"configurable": {"thread_id": thread}, "recursion_limit": 4 * turns + 20}
    calls = compactions = 0
    peak = 0
    last_text = ""
    started = time.perf_counter()
    with open_checkpointer(db_path) as saver, SqliteStore.from_conn_string(archive_path) as store:
        store.setup()
        middleware = LangctxMiddleware(
            max_tokens=budget, summarizer=summarizer, token_counter="tiktoken", archive=store
        )
        agent = build_coding_agent(
            model=model,
            sandbox=workdir / "project",
            checkpointer=saver,
            store=store,
            middleware=middleware,
        )
        out(
            f"langctx demo: coding agent ({label}), budget {budget} tokens "
            f"(counted {counting_label(middleware.settings.counter)}), SQLite "
            f"{db_path if db else '(temporary)'}, thread {thread}"
        )
        out(f"task: {DEMO_TASK}\n")
        stream = agent.stream(
            {"messages": [HumanMessage(DEMO_TASK, id="task")]},
            config,
            stream_mode=["updates", "custom"],
            durability="sync",  # each step checkpointed before its update: get_state sees it
        )
        for mode, chunk in stream:
            if (
                mode == "custom"
                and isinstance(chunk, dict)
                and chunk.get("event") == "langctx_compaction"
            ):
                if chunk.get("phase") == "end" and (chunk.get("entry_id") or chunk.get("edits")):
                    compactions += 1
                    what = (
                        f"folded {chunk['covered']} messages, quality={chunk['quality']}"
                        if chunk.get("entry_id")
                        else f"{chunk['edits']} placeholder(s)"
                    )
                    out(
                        f"  ↳ compaction [{chunk['trigger']}] {chunk['tokens_before']} → {chunk['tokens_after']} tokens, {what}"
                    )
                continue
            if mode != "updates" or not isinstance(chunk, dict):
                continue
            for node, update in chunk.items():
                # a list only when the step wrote a channel twice (create_agent repairing a
                # malformed tool call, then the middleware's removals)
                parts = [p for p in (update if isinstance(update, list) else [update]) if p]
                if node == "tools":
                    for line in _context_mode_lines(parts):
                        out(line)
                    continue
                if node != "model" or not all(isinstance(p, dict) for p in parts) or not parts:
                    continue
                calls += 1
                values = agent.get_state(config).values
                tokens = view_state(values, middleware.settings, thread_id=thread).context_tokens()
                peak = max(peak, tokens)
                msgs: list[Any] = next(
                    (list(p["messages"]) for p in parts if p.get("messages")), []
                )
                if msgs and getattr(msgs[-1], "text", None):
                    last_text = msgs[-1].text
                if calls % 10 == 0 or calls <= 3:
                    tools = (
                        ", ".join(tc["name"] for tc in getattr(msgs[-1], "tool_calls", []) or [])
                        if msgs
                        else ""
                    )
                    out(f"model call {calls:4d}: context {tokens:6d} tokens  {tools}")
        state = agent.get_state(config).values
        log = full_log(store, thread, state)
        archived = [e for b in read_batches(store, thread, state) for e in b["compactions"]]
    elapsed = time.perf_counter() - started
    full = middleware.settings.counter.count_messages(log)
    # the archive holds the entries that left the channel with their messages: count them all
    entries = list(
        {
            e["id"]: e for e in [*archived, *(state.get("langctx") or {}).get("compactions", [])]
        }.values()
    )
    db_bytes = sum(p.stat().st_size for p in Path(db_path).parent.glob(Path(db_path).stem + "*"))
    out("")
    out(f"final answer      {last_text[:160]}")
    out(f"model calls       {calls:8d}")
    out(
        f"full history      {full:8d} tokens in {len(log)} messages (all kept: {len(state.get('messages', []))} live, the rest archived)"
    )
    out(f"model saw at most {peak:8d} tokens (budget {budget})")
    out(
        f"compactions       {sum(1 for e in entries if e['trigger'] != 'merge'):8d} (+{sum(1 for e in entries if e['trigger'] == 'merge')} merges), persisted in the checkpoint and its archive"
    )
    out(f"SQLite            {db_bytes:8d} bytes (checkpoints + archive)")
    out(f"time              {elapsed:8.1f} s")
    return {
        "calls": calls,
        "peak": peak,
        "full_tokens": full,
        "entries": len(entries),
        "answer": last_text,
        "seconds": elapsed,
        "db": db_path,
        "thread": thread,
    }


def _context_mode_lines(parts: list[Any]) -> list[str]:
    """One line per tool result Context-mode reduced, summarized or stored behind a reference."""
    lines = []
    for part in parts:
        messages = part.get("messages") if isinstance(part, dict) else None
        for m in messages or []:
            stamp = context_mode_stamp(m) if isinstance(m, ToolMessage) else None
            if not stamp or stamp.get("action") in (None, "inline", "fetched"):
                continue
            ref = (
                f" behind {stamp['ref_id']} (fetch_context reads it back)"
                if stamp.get("ref_id")
                else ""
            )
            lines.append(
                f"  ↳ context-mode: {m.name or 'tool'} output {stamp.get('original_tokens', 0):,} "
                f"-> {stamp.get('tokens', 0):,} tokens, {stamp['action']}{ref}"
            )
    return lines
