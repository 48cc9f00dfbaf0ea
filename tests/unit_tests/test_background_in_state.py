"""Background summaries decided in the channel: any worker finishes them, none applies a stale one.

The stateless path (``view_state``, what the middleware and the node run) is driven here by
hand: each call reads ``messages`` + the ``langctx`` channel, compacts when due and writes its
update through the channel's reducer. "Another worker" is this process with its jobs forgotten
(``background.clear()``), which is all a second process lacks.
"""

from __future__ import annotations

import random
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, messages_to_dict

from langctx.channel import merge_langctx
from langctx.cli.demo.session import coding_session, iter_turns
from langctx.engine import background
from langctx.state_memory import MemorySettings, view_state
from langctx.summarize import SummaryRequest

BUDGET = 3000


@pytest.fixture(autouse=True)
def _no_jobs() -> Iterator[None]:
    background.clear()
    yield
    background.clear()


def _summarizer(seen: list[SummaryRequest]) -> Callable[[SummaryRequest], str]:
    def summarize(request: SummaryRequest) -> str:
        seen.append(request)
        ids = ",".join(str(m.id) for m in request.messages[:3])
        return f"Goal:\n- fix the parser\nCurrent status:\n- {len(request.messages)} msgs ({ids})"

    return summarize


def _settings(seen: list[SummaryRequest]) -> MemorySettings:
    """Runs compared call by call: each fold waits for what is pending (``summary_wait=None``),
    so that readiness does not depend on time (the rule is the same at any bound)."""
    return MemorySettings.of(
        max_tokens=BUDGET,
        summarizer=_summarizer(seen),
        summary_threshold_tokens=0,
        summary_wait=None,
    )


def _call(state: dict[str, Any], settings: MemorySettings) -> list[dict[str, Any]]:
    """One model call of the stateless path: compact when due, write the update, project."""
    view = view_state(state, settings, thread_id="t")
    view.compact_if_due()
    update = view.update()
    if update is not None:
        state["langctx"] = merge_langctx(state.get("langctx"), update)
    return messages_to_dict(view.projection())


def _run(turns: int, forget: Callable[[int], bool]) -> tuple[list[Any], dict[str, Any]]:
    """The model inputs of a run; jobs are forgotten before call ``k`` when ``forget(k)``."""
    settings = _settings([])
    state: dict[str, Any] = {"messages": coding_session(0), "langctx": {}}
    inputs = []
    for k, turn in enumerate(iter_turns(turns)):
        state["messages"] = [*state["messages"], *turn]
        if forget(k):
            background.clear()
        inputs.append(_call(state, settings))
    return inputs, state


def _entries(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in e.items() if k != "created_at"} for e in state["langctx"]["compactions"]
    ]


def test_workers_taking_turns_send_what_one_worker_sends() -> None:
    one, state_one = _run(80, lambda k: False)
    alternating, state_alt = _run(80, lambda k: k % 2 == 1)
    assert sum(e["quality"] == "model" for e in state_one["langctx"]["compactions"]) >= 3
    assert alternating == one
    assert _entries(state_alt) == _entries(state_one)


@pytest.mark.parametrize("seed", range(4))
def test_a_process_dying_at_random_points_changes_no_model_input(seed: int) -> None:
    rng = random.Random(seed)
    kills = set(rng.sample(range(80), 12))
    one, state_one = _run(80, lambda k: False)
    killed, state_killed = _run(80, kills.__contains__)
    assert killed == one
    assert _entries(state_killed) == _entries(state_one)


def _until_pending(
    state: dict[str, Any], settings: MemorySettings, turns: Iterator[list[BaseMessage]]
) -> dict[str, Any]:
    for turn in turns:
        state["messages"] = [*state["messages"], *turn]
        _call(state, settings)
        newest = state.get("langctx", {}).get("compactions", [])[-1:]
        if newest and newest[0].get("upgrade_input"):
            return newest[0]
    raise AssertionError("no background summary was asked")


@pytest.mark.parametrize("change", ["edited", "removed"])
def test_a_summary_of_messages_changed_since_is_never_applied(change: str) -> None:
    seen: list[SummaryRequest] = []
    release = threading.Event()
    summarize = _summarizer(seen)

    def slow(request: SummaryRequest) -> str:
        assert release.wait(10)
        return summarize(request)

    settings = MemorySettings.of(max_tokens=BUDGET, summarizer=slow, summary_threshold_tokens=0)
    state: dict[str, Any] = {"messages": coding_session(0), "langctx": {}}
    turns = iter(iter_turns(200))
    pending = _until_pending(state, settings, turns)
    target = pending["covered_ids"][len(pending["covered_ids"]) // 2]
    messages = state["messages"]
    i = next(n for n, m in enumerate(messages) if m.id == target)
    if change == "edited":  # what update_state with the same id does
        messages[i] = messages[i].model_copy(update={"content": "edited by the user"})
    else:
        del messages[i]
    release.set()
    n = len(state["langctx"]["compactions"])
    while len(state["langctx"]["compactions"]) == n:
        state["messages"] = [*state["messages"], *next(turns)]
        _call(state, settings)
    entries = state["langctx"]["compactions"]
    assert not any(
        e["merged_from"] == [pending["id"]] and e["trigger"] == "merge" for e in entries
    ), "a summary of the old messages was applied"
