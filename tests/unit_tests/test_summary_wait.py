"""The wait for background summaries is bounded (``summary_wait``): a fold never waits for a
summarizer still running past it, goes on with the local summary, and the model summary is
applied at the first fold that finds it ready, in place of the local one.

The summarizer blocks on an Event, so what is ready at a fold is decided by the test, never by
the clock; "the fold returned while the summarizer was still blocked" is the bound's check.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from langctx import LayeredChatMemory, MemoryConfig
from langctx.cli.demo.session import coding_session, iter_turns
from langctx.engine import background
from langctx.engine.plan import CompactionEvent
from langctx.entries import CompactionEntry, active_summaries
from langctx.errors import ConfigError
from langctx.summarize import SummaryRequest


class Gates:
    """A summarizer whose n-th call waits for ``release(n)``; each answer names its call."""

    def __init__(self) -> None:
        self.requests: list[SummaryRequest] = []
        self._gates: dict[int, threading.Event] = {}
        self._lock = threading.Lock()

    def gate(self, n: int) -> threading.Event:
        with self._lock:
            return self._gates.setdefault(n, threading.Event())

    def release(self, *calls: int) -> None:
        for n in calls:
            self.gate(n).set()

    def release_all(self) -> None:
        self.release(*range(len(self.requests) + 64))

    def summarize(self, request: SummaryRequest) -> str:
        with self._lock:
            n = len(self.requests)
            self.requests.append(request)
        assert self.gate(n).wait(10), "never released"
        return f"Goal:\n- fix the parser\nCurrent status:\n- MODEL-SUMMARY-{n} done"


@pytest.fixture(autouse=True)
def _no_jobs() -> Iterator[None]:
    background.clear()
    yield
    background.clear()


@pytest.fixture
def gates() -> Iterator[Gates]:
    g = Gates()
    yield g
    g.release_all()
    assert background.wait_idle(10)


@dataclass
class Run:
    """A memory summarizing with a scripted summarizer, the session's turns left, its events."""

    mem: LayeredChatMemory
    turns: Iterator[list[BaseMessage]]
    events: list[CompactionEvent] = field(default_factory=list)

    def fold(self) -> CompactionEvent:
        """Add turns until a fold writes an entry; its end event."""
        n, seen = len(self.mem.compactions), len(self.events)
        for turn in self.turns:
            self.mem.add_messages(turn)
            if len(self.mem.compactions) > n:
                return [e for e in self.events[seen:] if e.phase == "end"][-1]
        raise AssertionError("no fold")

    def dropped(self) -> list[CompactionEvent]:
        return [e for e in self.events if e.phase == "dropped"]


def _run(summarizer: object, *, folds: int = 1, **options: Any) -> Run:
    """A run after its first ``folds`` folds."""
    events: list[CompactionEvent] = []
    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=summarizer,
        summary_threshold_tokens=0,
        on_compaction=events.append,
        **options,
    )
    mem.add_messages(coding_session(0))
    run = Run(mem, iter(iter_turns(400)), events)
    for _ in range(folds):
        run.fold()
    return run


def _ready(entry: CompactionEntry) -> None:
    """Wait until this process's job for ``entry``'s model summary has its answer."""
    job = background._jobs.get(entry["upgrade_input"])
    assert job is not None
    job.future.result(timeout=5)


def _shown(mem: LayeredChatMemory) -> str:
    return "\n".join(m.text for m in mem.build_context())


def test_a_fold_goes_on_while_the_summary_runs_and_the_next_ready_fold_applies_it(
    gates: Gates,
) -> None:
    run = _run(gates.summarize)
    mem, first = run.mem, run.mem.compactions[-1]
    assert first["quality"] == "mechanical" and first["upgrade_input"]
    # the second fold: the first summary still blocks, so the fold goes on without it
    end = run.fold()
    assert not gates.gate(0).is_set() and end.waited_s < 5  # returned while it was blocked
    second = end.entry
    assert second is not None and second["quality"] == "mechanical"
    assert first["id"] not in second["merged_from"]  # still pending: not absorbed
    assert [e["id"] for e in mem.summaries][-2:] == [first["id"], second["id"]]
    assert "MODEL-SUMMARY" not in _shown(mem)
    # both answers ready: the first fold after it applies them, each in its own place
    gates.release(0, 1)
    assert background.wait_idle(5)
    end = run.fold()
    upgrades = {e["merged_from"][0]: e for e in mem.compactions if e["trigger"] == "merge"}
    assert set(upgrades) >= {first["id"], second["id"]}
    ids = [e["id"] for e in mem.summaries]
    assert ids.index(upgrades[first["id"]]["id"]) < ids.index(upgrades[second["id"]]["id"])
    assert end.entry is not None and ids[-1] == end.entry["id"]  # the new fold's is the newest
    shown = _shown(mem)
    assert shown.index("MODEL-SUMMARY-0") < shown.index("MODEL-SUMMARY-1")  # the model sees them
    # and a memory restored from the state projects the same
    again = LayeredChatMemory.from_state(mem.to_state(), max_tokens=3000)
    assert [m.text for m in again.build_context()] == [m.text for m in mem.build_context()]


def test_a_summary_not_ready_is_applied_at_a_later_fold_not_dropped(gates: Gates) -> None:
    run = _run(gates.summarize)
    first = run.mem.compactions[-1]
    gates.release(1, 2)  # the later folds' summaries answer, the first one's still runs
    for _ in range(2):
        run.fold()
        assert background.wait_idle(0) is False  # the first job still holds its slot
    assert first["id"] in {e["id"] for e in run.mem.summaries}  # waiting, not absorbed
    assert not run.dropped()
    gates.release(0)
    assert background.wait_idle(5)
    run.fold()
    assert any(e["merged_from"] == [first["id"]] for e in run.mem.summaries)
    assert "MODEL-SUMMARY-0" in _shown(run.mem)


def test_a_process_without_the_job_starts_it_instead_of_computing_it_inline(gates: Gates) -> None:
    run = _run(gates.summarize)
    first = run.mem.compactions[-1]
    run.mem = LayeredChatMemory.from_state(
        run.mem.to_state(),
        max_tokens=3000,
        summarizer=gates.summarize,
        summary_threshold_tokens=0,
        on_compaction=run.events.append,
    )
    background.clear()  # another worker: it never ran the job
    run.fold()  # returns while every call blocks
    assert len(gates.requests) == 3 and not any(gates.gate(n).is_set() for n in range(3))
    restarted = gates.requests[1]  # the first fold's summary, from the state's messages
    assert {m.id for m in restarted.messages} == set(first["covered_ids"])
    assert first["id"] in {e["id"] for e in run.mem.summaries}
    gates.release(1)
    _ready(first)
    assert background.wait_idle(0) is False  # calls 0 and 2 still block
    run.fold()
    (upgrade,) = [e for e in run.mem.summaries if e["merged_from"] == [first["id"]]]
    assert "MODEL-SUMMARY-1" in upgrade["summary"]


def test_a_job_past_its_timeout_is_dropped_once_and_its_span_summarized_again(
    gates: Gates,
) -> None:
    run = _run(gates.summarize, summary_timeout=0.02)
    first = run.mem.compactions[-1]
    time.sleep(0.05)  # past its timeout (the wait is not measured: the job is still blocked)
    end = run.fold()
    assert [e.entry["id"] for e in run.dropped() if e.entry] == [first["id"]]
    assert "timed out" in run.dropped()[0].detail
    assert end.entry is not None and first["id"] in end.entry["merged_from"]  # absorbed
    asked = {m.id for m in gates.requests[-1].messages}
    assert set(first["covered_ids"]) <= asked  # the next model summary covers its span


def test_pending_summaries_a_merge_takes_are_dropped_once(gates: Gates) -> None:
    run = _run(gates.summarize, max_summaries=3)
    while not any(e["level"] == 2 for e in run.mem.summaries):
        run.fold()
    merged = next(e for e in run.mem.summaries if e["level"] == 2)
    dropped = [e.entry["id"] for e in run.dropped() if e.entry]
    assert sorted(dropped) == sorted(merged["merged_from"])  # each said once
    assert all("merged" in e.detail for e in run.dropped())
    run.fold()
    assert len(run.dropped()) == len(dropped)


def test_summaries_stay_in_fold_order_whatever_order_their_answers_come_in(gates: Gates) -> None:
    run = _run(gates.summarize, folds=3)
    entries = [e for e in run.mem.summaries if e["quality"] == "mechanical"]
    pending = [e["id"] for e in entries]
    assert len(pending) == 3
    gates.release(2)  # the newest answers first
    _ready(entries[2])
    run.fold()
    gates.release(0)
    _ready(entries[0])
    run.fold()
    level1 = [e for e in run.mem.summaries if e["level"] == 1]
    assert [e["seq"] for e in level1] == sorted(e["seq"] for e in level1)
    by_input = {e["merged_from"][0]: e for e in level1 if e["trigger"] == "merge"}
    assert {pending[0], pending[2]} <= set(by_input)  # applied in place of their local ones
    shown = _shown(run.mem)
    assert shown.index("MODEL-SUMMARY-0") < shown.index("MODEL-SUMMARY-2")
    assert active_summaries(run.mem.compactions) == run.mem.summaries  # as a restore orders them


async def test_async_fold_does_not_wait_past_the_bound(gates: Gates) -> None:
    events: list[CompactionEvent] = []
    mem = LayeredChatMemory(
        max_tokens=3000,
        summarizer=gates.summarize,
        summary_threshold_tokens=0,
        on_compaction=events.append,
    )
    await mem.aadd_messages(coding_session(0))
    turns = iter(iter_turns(300))

    async def fold() -> CompactionEntry:
        n = len(mem.compactions)
        for turn in turns:
            await mem.aadd_messages(turn)
            if len(mem.compactions) > n:
                return mem.compactions[-1]
        raise AssertionError("no fold")

    first = await fold()
    second = await fold()
    assert not gates.gate(0).is_set()  # returned while the first summary blocked
    assert first["id"] not in second["merged_from"]
    gates.release(0, 1)
    await asyncio.to_thread(background.wait_idle, 5)
    await fold()
    assert any(e["merged_from"] == [first["id"]] for e in mem.summaries)
    assert max(e.waited_s for e in events if e.phase == "end") < 5


@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf"), "1", True])
def test_summary_wait_is_a_finite_number_of_seconds_or_none(value: object) -> None:
    with pytest.raises(ConfigError, match=r"^summary_wait must be a finite number of seconds >= 0"):
        MemoryConfig(summary_wait=value)  # type: ignore[arg-type]


def test_summary_wait_accepts_zero_and_none() -> None:
    assert MemoryConfig(summary_wait=0).summary_wait == 0
    assert MemoryConfig(summary_wait=None).summary_wait is None
    assert MemoryConfig().summary_wait == 0.25
