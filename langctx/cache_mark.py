"""The compaction mark that costs least per model call under a provider's prompt cache.

The mark is ``C0 + sqrt(2 * g * R * write / read)`` (the economic order quantity; docs/caching.md).

Example:
    >>> from langctx import MemoryConfig
    >>> cfg = MemoryConfig(max_tokens=32_000, cache_prices="anthropic")
    >>> cfg.high_mark, cheapest_mark(cfg, tokens=20_000, pinned=500, block=1_000, calls=60)
    (25600, 15452)
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langctx.config import MemoryConfig

MIN_CALLS = 3
"""Model calls since the latest cut before their growth per call is trusted."""


def mark_floor(config: MemoryConfig, *, pinned: int, block: int) -> int:
    """The lowest mark :func:`cheapest_mark` can return (the high mark without cache prices)."""
    if config.cache_write_ratio is None:
        return config.high_mark
    return min(
        config.high_mark, pinned + _rewrite(config, block) + config.max_tokens_resolved // 10
    )


def cheapest_mark(config: MemoryConfig, *, tokens: int, pinned: int, block: int, calls: int) -> int:
    """The context size above which a compaction is due.

    Args:
        tokens: the projection's tokens; ``pinned``, ``block``: those of the pinned messages and
            the summary block (0 before the first fold).
        calls: AI messages since the latest cut (in the projection).
    """
    ratio = config.cache_write_ratio
    if ratio is None or calls < MIN_CALLS:
        return config.high_mark
    rewrite = _rewrite(config, block)
    growth = max(0, tokens - pinned - block) / calls
    band = max(config.max_tokens_resolved // 10, int(math.sqrt(2 * growth * rewrite * ratio)))
    return min(config.high_mark, pinned + rewrite + band)


def _rewrite(config: MemoryConfig, block: int) -> int:
    """What a fold writes to the cache anew: the summary block and the kept recent turns."""
    return max(block, config.max_summary_tokens_resolved) + config.keep_recent_tokens_resolved
