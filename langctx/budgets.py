"""The smallest budgets a configuration accepts (a search over ``max_tokens``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields

from langctx.config import PINNED_FLOOR_TOKENS, MemoryConfig
from langctx.errors import ConfigError
from langctx.monotone import largest


def smallest_budget(config: MemoryConfig) -> int | None:
    """The smallest ``max_tokens`` that ``config``'s other options accept (None: none does).

    Example:
        >>> smallest_budget(MemoryConfig())
        919
    """
    options = {
        f.name: getattr(config, f.name)
        for f in fields(config)
        if f.init and f.name not in ("max_tokens", "context_window", "keep_recent_tokens")
    }

    def accepted(n: int) -> bool:
        try:
            MemoryConfig(**{**options, "max_tokens": n})
        except ConfigError:
            return False
        return True

    return _smallest(accepted)


def smallest_block_budget(config: MemoryConfig) -> int | None:
    """The smallest ``max_tokens`` whose head budget holds ``config``'s summary block and the
    pinned floor (the properties' arithmetic on unvalidated copies)."""

    def fits(n: int) -> bool:
        trial = object.__new__(MemoryConfig)
        for f in fields(MemoryConfig):
            object.__setattr__(trial, f.name, getattr(config, f.name))
        object.__setattr__(trial, "max_tokens", n)
        object.__setattr__(trial, "context_window", None)
        object.__setattr__(trial, "_memo", {})
        return trial.pinned_cap_tokens >= PINNED_FLOOR_TOKENS

    return _smallest(fits)


def _smallest(ok: Callable[[int], bool], hi: int = 10_000_000) -> int | None:
    """The smallest n in [1, hi] with ok(n), for a monotone ok (None: not even hi)."""
    return largest(lambda n: not ok(n), hi - 1) + 1 if ok(hi) else None
