"""Summaries as their fixed sections, merged without a model call (lists united, the rest newest).

Example:
    >>> old = "Goal:\\n- Fix the parser\\nCurrent status:\\n- tests fail\\nFiles modified:\\n- a.py"
    >>> new = "Goal: Fix the parser\\nCurrent status: tests pass\\nFiles modified:\\n- b.py"
    >>> print(merge_sections([old, new], max_tokens=200, count=len))
    Goal:
    - Fix the parser
    Current status:
    - tests pass
    Files modified:
    - a.py
    - b.py
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

SECTIONS: tuple[str, ...] = (
    "Goal",
    "Current status",
    "Important constraints",
    "Files observed",
    "Files modified",
    "Conclusions",
    "Tool calls",
    "Open tool results",
    "Open questions",
    "Next step",
)
"""The sections of a summary, in order."""

_UNITED = frozenset(
    {
        "Goal",
        "Important constraints",
        "Files observed",
        "Files modified",
        "Conclusions",
        "Tool calls",
    }
)
"""Sections whose items accumulate; the others are superseded by the newest."""

_ALIASES = {name.lower(): name for name in SECTIONS} | {
    "goals": "Goal",
    "status": "Current status",
    "constraints": "Important constraints",
    "files read": "Files observed",
    "files changed": "Files modified",
    "next steps": "Next step",
    "findings": "Conclusions",
    "open question": "Open questions",
}

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def parse_sections(text: str) -> dict[str, list[str]] | None:
    """The items of each section of ``text`` (``Goal:``, ``## Goal``, ``**Goal:**`` headings), or
    None when it is not a sectioned summary (text before the first heading).
    """
    out: dict[str, list[str]] = {}
    current: str | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        name, item = _heading(line)
        if name is not None:
            current = name
            out.setdefault(name, [])
        elif current is None:
            return None  # prose before any section
        else:
            item = _BULLET.sub("", line).strip()
        if item and item.lower() not in ("(none)", "none", "-"):
            out[current].append(item)
    return out or None


def _heading(line: str) -> tuple[str | None, str]:
    """``(section, rest of the line)`` when ``line`` opens a section, else ``(None, "")``."""
    head, colon, rest = line.partition(":")
    name = _ALIASES.get(" ".join(head.strip("#*_ \t").lower().split()))
    if name is None or not (colon or line.startswith("#")):
        return None, ""
    rest = rest.strip().strip("*_").strip()
    return name, _BULLET.sub("", rest).strip()


def merge_sections(
    summaries: Sequence[str], *, max_tokens: int, count: Callable[[str], int]
) -> str | None:
    """``summaries`` (oldest first) merged section by section, or None when that needs a model:
    a summary has no sections, or the merge exceeds ``max_tokens`` with all observed files, all
    but the newest tool call and all but the newest conclusion shed."""
    said = [s for s in summaries if s.strip()]  # a summary with nothing to say merges as nothing
    parsed = [sections for s in said if (sections := parse_sections(s)) is not None]
    if not summaries or len(parsed) < len(said):
        return None
    merged: dict[str, list[str]] = {}
    for sections in parsed:
        for name, items in sections.items():
            if name in _UNITED:
                have = merged.setdefault(name, [])
                seen = {_norm(i) for i in have}
                have.extend(i for i in items if _norm(i) not in seen)
            elif items:
                merged[name] = list(items)
    # shed the oldest observed files, then the oldest tool calls, then the oldest conclusions
    sheddable = [merged.get(name, []) for name in ("Files observed", "Tool calls", "Conclusions")]
    while True:
        text = _render(merged)
        if count(text) <= max_tokens:
            return text
        shed: list[str] | None = next(
            (items for items in sheddable if len(items) > (items is not sheddable[0])), None
        )
        if shed is None:
            return None
        shed.pop(0)


def _norm(item: str) -> str:
    return " ".join(item.lower().split()).rstrip(".")


def _render(sections: dict[str, list[str]]) -> str:
    lines: list[str] = []
    for name in SECTIONS:
        items = sections.get(name)
        if items:
            lines.append(f"{name}:")
            lines.extend(f"- {i}" for i in items)
    return "\n".join(lines)


def without_section(text: str, name: str, stale: Callable[[str], bool]) -> str:
    """``text`` without its ``name`` section when ``stale`` says so of the section's items (the
    other lines byte-exact); ``text`` itself when it has no such section or it is not stale.

    Example:
        >>> text = "Goal:\\n- Fix it.\\nNext step:\\n- Act on the latest request: \\"Fix it.\\""
        >>> without_section(text, "Next step", lambda items: "Fix it" in items)
        'Goal:\\n- Fix it.'
    """
    sections = parse_sections(text)
    if sections is None or not sections.get(name) or not stale("\n".join(sections[name])):
        return text
    kept: list[str] = []
    inside = False
    for raw in text.split("\n"):
        heading = _heading(raw.strip())[0] if raw.strip() else None
        if heading is not None:
            inside = heading == name
        if not inside:
            kept.append(raw)
    return "\n".join(kept).strip("\n")
