"""`langctx replay` over the 38 recorded sessions in ``../shared/data/trajectories`` at 32k.

Every session is read through the replay's own reader (format detected from the content, checked
against the test helper's loader), replayed at a 32,000-token budget with the approximate counter
(the bench, ``bench/replay_all.py``, uses exact ``o200k_base``), and must complete with zero orphan
tool messages and zero unanswered calls in every projection, and the pinned task present,
unaltered, in every request after it arrived.

For the two pi sessions the issue's target is at least 85% fewer input tokens than sending the full
history at every call. ``before-compaction`` meets it (92.1% here, 92.2% with exact o200k counts).
``large-session`` does not (78.8% here, 78.5% exact): it is 138k tokens over 438 model calls, so the
full-history baseline averages 84k per call;
85% fewer needs a mean request of 12.6k, 39% of the budget, below the 25.6k compaction mark and even
below the ~10k a compaction leaves. A memory that sent min(history, 32k) at every call would save only
63%; the sawtooth between ~10k after a compaction and the 25.6k mark averages 17.8k. The figure is
bounded by the budget and the session's length, not by a defect, so the assertion stays and the case
is a strict xfail with the measured number.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from langctx.replay import ReplayReport, read_session, replay_session
from tests._helpers import load_session, require_data, session_files, truth

pytestmark = pytest.mark.trajectories

BUDGET = 32_000
PI_TARGET = 0.85
PI_SHORTFALL = {
    "pi-mono/large-session": (
        "measured 78.8% fewer input tokens at 32k (78.5% with exact o200k: 7.92M vs 36.74M tokens "
        "over 438 calls), target 85%: the baseline averages 84k per call, so 85% needs a mean "
        "request of 12.6k; a 32k budget compacts at 25.6k down to ~10k, which averages 17.8k"
    ),
}


def session_id(path: Path) -> str:
    """``source/stem``, e.g. ``pi-mono/large-session``."""
    return f"{path.parent.name}/{path.name.removesuffix('.messages.jsonl')}"


SESSIONS = [session_id(p) for p in session_files()]


@functools.cache
def replayed(sid: str) -> ReplayReport:
    path = require_data() / f"{sid}.messages.jsonl"
    return replay_session(read_session(path), max_tokens=BUDGET)


def test_all_sessions_are_present() -> None:
    require_data()
    assert len(SESSIONS) == 38


@pytest.mark.parametrize("sid", SESSIONS)
def test_reader_matches_the_helper_loader(sid: str) -> None:
    path = require_data() / f"{sid}.messages.jsonl"
    parsed = read_session(path)
    expected = load_session(path)
    assert parsed.format == "langchain"
    assert len(parsed.messages) == len(expected)
    for got, want in zip(parsed.messages, expected, strict=True):
        assert (got.type, got.content) == (want.type, want.content)
        assert getattr(got, "tool_calls", None) == getattr(want, "tool_calls", None)
        assert getattr(got, "tool_call_id", None) == getattr(want, "tool_call_id", None)


@pytest.mark.parametrize("sid", SESSIONS)
def test_replay_completes_with_intact_projections(sid: str) -> None:
    report = replayed(sid)
    assert len(report.calls) > 0
    assert report.projection_orphans == 0, [
        (c.index, c.orphans, c.unanswered) for c in report.calls if c.orphans or c.unanswered
    ][:5]
    assert report.task_missing_calls == 0, [
        c.index for c in report.calls if c.task_present is False
    ][:5]
    assert report.orphans_in_input == 0  # the recorded sessions pair every result with its call
    first_task_call = next((c.index for c in report.calls if c.task_present is not None), None)
    if first_task_call is not None:
        assert all(c.task_present for c in report.calls[first_task_call - 1 :])
    assert report.reduction >= 0.0


@pytest.mark.parametrize("sid", ["pi-mono/before-compaction", "pi-mono/large-session"])
def test_pi_sessions_task_is_the_truth_task(sid: str) -> None:
    report = replayed(sid)
    assert report.task is not None
    assert truth(require_data() / f"{sid}.messages.jsonl")["task"].startswith(report.task)
    assert all(c.task_present for c in report.calls)


@pytest.mark.parametrize(
    "sid",
    [
        pytest.param(sid, marks=pytest.mark.xfail(strict=True, reason=PI_SHORTFALL[sid]))
        if sid in PI_SHORTFALL
        else sid
        for sid in ("pi-mono/before-compaction", "pi-mono/large-session")
    ],
)
def test_pi_sessions_reduce_input_tokens_by_85_percent(sid: str) -> None:
    report = replayed(sid)
    assert report.reduction >= PI_TARGET, (
        f"{sid}: {100 * report.reduction:.1f}% fewer input tokens "
        f"({report.input_tokens:,} vs {report.input_tokens_full:,})"
    )
