"""The ``langctx inspect --html`` page: a thread's memory, and its context over the checkpoints."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langctx.cli.report_html.chart import Mark, Rule, Series, chart_block
from langctx.cli.report_html.parts import (
    card,
    dropped_list,
    esc,
    facts_list,
    fragment,
    html_dl,
    html_table,
    kind_cell,
    more_cell,
    notes_section,
    num,
    page,
    pct,
    section,
    summary_text,
    tokens_cell,
    utc_time,
)

if TYPE_CHECKING:
    from langctx.cli.inspect.history import HistoryPoint
    from langctx.cli.inspect.report import ThreadReport

__all__ = ["inspect_html"]


def _inspect_chart(report: ThreadReport, history: Sequence[HistoryPoint]) -> str:
    if len(history) < 2:
        return (
            '<p class="lcx-muted">The thread has one checkpoint here: no timeline to draw.</p>'
            if history
            else '<p class="lcx-muted">No checkpoint history was read.</p>'
        )
    budget = int(report.figures.get("budget") or 0)
    rules = [Rule("budget", f"budget {budget:,}", budget, "#0f172a", "6 4")] if budget else []
    xs = list(range(1, len(history) + 1))
    marks = []
    for x, (prev, cur) in enumerate(itertools.pairwise(history), 2):
        kinds = []
        if cur.compactions > prev.compactions:
            kinds.append("fold")
        if cur.merges > prev.merges:
            kinds.append("merge")
        if cur.placeholders > prev.placeholders:
            kinds.append("placeholder")
        if cur.truncations > prev.truncations:
            kinds.append("truncate")
        if kinds:
            text = (
                f"checkpoint {x} (step {cur.step}): "
                + ", ".join(kinds)
                + f"; context {prev.context_tokens:,} → {cur.context_tokens:,} tokens"
            )
            marks.append(Mark(x, tuple(kinds), text))
    series = [
        Series(
            "full",
            "without langctx (full history)",
            [p.full_tokens for p in history],
            "#94a3b8",
            "#e2e8f0",
        ),
        Series(
            "context", "with langctx", [p.context_tokens for p in history], "#2563eb", "#bfdbfe"
        ),
    ]
    return chart_block(
        xs,
        series,
        rules=rules,
        marks=marks,
        budget=budget,
        x_label="checkpoint (oldest → newest)",
        y_label=f"context tokens ({report.figures.get('token_counter', '?')})",
        tip_labels={
            x: f"checkpoint {x} · step {p.step} · {p.messages} messages"
            for x, p in zip(xs, history, strict=True)
        },
    )


def _timeline_row(i: int, r: Mapping[str, Any]) -> str:
    folded = [("folded", str(x)) for x in r.get("folded") or []]
    if r.get("trigger") == "merge":
        title = f"merged {len(r.get('merged_from') or [])} summaries ({r['messages_covered']:,} messages)"
    else:
        title = f"{r.get('messages_covered', 0):,} messages folded"
    facts = dict(r.get("facts") or {})
    facts.setdefault("modified_files", r.get("modified_files") or [])
    facts.setdefault("read_files", r.get("read_files") or [])
    state = "active" if r.get("active") else "merged"
    kind = "merge" if r.get("trigger") == "merge" else "fold"
    return (
        f'<tr class="lcx-compaction" data-kind="{kind}"><td class="lcx-num">{i}</td>'
        f'<td class="lcx-time">{utc_time(r.get("created_at"))}</td>'
        f"<td>{kind_cell(kind, r.get('trigger', ''), r.get('level'), r.get('quality'))}</td>"
        f"<td>{tokens_cell(int(r.get('tokens_before') or 0), int(r.get('tokens_after') or 0))}</td>"
        f"{more_cell(dropped_list(folded, title), facts_list(facts), summary_text(str(r.get('summary') or '')))}"
        f'<td><span class="lcx-state lcx-{state}">{state}</span></td></tr>'
    )


def _inspect_layers(report: ThreadReport) -> str:
    pinned_rows = [
        f"<tr><td><code>{esc(p['id'])}</code></td><td>{esc(p['type'])}</td>"
        f'<td class="lcx-num">{num(p["tokens"])}</td><td>{esc(p["layer"])}'
        f"{' (edited)' if p.get('edited') else ''}</td>"
        f'<td class="lcx-wide">{esc(p["preview"])}</td></tr>'
        for p in report.pinned
    ]
    pinned = html_table(
        "lcx-pinned", ["id", "type", "tokens", "layer", "preview"], pinned_rows, "none"
    )
    summaries = (
        "".join(
            f'<details class="lcx-layer-summary"><summary>level {esc(s["level"])} · {esc(s["quality"])}'
            f" · {num(s['messages_covered'])} messages · {num(s['summary_tokens'])} tokens · "
            f"<code>{esc(s['id'])}</code></summary><pre>{esc(s['text'])}</pre></details>"
            for s in report.summaries
        )
        or '<p class="lcx-muted">none</p>'
    )
    facts = (
        f'<details class="lcx-ledger"><summary>facts ledger</summary><pre>{esc(report.facts)}'
        "</pre></details>"
        if report.facts
        else ""
    )
    r = report.recent
    recent = html_dl(
        [
            ("messages", num(r.get("messages"))),
            ("tokens", num(r.get("tokens"))),
            (
                "first kept id",
                f"<code>{esc(r['first_kept_id'])}</code>" if r.get("first_kept_id") else "–",
            ),
            ("summary block", f"{num(r.get('summary_block_tokens'))} tokens"),
        ]
    )
    return (
        "<h3>Pinned</h3>"
        + pinned
        + "<h3>Summaries</h3>"
        + summaries
        + facts
        + "<h3>Recent (verbatim)</h3>"
        + recent
    )


def _inspect_log(report: ThreadReport) -> str:
    rows = [
        f'<tr><td class="lcx-time">{utc_time(r.get("at"))}</td><td>{esc(r.get("action", ""))}</td>'
        f'<td>{esc(r.get("trigger", ""))}</td><td class="lcx-num">{len(r.get("ids") or [])}</td>'
        f'<td class="lcx-num">{num(r.get("tokens"))}</td><td class="lcx-wide">{esc(r.get("detail", ""))}</td></tr>'
        for r in report.eviction_log
    ]
    return html_table(
        "lcx-log",
        ["time (UTC)", "action", "trigger", "messages", "tokens freed", "detail"],
        rows,
        "Nothing left the projection.",
    )


def _inspect_cards(report: ThreadReport) -> str:
    f = report.figures
    budget = f.get("budget")
    used = f.get("budget_used")
    return (
        '<div class="lcx-cards">'
        + card(
            "context tokens",
            num(f.get("context_tokens")),
            f"{pct(used)} of budget {num(budget)}" if budget else "budget not given (--budget)",
            "lcx-accent",
        )
        + card(
            "full history",
            num(f.get("full_history_tokens")),
            f"{pct(f.get('saved_share'))} left out of the context",
        )
        + card(
            "compactions",
            f"{num(f.get('compactions'))} folds",
            f"{num(f.get('merges'))} merges · {num(f.get('summaries'))} summaries projected · "
            f"{num(f.get('placeholders'))} placeholders · {num(f.get('truncations'))} truncations",
        )
        + card(
            "messages in state",
            num(f.get("messages_in_state")),
            f"{num(f.get('messages_archived'))} archived · "
            f"{num(f.get('messages_in_context'))} in the context · {num(f.get('pinned'))} pinned",
        )
        + "</div>"
    )


def _inspect_body(report: ThreadReport, history: Sequence[HistoryPoint]) -> str:
    cp = report.checkpoint or {}
    src = report.source or {}
    where = f"{esc(src.get('kind', ''))} {esc(src.get('location', ''))}".strip()
    sub = " · ".join(
        x
        for x in (
            where,
            f"checkpoint <code>{esc(cp['id'])}</code>" if cp.get("id") else "",
            f"step {esc(cp['step'])}" if cp.get("step") is not None else "",
            utc_time(cp["ts"]) if cp.get("ts") else "",
            ("latest" if cp.get("latest") else "an earlier checkpoint") if cp else "",
            f"counted with {esc(report.figures.get('counted_with') or report.figures.get('token_counter', '?'))}",
        )
        if x
    )
    thread = report.thread_id if report.thread_id is not None else "(state values)"
    rows = [_timeline_row(i, r) for i, r in enumerate(report.timeline, 1)]
    compactions = html_table(
        "lcx-compactions",
        [
            "#",
            "time (UTC)",
            "kind · trigger · level · quality",
            "tokens before → after",
            "what it folded · facts kept · summary",
            "now",
        ],
        rows,
        "No compaction yet.",
    )
    return (
        f'<header class="lcx-header"><h1>langctx inspect <span>{esc(thread)}</span></h1>'
        f'<p class="lcx-sub">{sub}</p></header>'
        + _inspect_cards(report)
        + section(
            "Context tokens per checkpoint",
            _inspect_chart(report, history),
            "What the model would see at each checkpoint of the thread, against the full "
            "history; triangles mark where compactions and edits happened.",
        )
        + section(
            f"Compactions ({len(report.timeline)})",
            compactions,
            "One row per compaction entry, merges included, oldest first.",
        )
        + section("Layers the model sees", _inspect_layers(report))
        + section(f"Eviction log ({len(report.eviction_log)})", _inspect_log(report))
        + notes_section(report.notes)
    )


def inspect_html(
    report: ThreadReport,
    *,
    history: Sequence[HistoryPoint] = (),
    title: str | None = None,
) -> str:
    """The inspect report as one self-contained HTML page (``langctx inspect --html``).

    Args:
        report: the thread's report (:func:`~langctx.cli.inspect.inspect_thread`).
        history: the context per checkpoint (:func:`~langctx.cli.inspect.history.thread_history`),
            drawn as the timeline.
        title: the page title (default: names the thread).
    """
    name = report.thread_id if report.thread_id is not None else "state"
    return page(
        title or f"langctx inspect: {name}",
        fragment(_inspect_body(report, history), with_style=False),
    )
