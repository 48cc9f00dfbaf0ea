"""The conformance matrix: the paths users run, every cell checked for the same invariants
(``_conformance.py`` says what a cell is). The fast cells cover every value of every dimension;
the full product runs in the slow set."""

from __future__ import annotations

import pytest

from tests.integration_tests._agents import run_worker
from tests.integration_tests._conformance import (
    Cell,
    check,
    digest,
    fast_cells,
    full_cells,
    run_cell,
    run_history,
)


@pytest.mark.parametrize("cell", fast_cells(), ids=lambda c: c.id)
def test_fast_cell(cell: Cell) -> None:
    check(run_cell(cell))


@pytest.mark.slow
@pytest.mark.parametrize("cell", full_cells(), ids=lambda c: c.id)
def test_full_cell(cell: Cell) -> None:
    check(run_cell(cell))


TWO_PROCESS_CELLS = [
    {"kind": "ops"},
    {"summarizer": "model_blocking", "kind": "research", "saver": "sqlite"},
    {"face": "node", "archive": "store", "kind": "data"},
]


@pytest.mark.slow
def test_two_processes_send_the_same_requests() -> None:
    """The same session in two processes: every main-model request is the same (background
    summaries are timing-dependent by design, so the cells use the local or a blocking one)."""
    first, _ = run_worker("tests.integration_tests._conformance_worker", TWO_PROCESS_CELLS)
    second, _ = run_worker("tests.integration_tests._conformance_worker", TWO_PROCESS_CELLS)
    here = [digest(run_cell(Cell(**spec))) for spec in TWO_PROCESS_CELLS]
    assert first == second == here


@pytest.mark.parametrize("sync", [True, False], ids=["sync", "async"])
@pytest.mark.parametrize("summarizer", ["local", "model", "model_blocking", "failing"])
def test_chat_history_face(summarizer: str, sync: bool) -> None:
    """``RunnableWithMessageHistory`` (docs/chat-history.md): the history it is given stays within
    the budget, every question reaches the log, and model summaries reach the model."""
    out = run_history(summarizer, sync)
    assert max(out.tokens) <= 1500
    assert [m.content for m in out.full if m.type == "human"] == out.questions
    assert out.folds > 0
    if summarizer.startswith("model"):
        assert len(out.summaries) <= out.folds
        shown = "\n".join(str(m.content) for req in out.requests for m in req)
        lost = [t for t in out.summaries[:-2] if t not in shown]
        assert out.summaries and not lost, (len(out.summaries), lost)
