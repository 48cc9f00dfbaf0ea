"""The README's first command: the demo agent runs offline on SQLite, and graphs/ loads."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

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
    assert any("compaction [" in line for line in lines)
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
