"""Checks of configuration values: sizes, positive ints, ratios, timeouts (one-line ConfigErrors)."""

from __future__ import annotations

import math

from langctx.errors import ConfigError

MAX_BUDGET_TOKENS = 100_000_000
"""The largest token budget or window a config takes (10**8; the largest windows are ~10**7)."""


def check_timeout(name: str, value: object, *, zero: bool = False) -> None:
    """Refuse a timeout that is not a finite number of seconds > 0 (>= 0 with ``zero``) or None
    (no limit)."""
    if value is None:
        return
    if not isinstance(value, int | float) or isinstance(value, bool) or not value < math.inf:
        ok = False
    else:
        ok = 0 <= value if zero else 0 < value
    if not ok:
        least = ">= 0" if zero else "> 0"
        msg = f"{name} must be a finite number of seconds {least}, or None for no limit; got {value!r}."
        raise ConfigError(msg)


def size(name: str, value: object, whole: int | None, whole_name: str) -> object:
    """``value`` in tokens: an int as is, ``("tokens", n)``, or ``("fraction", f)`` of ``whole``."""
    if not isinstance(value, tuple):
        return value  # None or an int; anything else fails the int check after
    if len(value) != 2 or value[0] not in ("tokens", "fraction"):
        msg = f"{name} must be an int, ('tokens', n) or ('fraction', f); got {value!r}."
        raise ConfigError(msg)
    kind, amount = value
    if kind == "tokens":
        return amount
    if not isinstance(amount, int | float) or isinstance(amount, bool) or not 0 < amount <= 1:
        msg = f"{name}=('fraction', f) needs 0 < f <= 1, got {amount!r}."
        raise ConfigError(msg)
    if whole is None:
        msg = f"{name}=('fraction', {amount}) needs {whole_name} to be set (a fraction of what?)."
        raise ConfigError(msg)
    return max(1, int(whole * amount))


def positive(name: str, value: object, *, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        msg = f"{name} must be a positive int, got {value!r}."
        raise ConfigError(msg)


def budget(name: str, value: object, *, optional: bool = False) -> None:
    """Refuse a token count that is not a positive int up to :data:`MAX_BUDGET_TOKENS`."""
    positive(name, value, optional=optional)
    if isinstance(value, int) and value > MAX_BUDGET_TOKENS:
        msg = f"{name} must be at most {MAX_BUDGET_TOKENS:,} tokens, got {value:,}."
        raise ConfigError(msg)


def non_negative(name: str, value: object, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        msg = f"{name} must be {what}, got {value!r}."
        raise ConfigError(msg)


def ratio(name: str, value: object) -> None:
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 < value < 1:
        msg = f"{name} must be a number strictly between 0 and 1, got {value!r}."
        raise ConfigError(msg)


def share_or_none(name: str, value: object, zero: str) -> None:
    """Refuse a share of the budget that is not a number from 0 (``zero`` says what 0 does) to
    below 1."""
    if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < 1:
        msg = f"{name} must be a number from 0 ({zero}) to below 1, got {value!r}."
        raise ConfigError(msg)


def tool_names(name: str, value: object) -> tuple[str, ...]:
    """``value`` as a tuple of tool names: a list, tuple or set of non-empty strings (a single
    string is refused: it reads as its characters)."""
    if isinstance(value, str) or not isinstance(value, list | tuple | set | frozenset):
        msg = (
            f"{name} must be a list or tuple of tool names, got {value!r:.80}; for one tool "
            f"write {name}=({value!r:.40},)."
            if isinstance(value, str)
            else f"{name} must be a list or tuple of tool names, got {value!r:.80}."
        )
        raise ConfigError(msg)
    bad = [v for v in value if not isinstance(v, str) or not v.strip()]
    if bad:
        msg = f"{name} must hold tool names (non-empty strings), got {bad[0]!r:.80}."
        raise ConfigError(msg)
    return tuple(sorted(value)) if isinstance(value, set | frozenset) else tuple(value)
