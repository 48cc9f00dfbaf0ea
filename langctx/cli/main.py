"""The ``langctx`` command line: a thin skin over the public API.

Library errors become one-line CLI errors (exit 2); ``--help`` documents every command.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import logging
import os
import sqlite3
import sys
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

from langctx.errors import ConfigError, LangctxError, LangctxWarning

__all__ = ["build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (exit 2) ending with what to do."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (also used by the docs test)."""
    parser = _Parser(
        prog="langctx", description="Layered, compacting memory for LangChain / LangGraph agents."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="run the demo coding agent offline on SQLite and show each compaction",
        description=(
            "Run the demo coding agent (create_agent + LangctxMiddleware, sandboxed file and "
            "command tools) on a SQLite checkpointer. A scripted model plays a long session "
            "offline; --model NAME uses that OpenAI model instead (needs the openai extra, "
            "langctx[openai], and OPENAI_API_KEY; "
            "--summary-model for the summarizer). Shows live context tokens, each compaction and "
            "the final figures. --engine drives the bare LayeredChatMemory instead."
        ),
    )
    demo.add_argument(
        "--turns",
        type=_positive,
        default=None,
        metavar="N",
        help="agent turns to play (default 120; --engine: 300)",
    )
    demo.add_argument(
        "--budget",
        type=_token_count,
        default=8000,
        metavar="TOKENS",
        help="context budget, e.g. 8k or 8000 (default 8k)",
    )
    demo.add_argument(
        "--model",
        default=None,
        metavar="NAME",
        help="an OpenAI chat model to run instead of the scripted one (needs the openai extra "
        "and OPENAI_API_KEY)",
    )
    demo.add_argument(
        "--summary-model",
        default=None,
        metavar="NAME",
        help="with --model: the OpenAI model that writes summaries (default: the same)",
    )
    demo.add_argument(
        "--db", default=None, help="SQLite checkpoint file (default: a temporary file)"
    )
    demo.add_argument(
        "--engine", action="store_true", help="drive LayeredChatMemory directly, no agent"
    )
    demo.add_argument(
        "--counter",
        default="tiktoken",
        help="--engine token counter: tiktoken | approximate | an encoding name",
    )
    _add_replay(sub)
    _add_inspect(sub)
    return parser


_REPLAY_EPILOG = """\
input formats (detected from the content, or forced with --format):
  langchain    one message per line: {"type": "system|human|ai|tool", "content", "tool_calls", ...}
  openai       a chat-completions request body {"messages": [...]} or a list of messages
  claude-code  a Claude Code session (~/.claude/projects/*/<session>.jsonl)
  pi           a pi coding-agent session (~/.pi/agent/sessions/*/*.jsonl)

examples:
  langctx replay                    # the sample session shipped with langctx
  langctx replay session.jsonl
  langctx replay session.jsonl --budget 8k --plot context.png --json report.json
  langctx replay session.jsonl --budget 8k --html report.html
  langctx replay session.jsonl --window 200k --summarizer gpt-4o-mini --prices openai

exit status: 0 done; 1 a request held an orphan tool result or an unanswered tool call (a langctx
bug: please report it); 2 bad input or options."""


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"expected a whole number >= 1, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _token_count(text: str) -> int:
    from langctx.cli.replay import parse_token_count

    try:
        return parse_token_count(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _add_replay(sub: Any) -> None:
    from langctx.cli.replay import SESSION_FORMATS

    replay = sub.add_parser(
        "replay",
        help="replay a recorded agent session through the memory and report what it saves",
        description=(
            "Replay a recorded agent session through LayeredChatMemory call by call and report, "
            "per model call, the context tokens with and without langctx, the compactions (trigger, "
            "tokens before/after, level, quality), summarizer calls, total input tokens against the "
            "full-history baseline, the unchanged-prefix share of each request (what prompt caching "
            "can reuse) and the amnesia probes (task, user constraints, files modified, latest "
            "failure, next step, the latest user message verbatim, earlier user messages by their "
            "opening) after every compaction."
        ),
        epilog=_REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument(
        "session",
        metavar="SESSION",
        nargs="?",
        help="the session file to replay (default: the sample session shipped with langctx)",
    )
    replay.add_argument(
        "--sample",
        action="store_true",
        help="replay the sample session shipped with langctx (a coding agent, ~80k tokens)",
    )
    replay.add_argument(
        "--budget",
        type=_token_count,
        default=None,
        metavar="TOKENS",
        help="context budget, e.g. 32k or 32000 (default 32k; with --window only: 55%% of it, at most 32k)",
    )
    replay.add_argument(
        "--window",
        type=_token_count,
        default=None,
        metavar="TOKENS",
        help="the model's context window, e.g. 128k (compaction also triggers above window - 16k)",
    )
    replay.add_argument(
        "--summarizer",
        default="local",
        metavar="local|MODEL",
        help="local (offline, deterministic; default) or an OpenAI model name such as "
        "gpt-4o-mini (needs the openai extra and OPENAI_API_KEY)",
    )
    replay.add_argument(
        "--counter",
        default="tiktoken",
        help="token counter: tiktoken (o200k_base, default) | approximate | an encoding name",
    )
    replay.add_argument(
        "--format",
        choices=["auto", *SESSION_FORMATS],
        default="auto",
        help="input format (default: detected from the content)",
    )
    replay.add_argument(
        "--context-mode",
        action="store_true",
        help="pass tool results through Context-mode before the memory (the full pipeline)",
    )
    replay.add_argument(
        "--prices",
        default="anthropic",
        metavar="anthropic|openai|FILE",
        help="price sheet for the modeled cost, with and without langctx (default anthropic; "
        "FILE: JSON like langctx.pricing.PRICE_SHEETS['anthropic'].to_dict())",
    )
    replay.add_argument(
        "--cache-marks",
        action="store_true",
        help="compact where a fold costs least under the --prices sheet "
        "(MemoryConfig(cache_prices=...)) instead of at the high mark only",
    )
    replay.add_argument("--plot", metavar="PNG", help="write a plot of tokens per call to PNG")
    replay.add_argument(
        "--html",
        metavar="PATH",
        help="write the report as one self-contained HTML page (chart of tokens per call, every "
        "compaction with its summary and facts, probes, cost; loads nothing from the network)",
    )
    replay.add_argument(
        "--json",
        metavar="PATH",
        help="write the full report as JSON to PATH ('-': stdout, no table)",
    )
    replay.add_argument(
        "--rows",
        type=int,
        default=20,
        metavar="N",
        help="compaction rows in the terminal report (default 20; 0: all)",
    )
    replay.add_argument(
        "--quiet", action="store_true", help="no progress bar (it is also off when not a terminal)"
    )


def _summarizer(spec: str) -> object:
    """None for "local"; else a ChatOpenAI model (needs the openai extra and OPENAI_API_KEY)."""
    if spec == "local":
        return None
    from langctx.cli.models import openai_chat_model

    return openai_chat_model(
        spec, option="--summarizer", offline="use --summarizer local (offline)"
    )


def _session(args: argparse.Namespace) -> Any:
    """The session to replay: SESSION, else the sample shipped with langctx."""
    from langctx.cli.replay import read_session
    from langctx.cli.samples import sample_session

    fmt = None if args.format == "auto" else args.format
    if args.session is not None and args.sample:
        msg = "give a SESSION file or --sample, not both."
        raise ConfigError(msg)
    if args.session is not None:
        return read_session(args.session, format=fmt)
    with sample_session() as path:
        print(f"replaying the sample session shipped with langctx ({path.name})", file=sys.stderr)
        return read_session(str(path), format=fmt)


def _replay(args: argparse.Namespace) -> int:
    from langctx.cli.replay import replay_session
    from langctx.cli.replay.render import PROGRESS_DELAY, print_report, progress
    from langctx.pricing import price_sheet

    logging.getLogger("langctx").addHandler(logging.NullHandler())  # counted in the report instead
    if args.budget is not None:
        check_budget(args.budget, "--budget")
    for option, path in (("--json", args.json), ("--plot", args.plot), ("--html", args.html)):
        if path and path != "-":
            _check_writable(path, option)
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        msg = "--plot needs matplotlib: pip install 'langctx[cli]' (or leave out --plot)."
        raise ConfigError(msg)
    summarizer = _summarizer(args.summarizer)
    prices = price_sheet(args.prices)  # a bad sheet fails before the replay runs
    budget = args.budget if args.budget is not None or args.window is not None else 32_000
    session = _session(args)
    show = not args.quiet and sys.stderr.isatty()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LangctxWarning)
        with progress(
            enabled=show, label=f"replaying {session.name}", delay=PROGRESS_DELAY
        ) as tick:
            report = replay_session(
                session,
                max_tokens=budget,
                context_window=args.window,
                summarizer=summarizer,
                token_counter=args.counter,
                on_progress=tick,
                context_mode=args.context_mode,
                cache_prices=prices if args.cache_marks else None,
            )
    for w in caught:
        print(f"langctx: warning: {w.message}", file=sys.stderr)
    if args.json == "-":
        json.dump(report.to_dict(prices), sys.stdout, indent=1)
        print()
    else:
        print_report(report, max_rows=max(args.rows, 0), prices=prices)
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(report.to_dict(prices), handle, indent=1)
            print(f"report written to {args.json}")
    if args.plot:
        from langctx.cli.replay.plot import plot_report

        plot_report(report, args.plot)
        if args.json != "-":
            print(f"plot written to {args.plot}")
    if args.html:
        from langctx.cli.report_html import replay_html

        Path(args.html).write_text(replay_html(report, prices=prices), encoding="utf-8")
        if args.json != "-":
            print(f"HTML report written to {args.html}")
    return 1 if report.projection_orphans else 0


_INSPECT_EPILOG = """\
what it shows (from the thread's latest checkpoint, or --checkpoint ID):
  figures   messages in state, context tokens (and the budget, with --budget), full-history tokens
  layers    pinned messages; summaries by level, with their text and the facts ledger; the recent
            layer (messages, tokens, first kept id)
  timeline  every compaction: time, trigger, level, quality, tokens before -> after, messages
            covered, files read and modified
  evictions the eviction log: compactions, merges, placeholders and truncations (in-place edits)

The database is opened read-only and checked before use: nothing is created, set up or migrated.

examples:
  langctx inspect --db checkpoints.sqlite                      # list threads
  langctx inspect --db checkpoints.sqlite --thread fix-parser
  langctx inspect --postgres postgresql://user@host:5432/app --thread t1 --json
  langctx inspect --db checkpoints.sqlite --thread t1 --checkpoint 1f0c2a... --limit 0
  langctx inspect --db checkpoints.sqlite --thread t1 --budget 8k --html thread.html

exit status: 0 done; 2 bad input (missing file, not a checkpoint database, unknown thread or
checkpoint, unreachable server) or options."""


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        msg = f"expected a whole number >= 0, got {text!r}"
        raise argparse.ArgumentTypeError(msg)
    return value


def _add_inspect(sub: Any) -> None:
    inspect = sub.add_parser(
        "inspect",
        help="show a thread's memory (layers, compaction timeline, eviction log) from a checkpoint database",
        description=(
            "Show what langctx holds for a LangGraph thread, read from a checkpoint database\n"
            "(a SqliteSaver file or a PostgresSaver database): the layers the model sees (pinned\n"
            "messages, summaries by level, the recent layer), the compaction timeline, the\n"
            "eviction log and the figures. Without --thread, list the threads with their\n"
            "checkpoint counts."
        ),
        epilog=_INSPECT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = inspect.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--db",
        metavar="PATH",
        help="a SQLite checkpoint database file (SqliteSaver); never created",
    )
    where.add_argument(
        "--postgres",
        metavar="URI",
        help="a PostgreSQL checkpoint database (PostgresSaver), e.g. postgresql://user@host:5432/db",
    )
    inspect.add_argument(
        "--thread", metavar="ID", help="the thread id to show (omit it to list the threads)"
    )
    inspect.add_argument(
        "--checkpoint",
        metavar="ID",
        help="a checkpoint id of the thread (default: its latest checkpoint)",
    )
    inspect.add_argument(
        "--json", action="store_true", help="print the report as JSON on stdout instead of tables"
    )
    inspect.add_argument(
        "--limit",
        type=_non_negative,
        default=None,
        metavar="N",
        help="rows per list (timeline, eviction log, threads), newest kept; 0: all "
        "(default: 20 in the terminal, all with --json)",
    )
    inspect.add_argument(
        "--budget",
        type=_token_count,
        default=None,
        metavar="TOKENS",
        help="the agent's max_tokens, e.g. 32k (not stored in checkpoints; shows how full the "
        "context is)",
    )
    inspect.add_argument(
        "--counter",
        default=None,
        help="token counter for the figures: approximate | tiktoken | an encoding name "
        "(default: the one the run recorded, else approximate)",
    )
    inspect.add_argument(
        "--archive",
        metavar="PATH",
        default=None,
        help="the SqliteStore file of an archive-mode run, read for the full history (default: "
        "DB.archive.sqlite beside --db when it exists, as the demo writes it)",
    )
    inspect.add_argument(
        "--plain", action="store_true", help="plain text, no rich panels or colours"
    )
    inspect.add_argument(
        "--html",
        metavar="PATH",
        help="with --thread: also write the report as one self-contained HTML page (context "
        "tokens per checkpoint, every compaction with its summary and facts, the layers, the "
        "eviction log; loads nothing from the network)",
    )


def _inspect(args: argparse.Namespace) -> int:
    from langctx.cli.inspect import inspect_thread, open_store
    from langctx.cli.inspect.render import (
        DEFAULT_LIMIT,
        print_report,
        print_threads,
        threads_to_dict,
    )

    if args.checkpoint and not args.thread:
        msg = "--checkpoint needs --thread ID (checkpoint ids belong to a thread)."
        raise ConfigError(msg)
    if args.html:
        if not args.thread:
            msg = "--html needs --thread ID (the page shows one thread's memory)."
            raise ConfigError(msg)
        _check_writable(args.html, "--html")
    logging.getLogger("langctx").addHandler(logging.NullHandler())  # notes go in the report
    use_rich = False if args.plain else None
    with open_store(db=args.db, postgres=args.postgres) as store:
        if not args.thread:
            threads = store.threads()
            if args.json:
                json.dump(
                    threads_to_dict(threads, source=store.source, limit=args.limit),
                    sys.stdout,
                    indent=1,
                )
                print()
            else:
                limit = DEFAULT_LIMIT if args.limit is None else args.limit
                print_threads(threads, source=store.source, limit=limit, use_rich=use_rich)
            return 0
        if args.budget is not None:
            check_budget(args.budget, "--budget")
        with _archive_store(args) as archive:
            report = inspect_thread(
                store,
                args.thread,
                checkpoint_id=args.checkpoint,
                budget=args.budget,
                token_counter=args.counter,
                archive=archive,
            )
            history = _inspect_history(args, store, archive, report) if args.html else []
    if args.json:
        print(report.to_json(limit=args.limit))
    else:
        limit = DEFAULT_LIMIT if args.limit is None else args.limit
        print_report(report, limit=limit, use_rich=use_rich)
    if args.html:
        from langctx.cli.report_html import inspect_html

        Path(args.html).write_text(inspect_html(report, history=history), encoding="utf-8")
        print(f"HTML report written to {args.html}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _inspect_history(args: argparse.Namespace, store: Any, archive: Any, report: Any) -> Any:
    """The thread's context per checkpoint, for ``--html`` (a progress bar on a terminal)."""
    from langctx.cli.inspect.history import thread_history
    from langctx.cli.replay.render import PROGRESS_DELAY, progress

    label = f"reading the checkpoints of {args.thread}"
    with progress(
        enabled=sys.stderr.isatty(), label=label, unit="checkpoints", delay=PROGRESS_DELAY
    ) as tick:
        return thread_history(
            store,
            args.thread,
            checkpoint_id=args.checkpoint,
            budget=args.budget,
            token_counter=report.figures["token_counter"],  # the one the report counted with
            archive=archive,
            on_progress=tick,
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``langctx`` command."""
    args = build_parser().parse_args(argv)
    with warnings.catch_warnings():  # restores the hook below on the way out
        warnings.showwarning = _one_line_warnings(warnings.showwarning)
        return _run(args)


def _one_line_warnings(show: Any) -> Any:
    """A ``warnings.showwarning`` that prints a `LangctxWarning` as one line (its message ends
    with the fix) instead of the file, line and source line; other warnings go to ``show``."""

    def one_line(
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: Any = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, LangctxWarning):
            text = str(message).removeprefix("langctx ").removeprefix("langctx: ")
            print(f"langctx: warning: {text}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    return one_line


def _run(args: argparse.Namespace) -> int:
    try:
        if args.command == "demo":
            check_budget(args.budget, "--budget")
            if args.engine:
                from langctx.cli.demo.engine import run_engine_demo

                result = run_engine_demo(
                    turns=args.turns or 300,
                    max_tokens=args.budget,
                    token_counter=args.counter,
                )
                return 0 if all(result["probes"].values()) else 1
            from langctx.cli.demo.run import run_agent_demo

            try:
                run_agent_demo(
                    turns=args.turns or 120,
                    budget=args.budget,
                    db=args.db,
                    model=args.model,
                    summary_model=args.summary_model,
                )
            except Exception as exc:  # the provider of --model (network, key, quota)
                if args.model is None or isinstance(exc, LangctxError):
                    raise  # the offline demo failing is a langctx bug: keep the traceback
                first = (str(exc).strip().splitlines() or [""])[0][:200]
                print(
                    f"langctx: error: the model call failed ({type(exc).__name__}: {first}); "
                    "check the network and OPENAI_API_KEY, or leave out --model to run offline.",
                    file=sys.stderr,
                )
                return 2
            return 0
        if args.command == "replay":
            return _replay(args)
        if args.command == "inspect":
            return _inspect(args)
    except LangctxError as exc:  # one line, whatever a driver quoted in it (a damaged schema)
        print(f"langctx: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped reading (``langctx demo | head``): done
        with contextlib.suppress(OSError):  # nothing more reaches it, not even at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # a path given on the command line
        where = f" {exc.filename!r}" if exc.filename else ""
        print(
            f"langctx: error: cannot use{where}: {exc.strerror or exc}; check the path "
            "(directories are not created).",
            file=sys.stderr,
        )
        return 2
    return 0


@contextlib.contextmanager
def _archive_store(args: argparse.Namespace) -> Iterator[Any]:
    """The archive store ``inspect`` reads, opened read-only (None when there is none)."""
    path = args.archive
    if path is None and args.db:
        beside = Path(args.db).with_suffix(".archive.sqlite")
        path = str(beside) if beside.is_file() else None
    if path is None and args.db and _has_store(args.db):  # langctx.create_agent's, in the file
        path = args.db
    if path is None:
        yield None
        return
    if not Path(path).is_file():
        msg = f"--archive {path}: no such file; give the SqliteStore file of the run."
        raise ConfigError(msg)
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(
        f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False
    )
    try:
        yield SqliteStore(conn)
    finally:
        conn.close()


def _has_store(db: str) -> bool:
    """Whether the SQLite file ``db`` holds a LangGraph store's table (read-only look)."""
    if not Path(db).is_file():
        return False
    try:
        with contextlib.closing(
            sqlite3.connect(f"{Path(db).resolve().as_uri()}?mode=ro", uri=True)
        ) as conn:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='store'")
            return found.fetchone() is not None
    except sqlite3.DatabaseError:
        return False  # not SQLite: the checkpointer's own check says so


def _check_writable(path: str, option: str) -> None:
    """Fail before the work when the file of ``option`` cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        msg = f"{option} {path}: the directory {folder!r} does not exist; create it first."
        raise ConfigError(msg)
    if os.path.isdir(path):
        msg = f"{option} {path}: is a directory; give a file name."
        raise ConfigError(msg)


def check_budget(tokens: int, option: str) -> None:
    """Refuse a budget the default memory cannot honour, naming the option the user typed."""
    from langctx.budgets import smallest_budget
    from langctx.config import MemoryConfig

    try:
        MemoryConfig(max_tokens=tokens)
    except ConfigError as exc:
        smallest = smallest_budget(MemoryConfig())
        msg = f"{option} {tokens} is too small: use {option} {smallest} or more"
        raise ConfigError(msg) from exc


if __name__ == "__main__":
    sys.exit(main())
