"""Run in a NEW process by the isolation tests: one run of an agent over a shared SQLite store.

Usage: ``python -m tests.integration_tests._isolation_worker JOBS_JSON``: a list of jobs, each with
``db`` (the SQLite file of the store), ``thread_id`` (or null: a run without a thread),
``first_id`` (the id of the run's first message) and ``ref_id`` (null: the run reads a giant
output and reports its reference; else it calls ``fetch_context`` on ``ref_id``). It prints one
JSON line: per job, what :func:`tests.integration_tests._isolation.run_agent` returned.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langgraph.store.sqlite import SqliteStore

from tests.integration_tests._isolation import run_agent


def main(job: dict[str, Any]) -> dict[str, Any]:
    with SqliteStore.from_conn_string(job["db"]) as store:
        store.setup()
        return run_agent(store, job["thread_id"], job["first_id"], job["ref_id"])


if __name__ == "__main__":
    print(json.dumps([main(job) for job in json.loads(sys.argv[1])]))
