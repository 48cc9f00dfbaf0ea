"""The examples of `langctx.config_checks`'s helpers, moved here from their docstrings."""

from __future__ import annotations

import pytest

from langctx.config_checks import check_timeout
from langctx.errors import ConfigError


def test_check_timeout() -> None:
    with pytest.raises(
        ConfigError,
        match=r"summary_timeout must be a finite number of seconds > 0, or None for no limit; got inf\.$",
    ):
        check_timeout("summary_timeout", float("inf"))
