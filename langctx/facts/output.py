"""Facts in a tool output's text: exit codes, error names, file:line locations, durations."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from dataclasses import dataclass

from langctx.facts.failures import EXIT_CODE_RE, OUTPUT_TAIL_CHARS, exit_code_value

ERROR_NAME_RE = re.compile(
    r"\b[A-Z]\w*?(?:Error|Exception)\b"
    r"|\b(?:KeyboardInterrupt|SystemExit|StopIteration|panic)\b"
    r"|\berror\s?TS\d{3,5}\b|\berror\[E\d{3,5}\]"
)
"""Exception and error type names: ``ValueError``, ``error TS2345``, ``error[E0308]``, ``panic``."""
# A path ending in ``name.ext``; the look-behind (a match starts a run) keeps the scan linear
_PATH = r"(?<![\w.~@+\-/\\])(?:[A-Za-z]:)?[\w.~@+\-/\\]*?[\w\-]\.[A-Za-z][A-Za-z0-9]{0,5}"
LOCATION_RE = re.compile(
    r'File "(?P<pyfile>[^"\n]{1,400})", line (?P<pyline>\d+)'
    r"|(?P<file>" + _PATH + r")"
    r"(?::(?P<line>\d+)(?::\d+)?|\((?P<tline>\d+),\d+\)|:line (?P<csline>\d+))"
)
"""``File "x.py", line 12``, ``src/a.ts:10:5``, ``a.ts(10,5)``, ``Foo.java:42``, ``X.cs:line 7``."""
DURATION_RE = re.compile(
    r"\b(?:took|elapsed|duration|finished in|completed in|done in|real|time|in)\b[:=]?\s*"
    r"(\d+m\d+(?:\.\d+)?s|\d+(?:\.\d+)?\s?(?:ms|s|sec|secs|seconds|min|minutes)\b)",
    re.IGNORECASE,
)
"""``took 3.2s``, ``Done in 4.1s``, ``real 0m1.200s``, ``passed in 0.12s``, ``in 117ms``."""
# Cheap anchors (literal prefixes, fast to find) that every fact contains
_ANCHOR_RES = (
    re.compile(r"E(?:rror|xception)"),
    re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}(?::\d|\(\d+,\d|:line \d)"),
    re.compile(r'", line \d'),
)
_ANCHOR_WORDS = ("interrupt", "systemexit", "stopiteration", "panic", "error", "exit", "return")
_SPACES_RE = re.compile(r"\s+")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_WINDOW = 320
MAX_FACT_WINDOWS = 20_000  # scanned windows at most; beyond it, the first and last halves


@dataclass(frozen=True, slots=True)
class OutputFacts:
    """Facts found in a text, each kind in order of first appearance without duplicates."""

    exit_codes: tuple[str, ...] = ()  # normalised to ``"exit code N"``
    errors: tuple[str, ...] = ()  # error and exception type names
    locations: tuple[str, ...] = ()  # normalised to ``"basename:line"``

    def __bool__(self) -> bool:
        return bool(self.exit_codes or self.errors or self.locations)

    @property
    def count(self) -> int:
        """How many facts there are in total."""
        return len(self.exit_codes) + len(self.errors) + len(self.locations)


def short_location(path: str, line: str) -> str:
    """Normalise a location to ``basename:line``.

    Example:
        >>> short_location("/src/pkg/mod.py", "12")
        'mod.py:12'
    """
    base = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    return f"{base}:{line}"


def find_locations(text: str) -> Iterable[str]:
    """The ``file:line`` locations in ``text``, in order (repeats kept)."""
    for m in LOCATION_RE.finditer(text):
        line = m.group("pyline") or m.group("line") or m.group("tline") or m.group("csline")
        yield short_location(m.group("pyfile") or m.group("file"), line)


def extract_output_facts(text: str) -> OutputFacts:
    """Find the exit codes, error type names and file:line locations in ``text``, deduplicated.

    Example:
        >>> extract_output_facts("src/a.ts(3,5): error TS2304: Cannot find name 'x'.").errors
        ('error TS2304',)
    """
    scanned = _windows_text(text)
    codes = dict.fromkeys(f"exit code {exit_code_value(m)}" for m in EXIT_CODE_RE.finditer(scanned))
    errors = dict.fromkeys(_SPACES_RE.sub(" ", m.group(0)) for m in ERROR_NAME_RE.finditer(scanned))
    return OutputFacts(tuple(codes), tuple(errors), tuple(dict.fromkeys(find_locations(scanned))))


def _windows_text(text: str) -> str:
    """The parts of ``text`` that can hold a fact: the lines (at most ±320 chars) around anchors."""
    if len(text) <= 4 * _WINDOW:
        return text
    positions = [m.start() for anchor in _ANCHOR_RES for m in anchor.finditer(text)]
    lowered = text.translate(_ASCII_LOWER)  # no anchor word overlaps itself: finditer finds all
    positions.extend(m.start() for word in _ANCHOR_WORDS for m in re.finditer(word, lowered))
    if not positions:
        return ""
    positions.sort()
    if len(positions) > MAX_FACT_WINDOWS:
        half = MAX_FACT_WINDOWS // 2
        positions = positions[:half] + positions[-half:]
    spans: list[tuple[int, int]] = []
    for pos in positions:
        lo, hi = max(0, pos - _WINDOW), min(len(text), pos + _WINDOW)
        lo = text.rfind("\n", lo, pos) + 1 or lo
        end = text.find("\n", pos, hi)
        hi = hi if end == -1 else end
        if spans and lo <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(hi, spans[-1][1]))
        else:
            spans.append((lo, hi))
    return "\n".join(text[lo:hi] for lo, hi in spans)


def missing_output_facts(facts: OutputFacts, kept_text: str) -> OutputFacts:
    """Return the facts of ``facts`` that ``kept_text`` does not show.

    Example:
        >>> missing_output_facts(extract_output_facts("a.py:1 b.py:2 KeyError"), "a.py:1").locations
        ('b.py:2',)
    """
    kept = extract_output_facts(kept_text)
    kept_exit, kept_locations = set(kept.exit_codes), set(kept.locations)
    return OutputFacts(
        tuple(code for code in facts.exit_codes if code not in kept_exit),
        tuple(name for name in facts.errors if name not in kept_text),
        tuple(loc for loc in facts.locations if loc not in kept_locations),
    )


def find_duration(text: str) -> str | None:
    """Return the last duration stated near the end of ``text`` (``"1.2s"``), or ``None``.

    Example:
        >>> find_duration("===== 3 passed in 0.12s =====")
        '0.12s'
    """
    found = list(DURATION_RE.finditer(text, max(0, len(text) - OUTPUT_TAIL_CHARS)))
    return found[-1].group(1).replace(" ", "") if found else None
