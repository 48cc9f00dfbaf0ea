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
