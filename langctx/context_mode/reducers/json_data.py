"""Reducer for JSON: arrays of records like tables (keys, first items), else a structure outline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from langctx.context_mode.outputs import OutputMeta, Reduction
from langctx.context_mode.reducers._layout import Candidate, clip, finish, names_line, select_body
from langctx.context_mode.reducers.log import reduce_log

MAX_ITEMS = 50
"""Array items shown at most."""

_STRING_CHARS = 120
_LINE_CHARS = 400
_MAX_DEPTH = 6
_NESTED_ITEMS = 3


def compact_json(value: Any, *, depth: int = 2) -> Any:
    """A copy of ``value`` with long strings clipped and containers below ``depth`` summarised."""
    if isinstance(value, str):
        return clip(value, _STRING_CHARS)
    if isinstance(value, dict):
        if depth < 0:
            return f"{{…{len(value)} key{'s' if len(value) != 1 else ''}}}"
        return {str(k): compact_json(v, depth=depth - 1) for k, v in list(value.items())[:40]}
    if isinstance(value, list):
        if depth < 0:
            return f"[…{len(value)} item{'s' if len(value) != 1 else ''}]"
        items = [compact_json(v, depth=depth - 1) for v in value[:10]]
        if len(value) > 10:
            items.append(f"…+{len(value) - 10} more")
        return items
    return value


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def _keys_of(items: list[Any]) -> list[str]:
    return list(
        dict.fromkeys(str(k) for item in items[:1000] if isinstance(item, dict) for k in item)
    )


def _outline(value: Any, indent: int, label: str) -> Iterator[tuple[int, str]]:
    """``(depth, line)`` pairs describing ``value``."""
    pad = "  " * indent
    if isinstance(value, dict):
        yield indent, f"{pad}{label}{{{len(value)} keys}}"
        if indent >= _MAX_DEPTH:
            return
        for key, child in value.items():
            yield from _outline(child, indent + 1, f"{json.dumps(str(key), ensure_ascii=False)}: ")
    elif isinstance(value, list):
        records = [v for v in value if isinstance(v, dict)]
        line = f"{pad}{label}[{len(value)} items]"
        if records and len(records) * 2 >= len(value):
            line += " " + names_line("keys", _keys_of(value))
        yield indent, line
        limit = MAX_ITEMS if indent <= 1 else _NESTED_ITEMS
        for i, child in enumerate(value[:limit]):
            nested = isinstance(child, dict | list) and indent < _MAX_DEPTH
            shown = compact_json(child, depth=1) if nested else child
            yield indent + 1, f"{pad}  [{i}] {clip(_dumps(shown), _LINE_CHARS)}"
        if len(value) > limit:
            yield indent + 1, f"{pad}  … {len(value) - limit:,} more items not shown"
    else:
        yield indent, f"{pad}{label}{clip(_dumps(value), _LINE_CHARS)}"


def _parse(text: str) -> tuple[Any, str] | None:
    try:
        return json.loads(text), "JSON"
    except (ValueError, RecursionError):
        pass
    try:
        items = [json.loads(line) for line in text.split("\n") if line.strip()]
    except (ValueError, RecursionError):
        return None
    return (items, "JSON lines") if items else None


_OUTLINE_REMOVED = (
    f"long values (clipped), array items past the first {MAX_ITEMS} "
    f"(first {_NESTED_ITEMS} when nested), levels below {_MAX_DEPTH}"
)


def reduce_json(text: str, *, meta: OutputMeta, budget_tokens: int) -> Reduction:
    """Reduce JSON (lines) to its keys and first items, or an outline; not JSON: the log reduction."""
    parsed = _parse(text)
    if parsed is None:
        return reduce_log(text, meta=meta, budget_tokens=budget_tokens)
    value, what = parsed
    if isinstance(value, list):  # a keys line, then the first items
        summary = f"{what} array of {len(value):,} items"
        keys = _keys_of(value)
        candidates = [Candidate(0, names_line("Keys", keys), 0, 0)] if keys else []
        for i, item in enumerate(value[:MAX_ITEMS]):
            line = f"[{i}] {clip(_dumps(compact_json(item, depth=2)), _LINE_CHARS)}"
            candidates.append(Candidate(i + 1, line, 1, i))
    else:
        kind = f"object, {len(value)} keys" if isinstance(value, dict) else type(value).__name__
        summary = f"{what} {kind if value is not None else 'null'}"
        outline = list(_outline(value, 0, ""))
        if isinstance(value, dict):
            outline = [(depth - 1, line[2:]) for depth, line in outline[1:]]  # the summary says it
        candidates = [
            Candidate(i, line, min(depth, 4), i) for i, (depth, line) in enumerate(outline)
        ]
    kept, note, unlisted = select_body(
        "json", meta, budget_tokens, summary, candidates, facts_of=text, label="Also in the data"
    )
    if isinstance(value, list):
        total, shown, unit = len(value), sum(1 for c in kept if c.priority == 1), "items"
        removed = f"{total - shown:,} of {total:,} items (kept the keys and the first {shown:,})"
    else:
        total, shown, unit, removed = len(candidates), len(kept), "outline lines", _OUTLINE_REMOVED
    body = [summary, *(c.text for c in kept)]
    if total > shown:
        body.append(f"… {total - shown:,} more {unit} not shown")
    body.extend(note)
    return finish("json", meta, budget_tokens, body, removed, unlisted)
