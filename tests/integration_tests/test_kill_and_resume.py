"""A run SIGKILLed at random points and resumed sends the model what the run uninterrupted sends.

Background summaries are on (the default) with a model summarizer: each kill lands in a model
call, while the summary its fold started runs, and the resumed process must still apply it where
the uninterrupted run did. (Kills at arbitrary moments of a step were tried too; LangGraph then
sometimes leaves a checkpoint from which the run cannot continue as it would have, whatever the
middleware.) Each process
(:mod:`tests.integration_tests._kill_resume_worker`) logs every model input before the model
answers; a call made again after a kill (its step was not checkpointed) must be the same call.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.integration_tests._kill_resume_worker import TURNS

ROOT = Path(__file__).resolve().parents[2]
MODULE = "tests.integration_tests._kill_resume_worker"


def _start(uri: Path, log: Path, kill_at: int | None = None) -> subprocess.Popen[str]:
    args = [] if kill_at is None else [str(kill_at)]
    return subprocess.Popen(
        [sys.executable, "-m", MODULE, str(uri), str(log), *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _calls(log: Path) -> list[dict[str, Any]]:
    if not log.exists():
        return []
    lines = log.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.endswith("}")]


def _block(messages: list[dict[str, Any]]) -> str | None:
    """The id of the summary block a model input holds (None: none yet)."""
    return next((m["id"] for m in messages if str(m["id"]).startswith("langctx-summary-")), None)


def _finish(proc: subprocess.Popen[str]) -> None:
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0 and out.strip() == "done", err[-3000:]


@pytest.mark.slow  # five worker processes, ~30 s
@pytest.mark.parametrize("seed", [1, 2])
def test_killed_and_resumed_run_sends_the_inputs_of_the_uninterrupted_run(
    tmp_path: Path, seed: int
) -> None:
    reference_log = tmp_path / "reference.jsonl"
    _finish(_start(tmp_path / "reference.sqlite", reference_log))
    reference = {c["i"]: c["input"] for c in _calls(reference_log)}
    assert sorted(reference) == list(range(TURNS + 1))

    # kill in calls whose fold just started a background summary (the summary block changed)
    folds = [i for i in range(1, TURNS) if _block(reference[i]) != _block(reference[i - 1])]
    kills = sorted(random.Random(seed).sample(folds[1:-1], 3))
    uri, log = tmp_path / "killed.sqlite", tmp_path / "killed.jsonl"
    for at in kills:  # the process kills itself inside the model call
        proc = _start(uri, log, at)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, err[-3000:]
    _finish(_start(uri, log))

    calls = _calls(log)
    assert {c["i"] for c in calls} == set(reference)
    differ = [c["i"] for c in calls if c["input"] != reference[c["i"]]]
    assert not differ, f"calls {differ[:5]} differ from the uninterrupted run's (kills at {kills})"
    remade = len(calls) - len(reference)
    assert remade >= 0
