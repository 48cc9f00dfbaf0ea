"""Run conformance cells in this process; print each run's request digest (one JSON list)."""

from __future__ import annotations

import json
import sys

from tests.integration_tests._conformance import Cell, digest, run_cell

if __name__ == "__main__":
    cells = [Cell(**spec) for spec in json.loads(sys.argv[1])]
    print(json.dumps([digest(run_cell(c)) for c in cells]))
