"""Show a :class:`~langctx.cli.replay.ReplayReport` in a terminal: rich when installed, plain otherwise.

Also a progress display for long replays (:func:`progress`), drawn on stderr only when it is a
terminal. rich is imported only inside the functions that draw with it.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from langctx.cli.replay import replay_session
    >>> report = replay_session([HumanMessage("hi", id="h"), AIMessage("hello", id="a")])
    >>> print(format_report(report).splitlines()[0])
    langctx replay: session (1 model call, 2 messages)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

from langctx.cli.replay.engine import CompactionRecord, ReplayReport
from langctx.cli.replay.truth import PROBES
from langctx.cli.terminal import console_width
from langctx.pricing import PriceSheet

__all__ = [
    "PROBE_LABELS",
    "PROGRESS_DELAY",
    "format_report",
    "print_report",
    "progress",
    "report_rows",
]

PROGRESS_DELAY = 2.0
"""Seconds a command runs before the CLI shows its progress bar (a short run shows none)."""

PROBE_LABELS: dict[str, str] = {
    "task": "task",
    "constraints": "constraints",
    "files_modified": "files modified",
    "latest_failure": "latest failure",
    "next_step": "next step",
    "latest_user_message": "latest user message",
    "earlier_user_messages": "earlier user messages",
    "request_status": "request status",
}
"""How the reports name each of :data:`~langctx.cli.replay.truth.PROBES`."""


def _n(value: int) -> str:
    return f"{value:,}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def report_rows(
    report: ReplayReport, prices: str | PriceSheet | None = None
) -> list[tuple[str, str]]:
    """The summary as ``(label, value)`` rows, shared by the rich and the plain layouts.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langctx.cli.replay import replay_session
        >>> rows = dict(report_rows(replay_session([HumanMessage("hi"), AIMessage("yo")])))
        >>> rows["input tokens"].startswith("with langctx")
        True
    """
    t = report.totals()
    s = report.settings
    window = f", window {_n(s['context_window'])}" if s.get("context_window") else ""
    shares = report.probe_shares()
    probed = len(report.calls_after_compaction())
    probe_text = (
        ", ".join(f"{PROBE_LABELS[p]} {_pct(shares[p])}" for p in PROBES)
        if probed
        else "no compaction"
    )
    rows = [
        ("format", f"{report.format or 'messages'}, {_n(report.messages)} messages"),
        (
            "memory",
            f"budget {_n(s['max_tokens'])}{window}, compacts above {_n(s['high_mark'])}"
            + (
                f" (earlier where cheaper at {s['cache_prices']} cache prices)"
                if s.get("cache_prices")
                else ""
            )
            + ", "
            f"keeps {_n(s['keep_recent_tokens'])} recent; counter {s['token_counter']}, "
            f"summarizer {s['summarizer']}",
        ),
        (
            "input tokens",
            f"with langctx {_n(t['input_tokens'])} / full history {_n(t['input_tokens_full'])}"
            f" -> {_pct(t['reduction'])} fewer",
        ),
        (
            "largest request",
            f"with langctx {_n(t['max_context_tokens'])} / full history {_n(t['max_full_tokens'])}",
        ),
        (
            "compactions",
            f"{t['compactions']} folds, {t['merges']} merges, {t['placeholder_passes']} placeholder "
            f"passes, {t['truncations']} truncations; {t['summarizer_calls']} summaries written"
            + (
                f" ({_n(t['summarizer_input_tokens'])} tokens sent to the summarizer)"
                if t["summarizer_input_tokens"]
                else ""
            )
            + (f", {t['summarizer_fallbacks']} fallbacks" if t["summarizer_fallbacks"] else ""),
        ),
        (
            "prompt-cache prefix",
            f"cached share {_pct(t['cached_share'])} of the input; mean "
            f"{_pct(t['mean_prefix_share'])} of each request unchanged; cacheable "
            f"{_n(t['cacheable_tokens'])} tokens (full history {_n(t['cacheable_tokens_full'])})",
        ),
        (
            "amnesia probes",
            probe_text + (f" (of {probed} requests after the first compaction)" if probed else ""),
        ),
        *_status_row(report),
        (
            "re-reads after a fold",
            f"{t['rereads_in_request']} of {t['rereads_after_fold']} reads of a file already seen "
            f"had its latest content in the request; files in hand "
            f"{_n(t['files_tokens'])} tokens over {t['calls_after_fold']} requests",
        ),
        (
            "integrity",
            f"orphans in projections {t['projection_orphans']}, task missing at "
            f"{t['task_missing_calls']} calls, over budget at {t['over_budget_calls']} calls; "
            f"input: {t['orphans_in_input']} orphan results repaired, "
            f"{t['unanswered_in_input']} unanswered calls",
        ),
        ("time", f"{report.seconds:.2f} s"),
    ]
    if prices is not None:
        rows.insert(-1, ("modeled cost", _cost_text(report.cost(prices))))
    return rows


def _status_row(report: ReplayReport) -> list[tuple[str, str]]:
    """The ``request status`` row: the section's statuses against the transcript's, pooled over
    the requests after the first compaction (no row when none had a section)."""
    n = report.request_status()
    if not n["requests"]:
        return []
    share = n["right"] / n["graded"] if n["graded"] else None
    return [
        (
            "request status",
            f"{_n(n['right'])} of {_n(n['graded'])} user requests shown with the right status "
            f"({_pct(share)}) in {_n(n['requests'])} requests; answered shown as open "
            f"{n['answered_shown_open']}, open shown as answered {n['open_shown_answered']}, "
            f"not matched to a user message {n['unmatched']}",
        )
    ]


def _cost_text(c: dict[str, object]) -> str:
    """The cost row: with and without langctx, cache reuse, summarizer time on the path."""
    saved = float(c["saved"])  # type: ignore[arg-type]
    return (
        f"{c['prices']} prices: with langctx ${c['with_langctx']:.4f} / full history "
        f"${c['without_langctx']:.4f} -> {_pct(saved)} {'less' if saved >= 0 else 'more'}; "
        f"cached input {_pct(float(c['cached_share']))} (full history "  # type: ignore[arg-type]
        f"{_pct(float(c['cached_share_without']))}); summarizer on the agent's path "  # type: ignore[arg-type]
        f"{c['compaction_s']} s ({c['blocking_summarizer_calls']} blocking calls, 0.4 s + input "
        "at 8k tokens/s + output at 80 tokens/s each)"
    )


def _probe_marks(c: CompactionRecord) -> str:
    marks = []
    for p in PROBES:
        v = c.probes.get(p)
        marks.append("-" if v is None else ("y" if v else "N"))
    return "".join(marks)


def _compaction_rows(report: ReplayReport, limit: int) -> tuple[list[list[str]], int]:
    rows = [
        [
            "end" if c.before_call is None else str(c.before_call),
            c.kind,
            c.trigger,
            "" if c.level is None else str(c.level),
            c.quality,
            _n(c.tokens_before),
            _n(c.tokens_after),
            _probe_marks(c),
        ]
        for c in report.compactions
    ]
    hidden = max(0, len(rows) - limit) if limit else 0
    return (rows[:limit] if limit else rows), hidden


_HEADERS = ["call", "kind", "trigger", "level", "quality", "before", "after", "probes"]
_PROBE_KEY = "probes: " + " / ".join(PROBE_LABELS[p] for p in PROBES) + " (y, N, - n/a)"


def _title(report: ReplayReport) -> str:
    calls = len(report.calls)
    return (
        f"langctx replay: {report.session} ({calls} model call{'s' if calls != 1 else ''}, "
        f"{_n(report.messages)} messages)"
    )


def format_report(
    report: ReplayReport, *, max_rows: int = 20, prices: str | PriceSheet | None = None
) -> str:
    """The report as plain text (no colours, fixed-width tables).

    Args:
        report: the replay's report.
        max_rows: compaction rows shown (0: all).
    """
    lines = [_title(report), ""]
    rows = report_rows(report, prices)
    width = max(len(label) for label, _ in rows)
    lines += [f"  {label.ljust(width)}  {value}" for label, value in rows]
    body, hidden = _compaction_rows(report, max_rows)
    if body:
        lines += ["", "compactions (" + _PROBE_KEY + ")"]
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(_HEADERS)]
        lines.append("  " + "  ".join(h.ljust(w) for h, w in zip(_HEADERS, widths, strict=True)))
        lines += [
            "  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in body
        ]
        if hidden:
            lines.append(f"  ... {hidden} more (use --rows 0 to show all)")
    losses = report.losses()
    if losses:
        lines += ["", f"lost facts ({len(losses)})"]
        shown = losses[:max_rows] if max_rows else losses
        lines += [f"  - {x}" for x in shown]
        if len(shown) < len(losses):
            lines.append(f"  ... {len(losses) - len(shown)} more (use --rows 0 to show all)")
    extra = [*report.warnings, *report.notes]
    if extra:
        lines += ["", "notes"]
        lines += [f"  - {x}" for x in extra]
    return "\n".join(lines)


def _rich_available() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def print_report(
    report: ReplayReport,
    *,
    file: TextIO | None = None,
    max_rows: int = 20,
    use_rich: bool | None = None,
    prices: str | PriceSheet | None = None,
) -> None:
    """Print the report: rich tables when rich is installed (and ``use_rich`` is not False).

    Args:
        report: the replay's report.
        file: where to print (default stdout).
        max_rows: compaction rows shown (0: all).
        use_rich: force (True) or avoid (False) rich; None: rich when importable.
        prices: a price sheet (:func:`langctx.pricing.price_sheet`) for the modeled-cost row.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langctx.cli.replay import replay_session
        >>> r = replay_session([HumanMessage("hi", id="h"), AIMessage("yo", id="a")], name="hi")
        >>> print_report(r, use_rich=False)  # doctest: +ELLIPSIS
        langctx replay: hi (1 model call, 2 messages)
        ...
    """
    out = file if file is not None else sys.stdout
    if use_rich is False or (use_rich is None and not _rich_available()):
        print(format_report(report, max_rows=max_rows, prices=prices), file=out)
        return
    from rich.console import Console
    from rich.table import Table

    console = Console(file=out, highlight=False, width=console_width(out))
    summary = Table(title=_title(report), show_header=False, title_justify="left", expand=False)
    summary.add_column(style="bold")
    summary.add_column(overflow="fold")
    for label, value in report_rows(report, prices):
        summary.add_row(label, value)
    console.print(summary)
    body, hidden = _compaction_rows(report, max_rows)
    if body:
        table = Table(title="compactions", caption=_PROBE_KEY, title_justify="left")
        for h in _HEADERS:
            table.add_column(h, justify="right" if h in ("call", "before", "after") else "left")
        for r in body:
            table.add_row(*r)
        console.print(table)
        if hidden:
            console.print(f"... {hidden} more (use --rows 0 to show all)")
    losses = report.losses()
    shown = losses[:max_rows] if max_rows else losses
    for loss in shown:
        console.print(f"lost: {loss}", markup=False)
    if len(shown) < len(losses):
        console.print(f"... {len(losses) - len(shown)} more lost facts (use --rows 0 to show all)")
    for x in [*report.warnings, *report.notes]:
        console.print(f"note: {x}", markup=False)


@contextmanager
def progress(
    *,
    enabled: bool,
    label: str = "replaying",
    file: TextIO | None = None,
    unit: str = "calls",
    delay: float = 0.0,
) -> Iterator[Callable[[int, int], None]]:
    """A ``(done, total)`` callback that draws a progress bar on ``file`` (default stderr).

    Draws nothing when ``enabled`` is false, nor before ``delay`` seconds have passed (so a
    short run prints nothing). Uses rich's progress bar when rich is installed, else a one-line
    counter; both are erased at the end.

    Example:
        >>> with progress(enabled=False) as tick:
        ...     tick(1, 10)
    """
    stream = file if file is not None else sys.stderr
    if not enabled:
        yield lambda done, total: None
        return
    started = time.monotonic()
    if _rich_available():
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        bar = Progress(
            f"[bold]{label}",
            BarColumn(),
            MofNCompleteColumn(),
            unit,
            TimeElapsedColumn(),
            console=Console(file=stream),
            transient=True,
        )
        state: dict[str, Any] = {}

        def tick(done: int, total: int) -> None:
            if "task" not in state:
                if time.monotonic() - started < delay:
                    return
                bar.start()
                state["task"] = bar.add_task(label, total=total)
            bar.update(state["task"], completed=done)

        try:
            yield tick
        finally:
            if "task" in state:
                bar.stop()
        return
    shown = False

    def plain(done: int, total: int) -> None:
        nonlocal shown
        if not shown and (done >= total or time.monotonic() - started < delay):
            return  # not yet due, or over before it was
        shown = True
        line = f"{label} {done}/{total} {unit}"
        stream.write("\r" + line)
        if done >= total:
            stream.write("\r" + " " * len(line) + "\r")
        stream.flush()

    yield plain
