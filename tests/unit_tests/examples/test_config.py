"""The examples of `langctx.config`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.config import config_from


def test_config_from() -> None:
    assert config_from(None, {"max_tokens": 4000}).max_tokens == 4000
