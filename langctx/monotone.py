"""The largest value a monotone test accepts: the one binary search every budget fit uses.

Example:
    >>> largest(lambda n: n * n <= 50, 100)
    7
"""

from __future__ import annotations

from collections.abc import Callable


def largest(fits: Callable[[int], bool], hi: int, lo: int = 0) -> int:
    """The largest ``n`` in ``(lo, hi]`` with ``fits(n)`` for a monotone ``fits``, else ``lo``.

    The probes are part of the contract: token counts are not always monotone in a text's length,
    and every caller must cut the same text the same way.
    """
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo
