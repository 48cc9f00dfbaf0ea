"""Reducer for logs and command output: errors, warnings, tracebacks, first and last lines kept;
near-identical lines (digits ignored) shown once with ``(×N)``. Fact lines are found by literal
anchors, a few linear passes over the whole text."""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import accumulate, islice

from langctx.context_mode.outputs import ContentKind, OutputMeta, Reduction
from langctx.context_mode.reducers._layout import (
    Candidate,
    body_budget,
    clip,
    finish,
    render_selection,
    select_with_facts,
)
from langctx.context_mode.sanitize import clean_terminal
from langctx.facts import EXIT_CODE_RE, LOCATION_RE, extract_output_facts
from langctx.facts.output import find_locations

_ERROR_WORDS = (
    "error", "err!", "fail", "fatal", "exception", "traceback", "panic", "abort", "denied",
    "segmentation fault", "core dump", "killed", "timed out", "timeout", "cannot ", "can't ",
    "unable to", "not found", "no such file", "undefined reference", "assert", "interrupt",
    "systemexit", "stopiteration", "✗", "✖", "×", "❌", "exit", "returncode", "return code",
    "return_code",
)  # fmt: skip
_WARN_WORDS = ("warn", "deprecat")
_FRAME_ANCHORS = (
    re.compile(r"\n[ \t]+at "),  # JS / Java / C# frames
    re.compile(r'File "'),  # Python frames
    re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}(?::\d|\(\d+,\d|:line \d)"),  # path.ext:line
)
_TRACEBACK_START = "Traceback (most recent call last)"
_TRACEBACK_HEADER = _TRACEBACK_START + ":"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_DIGITS = str.maketrans("", "", string.digits)  # keys ignore digits

MAX_FACT_LINES = 20_000
"""Lines with facts analysed at most (the first and last halves); the rest stay in the full output."""

_MAX_ALSO_AT = 40
_LAST_CHARS = 160
_HAS_LOCATION = _FRAME_ANCHORS[2]
_WORD = re.compile(r"[A-Za-z]{2,}")
_MESSAGE_WORDS = 3
_TRACEBACK_MAX_LINES = 400


@dataclass(frozen=True, slots=True, kw_only=True)
class LineProfile:
    """How a line-based reducer weighs lines."""

    head_lines: int = 10  # non-empty lines kept from the start
    tail_lines: int = 20  # non-empty lines kept from the end
    edge_head: int = 3  # of the head lines, how many are kept as surely as lines with facts
    edge_tail: int = 5  # of the tail lines, how many are kept as surely as lines with facts
    # Also keep (at lower priority) the line after a Python frame, the line before other facts:
    context_lines: bool = False
    important_chars: int = 400  # lines with facts are clipped to this many characters
    other_chars: int = 240  # other kept lines are clipped to this many characters


LOG_PROFILE = LineProfile()


def _positions(lowered: str, words: tuple[str, ...]) -> list[int]:
    found: list[int] = []
    for word in words:
        start = lowered.find(word)
        while start != -1:
            found.append(start)
            start = lowered.find(word, start + 1)
    return found


def _line_indices(text: str, positions: list[int]) -> set[int]:
    """Line numbers (0-based) of character positions."""
    found: set[int] = set()
    line = prev = 0
    for pos in sorted(positions):
        line += text.count("\n", prev, pos)
        prev = pos
        found.add(line)
    return found


def _traceback_lines(lines: list[str], first: int) -> tuple[list[int], int | None]:
    """Indices of a Python traceback starting at ``first``, through the exception line, and the
    exception line's (None when the block ends without one).

    What precedes ``Traceback`` on its line (``INTERNALERROR> ``, an indent) prefixes the whole
    traceback when the next line starts with it too: the exception line is the first line whose
    text after the prefix is not indented.
    """
    prefix = lines[first][: lines[first].find(_TRACEBACK_START)]
    if first + 1 < len(lines) and not lines[first + 1].startswith(prefix):
        prefix = ""  # a one-line label (a timestamped log record): the frames follow bare
    stop = min(len(lines), first + _TRACEBACK_MAX_LINES)
    for j in range(first + 1, stop):
        if not lines[j].startswith(prefix):
            return list(range(first, j)), None
        rest = lines[j][len(prefix) :]
        if rest and not rest[0].isspace():  # the exception line ends the block
            return list(range(first, j + 1)), j
    return list(range(first, stop)), None


def reduce_lines(
    text: str,
    *,
    kind: ContentKind,
    meta: OutputMeta,
    budget_tokens: int,
    profile: LineProfile = LOG_PROFILE,
    preface: tuple[str, ...] = (),
) -> Reduction:
    """Reduce line-oriented output: facts, then the first and last lines, repeats collapsed.

    ``preface``: lines (a summary the caller computed) put first.
    """
    count = meta.count_tokens
    clean = clean_terminal(text)
    output = _Lines.of(clean)
    n = len(output.lines)
    error_idx, warn_idx, exception_idx = _fact_indices(clean, output.lines)
    fact_idx = sorted(error_idx | warn_idx)
    if skipped := max(0, len(fact_idx) - MAX_FACT_LINES):
        half = MAX_FACT_LINES // 2  # the first and last halves are analysed
        fact_idx = fact_idx[:half] + fact_idx[-half:]
    context_idx = _context_indices(output.lines, fact_idx, error_idx, profile)
    _pin_location_headers(output, fact_idx)
    candidates, shown_keys = _fact_candidates(output, fact_idx, error_idx, exception_idx, profile)
    candidates += _edge_candidates(output, shown_keys, context_idx, profile)
    # Facts the kept text shows are not listed again: all fact lines stand for the cut ones.
    all_facts = extract_output_facts("\n".join(output.lines[i] for i in fact_idx))
    budget = body_budget(kind, meta, budget_tokens) - sum(count(p) + 1 for p in preface)
    kept, note, unlisted = select_with_facts(
        candidates, budget_tokens=budget, count_tokens=count, facts=all_facts, total_lines=n
    )
    hidden = _hidden_lines(output, {output.keys[c.line] for c in kept})
    body = [*preface, *render_selection(kept, total_lines=n, hidden=hidden), *note]
    removed = _removed_note(output, kept, len(fact_idx), set(shown_keys.values()))
    if skipped:
        removed += f"; {skipped:,} middle error/warning lines not analysed"
    return finish(kind, meta, budget_tokens, body, removed, unlisted)


@dataclass(frozen=True, slots=True)
class _Lines:
    """The lines of an output, their repeat keys (digits ignored) and each key's count."""

    lines: list[str]
    keys: list[str]
    counts: Counter[str]

    @classmethod
    def of(cls, clean: str) -> _Lines:
        lines = clean.split("\n")
        while len(lines) > 1 and not lines[-1].strip():
            lines.pop()
        keys = clean.translate(_DIGITS).split("\n")[: len(lines)]  # near-identical lines match
        return cls(lines, keys, Counter(keys))


def _fact_indices(clean: str, lines: list[str]) -> tuple[set[int], set[int], set[int]]:
    """Lines with an error word or a frame anchor (whole Python tracebacks); else a warning word;
    and the exception lines that end the tracebacks."""
    n = len(lines)
    lowered = clean.translate(_ASCII_LOWER)
    positions = _positions(lowered, _ERROR_WORDS)
    for anchor in _FRAME_ANCHORS:
        positions.extend(m.start() + 1 for m in anchor.finditer(clean))
    error_idx = _line_indices(clean, positions) - {n}
    warn_idx = _line_indices(clean, _positions(lowered, _WARN_WORDS)) - error_idx - {n}
    del lowered
    exception_idx: set[int] = set()
    for i in sorted(error_idx):
        if lines[i].rstrip().endswith(_TRACEBACK_HEADER):  # after any prefix
            block, exception = _traceback_lines(lines, i)
            error_idx.update(block)
            if exception is not None:
                exception_idx.add(exception)
    return error_idx, warn_idx, exception_idx


def _context_indices(
    lines: list[str], fact_idx: list[int], error_idx: set[int], profile: LineProfile
) -> set[int]:
    """The line after a Python frame, the line before other fact lines (if the profile says so)."""
    if not profile.context_lines:
        return set()
    frames = {i for i in fact_idx if 'File "' in lines[i]}
    after = {i + 1 for i in frames if i + 1 < len(lines)}
    before = {i - 1 for i in fact_idx if i not in frames and i > 0}
    return (after | before) - error_idx


def _fact_candidates(
    output: _Lines,
    fact_idx: list[int],
    error_idx: set[int],
    exception_idx: set[int],
    profile: LineProfile,
) -> tuple[list[Candidate], dict[str, int]]:
    """One candidate per group of near-identical fact lines, and the line shown for each key;
    exit-code lines and the exception lines that end tracebacks are kept first."""
    groups: dict[str, list[int]] = {}
    for i in fact_idx:
        if output.keys[i].strip():
            groups.setdefault(output.keys[i], []).append(i)
    candidates: list[Candidate] = []
    n_facts = len(fact_idx)
    for rank_pos, i in enumerate(fact_idx):
        key = output.keys[i]
        if key not in groups or groups[key][0] != i:
            continue
        line = clip(output.lines[i], profile.important_chars)
        if output.counts[key] > 1:
            line += _repeat_note(output.counts[key], output.lines, groups[key])
        exit_line = i in error_idx and EXIT_CODE_RE.search(output.lines[i]) is not None
        first = exit_line or any(j in exception_idx for j in groups[key])
        priority = -1 if first else (0 if i in error_idx else 1)
        rank = min(rank_pos, n_facts - 1 - rank_pos)
        candidates.append(Candidate(i, line, priority, rank))
    return candidates, {key: members[0] for key, members in groups.items()}


def _edge_candidates(
    output: _Lines, shown_keys: dict[str, int], context_idx: set[int], profile: LineProfile
) -> list[Candidate]:
    """The first and last lines and the context lines whose key no fact line shows."""
    n = len(output.lines)
    forward = (i for i, key in enumerate(output.keys) if key.strip())
    backward = (i for i in range(n - 1, -1, -1) if output.keys[i].strip())
    head_tail = sorted(
        {*islice(forward, profile.head_lines), *islice(backward, profile.tail_lines)}
    )
    # The very first and last of them are kept like facts.
    edges = {*head_tail[: profile.edge_head], *head_tail[len(head_tail) - profile.edge_tail :]}
    shown = set(shown_keys)
    candidates: list[Candidate] = []
    for i in sorted({*head_tail, *context_idx}):
        key = output.keys[i]
        if not key.strip() or key in shown:
            continue
        shown.add(key)
        line = clip(output.lines[i], profile.other_chars)
        if output.counts[key] > 1:
            line += f" (×{output.counts[key]})"
        distance: float = min(i, n - 1 - i) + (0.5 if i < n / 2 else 0)  # tail wins ties
        priority, rank = (0, -1) if i in edges else (2 if i in context_idx else 3, distance)
        candidates.append(Candidate(i, line, priority, rank))
    return candidates


def _hidden_lines(output: _Lines, shown: set[str]) -> Callable[[int, int], int]:
    """``hidden(first, last)``: the non-blank lines in that range whose key no kept line shows."""
    prefix = [0, *accumulate(bool(k.strip()) and k not in shown for k in output.keys)]
    return lambda first, last: prefix[last + 1] - prefix[first]


def _removed_note(
    output: _Lines, kept: list[Candidate], n_facts: int, group_lines: set[int]
) -> str:
    """What the kept lines leave out; ``group_lines``: the line shown for each group of facts."""
    n = len(output.lines)
    keys, counts = output.keys, output.counts
    collapsed = sum(counts[k] - 1 for k in {keys[c.line] for c in kept} if counts[k] > 1)
    removed = f"{max(0, n - len(kept) - collapsed):,} of {n:,} lines"
    if collapsed:
        removed += f", {collapsed:,} repeated lines collapsed into (×N)"
    if n_facts:
        kept_facts = sum(1 for c in kept if c.line in group_lines)
        removed += f"; kept {kept_facts:,} error/warning/trace lines"
    return removed


def _pin_location_headers(output: _Lines, fact_idx: list[int]) -> None:
    """Give lines that are little more than a location (``a.ts:205:2 parse ━━━``) exact keys,
    so that they stay apart: each heads the diagnostic below it."""
    exact: Counter[str] | None = None
    for i in fact_idx:
        line = output.lines[i]
        if not _HAS_LOCATION.search(line):
            continue
        if len(_WORD.findall(LOCATION_RE.sub(" ", line))) >= _MESSAGE_WORDS:
            continue
        if exact is None:
            exact = Counter(f"={line.strip()}" for line in output.lines)
        key = output.keys[i] = f"={line.strip()}"
        output.counts[key] = exact[key]


def _repeat_note(total: int, lines: list[str], members: list[int]) -> str:
    """``" (×N; also at a.py:3, b.py:9; last: <line>)"`` for a line shown for ``total`` copies."""
    rep_locations = set(find_locations(lines[members[0]]))
    found = dict.fromkeys(loc for i in members[1:] for loc in find_locations(lines[i]))
    others = [loc for loc in found if loc not in rep_locations]
    note = f" (×{total}"
    if others:
        note += "; also at " + ", ".join(others[:_MAX_ALSO_AT])
        if len(others) > _MAX_ALSO_AT:
            note += f", +{len(others) - _MAX_ALSO_AT} more"
    last = lines[members[-1]].strip()
    if len(members) > 1 and last != lines[members[0]].strip():
        note += f"; last: {clip(last, _LAST_CHARS)}"  # the numbers the group's key ignored
    return note + ")"


def reduce_log(text: str, *, meta: OutputMeta, budget_tokens: int) -> Reduction:
    """Reduce command output or a log to its errors, warnings, tracebacks, first and last lines."""
    return reduce_lines(text, kind="log", meta=meta, budget_tokens=budget_tokens)
