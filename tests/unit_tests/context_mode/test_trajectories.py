"""Issue 4 acceptance on the recorded sessions: every tool output over 1,500 tokens, reduced.

The full report (per content kind) is ``bench/context_mode_reduction.py``; this pins the targets:
total tokens reduced by at least 70%, and every exit code, error/exception type name and file:line
location of an original still in its reduced text.
"""

from __future__ import annotations

import json
import re

import pytest

from langctx.context_mode import reduce_output
from langctx.context_mode.reduce import MIN_INLINE_TOKENS
from tests._trajectories import DATA_DIR, require_data_dir

pytestmark = pytest.mark.trajectories

THRESHOLD = 1_500
EXIT = re.compile(
    r"(?i)\b(?:exit(?:ed)?(?: with)? (?:code|status)|exit_?code|returncode)\s*[:=]?\s*(-?\d+)"
)
ERROR = re.compile(r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b|\berror TS\d+\b")
LOCATIONS = (
    re.compile(r'File "([^"\n]+)", line (\d+)'),
    re.compile(r"([\w@~.+\-/\\]*\w\.[A-Za-z][A-Za-z0-9]{0,5}):(\d+)"),
    re.compile(r"([\w@~.+\-/\\]*\w\.[A-Za-z][A-Za-z0-9]{0,5})\((\d+),\d+\)"),
)


def _facts(text: str) -> set[str]:
    found = {f"exit {m.group(1)}" for m in EXIT.finditer(text)} | set(ERROR.findall(text))
    for pattern in LOCATIONS:
        found |= {f"{m.group(1).rsplit('/', 1)[-1]}:{m.group(2)}" for m in pattern.finditer(text)}
    return found


def _counter():  # type: ignore[no-untyped-def]
    tiktoken = pytest.importorskip("tiktoken")
    try:
        enc = tiktoken.get_encoding("o200k_base")
    except Exception as exc:  # pragma: no cover - no vocabulary offline
        pytest.skip(f"o200k_base not available offline: {exc}")
    return lambda text: len(enc.encode(text, disallowed_special=()))


def test_large_tool_outputs_shrink_70_percent_and_keep_their_facts() -> None:
    require_data_dir()
    count = _counter()
    before = after = outputs = 0
    lost: list[str] = []
    for path in sorted(DATA_DIR.glob("*/*.messages.jsonl")):
        calls: dict[str, dict[str, object]] = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            msg = json.loads(line)
            if msg["type"] == "ai":
                calls.update({c["id"]: c for c in msg.get("tool_calls") or []})
                continue
            if msg["type"] != "tool" or count(msg["content"]) <= THRESHOLD:
                continue
            call = calls.get(msg.get("tool_call_id"), {})
            args = call.get("args") if isinstance(call.get("args"), dict) else {}
            reduced = reduce_output(
                msg["content"],
                tool_name=msg.get("name"),
                args=args,  # type: ignore[arg-type]
                max_inline_tokens=THRESHOLD,
                count_tokens=count,
            )
            assert reduced is not None and reduced.reduced_tokens <= THRESHOLD
            outputs += 1
            before += reduced.original_tokens
            after += reduced.reduced_tokens
            missing = _facts(msg["content"]) - _facts(reduced.text)
            lost += [f"{path.name}: {fact}" for fact in sorted(missing)]
    assert outputs >= 40
    assert after <= 0.3 * before, f"reduced only {1 - after / before:.0%}"
    assert not lost, f"{len(lost)} facts lost inline: {lost[:10]}"


_TRACEBACK = re.compile(r"^(?P<prefix>.{0,40}?)Traceback \(most recent call last\):\s*$")


def exception_lines(text: str) -> list[str]:
    """The exception line ending each Python traceback of ``text`` (an independent reader): the
    first later line with the traceback's prefix whose text after it is not indented."""
    lines = text.splitlines()
    found: list[str] = []
    for i, line in enumerate(lines):
        if (m := _TRACEBACK.match(line)) is None:
            continue
        prefix = (
            m.group("prefix")
            if i + 1 < len(lines) and lines[i + 1].startswith(m.group("prefix"))
            else ""
        )
        for later in lines[i + 1 :]:
            if not later.startswith(prefix):
                break
            if later[len(prefix) :][:1] not in ("", " ", "\t"):
                found.append(later)
                break
    return found


def test_every_traceback_keeps_its_exception_line() -> None:
    """The exception line that ends a traceback (``INTERNALERROR> AttributeError: ...`` too) is in
    the reduced view of every recorded output holding one, reduced to the smallest inline size
    (clipped at 400 characters like a fact line)."""
    require_data_dir()
    count = _counter()
    checked, lost = 0, []
    for path in sorted(DATA_DIR.glob("*/*.messages.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            msg = json.loads(line)
            wanted = exception_lines(msg["content"]) if msg["type"] == "tool" else []
            if not wanted:
                continue
            budget = max(MIN_INLINE_TOKENS, count(msg["content"]) // 3)
            reduced = reduce_output(msg["content"], max_inline_tokens=budget, count_tokens=count)
            kept = msg["content"] if reduced is None else reduced.text  # None: it fits whole
            checked += len(wanted)
            lost += [f"{path.name}: {w[:100]}" for w in wanted if w.strip()[:399] not in kept]
    assert checked >= 4
    assert not lost, f"{len(lost)} of {checked} exception lines cut: {lost[:5]}"
