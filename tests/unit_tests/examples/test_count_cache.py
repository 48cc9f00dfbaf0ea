"""The examples of `langctx.count_cache`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.count_cache import counter_key
from langctx.tokens.estimate import ApproximateCounter


def test_counter_key() -> None:
    assert counter_key(ApproximateCounter()) == counter_key(ApproximateCounter())

    class Mine(ApproximateCounter): ...

    assert counter_key(Mine()) is None
