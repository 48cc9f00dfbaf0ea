"""A multi-request thread through ``create_agent`` + ``LangctxMiddleware`` + SqliteSaver, resumed
in a second process: every model input holds the active request verbatim and every earlier one
at least by its first sentence."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.integration_tests._requests_worker import REQUESTS

ROOT = Path(__file__).resolve().parents[2]


def _flat(text: str) -> str:
    return " ".join(text.split())


def _run(db: Path, out: Path, first: int, last: int, budget: int) -> list[list[str]]:
    args = [str(db), str(out), str(first), str(last), str(budget)]
    cmd = [sys.executable, "-m", "tests.integration_tests._requests_worker", *args]
    subprocess.run(cmd, cwd=ROOT, check=True, timeout=300)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.parametrize("budget", [4000, 8000])
def test_every_request_is_in_view_across_two_processes(tmp_path: Path, budget: int) -> None:
    db = tmp_path / "thread.sqlite"
    calls = _run(db, tmp_path / "a.jsonl", 0, 1, budget)
    calls += _run(db, tmp_path / "b.jsonl", 2, 3, budget)
    assert len(calls) == 4 * 13
    compacted = 0
    for n, texts in enumerate(calls):
        said = REQUESTS[: n // 13 + 1]
        seen = _flat("\n".join(texts))
        compacted += "[langctx] Earlier conversation history was compacted" in seen
        assert _flat(said[-1]) in seen, f"call {n}: the active request is not in view"
        for earlier in said[:-1]:
            assert _flat(earlier.split(". ")[0].split(": ")[0]) in seen, (
                f"call {n}: lost {earlier!r}"
            )
    assert compacted >= 20  # the requests were kept through compactions, not for want of one


@pytest.mark.slow
@pytest.mark.parametrize("budget", [4000, 8000])
def test_answered_requests_say_so_across_two_processes(tmp_path: Path, budget: int) -> None:
    """After every turn, each earlier request the block lists is answered, with its answer's first
    line; the active one is never shown answered, and no next step names an answered one."""
    db = tmp_path / "thread.sqlite"
    calls = _run(db, tmp_path / "a.jsonl", 0, 1, budget)
    calls += _run(db, tmp_path / "b.jsonl", 2, 3, budget)
    graded = 0
    for n, texts in enumerate(calls):
        active = n // 13
        seen = "\n".join(texts)
        found = re.search(r"<langctx:requests>\n(.*?)\n</langctx:requests>", seen, re.S)
        for status, rest in re.findall(
            r"^- \[([^\]]+)\] (.*)$", found.group(1) if found else "", re.M
        ):
            k = next((k for k, r in enumerate(REQUESTS) if rest.startswith(f'"{r[:40]}')), None)
            if k is None:
                continue
            graded += 1
            done = f"Done with request {k + 1}."
            if status == "answered":
                assert k < active and f'the agent answered: "{done}"' in rest, (n, k)
            else:  # the newest folded request: its answer, if any, is below the block
                assert status.startswith("latest: act on it"), (n, k, status)
                assert k == active or done in seen.split("</langctx:requests>")[-1], (n, k)
        for step in re.findall(r"Next step:\n- (.*)", seen):
            assert not any(r[:40] in step for r in REQUESTS[:active]), (n, step)
    assert graded >= 20
