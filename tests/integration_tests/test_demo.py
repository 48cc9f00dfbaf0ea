"""The README's first command: the demo agent runs offline on SQLite, and graphs/ loads."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from langctx.cli.demo.run import run_agent_demo

ROOT = Path(__file__).resolve().parents[2]


def test_agent_demo_runs_offline_on_sqlite(tmp_path: Path) -> None:
    lines: list[str] = []
    result = run_agent_demo(
        turns=40, budget=6000, db=str(tmp_path / "demo.sqlite"), out=lines.append
    )
    assert result["calls"] == 40
    assert result["answer"].startswith("Fixed it")
    assert result["entries"] > 0  # compactions persisted in the checkpoint
    assert result["peak"] <= 6000
    folds = sum(1 for line in lines if "compaction [" in line and "quality=" in line)
    assert folds > 0
    # the summary counts every fold, also those archived with their messages
    (summary,) = [line for line in lines if line.startswith("compactions ")]
    assert int(summary.split()[1]) == folds, (summary, folds)
    assert any("context-mode:" in line and "behind ctx_" in line for line in lines)
    assert (tmp_path / "demo.sqlite").exists()


def test_langgraph_json_points_at_a_graph() -> None:
    spec = json.loads((ROOT / "langgraph.json").read_text())
    path, _, attr = spec["graphs"]["coding_agent"].partition(":")
    module_spec = importlib.util.spec_from_file_location("coding_agent", ROOT / path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    graph = getattr(module, attr)
    assert {"model", "tools"} <= set(graph.get_graph().nodes)


def test_inspect_on_the_demo_database_counts_like_the_demo(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``inspect`` on the demo's database once reported a smaller full history than the demo
    (it did not read the archive beside the database) counted with the estimator (the demo
    counts with tiktoken)."""
    from langctx.cli.main import main

    db = tmp_path / "demo.sqlite"
    result = run_agent_demo(turns=40, budget=6000, db=str(db), out=lambda _: None)
    capsys.readouterr()
    assert main(["inspect", "--db", str(db), "--thread", result["thread"], "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    figures = report["figures"]
    assert figures["token_counter"] == "o200k_base"  # recorded by the run in its channel
    assert figures["full_history_tokens"] == result["full_tokens"]
    assert any("archived messages" in n for n in report["notes"])
