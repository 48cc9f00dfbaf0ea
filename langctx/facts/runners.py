"""A test runner's summary lines in a failing output: tallies (``1 failed, 2 passed``) and named
failures (``FAILED t.py::test_x``, ``--- FAIL: TestX``) (pure)."""

from __future__ import annotations

import functools
import re

from langctx.facts.calls import clip

MAX_NAMED_FAILURES = 2  # named failures kept from one output (the first ones)
MAX_TALLIES = 2  # tallies kept (the last ones: jest's ``Test Suites:``, ``Tests:``)
MAX_SUMMARY_LINE_CHARS = 200  # each summary line is clipped to this many characters
_SCAN_HEAD = 100  # summary lines are looked for in the first and last lines of long outputs only
_SCAN_TAIL = 400
_FAIL_WORD = r"failed|failures?|failing|fails|errors?|errored|broken"
_OTHER_WORD = (
    r"passed|passing|passes|pass|succeeded|successful|ok|skipped|skips?|ignored|pending|todo"
    r"|xfailed|xpassed|deselected|warnings?|tests?|examples?|runs?|assertions?|total|specs?"
    r"|suites?|measured|filtered out|incomplete|risky|cases?|checks?|files?|unexpected"
)
_WORD = rf"(?:{_FAIL_WORD}|{_OTHER_WORD})"
_COUNT_RE = re.compile(
    rf"(?i)(?<![\w.])(?P<n>\d+)%?\s+(?:tests?\s+)?(?P<w>{_WORD})\b"  # 3 passed, 1 tests failed
    rf"|\b(?P<w2>{_WORD})\s*[:=]\s*(?P<n2>\d+)\b(?!%?\s+(?:tests?\s+)?{_WORD}\b)"  # Failures: 1
    rf"|^\s*[#ℹ]\s*(?P<w3>{_WORD}|fail)\s+(?P<n3>\d+)\s*$"  # TAP / node:test: "# fail 1"
)
_FAIL_RE = re.compile(rf"(?i)^(?:{_FAIL_WORD}|fail)$")
_VERDICT_RE = re.compile(r"\bFAIL(?:ED|URES?)?\b|\bFailed!")
_DECORATION = "=-_*#ℹ✖✗✘×•·[]()!:;,. \t"
_TALLY_TAIL_RE = re.compile(r"(?:in|after|out of|of|within)\s.{0,40}|\d[\d.]*\s?m?s|\d+")
"""What may follow a lone failure count in a tally line: a duration or a total (``in 0.1s``)."""
# a runner's verdict on one test, suite or package: one shape per runner
_NAMED_RE = re.compile(
    r"^(?:FAILED|ERROR)\s+\S+(?:::|\.py\b)"  # pytest short summary: FAILED t.py::test_x - ...
    r"|^\s*--- FAIL: \S"  # go test, subtests indented
    r"|^FAIL\t\S"  # go: FAIL<TAB>package<TAB>0.01s
    r"|^\s*FAIL\s+\S+\.\w+(?:\s|$)"  # jest, vitest: FAIL src/x.test.ts
    r"|^test \S+ \.\.\. FAILED\b"  # cargo, libtest
    r"|^not ok \d+\b"  # TAP: bats, node --test, prove
    r"|^rspec \S+:\d+ # "  # rspec's list of failed examples
    r"|^(?:FAIL|ERROR): \w+ \([\w.]+\)"  # unittest
    r"|^\s*Failed \S+ \[\d"  # dotnet test
    r"|^\S.* > .* FAILED$"  # gradle: SomeTest > someCase() FAILED
    r"|^\w[\w:]*#\w+ \[\S+:\d+\]:?$"  # minitest: CalcTest#test_add [test/calc_test.rb:6]:
    r"|^\d+/\d+ Test +#\d+: .*\*\*\*(?:Failed|Exception|Timeout)"  # ctest
    r"|^Test Case '.*' failed\b"  # XCTest (swift test)
)
_PREFILTER_RE = re.compile(r"(?i)fail|error|broken|not ok|rspec |#\w+ \[")


def _tally(line: str) -> bool:
    """Two counts, one failing or the line a verdict; or one failure count alone in a short line."""
    matches = list(_COUNT_RE.finditer(line))
    if not matches:
        return False
    failing = [m for m in matches if _FAIL_RE.match(m.group("w") or m.group("w2") or m.group("w3"))]
    if len(matches) >= 2:
        return bool(failing) or _VERDICT_RE.search(line) is not None
    count = matches[0]  # the one count: a failure count alone in a short line, or no tally
    if not failing or int(count.group("n") or count.group("n2") or count.group("n3")) < 1:
        return False
    before = line[: count.start()].strip(_DECORATION).split()
    after = line[count.end() :].strip(_DECORATION)
    return len(before) <= 2 and (not after or _TALLY_TAIL_RE.fullmatch(after) is not None)


def is_summary_line(line: str) -> bool:
    """Whether one line is a test runner's summary line: a tally or a named failure.

    Example:
        >>> is_summary_line("test result: FAILED. 3 passed; 1 failed"), is_summary_line("1 failed try")
        (True, False)
    """
    if len(line) > 2_000 or _PREFILTER_RE.search(line) is None:
        return False
    return _NAMED_RE.search(line) is not None or _tally(line)


@functools.lru_cache(maxsize=512)  # read again when the failing turn is folded
def summary_lines(text: str) -> tuple[str, ...]:
    """The first named failures and the last tallies of an output (without ANSI codes), in order.

    Example:
        >>> summary_lines("Finished in 0.02 seconds\\n5 examples, 1 failure")
        ('5 examples, 1 failure',)
    """
    lines = text.splitlines()
    if len(lines) > _SCAN_HEAD + _SCAN_TAIL:
        lines = [*lines[:_SCAN_HEAD], *lines[-_SCAN_TAIL:]]
    named: list[int] = []
    tallies: list[int] = []
    seen: set[str] = set()
    for index, raw in enumerate(lines):
        line = raw.strip()
        if not line or line in seen or len(line) > 2_000 or _PREFILTER_RE.search(line) is None:
            continue
        found = named if _NAMED_RE.search(raw) is not None else tallies if _tally(line) else None
        if found is not None:
            seen.add(line)
            found.append(index)
    keep = sorted([*named[:MAX_NAMED_FAILURES], *tallies[-MAX_TALLIES:]])
    return tuple(clip(lines[i].strip(), MAX_SUMMARY_LINE_CHARS) for i in keep)
