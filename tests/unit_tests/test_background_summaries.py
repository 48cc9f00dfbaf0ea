"""Model summaries off the critical path: written later, only to the history they were made for."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage

from langctx import LayeredChatMemory
from langctx.cli.demo.session import coding_session, iter_turns
from langctx.engine import background
from langctx.engine.plan import CompactionEvent
from langctx.entries import CompactionEntry
from langctx.summarize import SummaryRequest
from langctx.summarize.sections import parse_sections

MODEL_SUMMARY = "Goal:\n- fix the parser\nCurrent status:\n- model summary of {n} messages"


class Gate:
    """A summarizer that waits for ``release`` and records what it was asked."""

    def __init__(self, *, fail: bool = False) -> None:
        self.release = threading.Event()
        self.started = threading.Event()
        self.requests: list[SummaryRequest] = []
        self.fail = fail

    def summarize(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        self.started.set()
        assert self.release.wait(10), "never released"
        if self.fail:
            raise RuntimeError("provider down")
        return MODEL_SUMMARY.format(n=len(request.messages))

    async def asummarize(self, request: SummaryRequest) -> str:
        return await asyncio.to_thread(self.summarize, request)


@pytest.fixture(autouse=True)
def _no_jobs() -> Iterator[None]:
    background.clear()
    yield
    background.clear()


def _memory(
    summarizer: object, events: list[CompactionEvent] | None = None, **options: Any
) -> LayeredChatMemory:
    return LayeredChatMemory(
        max_tokens=3000,
        summarizer=summarizer,
        summary_threshold_tokens=0,
        on_compaction=None if events is None else events.append,
        **options,
    )


def _until_fold(mem: LayeredChatMemory, turns: Iterator[list[BaseMessage]]) -> None:
    """Add turns until one more compaction entry is written."""
    n = len(mem.compactions)
    for turn in turns:
        mem.add_messages(turn)
        if len(mem.compactions) > n:
            return
    raise AssertionError("no fold")


def _first_fold(
    gate: Gate,
) -> tuple[LayeredChatMemory, Iterator[list[BaseMessage]], CompactionEntry]:
    """A memory summarizing with ``gate``, the session's turns left, and its first fold's entry."""
    mem = _memory(gate)
    mem.add_messages(coding_session(0))
    turns = iter(iter_turns(200))
    _until_fold(mem, turns)
    return mem, turns, mem.compactions[-1]


def test_fold_is_written_while_the_model_summary_runs_and_replaces_it_at_the_next_fold() -> None:
    gate, events = Gate(), []
    mem = _memory(gate, events)
    mem.add_messages(coding_session(0))
    turns = iter(iter_turns(200))
    _until_fold(mem, turns)  # returns although the summarizer has not answered
    assert gate.started.wait(5)
    first = mem.compactions[-1]
    assert first["quality"] == "mechanical" and parse_sections(first["summary"])
    end = [e for e in events if e.phase == "end"][-1]
    assert end.mode == "background" and end.entry is first
    gate.release.set()
    assert background.wait_idle(5)  # ready: the next fold applies it
    _until_fold(mem, turns)
    upgrade = next(e for e in mem.compactions if first["id"] in e["merged_from"])
    assert upgrade["quality"] == "model" and upgrade["level"] == 1
    assert upgrade["summary"].startswith("Goal:\n- fix the parser")
    assert upgrade["id"] in {e["id"] for e in mem.summaries}
    assert first["id"] not in {e["id"] for e in mem.summaries}
    # the model was asked about exactly the messages the local summary stood for
    assert {m.id for m in gate.requests[0].messages} == set(first["covered_ids"])
    assert any(r["action"] == "upgrade" for r in mem.eviction_log)


def test_a_compact_during_the_background_summary_discards_it() -> None:
    gate = Gate()
    mem, turns, first = _first_fold(gate)
    assert gate.started.wait(5)
    gate_manual = Gate()
    gate_manual.release.set()
    mem.summarizer = gate_manual
    added = 0
    for turn in turns:  # more history (small turns), without reaching the next fold
        if mem.context_tokens() + mem.counter.count_messages(turn) < mem.config.high_mark - 200:
            mem.add_messages(turn)
            added += 1
        if added == 2:
            break
    assert len(mem.compactions) == 1
    manual = mem.compact("focus on the parser", keep_recent_tokens=0)  # blocking, absorbs it
    assert manual is not None and manual["quality"] == "model"
    assert first["id"] in manual["merged_from"]
    gate.release.set()
    _until_fold(mem, turns)
    assert [e for e in mem.compactions if first["id"] in e["merged_from"]] == [manual]


def test_two_forks_of_one_state_each_fold_every_message_once() -> None:
    gate = Gate()
    mem = _memory(gate)
    mem.add_messages(coding_session(0))
    turns = list(iter_turns(200))
    k = 0
    while not mem.compactions:
        mem.add_messages(turns[k])
        k += 1
    first = mem.compactions[-1]
    state = mem.to_state()
    options = {"max_tokens": 3000, "summarizer": gate, "summary_threshold_tokens": 0}
    forks = [LayeredChatMemory.from_state(state, **options) for _ in range(2)]
    gate.release.set()
    assert background.wait_idle(5)
    for fork in forks:
        _until_fold(fork, iter(turns[k:]))
        covered = [i for e in fork.compactions for i in e["covered_ids"]]
        assert len(covered) == len(set(covered))  # no message folded twice
        assert not {m.id for m in fork.build_context()} & set(covered)
        assert set(first["covered_ids"]) <= set(covered)
    upgraded = [[e for e in f.compactions if e["merged_from"] == [first["id"]]] for f in forks]
    # decided in the entries: each fork applies the same model summary of the span
    assert all(u and u[0]["quality"] == "model" for u in upgraded)
    assert upgraded[0][0]["id"] == upgraded[1][0]["id"]
    assert upgraded[0][0]["summary"] == upgraded[1][0]["summary"]


def test_a_failed_background_summary_leaves_the_local_one() -> None:
    gate = Gate(fail=True)
    mem, turns, first = _first_fold(gate)
    gate.release.set()
    gate_ok = Gate()
    gate_ok.release.set()
    mem.summarizer = gate_ok
    _until_fold(mem, turns)
    assert first["quality"] == "mechanical"
    reasons = [r["detail"] for r in mem.eviction_log if r["action"] == "summarizer_fallback"]
    assert any("provider down" in r for r in reasons)
    assert not any(r["action"] == "upgrade" for r in mem.eviction_log)
    # the next fold's summary covers the span again: nothing lost
    asked = {m.id for r in gate_ok.requests for m in r.messages}
    assert set(first["covered_ids"]) <= asked


def test_a_background_summary_lost_with_its_process_is_started_again_and_applied_later() -> None:
    gate = Gate()
    mem, turns, first = _first_fold(gate)
    assert first["upgrade_input"]  # the pending summary is recorded in the entry
    background.clear()  # the process that ran it is gone
    gate.release.set()
    gate_ok = Gate()
    mem.summarizer = gate_ok
    _until_fold(mem, turns)  # starts it from the state's messages, and does not wait for it
    assert gate_ok.started.wait(5) and not gate_ok.release.is_set()
    assert {m.id for m in gate_ok.requests[0].messages} == set(first["covered_ids"])
    assert first["id"] in {e["id"] for e in mem.summaries}  # still its local summary
    gate_ok.release.set()
    assert background.wait_idle(5)
    _until_fold(mem, turns)
    (upgrade,) = [e for e in mem.compactions if e["merged_from"] == [first["id"]]]
    assert upgrade["quality"] == "model"


async def test_async_compaction_waits_for_the_summary_without_blocking_the_loop() -> None:
    gate = Gate()
    mem = _memory(gate, summary_wait=None)  # waits as long as the summary takes
    await mem.aadd_messages(coding_session(0))
    turns = iter(iter_turns(200))
    n = len(mem.compactions)
    for turn in turns:
        await mem.aadd_messages(turn)
        if len(mem.compactions) > n:
            break
    first = mem.compactions[-1]
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while not gate.release.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    async def fold_again() -> None:
        n = len(mem.compactions)
        for turn in turns:
            await mem.aadd_messages(turn)
            if len(mem.compactions) > n:
                return

    async def release_later() -> None:
        while ticks < 5:
            await asyncio.sleep(0.01)
        gate.release.set()

    await asyncio.gather(tick(), release_later(), fold_again())
    assert ticks >= 5
    assert any(e["merged_from"] == [first["id"]] for e in mem.compactions)


def test_the_model_sees_the_whole_waiting_span_even_from_slimmed_persisted_entries() -> None:
    from langctx.channel import slim_entry

    seen: list[SummaryRequest] = []

    def summarizer(request: SummaryRequest) -> str:
        seen.append(request)
        return "Goal:\n- fix the parser"

    options = {
        "max_tokens": 3000,
        "summarizer": summarizer,
        "summary_threshold_tokens": 10**6,  # no model call: the local summaries chain up
        "background_summaries": False,
    }
    mem = LayeredChatMemory(**options)  # type: ignore[arg-type]
    mem.add_messages(coding_session(0))
    turns = iter(iter_turns(200))
    for _ in range(3):
        _until_fold(mem, turns)
    assert not seen
    chain = [e for e in mem.compactions if e["quality"] == "mechanical"]
    assert len(chain) >= 3 and chain[-1]["merged_from"] == [chain[-2]["id"]]
    folded = [i for e in chain for i in e["covered_ids"]]
    state = mem.to_state()
    state["compactions"] = [slim_entry(e) for e in state["compactions"]]
    again = LayeredChatMemory.from_state(state, **{**options, "summary_threshold_tokens": 0})  # type: ignore[arg-type]
    _until_fold(again, turns)
    (request,) = [r for r in seen if r.kind == "turns"]
    assert set(folded) <= {m.id for m in request.messages} and not request.summaries
