"""langchain-core's vendored tests run once, in the ordinary pytest run, and in full: a skip fails."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
VENDORED = (HERE / "chat_history", HERE / "runnables")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any]:
    outcome = yield
    report = outcome.get_result()
    if report.skipped and any(item.path.is_relative_to(d) for d in VENDORED):
        report.outcome = "failed"
        report.longrepr = (
            f"{item.nodeid} was skipped ({report.longrepr}); every vendored langchain-core test "
            "must run against the adapter: fix the shim or tests/upstream/refresh.sh"
        )
