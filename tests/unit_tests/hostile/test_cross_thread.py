"""Cross-thread reads with ids chosen by hypothesis (issue 41, items 1 and 8): an owner run stores
a giant tool output holding a secret (``create_agent`` + ``LangctxMiddleware`` +
``ContextModeMiddleware``, references in the graph's store); a second run with another thread
id (or none), any first-message id, calls ``fetch_context`` on the owner's reference or on a
forged one. On InMemoryStore and SqliteStore (PostgreSQL and other processes:
tests/integration_tests/test_run_isolation.py).

The property: the owner reads its output back; the other run never does."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from langctx.markers import NO_THREAD
from tests.integration_tests._isolation import SECRET, run_agent

IDS = st.one_of(
    st.text(min_size=1, max_size=12),
    st.sampled_from(["1", NO_THREAD, f"{NO_THREAD}:1", "", " ", "%", "..", "a/b", "x" * 300]),
)
THREADS = st.one_of(st.none(), IDS)


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[BaseStore]:
    if request.param == "memory":
        yield InMemoryStore()
    else:
        with SqliteStore.from_conn_string(str(tmp_path / "store.sqlite")) as sqlite:
            sqlite.setup()
            yield sqlite


def _forged(ref: str, how: str) -> str:
    """``ref`` as an attacker might rewrite it."""
    return {
        "same": ref,
        "upper": ref.upper(),
        "spaced": f" {ref} ",
        "prefixed": f"{NO_THREAD}:{ref}",
        "truncated": ref[:-1],
        "pathlike": f"../{ref}",
    }[how]


@settings(
    max_examples=30,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    owner=THREADS,
    other=THREADS,
    owner_first=IDS,
    other_first=IDS,
    how=st.sampled_from(["same", "upper", "spaced", "prefixed", "truncated", "pathlike"]),
)
def test_no_run_reads_another_runs_stored_output(
    store: BaseStore,
    owner: str | None,
    other: str | None,
    owner_first: str,
    other_first: str,
    how: str,
) -> None:
    assume(other is None or other != owner)  # the same thread id is the same thread
    mine = run_agent(store, owner, owner_first, None)
    if mine["refused"] is not None:  # a thread id the middleware refuses (the reserved one)
        assert "\n" not in mine["refused"]
        return
    assert len(mine["refs"]) == 1 and SECRET in mine["fetched"][0], mine  # the owner reads it
    theirs = run_agent(store, other, other_first, _forged(mine["refs"][0], how))
    assert not any(SECRET in text for text in theirs["fetched"]), (owner, other, theirs)
