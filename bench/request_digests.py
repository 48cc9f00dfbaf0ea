"""A sha256 of every request langctx builds on the recorded sessions: a refactor's guard.

Every session of ``../shared/data/trajectories`` is replayed at 8k and 32k (``langctx replay``'s
engine, exact o200k counts, the local summarizer); each projection the memory builds is hashed.
Run it on two checkouts and compare: a change that must not move a request (a refactor, a cache)
leaves every digest as it was.

Run from the repository root::

    uv run --no-sync python bench/request_digests.py /tmp/before.json
    # ... change the code ...
    uv run --no-sync python bench/request_digests.py /tmp/after.json --against /tmp/before.json

Prints the number of requests and, with ``--against``, the sessions whose requests differ (the
first request that does); exits 1 when any does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trajectories"
BUDGETS = (8_000, 32_000)


def digests(data: Path) -> dict[str, list[str]]:
    """Session@budget -> the sha256 of each request built, in order."""
    sys.path.insert(0, str(ROOT))
    from langchain_core.messages import messages_to_dict

    from langctx._tiktoken_offline import seed_tiktoken_cache
    from langctx.cli.replay import read_session, replay_session
    from langctx.engine import core

    seed_tiktoken_cache()
    logging.getLogger("langctx").addHandler(logging.NullHandler())
    out: dict[str, list[str]] = {}
    current: list[str] = []
    build: Callable[[Any], list[Any]] = core.MemoryCore.build_context

    def hashed(memory: Any) -> list[Any]:
        request = build(memory)
        text = json.dumps(messages_to_dict(request), sort_keys=True, default=str)
        current.append(hashlib.sha256(text.encode()).hexdigest())
        return request

    core.MemoryCore.build_context = hashed  # type: ignore[method-assign]
    try:
        for path in sorted(data.glob("*/*.messages.jsonl")):
            session = read_session(path)
            for budget in BUDGETS:
                current = out.setdefault(f"{path.parent.name}/{path.name}@{budget}", [])
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    replay_session(session, max_tokens=budget, token_counter="tiktoken")
    finally:
        core.MemoryCore.build_context = build  # type: ignore[method-assign]
    return out


def differences(before: dict[str, list[str]], after: dict[str, list[str]]) -> list[str]:
    """One line per session whose requests differ: where the first one does."""
    lines = []
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key, []), after.get(key, [])
        if a != b:
            first = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
            at = min(len(a), len(b)) if first is None else first
            lines.append(f"{key}: {len(a)} -> {len(b)} requests, first difference at {at}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="where to write the digests (JSON)")
    parser.add_argument("--against", type=Path, help="digests of another checkout to compare")
    parser.add_argument("--data", type=Path, default=DATA, help="trajectories folder")
    args = parser.parse_args(argv)
    found = digests(args.data)
    args.out.write_text(json.dumps(found))
    print(f"{sum(map(len, found.values()))} requests in {len(found)} session replays")
    if args.against is None:
        return 0
    changed = differences(json.loads(args.against.read_text()), found)
    print("\n".join(changed) if changed else "every request as before")
    return 1 if changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
