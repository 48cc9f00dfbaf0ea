"""The compaction mark that costs least per model call under a provider's prompt cache.

Between two folds each request reads the previous one from the cache (at ``cached_input``
prices) and writes only what is new; a fold writes the summary block and the kept turns anew
(at ``cache_write`` prices). Folding late makes every call read a long context; folding early
rewrites the kept turns more often. With context growing by ``g`` tokens a call from ``C0`` (the
pinned messages, the block and the kept turns, ``R`` of which a fold rewrites) to the mark ``H``,
a call costs on average ``read * (C0 + H) / 2 + g * R * write / (H - C0)``, least at
``H = C0 + sqrt(2 * g * R * write / read)`` (the economic order quantity). The mark never passes
the high mark and stays a tenth of the budget above ``C0``, so a fold always frees room.

Example:
    >>> from langctx import MemoryConfig
    >>> cfg = MemoryConfig(max_tokens=32_000, cache_prices="anthropic")
    >>> cfg.high_mark, cheapest_mark(cfg, tokens=20_000, pinned=500, block=1_000, calls=60)
    (25600, 15452)
    >>> cheapest_mark(MemoryConfig(max_tokens=32_000), tokens=20_000, pinned=500, block=1_000, calls=60)
    25600
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from langctx.config import MemoryConfig

__all__ = ["MIN_CALLS", "cheapest_mark", "mark_floor"]

MIN_CALLS = 3
"""Model calls since the latest cut before their growth per call is trusted."""


def mark_floor(config: MemoryConfig, *, pinned: int, block: int) -> int:
    """The lowest mark :func:`cheapest_mark` can return (the high mark without cache prices):
    below it no call needs the growth of the context."""
    if config.cache_write_ratio is None:
        return config.high_mark
    return min(
        config.high_mark, pinned + _rewrite(config, block) + config.max_tokens_resolved // 10
    )


def cheapest_mark(config: MemoryConfig, *, tokens: int, pinned: int, block: int, calls: int) -> int:
    """The context size above which a compaction is due.

    Args:
        config: the memory's configuration (its ``cache_prices``, marks and budget).
        tokens: the projection's tokens.
        pinned: the pinned messages' tokens (system prompt and task).
        block: the summary block's tokens (0 before the first fold).
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
