"""Show a :class:`~langctx.cli.inspect.report.ThreadReport` or a thread list in a terminal.

rich panels and tables when rich is installed (the ``cli`` extra), plain fixed-width text
otherwise or on request; both show the same rows. rich is imported only inside the functions that
draw with it.

Example:
    >>> from langctx.cli.inspect.report import build_report
    >>> report = build_report({"messages": [("user", "Fix the parser.")]}, thread_id="t1")
    >>> print(format_report(report).splitlines()[0])
    langctx inspect: thread 't1'
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from langctx.cli.inspect.report import REPORT_VERSION, ThreadReport
from langctx.cli.inspect.store import ThreadInfo
from langctx.cli.terminal import console_width

__all__ = [
    "DEFAULT_LIMIT",
    "figure_rows",
    "format_report",
    "format_threads",
    "print_report",
    "print_threads",
    "rich_available",
    "threads_to_dict",
]

DEFAULT_LIMIT = 20
"""Rows shown per list in the terminal when no limit is given."""

_TIMELINE_HEADERS = [
    "#",
    "time (UTC)",
    "trigger",
    "level",
    "quality",
    "tokens before → after",
    "messages",
    "files read",
    "files modified",
]
_LOG_HEADERS = ["time (UTC)", "action", "trigger", "ids", "tokens freed", "detail"]
_PINNED_HEADERS = ["id", "type", "tokens", "layer", "preview"]
_THREAD_HEADERS = ["thread id", "checkpoints", "updated (UTC)", "latest checkpoint"]


def rich_available() -> bool:
    """True when rich can be imported.

    Example:
        >>> isinstance(rich_available(), bool)
        True
    """
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _n(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else ("-" if value is None else str(value))


def _count(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"


def _time(at: Any) -> str:
    return str(at)[:19].replace("T", " ") if at else "-"


def _files(files: Sequence[str], shown: int = 2) -> str:
    if not files:
        return "-"
    more = len(files) - shown
    return ", ".join(files[:shown]) + (f" +{more}" if more > 0 else "")


def _ids(ids: Sequence[str]) -> str:
    if not ids:
        return "-"
    if len(ids) == 1:
        return str(ids[0])
    return f"{len(ids)} ({ids[0]} … {ids[-1]})"


def _tail(rows: list[Any], limit: int) -> tuple[list[Any], int]:
    if not limit or len(rows) <= limit:
        return rows, 0
    return rows[-limit:], len(rows) - limit


def _title(report: ThreadReport) -> str:
    parts = [
        f"langctx inspect: thread {report.thread_id!r}" if report.thread_id else "langctx inspect"
    ]
    cp = report.checkpoint
    if cp:
        where = "latest" if cp.get("latest") else "not the latest"
        parts.append(
            f"checkpoint {cp.get('id')} (step {cp.get('step')}, {_time(cp.get('ts'))} UTC; "
            f"{where} of {_n(cp.get('checkpoints_in_thread'))})"
        )
    if report.source:
        parts.append(f"{report.source['kind']} {report.source['location']}")
    return " · ".join(parts)


def figure_rows(report: ThreadReport) -> list[tuple[str, str]]:
    """The figures as ``(label, value)`` rows, shared by the rich and the plain layouts.

    Example:
        >>> from langctx.cli.inspect.report import build_report
        >>> rows = dict(figure_rows(build_report({"messages": []})))
        >>> rows["context tokens"]
        '0 (counted approximate); budget unknown; full history 0'
    """
    f = report.figures
    if not f:
        return []
    budget = (
        f"of budget {_n(f['budget'])} ({_pct(f.get('budget_used'))} used)"
        if f.get("budget")
        else "budget unknown"
    )
    saved = f" ({_pct(f['saved_share'])} fewer)" if f.get("saved_share") is not None else ""
    levels = ", ".join(
        f"L{k} {v}" for k, v in sorted(f["summaries_by_level"].items(), reverse=True)
    )
    return [
        ("messages", _message_counts(f)),
        (
            "context tokens",
            f"{_n(f['context_tokens'])} (counted {f.get('counted_with', f['token_counter'])}); {budget}; "
            f"full history {_n(f['full_history_tokens'])}{saved}",
        ),
        (
            "entries",
            f"{_n(f['compactions'])} compactions, {_n(f['merges'])} merges, "
            f"{_n(f['summaries'])} summaries projected"
            + (f" ({levels})" if levels else "")
            + f", {_n(f['placeholders'])} placeholders, {_n(f['truncations'])} truncations",
        ),
    ]


def _message_counts(f: dict[str, Any]) -> str:
    """Where the messages are: the window in state, the archive, the log, the context."""
    parts = [f"{_n(f['messages_in_state'])} in state"]
    if f.get("control_messages"):
        parts[0] += f" ({_n(f['control_messages'])} of them /compact commands and notices)"
    archived = f.get("messages_archived")
    if archived and not f.get("archive_read", True):
        parts.append(f"{_n(archived)} archived in a store (not read: pass --archive)")
    else:
        if archived:
            parts.append(f"{_n(archived)} archived")
        parts.append(f"{_n(f['messages_logged'])} in the full history")
    context = f"{_n(f['messages_in_context'])} in the context"
    if f.get("summaries"):
        context += " (the summaries as one message)"
    return ", ".join(parts) + "; " + context


def _pinned_rows(report: ThreadReport) -> list[list[str]]:
    return [
        [
            str(p["id"]),
            str(p["type"]),
            _n(p["tokens"]),
            p["layer"] + (", edited" if p["edited"] else ""),
            str(p["preview"]),
        ]
        for p in report.pinned
    ]


def _summary_title(s: Mapping[str, Any]) -> str:
    return (
        f"level {s['level']} · {s['id']} · {s['quality']} · {_n(s['messages_covered'])} messages · "
        f"{_n(s['summary_tokens'])} tokens · {_time(s['created_at'])}"
    )


def _recent_line(report: ThreadReport) -> str:
    r = report.recent
    if not r:
        return "-"
    return (
        f"{_n(r['messages'])} messages, {_n(r['tokens'])} tokens, first kept id "
        f"{r['first_kept_id']!r}"
    )


def _timeline_rows(report: ThreadReport, limit: int) -> tuple[list[list[str]], int]:
    numbered = list(enumerate(report.timeline, 1))
    shown, hidden = _tail(numbered, limit)
    rows = [
        [
            str(i),
            _time(e["created_at"]),
            str(e["trigger"]),
            str(e["level"]),
            str(e["quality"]),
            f"{_n(e['tokens_before'])} → {_n(e['tokens_after'])}",
            _n(e["messages_covered"]),
            _files(e["read_files"]),
            _files(e["modified_files"]),
        ]
        for i, e in shown
    ]
    return rows, hidden


def _log_rows(report: ThreadReport, limit: int) -> tuple[list[list[str]], int]:
    shown, hidden = _tail(report.eviction_log, limit)
    rows = [
        [
            _time(r["at"]),
            str(r["action"]),
            str(r["trigger"] or "-"),
            _ids(r["ids"]),
            _n(r["tokens"]),
            str(r["detail"]),
        ]
        for r in shown
    ]
    return rows, hidden


def _hidden(hidden: int) -> str:
    return f"... {hidden} earlier rows not shown (--limit 0 shows all)"


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    out = ["  " + "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out += [
        "  " + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows
    ]
    return out


def _indent(text: str, prefix: str = "    ") -> list[str]:
    return [prefix + line if line else "" for line in text.splitlines()] or [prefix + "(empty)"]


def format_report(report: ThreadReport, *, limit: int = DEFAULT_LIMIT) -> str:
    """The report as plain text (no colours, fixed-width tables).

    Args:
        report: the thread's report.
        limit: rows shown per list (timeline, eviction log), newest kept; 0: all.
    """
    lines = [_title(report)]
    rows = figure_rows(report)
    if rows:
        width = max(len(label) for label, _ in rows)
        lines += ["", "figures"] + [f"  {label.ljust(width)}  {value}" for label, value in rows]
    lines += ["", "pinned (system messages and the task, verbatim)"]
    lines += _table(_PINNED_HEADERS, _pinned_rows(report)) if report.pinned else ["  (none)"]
    lines += ["", "summaries (highest level first, as the model sees them)"]
    if not report.summaries:
        lines.append("  (none: nothing was compacted)")
    for s in report.summaries:
        lines.append("  " + _summary_title(s))
        lines += _indent(str(s["text"]))
    if report.facts:
        lines.append("  facts ledger")
        lines += _indent(report.facts)
    lines += ["", "recent (verbatim)", "  " + _recent_line(report)]
    lines += ["", "compaction timeline (oldest first)"]
    body, hidden = _timeline_rows(report, limit)
    lines += _table(_TIMELINE_HEADERS, body) if body else ["  (no compactions)"]
    if hidden:
        lines.append("  " + _hidden(hidden))
    lines += ["", "eviction log (compactions, merges, placeholders, truncations)"]
    body, hidden = _log_rows(report, limit)
    lines += _table(_LOG_HEADERS, body) if body else ["  (nothing evicted)"]
    if hidden:
        lines.append("  " + _hidden(hidden))
    if report.notes:
        lines += ["", "notes"] + [f"  - {n}" for n in report.notes]
    return "\n".join(lines)


def print_report(
    report: ThreadReport,
    *,
    file: TextIO | None = None,
    limit: int = DEFAULT_LIMIT,
    use_rich: bool | None = None,
) -> None:
    """Print the report: rich panels and tables when rich is installed, else plain text.

    Args:
        report: the thread's report.
        file: where to print (default stdout).
        limit: rows shown per list (timeline, eviction log), newest kept; 0: all.
        use_rich: force (True) or avoid (False) rich; None: rich when importable.

    Example:
        >>> from langctx.cli.inspect.report import build_report
        >>> print_report(build_report({"messages": []}, thread_id="t1"), use_rich=False)
        ... # doctest: +ELLIPSIS
        langctx inspect: thread 't1'
        ...
    """
    out = file if file is not None else sys.stdout
    if use_rich is False or (use_rich is None and not rich_available()):
        print(format_report(report, limit=limit), file=out)
        return
    from rich.console import Console, Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, highlight=False, width=console_width(out))
    console.print(Panel(Text(_title(report), style="bold"), expand=False))
    rows = figure_rows(report)
    if rows:
        figures = Table(title="figures", show_header=False, title_justify="left")
        figures.add_column(style="bold")
        figures.add_column(overflow="fold")
        for label, value in rows:
            figures.add_row(Text(label), Text(value))
        console.print(figures)

    def table(title: str, headers: list[str], body: list[list[str]], right: set[str]) -> Table:
        t = Table(title=title, title_justify="left")
        for h in headers:
            t.add_column(h, justify="right" if h in right else "left", overflow="fold")
        for r in body:
            t.add_row(*(Text(v) for v in r))
        return t

    if report.pinned:
        console.print(table("pinned (verbatim)", _PINNED_HEADERS, _pinned_rows(report), {"tokens"}))
    else:
        console.print(Text("pinned: (none)"))
    panels: list[Any] = [
        Panel(Text(str(s["text"])), title=Text(_summary_title(s)), title_align="left")
        for s in report.summaries
    ]
    if report.facts:
        panels.append(Panel(Text(report.facts), title="facts ledger", title_align="left"))
    if panels:
        console.print(
            Panel(Group(*panels), title="summaries (highest level first)", title_align="left")
        )
    else:
        console.print(Text("summaries: (none: nothing was compacted)"))
    console.print(Panel(Text(_recent_line(report)), title="recent (verbatim)", title_align="left"))
    body, hidden = _timeline_rows(report, limit)
    if body:
        console.print(
            table(
                "compaction timeline (oldest first)",
                _TIMELINE_HEADERS,
                body,
                {"#", "level", "messages", "tokens before → after"},
            )
        )
        if hidden:
            console.print(Text(_hidden(hidden)))
    else:
        console.print(Text("compaction timeline: (no compactions)"))
    body, hidden = _log_rows(report, limit)
    if body:
        console.print(table("eviction log", _LOG_HEADERS, body, {"tokens freed"}))
        if hidden:
            console.print(Text(_hidden(hidden)))
    for n in report.notes:
        console.print(Text(f"note: {n}"))


def _hint(source: Mapping[str, str] | None) -> str:
    if not source:
        return "Inspect one with --thread ID."
    flag = "--db" if source["kind"] == "sqlite" else "--postgres"
    return f"Inspect one with: langctx inspect {flag} {source['location']} --thread ID"


def _thread_rows(threads: Sequence[ThreadInfo], limit: int) -> tuple[list[list[str]], int]:
    shown = list(threads[:limit]) if limit else list(threads)
    rows = [
        [t.thread_id, _n(t.checkpoints), _time(t.updated_at), t.latest_checkpoint_id] for t in shown
    ]
    return rows, len(threads) - len(shown)


def _threads_title(threads: Sequence[ThreadInfo], source: Mapping[str, str] | None) -> str:
    where = f" in {source['kind']} {source['location']}" if source else ""
    n = len(threads)
    return (
        f"langctx inspect: {n} thread{'s' if n != 1 else ''}{where} (most recently updated first)"
    )


def threads_to_dict(
    threads: Sequence[ThreadInfo],
    *,
    source: Mapping[str, str] | None = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """A thread list as JSON values (what ``langctx inspect --json`` prints without --thread).

    Args:
        threads: the threads, most recently updated first.
        source: where they were read.
        limit: keep the first ``limit`` threads (0 or None: all); ``omitted`` counts the rest.

    Example:
        >>> threads_to_dict([ThreadInfo("t1", 4, "1f0", None)], limit=0)["threads"][0]["checkpoints"]
        4
    """
    shown = list(threads[:limit]) if limit else list(threads)
    out: dict[str, Any] = {
        "v": REPORT_VERSION,
        "source": dict(source) if source else None,
        "total": len(threads),
        "threads": [t.to_dict() for t in shown],
    }
    if len(shown) < len(threads):
        out["omitted"] = len(threads) - len(shown)
    return out


def format_threads(
    threads: Sequence[ThreadInfo],
    *,
    source: Mapping[str, str] | None = None,
    limit: int = DEFAULT_LIMIT,
) -> str:
    """A thread list as plain text, most recently updated first.

    Example:
        >>> print(format_threads([ThreadInfo("t1", 4, "1f0", None)]))  # doctest: +NORMALIZE_WHITESPACE
        langctx inspect: 1 thread (most recently updated first)
          thread id  checkpoints  updated (UTC)  latest checkpoint
          t1         4            -              1f0
        Inspect one with --thread ID.
    """
    lines = [_threads_title(threads, source)]
    body, hidden = _thread_rows(threads, limit)
    if not body:
        lines.append("  (no threads: the database holds no checkpoints yet)")
        return "\n".join(lines)
    lines += _table(_THREAD_HEADERS, body)
    if hidden:
        lines.append(f"  ... {hidden} more threads (--limit 0 shows all)")
    lines.append(_hint(source))
    return "\n".join(lines)


def print_threads(
    threads: Sequence[ThreadInfo],
    *,
    source: Mapping[str, str] | None = None,
    file: TextIO | None = None,
    limit: int = DEFAULT_LIMIT,
    use_rich: bool | None = None,
) -> None:
    """Print a thread list: a rich table when rich is installed, else plain text.

    Example:
        >>> print_threads([], use_rich=False)
        langctx inspect: 0 threads (most recently updated first)
          (no threads: the database holds no checkpoints yet)
    """
    out = file if file is not None else sys.stdout
    if use_rich is False or (use_rich is None and not rich_available()):
        print(format_threads(threads, source=source, limit=limit), file=out)
        return
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, highlight=False, width=console_width(out))
    body, hidden = _thread_rows(threads, limit)
    if not body:
        console.print(Text(_threads_title(threads, source)))
        console.print(Text("(no threads: the database holds no checkpoints yet)"))
        return
    table = Table(title=_threads_title(threads, source), title_justify="left")
    for h in _THREAD_HEADERS:
        table.add_column(h, justify="right" if h == "checkpoints" else "left", overflow="fold")
    for r in body:
        table.add_row(*(Text(v) for v in r))
    console.print(table)
    if hidden:
        console.print(Text(f"... {hidden} more threads (--limit 0 shows all)"))
    console.print(Text(_hint(source)))
