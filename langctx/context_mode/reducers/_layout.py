"""Shared machinery of the reducers: picking lines under a token budget, header and footer."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from langctx.context_mode.outputs import ContentKind, OutputMeta, Reduction
from langctx.facts import OutputFacts, extract_output_facts, missing_output_facts
from langctx.markers import CONTEXT_MODE_MARK, escape_delimiters
from langctx.monotone import largest
from langctx.tokens import TextCounter

# Room kept for the footer while the body is being built: a long footer of the usual shape.
_FOOTER_SAMPLE = (
    "removed 12,345 of 67,890 lines, 1,234 repeated lines collapsed into (×N); kept 123 "
    "error/warning/trace lines; 12 facts only in the full output"
)
_MAX_REMOVED_CHARS = 400
_MAX_MISSES = 200
_GAP_SAMPLE = "[… lines 12345–67890 not shown …]"
_MAX_NOTE_SHARE = 0.35  # of the budget, the most the facts line may take


@dataclass(frozen=True, slots=True)
class Candidate:
    """A line for original lines ``line``–``end``; the lowest ``(priority, rank)`` are kept first."""

    line: int
    text: str
    priority: int = 0
    rank: float = 0.0
    end: int = -1

    @property
    def last(self) -> int:
        """Last original line covered."""
        return max(self.line, self.end)


_RUN = re.compile(r"([^\w\s])\1{7,}")


def clip(line: str, max_chars: int = 300, *, squeeze: bool = True) -> str:
    """Shorten one line to ``max_chars``, saying how much was cut; runs of one symbol are squeezed."""
    if squeeze and len(line) > 8:
        head = line[: max_chars * 4]  # bounds the work on a huge line
        line = _RUN.sub(r"\1\1\1…", head) + line[len(head) :]
    if len(line) <= max_chars:
        return line
    return f"{line[:max_chars]}…(+{len(line) - max_chars} chars)"


def names_line(label: str, names: Sequence[str], max_listed: int = 60) -> str:
    """``label (n): a, b, …`` listing at most ``max_listed`` names."""
    more = f", +{len(names) - max_listed} more" if len(names) > max_listed else ""
    return f"{label} ({len(names)}): {', '.join(names[:max_listed])}{more}"


def _gap(prev_last: int, next_first: int) -> int:
    return 1 if next_first > prev_last + 1 else 0


def select(
    candidates: Iterable[Candidate],
    *,
    budget_tokens: int,
    total_lines: int,
    count_tokens: TextCounter,
    markers: bool = True,
) -> list[Candidate]:
    """The most important candidates (in line order) whose text and gap ``markers`` fit the budget."""
    marker_tokens = count_tokens(_GAP_SAMPLE) + 1 if markers else 0
    starts: list[int] = []
    kept: list[Candidate] = []
    used = marker_tokens if total_lines > 0 else 0  # the single gap of "nothing kept yet"
    misses = 0
    for cand in sorted(candidates, key=lambda c: (c.priority, c.rank, c.line)):
        if budget_tokens - used < 2 or misses > _MAX_MISSES:
            break
        i = bisect.bisect_left(starts, cand.line)
        if i < len(starts) and starts[i] == cand.line:
            continue  # one piece per original line
        prev_last = kept[i - 1].last if i > 0 else -1
        next_first = kept[i].line if i < len(kept) else total_lines
        delta = _gap(prev_last, cand.line) + _gap(cand.last, next_first)
        delta -= _gap(prev_last, next_first)
        cost = count_tokens(cand.text) + 1 + delta * marker_tokens
        if used + cost > budget_tokens:
            misses += 1
            continue
        misses = 0
        used += cost
        starts.insert(i, cand.line)
        kept.insert(i, cand)
    return kept


def select_with_facts(
    candidates: Sequence[Candidate],
    *,
    budget_tokens: int,
    count_tokens: TextCounter,
    facts: OutputFacts,
    total_lines: int | None = None,
    label: str = "Not shown above",
) -> tuple[list[Candidate], list[str], int]:
    """:func:`select`, then :func:`facts_lines` (lines give way, up to 35%): ``(kept, *that)``.

    ``total_lines``: the number of original lines, for gap markers (None: no markers).
    """
    reserve = 0
    for _ in range(6):
        kept = select(
            candidates,
            budget_tokens=budget_tokens - reserve,
            total_lines=total_lines or 0,
            count_tokens=count_tokens,
            markers=total_lines is not None,
        )
        kept_text = "\n".join(c.text for c in kept)
        full, _ = facts_lines(
            facts, kept_text, budget_tokens=1 << 30, count_tokens=count_tokens, label=label
        )
        needed = count_tokens(full[0]) + 12 if full else 0
        if needed <= reserve:
            break
        # Cutting more lines may cut more facts: reserve a little extra so this converges fast.
        reserve = min(int(needed * 1.15) + 8, int(budget_tokens * _MAX_NOTE_SHARE))
    return kept, *facts_lines(
        facts, kept_text, budget_tokens=reserve, count_tokens=count_tokens, label=label
    )


def select_body(
    kind: ContentKind,
    meta: OutputMeta,
    budget_tokens: int,
    summary: str,
    candidates: Sequence[Candidate],
    *,
    facts_of: str,
    label: str,
    reserve: int = 12,
) -> tuple[list[Candidate], list[str], int]:
    """:func:`select_with_facts` in the body budget left by ``summary`` and ``reserve`` tokens."""
    count = meta.count_tokens
    budget = body_budget(kind, meta, budget_tokens) - count(summary) - reserve
    facts = extract_output_facts(facts_of)
    return select_with_facts(
        candidates, budget_tokens=budget, count_tokens=count, facts=facts, label=label
    )


def render_selection(
    kept: Sequence[Candidate], *, total_lines: int, hidden: Callable[[int, int], int]
) -> list[str]:
    """Kept pieces in order with ``[… lines a–b not shown …]`` markers for the gaps.

    ``hidden(first, last)``: how many lines of a gap no kept piece stands for (0: no marker).
    """
    out: list[str] = []
    prev_last = -1
    for cand in [*kept, Candidate(total_lines, "")]:
        first, last = prev_last + 1, cand.line - 1
        if first <= last and (unseen := hidden(first, last)) > 0:
            out.append(_marker(first, last, unseen))
        out.append(cand.text)
        prev_last = max(prev_last, cand.last)
    return out[:-1]


def _marker(first: int, last: int, unseen: int) -> str:
    if first == last:
        return f"[… line {first + 1} not shown …]"
    if unseen < last - first + 1:
        return f"[… {unseen} of lines {first + 1}–{last + 1} not shown …]"
    return f"[… lines {first + 1}–{last + 1} not shown …]"


def facts_lines(
    facts: OutputFacts,
    kept_text: str,
    *,
    budget_tokens: int,
    count_tokens: TextCounter,
    label: str = "Not shown above",
) -> tuple[list[str], int]:
    """The ``facts`` the kept text does not show, within a budget: ``(lines, how many left out)``."""
    missing = missing_output_facts(facts, kept_text)
    if not missing:
        return [], 0
    groups = [("", missing.exit_codes), ("", missing.errors), ("at ", missing.locations)]
    parts: list[str] = []
    listed = 0
    for prefix, items in groups:

        def fits(k: int, prefix: str = prefix, items: tuple[str, ...] = items) -> bool:
            trial = _facts_line(label, [*parts, prefix + ", ".join(items[:k])], 0)
            return count_tokens(trial) <= budget_tokens - 12  # room for the "+N more" suffix

        shown = list(items[: largest(fits, len(items))])  # a line only grows with k
        listed += len(shown)
        if shown:
            parts.append(prefix + ", ".join(shown))
        if len(shown) < len(items):
            break
    unlisted = missing.count - listed
    if not parts:
        return [], unlisted
    return [_facts_line(label, parts, unlisted)], unlisted


def _facts_line(label: str, parts: list[str], unlisted: int) -> str:
    line = f"{label}: " + "; ".join(parts)
    if unlisted:
        line += f"; +{unlisted} more in the full output"
    return line


def _header(kind: ContentKind, meta: OutputMeta) -> str:
    tool = f"{meta.tool_name} output" if meta.tool_name else "tool output"
    parts = [
        f"{tool} reduced ({kind})",
        f"original {meta.original_chars:,} chars / {meta.original_tokens:,} tokens",
    ]
    if meta.path:
        parts.append(f"path {clip(meta.path, 160)}")
    if meta.exit_code is not None:
        parts.append(f"exit code {meta.exit_code}")
    if meta.duration:
        parts.append(f"took {clip(meta.duration, 40)}")
    return f"{CONTEXT_MODE_MARK}: {escape_delimiters(' · '.join(parts))}]"


def _footer(removed: str) -> str:
    return f"{CONTEXT_MODE_MARK}: removed {escape_delimiters(removed)}]"


def body_budget(kind: ContentKind, meta: OutputMeta, budget_tokens: int) -> int:
    """Tokens left for the body once the header and a footer are accounted for."""
    overhead = meta.count_tokens(_header(kind, meta)) + meta.count_tokens(_footer(_FOOTER_SAMPLE))
    # Token counts are not exactly additive (pieces counted apart vs. the joined text): keep a margin.
    margin = 2 + budget_tokens // 32
    return max(0, budget_tokens - overhead - margin)


def finish(
    kind: ContentKind,
    meta: OutputMeta,
    budget_tokens: int,
    body: str | Sequence[str],
    removed: str,
    unlisted: int = 0,
) -> Reduction:
    """Wrap ``body`` (escaped here) in the header and footer, cutting its middle to fit the budget.

    ``unlisted``: how many facts the body could not list, counted in the footer.
    """
    count = meta.count_tokens
    if unlisted:
        removed += f"; {unlisted:,} facts only in the full output"
    removed = clip(" ".join(removed.split()), _MAX_REMOVED_CHARS)
    header, footer = _header(kind, meta), _footer(removed)
    safe_body = escape_delimiters(body if isinstance(body, str) else "\n".join(body))
    text = f"{header}\n{safe_body}\n{footer}" if safe_body else f"{header}\n{footer}"
    tokens = count(text)
    if tokens > budget_tokens:
        text, tokens = _fit(header, safe_body, footer, budget_tokens, count)
    return Reduction(
        text=text,
        kind=kind,
        original_chars=meta.original_chars,
        original_tokens=meta.original_tokens,
        reduced_tokens=tokens,
        removed=removed,
    )


def _cut_middle(body: str, keep_chars: int) -> str:
    if keep_chars >= len(body):
        return body
    head = keep_chars * 2 // 5
    tail_start = len(body) - (keep_chars - head)
    return f"{body[:head]}\n[… {len(body) - keep_chars:,} chars not shown …]\n{body[tail_start:]}"


def _fit(header: str, body: str, footer: str, budget: int, count: TextCounter) -> tuple[str, int]:
    def assemble(keep: int) -> str:
        kept = _cut_middle(body, keep)
        return f"{header}\n{kept}\n{footer}" if kept else f"{header}\n{footer}"

    n = largest(lambda n: count(assemble(n)) <= budget, min(len(body), budget * 16), lo=-1)
    if n >= 0:
        return assemble(n), count(assemble(n))
    bare = f"{header}\n{footer}"  # even header + footer are too big: keep the start of them
    n = largest(lambda n: count(bare[:n]) <= budget, len(bare), lo=-1)
    return (bare[:n], count(bare[:n])) if n >= 0 else ("", 0)
