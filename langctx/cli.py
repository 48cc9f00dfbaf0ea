"""The ``langctx`` command line: a thin skin over the public API.

Library errors become one-line CLI errors (exit 2); ``--help`` documents every command.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import warnings
from collections.abc import Sequence
from typing import Any

from langctx.errors import ConfigError, LangctxError, LangctxWarning

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (also used by the docs test)."""
    parser = argparse.ArgumentParser(
        prog="langctx", description="Layered, compacting memory for LangChain / LangGraph agents."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = sub.add_parser(
        "demo",
        help="run a long scripted coding-agent session offline and show each compaction",
        description="Run a long scripted coding-agent session offline (no API key) and show live context tokens, each compaction and the final figures.",
    )
    demo.add_argument("--turns", type=int, default=300, help="agent turns to play (default 300)")
    demo.add_argument(
        "--budget", type=int, default=8000, help="context budget in tokens (default 8000)"
    )
    demo.add_argument(
        "--counter",
        default="tiktoken",
        help="token counter: tiktoken | approximate | an encoding name",
    )
    _add_replay(sub)
    return parser


_REPLAY_EPILOG = """\
input formats (detected from the content, or forced with --format):
  langchain    one message per line: {"type": "system|human|ai|tool", "content", "tool_calls", ...}
  openai       a chat-completions request body {"messages": [...]} or a list of messages
  claude-code  a Claude Code session (~/.claude/projects/*/<session>.jsonl)
  pi           a pi coding-agent session (~/.pi/agent/sessions/*/*.jsonl)

examples:
  langctx replay session.jsonl
  langctx replay session.jsonl --budget 8k --plot context.png --json report.json
  langctx replay session.jsonl --window 200k --summarizer gpt-4o-mini

exit status: 0 done; 1 a request held an orphan tool result or an unanswered tool call (a langctx
bug: please report it); 2 bad input or options."""


def _token_count(text: str) -> int:
    from langctx.replay import parse_token_count

    try:
        return parse_token_count(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _add_replay(sub: Any) -> None:
    from langctx.replay import SESSION_FORMATS

    replay = sub.add_parser(
        "replay",
        help="replay a recorded agent session through the memory and report what it saves",
        description=(
            "Replay a recorded agent session through LayeredChatMemory call by call and report, "
            "per model call, the context tokens with and without langctx, the compactions (trigger, "
            "tokens before/after, level, quality), summarizer calls, total input tokens against the "
            "full-history baseline, the unchanged-prefix share of each request (what prompt caching "
            "can reuse) and the amnesia probes (task, user constraints, files modified, latest "
            "failure, next step) after every compaction."
        ),
        epilog=_REPLAY_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    replay.add_argument("session", metavar="SESSION", help="the session file to replay")
    replay.add_argument(
        "--budget",
        type=_token_count,
        default=None,
        metavar="TOKENS",
        help="context budget, e.g. 32k or 32000 (default 32k; with --window only: 55%% of it)",
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
        "gpt-4o-mini (needs OPENAI_API_KEY)",
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
    replay.add_argument("--plot", metavar="PNG", help="write a plot of tokens per call to PNG")
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
    """None for "local"; else a ChatOpenAI model (needs OPENAI_API_KEY)."""
    if spec == "local":
        return None
    if not os.environ.get("OPENAI_API_KEY"):
        msg = (
            f"--summarizer {spec} needs OPENAI_API_KEY in the environment; set it, or use "
            "--summarizer local (offline)."
        )
        raise ConfigError(msg)
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=spec)


def _replay(args: argparse.Namespace) -> int:
    from langctx.replay import read_session, replay_session
    from langctx.replay.render import print_report, progress

    logging.getLogger("langctx").addHandler(logging.NullHandler())  # counted in the report instead
    summarizer = _summarizer(args.summarizer)
    budget = args.budget if args.budget is not None or args.window is not None else 32_000
    session = read_session(args.session, format=None if args.format == "auto" else args.format)
    show = not args.quiet and sys.stderr.isatty()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", LangctxWarning)
        with progress(enabled=show, label=f"replaying {session.name}") as tick:
            report = replay_session(
                session,
                max_tokens=budget,
                context_window=args.window,
                summarizer=summarizer,
                token_counter=args.counter,
                on_progress=tick,
            )
    for w in caught:
        print(f"langctx: warning: {w.message}", file=sys.stderr)
    if args.json == "-":
        json.dump(report.to_dict(), sys.stdout, indent=1)
        print()
    else:
        print_report(report, max_rows=max(args.rows, 0))
        if args.json:
            with open(args.json, "w", encoding="utf-8") as handle:
                json.dump(report.to_dict(), handle, indent=1)
            print(f"report written to {args.json}")
    if args.plot:
        from langctx.replay.plot import plot_report

        plot_report(report, args.plot)
        if args.json != "-":
            print(f"plot written to {args.plot}")
    return 1 if report.projection_orphans else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``langctx`` command."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            from langctx.demo.engine import run_engine_demo

            result = run_engine_demo(
                turns=args.turns, max_tokens=args.budget, token_counter=args.counter
            )
            return 0 if all(result["probes"].values()) else 1
        if args.command == "replay":
            return _replay(args)
    except LangctxError as exc:
        print(f"langctx: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
