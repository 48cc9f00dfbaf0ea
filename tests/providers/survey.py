"""Count provider-rule violations over generated histories, without failing (run by hand).

``uv run --no-sync python -m tests.providers.survey 500`` prints, per rule and history shape,
how many requests broke it, and the smallest history that did (a reproducer for the core).
"""

from __future__ import annotations

import collections
import sys
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.providers.strategies import History, histories
from tests.unit_tests.test_provider_validity import BUDGETS, replay


def survey(n: int) -> None:
    """Replay ``n`` generated histories and print the violations per rule."""
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    bad_histories: collections.Counter[str] = collections.Counter()
    smallest: dict[str, tuple[int, str]] = {}
    seen = [0, 0]

    @settings(
        max_examples=n,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(histories(), st.sampled_from(BUDGETS))
    def run(h: History, budget: int) -> None:
        found, compactions = replay(h, budget)
        seen[0] += 1
        seen[1] += bool(compactions)
        for rule in {v.rule for _, v in found}:
            bad_histories[rule] += 1
        for i, v in found:
            counts[(v.rule, h.notes[0])] += 1
            size = len(h.messages)
            if v.rule not in smallest or size < smallest[v.rule][0]:
                smallest[v.rule] = (size, f"budget={budget} {h.notes[0]} after message {i}: {v}")

    start = time.perf_counter()
    run()
    print(
        f"{seen[0]} histories ({seen[1]} with a compaction) in {time.perf_counter() - start:.0f}s"
    )
    for rule, k in bad_histories.most_common():
        print(f"{rule}: {k} histories")
    for (rule, shape), k in sorted(counts.items()):
        print(f"  {rule:45s} {shape:45s} {k} requests")
    for rule, (size, text) in sorted(smallest.items()):
        print(f"smallest for {rule} ({size} messages): {text}")


if __name__ == "__main__":
    survey(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
