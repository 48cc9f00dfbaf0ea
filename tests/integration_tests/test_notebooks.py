"""Execute every notebook in ``notebooks/`` top to bottom, offline, as CI must.

Each notebook is read into memory and run by nbclient in a fresh kernel whose working directory
is a temporary folder; the executed copy is written there too, never over the file in the
repository (a test checks that the files are unchanged). A cell that raises, or any output on
stderr (a warning, a log line), fails the test with the cell's source and output.

``04_replay_real_sessions`` runs twice: against ``../shared/data/trajectories`` (marked
``trajectories``: skipped without the data, a failure under ``LANGCTX_REQUIRE_DATA``) and with the
data made unreachable, where it must fall back to the scripted session without an error.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from tests._helpers import require_data

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"
EXPECTED = [
    "01_quickstart",
    "02_langgraph_agent",
    "03_context_mode",
    "04_replay_real_sessions",
]
CELL_TIMEOUT = 300  # seconds per cell; all four notebooks together take well under 2 minutes
REPLAY = "04_replay_real_sessions"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _problems(nb: Any) -> list[str]:
    """Error outputs and stderr streams of an executed notebook, with the cell that made them."""
    found = []
    for index, cell in enumerate(nb.cells):
        for output in cell.get("outputs", []):
            if output.get("output_type") == "error":
                found.append(f"cell {index}: {output['ename']}: {output['evalue']}")
            elif output.get("output_type") == "stream" and output.get("name") == "stderr":
                found.append(f"cell {index} wrote to stderr: {output['text'][:500]}")
    return found


def _stdout(nb: Any) -> str:
    return "".join(
        output.get("text", "")
        for cell in nb.cells
        for output in cell.get("outputs", [])
        if output.get("output_type") == "stream" and output.get("name") == "stdout"
    )


def execute(name: str, tmp_path: Path, **env: str) -> Any:
    """Run ``notebooks/<name>.ipynb`` in a kernel working in ``tmp_path``; return the executed copy."""
    source = NOTEBOOKS / f"{name}.ipynb"
    before = _digest(source)
    nb = nbformat.read(source, as_version=4)
    client = NotebookClient(
        nb,
        timeout=CELL_TIMEOUT,
        startup_timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute(env={**os.environ, **env})
    nbformat.write(nb, tmp_path / f"{name}.executed.ipynb")
    assert _digest(source) == before, f"executing {source.name} changed the file in the repository"
    problems = _problems(nb)
    assert not problems, "\n".join(problems)
    return nb


def test_the_four_notebooks_are_there_with_their_outputs() -> None:
    names = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert names == EXPECTED
    for name in names:
        nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert code, name
        unexecuted = [
            i for i, c in enumerate(nb.cells) if c.cell_type == "code" and c.execution_count is None
        ]
        assert not unexecuted, f"{name}: cells {unexecuted} were saved without being executed"
        assert any(c.outputs for c in code), f"{name}: saved without outputs"
        assert not _problems(nb), f"{name}: saved with errors: {_problems(nb)}"


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in EXPECTED if n != REPLAY])
def test_notebook_runs_offline(name: str, tmp_path: Path) -> None:
    execute(name, tmp_path)


@pytest.mark.slow
@pytest.mark.trajectories
def test_replay_notebook_on_the_recorded_sessions(tmp_path: Path) -> None:
    data = require_data()
    nb = execute(REPLAY, tmp_path, LANGCTX_TRAJECTORIES=str(data))
    out = _stdout(nb)
    assert f"recorded sessions: {os.path.relpath(data, tmp_path)}" in out  # no machine path
    assert "pi-mono/before-compaction" in out


@pytest.mark.slow
def test_replay_notebook_without_the_data_falls_back(tmp_path: Path) -> None:
    nb = execute(REPLAY, tmp_path, LANGCTX_TRAJECTORIES=str(tmp_path / "absent"))
    out = _stdout(nb)
    assert "are not here" in out
    assert "demo/coding-session" in out
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 3
