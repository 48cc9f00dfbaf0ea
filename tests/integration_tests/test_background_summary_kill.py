"""A process killed while a background summary runs: the thread resumes with nothing lost."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from langctx.engine import background
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.stores.checkpoints import open_checkpointer
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    drive,
    every_compaction,
    middleware_agent,
    session_script,
    session_tools,
)
from tests.integration_tests._summary_kill_worker import BUDGET, TURNS


def _folded(entries: list[dict[str, Any]]) -> list[str]:
    """Every message id the entries folded themselves (merges fold none)."""
    return [i for e in entries for i in e["covered_ids"]]


@pytest.mark.slow
def test_kill_during_a_background_summary_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    uri = str(tmp_path / "killed.sqlite")
    marker = tmp_path / "summarizing"
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.integration_tests._summary_kill_worker", uri, str(marker)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), proc.communicate()[1][-2000:]
    time.sleep(1.0)  # the agent goes on meanwhile: more turns are checkpointed
    proc.send_signal(signal.SIGKILL)
    _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, stderr[-2000:]

    asked: list[SummaryRequest] = []

    def summarizer(request: SummaryRequest) -> str:
        asked.append(request)
        return "Goal:\n- fix the parser\nCurrent status:\n- resumed after a crash"

    background.clear()
    cfg = {"configurable": {"thread_id": "killed"}, "recursion_limit": 5000}
    with open_checkpointer(uri) as saver:
        script = session_script(TURNS, seed=5)
        model = ScriptedChatModel(responses=script.responses)
        middleware = LangctxMiddleware(
            max_tokens=BUDGET,
            summarizer=summarizer,
            summary_threshold_tokens=0,
            background_summaries=False,  # the resumed run summarizes on the spot
        )
        graph = middleware_agent(model, session_tools(script.outputs), middleware, saver)
        before = graph.get_state(cfg).values
        entries = every_compaction(before)
        mechanical = [e for e in entries if e["quality"] == "mechanical"]
        assert mechanical, "the killed run wrote its folds with the local summary"
        assert not any(e["quality"] == "model" for e in entries)  # no summary ever came back
        folded = _folded(entries)
        assert len(folded) == len(set(folded))
        ids = [m.id for m in full_log(before)]
        assert len(ids) == len(set(ids)) and set(folded) <= set(ids)
        # play the rest of the session (the checkpoint says where the killed run stopped)
        done = sum(1 for m in full_log(before) if m.type == "ai")
        assert done < len(script.responses), "the kill landed after the session's end"
        model.responses[:] = script.responses[done:]
        out, _ = drive(lambda x: graph.invoke(x, cfg), model, None)
    after = every_compaction(out)
    folded_after = _folded(after)
    assert len(folded_after) == len(set(folded_after))  # nothing folded twice
    assert set(folded) <= set(folded_after)  # nothing the killed run folded is forgotten
    ids = [m.id for m in full_log(out)]
    assert len(ids) == len(set(ids))
    # the mechanical summaries left by the killed run were summarized by the model after all
    absorbed = {m for e in after if e["quality"] == "model" for m in e["merged_from"]}
    last = mechanical[-1]
    assert last["id"] in absorbed or any(
        set(last["covered_ids"]) <= {m.id for m in r.messages} for r in asked
    )
