"""Whether a tool result failed, and how: exit codes, failure patterns, error lines (pure).

Example:
    >>> error_lines("collected 2 items\\nFAILED test_app.py::test_add\\nexit code 1")
    ('FAILED test_app.py::test_add',)
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.messages import ToolMessage

from langctx.facts.calls import clip
from langctx.facts.record import MAX_ERROR_LINE_CHARS, MAX_ERROR_LINES
from langctx.facts.runners import MAX_NAMED_FAILURES, MAX_TALLIES, is_summary_line
from langctx.facts.shell_parse import ShellCommand

OUTPUT_TAIL_CHARS = 4_000  # how far from each end an exit code or duration is sought
_TAIL_CHARS = 400  # a command result's exit-code trailer is looked for in its last 400 chars
_HEAD_CHARS = 300  # ... and its first 300
_EXIT_KEYS = ("exit_code", "returncode", "exitCode", "return_code", "exit_status")
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")

EXIT_CODE_RE = re.compile(
    r"<returncode>\s*(-?\d{1,6})\s*</returncode>"
    r"|\b(?:[Ee]xit(?:ed)?(?: with)?[ _](?:[Cc]ode|[Ss]tatus)|EXIT[ _](?:CODE|STATUS)"
    r"|[Rr]eturn[ _]?[Cc]ode|RETURN[ _]?CODE)"
    r"\b\s*(?:[:=]|is|was|of)?\s*[\[(]?(-?\d{1,6})\b"
)
"""An exit-code statement (``Exit code: 2``, ``<returncode>1</returncode>``), not ``exitCode``."""
# The output plainly reports a failure (only checked for command tools).
_FAILURE_PATTERN = (
    r"^Traceback \(most recent call last\):"
    r"|^(?:E\s+)?(?:[A-Za-z_][\w.]*)?(?:Error|Exception)(?::|$)"  # Error: x / ValueError: x
    r"|^(?:FAIL|FAILED|ERROR)\b"
    r"|\bFAILED\b"
    r"|^error(?:\[\w+\])?:"  # rustc, git, cargo
    r"|:\d+(?::\d+)?:\s*(?:fatal\s+)?error\b"  # gcc/clang/go: path:line:col: error
    r"|\berror TS\d+:"  # tsc
    r"|^(?:fatal|panic):|\bpanicked at\b"
    r"|^npm (?:ERR!|error\b)"
    r"|^g?make(?:\[\d+\])?: \*\*\*"
    r"|: command not found$"
    r"|^EXECUTION TIMED OUT|^(?:Command|Process|Execution) timed out\b|\btimed out after \d+"
)
_FAILURE_RE = re.compile(_FAILURE_PATTERN, re.M)
# A test run or build that failed, whatever the exit code says (a pipe to `tail` hides it).
_TEST_FAILURE_RE = re.compile(
    r"^Traceback \(most recent call last\):"
    r"|^(?:FAILED|FAIL)\b|^--- FAIL: "  # pytest short summary, go, jest
    r"|^=+ .*\b[1-9]\d* (?:failed|errors?)\b"  # pytest summary line
    r"|^[1-9]\d* failed\b|^\s*[1-9]\d* failing\s*$"  # pytest -q, mocha
    r"|^Tests?:.*\b[1-9]\d* failed\b"  # jest, vitest
    r"|^E\s+\w*(?:Error|Exception)\b"  # pytest assertion lines
    r"|^npm (?:ERR!|error)\s|^error\[E\d+\]|^error: (?:could not compile|test failed)"
    r"|test result: FAILED|\bpanicked at\b",
    re.M,
)
# A reading command that could not read (`cat: x: No such file or directory`).
_READ_ERROR_RE = re.compile(
    r"^[\w./-]+: .*(?:No such file or directory|Permission denied|Is a directory"
    r"|command not found|invalid option|unrecognized option)",
    re.M,
)
_NO_MATCH_PROGRAMS = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "git grep", "diff", "cmp", "test", "[", "[["}
)
"""Programs whose exit code 1 is an answer (no line matched, the files differ, false)."""


def is_no_match(exit_code: int | None, shell: ShellCommand | None) -> bool:
    """Exit 1 from the search or comparison whose status is the command's: an answer."""
    return exit_code == 1 and shell is not None and shell.status_program in _NO_MATCH_PROGRAMS


def command_failed(exit_code: int | None, text: str, shell: ShellCommand | None) -> bool:
    """Whether a shell command failed. A known exit code decides; its wording is read only when
    the exit code is unknown or another program's (``pytest | tail``, ``make; echo done``): a
    failing test run or build, else (not for a command that only reads) other error lines."""
    if exit_code is not None and exit_code != 0:
        return not is_no_match(exit_code, shell)
    if exit_code is not None and not (shell is not None and shell.status_masked):
        return False  # exit 0 from the program that ran last: `ls` printing "cannot access"
    if shell is not None and shell.inspects_only:
        return exit_code is None and _READ_ERROR_RE.search(text) is not None
    if _TEST_FAILURE_RE.search(text) is not None:
        return True
    if exit_code is None or (shell is not None and shell.status_masked):
        return _FAILURE_RE.search(text) is not None
    return False


# Lines kept from a failing output: the strong ones if any, else the weak ones, else the tail.
_STRONG_LINE_RE = re.compile(
    _FAILURE_PATTERN
    + r"|^[^\s:]+:\d+:\d+: "  # linters: path:line:col: CODE message
    + r"|No such file or directory|^E: "
    + r"|^=+ .*\b\d+ failed\b"  # pytest summary: names the count
    + r"|^E {3,}\S"  # pytest: the assertion that failed
    + r"|^[^\s:]+:\d+: \w*(?:Error|Exception)$"  # pytest: where it failed
    + r"|^--- FAIL: "  # go: names the test
    + r"|^\s+\w[\w.-]*_test\.go:\d+: \S"  # go: a test's own message (t.Errorf)
    + r"|^\s*[×✗✘] \S"  # biome, ruff, cargo-style diagnostics marked with a cross
    + r"|^\s*● (?!Console\b)\S"  # jest: the failing test's header
    + r"|^\s*Failure/Error: "  # rspec: the expectation that failed
)
_WEAK_LINE_RE = re.compile(
    r"Error|Exception|[Ff]ailed|FAILED|\bFAIL\b|\b(?:[Ff]ailures?|FAILURES?)\b|\berrors?\b"
    r"|\bfatal\b|\bpanic"
)
_ANY_LINE_RE = re.compile(f"(?:{_STRONG_LINE_RE.pattern})|(?:{_WEAK_LINE_RE.pattern})")
_TRACEBACK_HEAD = "Traceback (most recent call last):"
_SCAN_HEAD = 100  # error lines are looked for in the first and last lines of long outputs only
_SCAN_TAIL = 400
_TRACEBACK_FRAME_RE = re.compile(r'^\s+File "[^"]*", line \d+')
_KEYWORDS = (
    *"error exception fail traceback fatal panic".split(),
    *("npm ", ": ***", "command not found", "timed out", "no such file", "\ne: ", "\ne   "),
    *"× ✗ ✘ _test.go: ●".split(),
)
"""One of these (lower case; ``\\n``: a line start) is in every line ``_ANY_LINE_RE`` matches, bar
a ``:line:col:`` position (``_POSITION_RE``) or a first line starting ``E:``."""
_POSITION_RE = re.compile(r":\d+:\d+: ")


def command_exit_code(message: ToolMessage, text: str) -> int | None:
    """The exit code of a command result: structured fields first, then an exit-code trailer."""
    for source in (message.artifact, message.additional_kwargs, message.response_metadata):
        if isinstance(source, Mapping):
            for key in _EXIT_KEYS:
                value = source.get(key)
                if isinstance(value, int) and not isinstance(value, bool):
                    return value
    return find_exit_code(text, tail_chars=_TAIL_CHARS, head_chars=_HEAD_CHARS)


def exit_code_value(match: re.Match[str]) -> int:
    """The exit code an :data:`EXIT_CODE_RE` match states."""
    return int(match.group(1) or match.group(2))


def find_exit_code(
    text: str, *, tail_chars: int = OUTPUT_TAIL_CHARS, head_chars: int = OUTPUT_TAIL_CHARS
) -> int | None:
    """The exit code ``text`` states: the last in its tail (pi), else the first in its head.

    Example:
        >>> find_exit_code("...\\nCommand exited with code 2\\n")
        2
    """
    tail = list(EXIT_CODE_RE.finditer(text, max(0, len(text) - tail_chars)))
    match = tail[-1] if tail else EXIT_CODE_RE.search(text, 0, head_chars)
    return None if match is None else exit_code_value(match)


def _candidate_lines(lines: list[str]) -> set[int]:
    """Indices of the lines that may match ``_ANY_LINE_RE`` (a superset, by fast substring search)."""
    low = "\n".join(lines).lower()  # lower() may change lengths but never adds or drops a newline
    starts = [0, *(m.end() for m in re.finditer("\n", low))]
    hits: set[int] = set()
    for keyword in _KEYWORDS:
        at_start = keyword.startswith("\n")  # the hit is the newline before the line
        pos = low.find(keyword)
        while pos != -1:
            line = bisect.bisect_right(starts, pos + at_start) - 1
            hits.add(line)
            # one hit per line is enough: go on from the next line
            pos = low.find(keyword, starts[line + 1] - at_start) if line + 1 < len(starts) else -1
    hits.update(bisect.bisect_right(starts, m.start()) - 1 for m in _POSITION_RE.finditer(low))
    if low.startswith(("e: ", "e   ")):
        hits.add(0)
    return hits


@functools.lru_cache(maxsize=512)  # a failing output is read again when its turn is folded
def error_lines(text: str) -> tuple[str, ...]:
    """Up to 8 error lines of a failing output (the first 3 and last 5 when there are more):
    strong ones (exceptions, diagnostics) win over weak ones, else the last three lines."""
    lines = text.splitlines()
    if len(lines) > _SCAN_HEAD + _SCAN_TAIL:  # bounded work: failures sit at the ends of logs
        lines = [*lines[:_SCAN_HEAD], "", *lines[-_SCAN_TAIL:]]
    picked = _picked_lines(lines) or [ln.strip() for ln in text.splitlines() if ln.strip()][-3:]
    # a line printed again (a tool re-running the step) counts where it was printed last
    unique = [clip(ln, MAX_ERROR_LINE_CHARS) for ln in reversed(dict.fromkeys(reversed(picked)))]
    if len(unique) > MAX_ERROR_LINES:
        unique = unique[:3] + unique[-(MAX_ERROR_LINES - 3) :]
    return tuple(unique)


def _picked_lines(lines: list[str]) -> list[str]:
    """The strong lines (then the closing verdict), else the weak ones."""
    candidates = _candidate_lines(lines)
    strong: list[str] = []
    weak: list[str] = []
    label_tier: list[str] | None = None  # a bare "ERROR:" label's tier, awaiting its text
    verdict: str | None = None  # the last weak line after the last strong one
    last_frame: str | None = None
    in_traceback = False
    for index, raw in enumerate(lines):
        if not in_traceback and label_tier is None and index not in candidates:
            continue
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if label_tier is not None:  # the text of the label
            label_tier.append(stripped)
            label_tier = None
        elif in_traceback:
            if _TRACEBACK_FRAME_RE.match(line):
                last_frame = stripped
            elif not line[0].isspace():  # the exception line that ends the traceback
                strong.extend([last_frame, stripped] if last_frame is not None else [stripped])
                in_traceback = False
                last_frame = None
        elif line.startswith(_TRACEBACK_HEAD):
            strong.append(stripped)
            in_traceback = True
        elif _ANY_LINE_RE.search(line):  # else a keyword in passing (``test_errors.py``, ...)
            tier = strong if _STRONG_LINE_RE.search(line) else weak
            tier.append(stripped)
            verdict = None if tier is strong else stripped
            if stripped.endswith(":") and len(stripped) <= 20:
                label_tier = tier
    return [*strong, verdict] if strong and verdict is not None else strong or weak


SHOWN_FAILURE_CHARS = 480  # optional lines one rendered failure shows (fits 4k)
_SHOWN_LINE_CHARS = 200
_CHOSEN_LINE_CHARS = 500  # a compiler diagnostic with its types runs to 300-400 characters
_SHOWN_ERROR_LINES = 3
_BARE_VERDICT_RE = re.compile(r"^\W*(?:FAIL|FAILED|FAILURES|ERROR|ERRORS)\W*$|^.{0,19}:$")
"""A verdict word alone (``FAIL``, ``FAILURES!``) or a label (``Failures:``): no error line."""


def _texts(value: object) -> list[str]:
    return [t for t in (str(x).strip() for x in value) if t] if isinstance(value, list) else []


def shown_failure_lines(error: Mapping[str, Any]) -> list[str]:
    """The lines a rendered failure shows of an :class:`~langctx.facts.ErrorFact` (any JSON).

    The last error line that is no summary line and the last summary line always show; then,
    within :data:`SHOWN_FAILURE_CHARS`, the other summary lines and two earlier error lines.
    """
    lines = _texts(error.get("lines"))
    if "summary_lines" in error:
        summary = _texts(error.get("summary_lines"))[: MAX_NAMED_FAILURES + MAX_TALLIES]
    else:  # facts written before summary lines were kept
        summary = [line for line in lines if is_summary_line(line)][-MAX_TALLIES:]
    taken = set(summary)
    own = [
        line
        for line in lines
        if line not in taken and not is_summary_line(line) and not _BARE_VERDICT_RE.match(line)
    ][-_SHOWN_ERROR_LINES:]
    if not own and not summary:
        own = lines[-1:]  # only a bare verdict: show it
    sources = (own, summary)  # (source, index) keys sort into the output order
    wanted = [(0, len(own) - 1), (1, len(summary) - 1)]
    wanted += [(1, i) for i in range(len(summary) - 1)]
    wanted += [(0, i) for i in range(len(own) - 2, -1, -1)]
    shown: dict[tuple[int, int], str] = {}
    used = 0
    for rank, (kind, i) in enumerate(w for w in wanted if w[1] >= 0):
        text = clip(sources[kind][i], _CHOSEN_LINE_CHARS if rank == 0 else _SHOWN_LINE_CHARS)
        if rank >= 2 and used + len(text) + 2 > SHOWN_FAILURE_CHARS:
            continue
        shown[kind, i] = text
        used += len(text) + 2
    return [shown[key] for key in sorted(shown)]
