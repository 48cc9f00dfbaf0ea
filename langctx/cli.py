"""The ``langctx`` command line: a thin skin over the public API.

Library errors become one-line CLI errors (exit 2); ``--help`` documents every command.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from langctx.errors import LangctxError

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
    return parser


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
    except LangctxError as exc:
        print(f"langctx: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
