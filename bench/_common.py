"""What the benchmark scripts share: the recorded sessions' tool outputs, independent fact
patterns, an exact offline token counter, the machine description and the JSON results writer.

The scripts run as ``python bench/<name>.py``, so this folder is on ``sys.path``.
"""

from __future__ import annotations

import json
import os
import platform
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "trajectories"

# Fact patterns written independently of the reducers' own, so a benchmark does not grade
# Context-mode with its own rules.
EXIT_RE = re.compile(
    r"(?i)\b(?:exit(?:ed)?(?: with)? (?:code|status)|exit_?code|return_?code|returncode)"
    r"\s*[:=]?\s*(-?\d+)"
)
ERROR_RE = re.compile(
    r"\b[A-Z][A-Za-z0-9_]*(?:Error|Exception)\b|\berror TS\d+\b|\berror\[E\d+\]"
    r"|\b(?:KeyboardInterrupt|SystemExit)\b"
)
LOC_RES = (
    re.compile(r'File "([^"\n]+)", line (\d+)'),
    re.compile(r"([\w@~.+\-/\\]*\w\.[A-Za-z][A-Za-z0-9]{0,5}):(\d+)"),  # a.py:12, a.ts:3:4
    re.compile(r"([\w@~.+\-/\\]*\w\.[A-Za-z][A-Za-z0-9]{0,5})\((\d+),\d+\)"),  # tsc: a.ts(3,4)
)


def facts_of(text: str) -> dict[str, dict[str, str]]:
    """Exit codes, error names and file:line locations in ``text``.

    Per kind, the normalised fact (``exit 1``, ``ValueError``, ``parser.py:12``) -> the exact text
    it was found as (a pattern to grep for).
    """
    text = text.replace("\u200b", "")
    out: dict[str, dict[str, str]] = {"exit": {}, "error": {}, "location": {}}
    for m in EXIT_RE.finditer(text):
        out["exit"].setdefault(f"exit {m.group(1)}", m.group(0))
    for m in ERROR_RE.finditer(text):
        out["error"].setdefault(m.group(0), m.group(0))
    for r in LOC_RES:
        for m in r.finditer(text):
            base = m.group(1).replace("\\", "/").rsplit("/", 1)[-1]
            out["location"].setdefault(f"{base}:{m.group(2)}", m.group(0))
    return out


def exact_counter() -> tuple[Callable[[str], int], str]:
    """An exact ``o200k_base`` counter (vocabulary seeded offline), or langctx's estimator, and a
    note saying which."""
    try:
        from langctx._tiktoken_offline import seed_tiktoken_cache

        seed_tiktoken_cache()
        import tiktoken

        enc = tiktoken.get_encoding("o200k_base")
        enc.encode("warm up")
    except Exception as exc:  # no vocabulary offline: say so and estimate
        from langctx.tokens import count_tokens_approximately

        return count_tokens_approximately, f"langctx estimator (tiktoken unavailable: {exc})"
    return (lambda s: len(enc.encode(s, disallowed_special=()))), "exact o200k_base (tiktoken)"


@dataclass
class Output:
    """One ToolMessage of a recorded session, with the call it answers."""

    session: str
    tool: str | None
    args: dict[str, Any]
    call_id: str
    text: str


def tool_outputs(root: Path = DATA) -> Iterator[Output]:
    """Every string ToolMessage in ``root/*/*.messages.jsonl``, in order."""
    for path in sorted(root.glob("*/*.messages.jsonl")):
        calls: dict[str, dict[str, Any]] = {}
        with path.open(encoding="utf-8") as f:
            for line in f:
                msg = json.loads(line)
                if msg.get("type") == "ai":
                    calls.update({c.get("id"): c for c in msg.get("tool_calls") or []})
                elif msg.get("type") == "tool" and isinstance(msg.get("content"), str):
                    call = calls.get(msg.get("tool_call_id"), {})
                    args = call.get("args") if isinstance(call.get("args"), dict) else {}
                    yield Output(
                        session=f"{path.parent.name}/{path.name.removesuffix('.messages.jsonl')}",
                        tool=msg.get("name") or call.get("name"),
                        args=args,
                        call_id=str(msg.get("tool_call_id")),
                        text=msg["content"],
                    )


def environment(packages: Iterable[str], **extra: Any) -> dict[str, Any]:
    """The machine, its load when the run started, and the versions of ``packages``."""
    versions = {"python": platform.python_version()}
    for pkg in packages:
        try:
            versions[pkg] = version(pkg)
        except PackageNotFoundError:
            versions[pkg] = "not installed"
    load = os.getloadavg() if hasattr(os, "getloadavg") else (0.0, 0.0, 0.0)
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.system()}",
        "load_average_at_start": [round(x, 2) for x in load],
        **extra,
        "versions": versions,
    }


def write_json(path: Path, payload: Mapping[str, Any]) -> None:
    """Write a results file (indented JSON, UTF-8)."""
    path.write_text(json.dumps(payload, indent=1), encoding="utf-8")


class Stopwatch(AgentMiddleware[Any, Any, Any]):
    """Times the ``wrap_model_call`` it wraps, in ms (outermost: langctx + the model; innermost:
    the model alone); ``name`` tells two apart in one agent."""

    def __init__(self, name: str = "Stopwatch") -> None:
        super().__init__()
        self._name = name
        self.steps: list[float] = []

    @property
    def name(self) -> str:
        return self._name

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        start = time.perf_counter()
        try:
            return handler(request)
        finally:
            self.steps.append((time.perf_counter() - start) * 1000)
