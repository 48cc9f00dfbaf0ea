"""The conformance matrix: the paths users run, every cell checked for the same invariants
(``_conformance.py`` says what a cell is). The fast cells cover every value of every dimension;
the full product runs in the slow set."""

from __future__ import annotations

import pytest

from tests.integration_tests._conformance import Cell, check, fast_cells, full_cells, run_cell


@pytest.mark.parametrize("cell", fast_cells(), ids=lambda c: c.id)
def test_fast_cell(cell: Cell) -> None:
    check(run_cell(cell))


@pytest.mark.slow
@pytest.mark.parametrize("cell", full_cells(), ids=lambda c: c.id)
def test_full_cell(cell: Cell) -> None:
    check(run_cell(cell))
