"""Dry run of the replay's ``request_status`` probe before the summary block renders requests.

Every request langctx builds after its first compaction gets a ``<langctx:requests>`` section
written from :mod:`langctx.requests`' rule (the statuses the summary block will show), in the
layout the probe reads; the replay then grades it against the truth of the raw transcript on the
38 recorded sessions at 8k and 32k. ``--all`` lists every request; by default the ones verbatim in
the window are left out (the task and the newest open one stay), as a summary would.

Run: ``uv run python bench/request_status_dry_run.py [--all]`` (about a minute per budget).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trajectories"
LABEL = {"answered": "answered", "open": "open — act on this", "interrupted": "open, interrupted"}


def section(log: list[Any], window: set[str], every: bool) -> str | None:
    """The section a renderer following ``langctx.requests`` would write for ``log``."""
    from langctx.requests import first_words, statuses, track_answers
    from langctx.user_messages import user_text

    requests = [(str(m.id), user_text(m)) for m in log if user_text(m)]
    if not requests:
        return None
    answers, _ = track_answers(log, None)
    lines = ["<langctx:requests>", "The user's requests, oldest first."]
    for k, (rid, status) in enumerate(statuses([r for r, _ in requests], answers)):
        text = requests[k][1]
        if not every and k and rid in window and status != "open":
            continue
        tail = f' → the agent answered: "{answers[rid]}"' if rid in answers else ""
        if k < len(requests) - 3:  # older ones by their opening words
            lines.append(f'- [{LABEL[status]}] "{first_words(text, 40)}"{tail}')
        elif "\n" in text or '"' in text:
            lines += [f'- [{LABEL[status]}] """', *text.splitlines(), '"""' + tail]
        else:
            lines.append(f'- [{LABEL[status]}] "{text}"{tail}')
    return "\n".join([*lines, "</langctx:requests>"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--all", action="store_true", help="list the window's requests too")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from langchain_core.messages import HumanMessage

    import langctx.cli.replay.engine as engine
    from langctx.cli.replay import read_session, replay_session

    class Showing(engine.LayeredChatMemory):  # type: ignore[misc]
        def build_context(self, *a: Any, **k: Any) -> list[Any]:
            ctx = list(super().build_context(*a, **k))
            text = section(self.messages, {str(m.id) for m in ctx}, args.all)
            if not self.compactions or text is None:
                return ctx
            return [HumanMessage(text, id="langctx-summary-dry-run"), *ctx]

    engine.LayeredChatMemory = Showing  # type: ignore[misc]
    for budget in (8_000, 32_000):
        pooled: dict[str, int] = {}
        for path in sorted(DATA.glob("*/*.messages.jsonl")):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                report = replay_session(read_session(path), max_tokens=budget)
            for key, value in report.request_status().items():
                pooled[key] = pooled.get(key, 0) + value
            for loss in report.losses():
                if loss.probe == "request_status":
                    print(f"  {budget:>6} {path.parent.name}/{path.name[:40]}: {loss}")
        print(budget, pooled)
    return 0


if __name__ == "__main__":
    sys.exit(main())
