"""The failure, whole: a failing test run keeps its error line, the runner's summary lines
(tallies and named failures) and its exit status, in the facts and in every request after it
was folded or replaced by a placeholder, at every budget from 4k."""

from __future__ import annotations

import doctest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

import langctx.facts.runners as runners_module
from langctx import LayeredChatMemory
from langctx.engine import placeholders
from langctx.facts import extract_facts, merge_facts
from langctx.facts.failures import SHOWN_FAILURE_CHARS, error_lines, shown_failure_lines
from langctx.facts.runners import (
    MAX_NAMED_FAILURES,
    MAX_SUMMARY_LINE_CHARS,
    MAX_TALLIES,
    is_summary_line,
    summary_lines,
)
from langctx.projection import render_facts
from tests.unit_tests.facts.runner_outputs import RUNNERS, RunnerFailure

IDS = [r.runner for r in RUNNERS]


def test_doctests() -> None:
    assert doctest.testmod(runners_module).failed == 0


# ---------------------------------------------------------------------------------- the rule


@pytest.mark.parametrize("run", RUNNERS, ids=IDS)
def test_each_runner_summary_lines_are_found(run: RunnerFailure) -> None:
    assert summary_lines(run.output) == run.summary
    assert all(is_summary_line(line) for line in run.summary)


@pytest.mark.parametrize("run", RUNNERS, ids=IDS)
def test_each_runner_failure_shows_its_error_line_beside_the_summary(run: RunnerFailure) -> None:
    facts = _shell_run(run)
    error = facts["errors"][-1]
    assert error["summary_lines"] == list(run.summary)
    shown = shown_failure_lines(error)
    assert [line for line in shown if line in run.summary] == list(run.summary)
    if run.error is not None:
        assert run.error in shown
        assert shown.index(run.error) < shown.index(run.summary[0])  # error first, then verdict
    assert len("; ".join(shown)) <= SHOWN_FAILURE_CHARS


@pytest.mark.parametrize(
    "line",
    [
        "==== 1 failed, 12 passed in 0.52s ====",
        "========================= 2 errors in 0.12s =========================",
        "test result: FAILED. 3 passed; 1 failed; 0 ignored",
        "Tests:       1 failed, 3 passed, 4 total",
        "5 examples, 1 failure, 1 pending",
        "13 runs, 20 assertions, 1 failures, 0 errors, 0 skips",
        "13 tests, 1 failure",
        "  1 failing",
        "FAILED (failures=1, errors=1)",
        "Tests run: 5, Failures: 1, Errors: 0, Skipped: 0",
        "75% tests passed, 1 tests failed out of 4",
        "# fail 1",
        "Found 3 errors in 2 files.",
        "1 passed; 1 skipped; 1 failed.",
        "FAILED | 3 passed | 1 failed (20ms)",
        "FAILED tests/x.py::test_y",
        "ERROR tests/test_db.py - ModuleNotFoundError: No module named 'psycopg'",
        "--- FAIL: TestX (0.00s)",
        "    --- FAIL: TestX/sub_case (0.00s)",
        "FAIL\tgithub.com/acme/calc\t0.005s",
        " FAIL  src/sum.test.ts > sum > adds",
        "test tests::adds ... FAILED",
        "not ok 3 adds negative numbers",
        "FAIL: test_add (tests.test_calc.CalcTest)",
        "CalcTest > adds() FAILED",
    ],
)
def test_summary_shapes(line: str) -> None:
    assert is_summary_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "1 failed attempt to connect to the database",
        "Retrying request after 3 errors from the server, backing off",
        "ok  \tgithub.com/acme/calc\t0.005s",
        "==== 12 passed in 0.5s ====",  # a tally, but of a run that did not fail
        "test tests::adds ... ok",
        "src/a.c:3:1: error: expected ';' before '}' token",
        "E       assert 3 == 4",
        "FAIL",
        "error: could not compile `calc` due to 2 previous errors",
        "warning: 3 warnings emitted",
        "Checked 232 files in 117ms. No fixes applied.",
        "The test failed because of 2 errors in setup code that nobody fixed",
        "Finished in 0.001s, 2000.0 runs/s, 2000.0 assertions/s.",
        "",
    ],
)
def test_not_summary_lines(line: str) -> None:
    assert not is_summary_line(line)
    assert summary_lines(line) == ()


def test_summary_lines_are_bounded_first_names_and_last_tallies() -> None:
    named = [f"FAILED tests/test_{i}.py::test_case_{i} - " + "x" * 300 for i in range(40)]
    tallies = [f"Test Suites: {i} failed, 40 total" for i in range(1, 6)]
    found = summary_lines("\n".join([*named, "E   boom", *tallies]))
    assert len(found) == MAX_NAMED_FAILURES + MAX_TALLIES
    assert found[0].startswith("FAILED tests/test_0.py") and found[1].startswith(
        "FAILED tests/test_1.py"
    )
    assert found[2:] == tuple(tallies[-MAX_TALLIES:])
    assert all(len(line) <= MAX_SUMMARY_LINE_CHARS for line in found)


def test_a_long_log_is_read_at_its_ends_only() -> None:
    middle = "\n".join(f"FAILED tests/t.py::test_{i}" for i in range(5_000))
    text = "noise\n" * 200 + middle + "\n" + "noise\n" * 500 + "==== 5000 failed in 9.0s ===="
    assert summary_lines(text) == ("==== 5000 failed in 9.0s ====",)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([r.output for r in RUNNERS]) | st.text(max_size=80), max_size=6))
def test_summary_lines_are_always_lines_of_the_output_and_bounded(parts: list[str]) -> None:
    text = "\n".join(parts)
    found = summary_lines(text)
    stripped = {line.strip() for line in text.splitlines()}
    assert len(found) <= MAX_NAMED_FAILURES + MAX_TALLIES
    assert len(set(found)) == len(found)
    for line in found:
        assert line in stripped or (line.endswith("…") and len(line) == MAX_SUMMARY_LINE_CHARS)


# ---------------------------------------------------------------------------------- the facts


def _shell_run(run: RunnerFailure, *, tail: str = "") -> Any:
    output = f"{run.output}\n{tail}\nCommand exited with code {run.exit_code}"
    return extract_facts(
        [
            AIMessage(
                "", tool_calls=[{"id": "c1", "name": "bash", "args": {"command": run.command}}]
            ),
            ToolMessage(output, tool_call_id="c1", id="t1"),
        ]
    )


def test_an_output_without_a_runner_summary_has_no_summary_key() -> None:
    facts = extract_facts(
        [
            AIMessage("", tool_calls=[{"id": "c", "name": "bash", "args": {"command": "make"}}]),
            ToolMessage("make: *** [all] Error 2\nexit code 2", tool_call_id="c"),
        ]
    )
    assert facts["errors"] == [
        {"command": "make", "lines": ["make: *** [all] Error 2"], "message_id": None}
    ]


def test_merged_facts_carry_the_summary_lines() -> None:
    first, second = _shell_run(RUNNERS[0]), _shell_run(RUNNERS[5])
    merged = merge_facts(first, second)
    assert [e.get("summary_lines") for e in merged["errors"]] == [
        list(RUNNERS[0].summary),
        list(RUNNERS[5].summary),
    ]
    merged["errors"][0]["summary_lines"].append("x")  # a copy: the inputs are not changed
    assert first["errors"][0]["summary_lines"] == list(RUNNERS[0].summary)


def test_facts_written_before_summary_lines_still_show_them_from_their_error_lines() -> None:
    run = RUNNERS[0]
    old = {"command": run.command, "lines": list(error_lines(run.output)), "message_id": "t1"}
    shown = shown_failure_lines(old)
    assert run.summary[-1] in shown and run.error in shown


def test_untrusted_error_facts_do_not_break_the_rendering() -> None:
    for bad in ({}, {"lines": None}, {"lines": "x"}, {"lines": [1, None]}, {"summary_lines": 3}):
        assert isinstance(shown_failure_lines(bad), list)


def test_a_bare_verdict_is_not_the_chosen_error_line() -> None:
    shown = shown_failure_lines({"lines": ["x_test.go:3: want 4", "FAIL", "FAIL\tpkg\t0.1s"]})
    assert shown == ["x_test.go:3: want 4", "FAIL\tpkg\t0.1s"]


def test_the_chosen_line_and_the_verdict_survive_long_error_lines() -> None:
    lines = [f"src/f{i}.c:{i}:1: error: " + "z" * 280 for i in range(8)]
    error = {"lines": lines, "summary_lines": ["==== 8 errors in 1.0s ===="]}
    shown = shown_failure_lines(error)
    assert shown[-1] == "==== 8 errors in 1.0s ===="
    assert shown[0].startswith("src/f") and shown[-2].startswith("src/f7.c")
    assert len("; ".join(shown)) <= SHOWN_FAILURE_CHARS


@pytest.mark.parametrize("run", RUNNERS, ids=IDS)
def test_the_ledger_names_command_exit_error_and_summary(run: RunnerFailure) -> None:
    facts = _shell_run(run)
    failure = next(ln for ln in render_facts(facts).splitlines() if "Latest failure" in ln)
    assert f"`{run.command}` exit {run.exit_code}" in failure
    text = _norm(failure)
    for line in (*run.summary, *([run.error] if run.error else [])):
        assert _norm(line) in text, line


# ---------------------------------------------------------------------------------- requests

TASK = "Make the calculator tests pass. Do not change the tests."
FILLER = "\n".join(f"    value_{k} = compute(value_{k - 1}, {k})  # step {k}" for k in range(1, 60))


def _read(i: int) -> list[BaseMessage]:
    call = {"id": f"r{i}", "name": "read_file", "args": {"path": f"src/mod_{i}.py"}}
    return [
        AIMessage(f"Reading src/mod_{i}.py.", tool_calls=[call], id=f"ar{i}"),
        ToolMessage(FILLER, tool_call_id=f"r{i}", name="read_file", id=f"tr{i}"),
    ]


def _failing(run: RunnerFailure) -> list[BaseMessage]:
    call = {"id": "run", "name": "bash", "args": {"command": run.command}}
    output = f"{FILLER}\n{run.output}\nCommand exited with code {run.exit_code}"
    return [
        AIMessage("Running the tests.", tool_calls=[call], id="a-run"),
        ToolMessage(output, tool_call_id="run", name="bash", id="t-run"),
    ]


def _norm(text: str) -> str:
    return " ".join(text.replace('"', "'").split())


def _request_text(messages: list[BaseMessage]) -> str:
    return _norm("\n".join(m.text for m in messages))


@pytest.mark.parametrize("budget", [4_000, 8_000, 32_000])
@pytest.mark.parametrize("run", RUNNERS, ids=IDS)
def test_every_request_after_the_fold_keeps_the_whole_failure(
    run: RunnerFailure, budget: int
) -> None:
    memory = LayeredChatMemory(max_tokens=budget)
    memory.add_messages(
        [SystemMessage("You are a coding agent.", id="sys"), HumanMessage(TASK, id="task")]
    )
    memory.add_messages(_failing(run))
    checked = 0
    for i in range(400):
        memory.add_messages(_read(i))
        context = memory.build_context()
        if any(m.id == "t-run" and m.text.startswith(FILLER[:40]) for m in context):
            continue  # the failing output itself is still in the request
        text = _request_text(context)
        assert run.command in text
        assert f"exit {run.exit_code}" in text
        for line in (*run.summary, *([run.error] if run.error else [])):
            assert _norm(line) in text, (budget, i, line)
        checked += 1
        if checked >= 3 and memory.compactions and len(memory.compactions) >= 2:
            break
    assert checked >= 3, "the failing output must leave the request"


@pytest.mark.parametrize("run", RUNNERS[:8], ids=IDS[:8])
def test_the_placeholder_of_a_failing_output_keeps_the_whole_failure(run: RunnerFailure) -> None:
    memory = LayeredChatMemory(max_tokens=400_000)
    memory.add_messages([HumanMessage(TASK, id="task"), *_failing(run)])
    index = next(i for i, m in enumerate(memory.messages) if m.id == "t-run")
    text = placeholders.placeholder_text(memory, index)
    assert f"failed (exit {run.exit_code})" in text
    for line in (*run.summary, *([run.error] if run.error else [])):
        assert _norm(line) in _norm(text), line
