"""The ``langctx replay --html`` page, and the notebook view of a :class:`ReplayReport`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langctx.cli.replay.render import PROBE_LABELS
from langctx.cli.replay.truth import PROBES
from langctx.cli.report_html.chart import Mark, Rule, Series, chart_block
from langctx.cli.report_html.parts import (
    KIND_RANK,
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
    probe_chips,
    section,
    share_bar,
    summary_text,
    tokens_cell,
)

if TYPE_CHECKING:
    from langctx.cli.replay.engine import CompactionRecord, ReplayReport
    from langctx.pricing import PriceSheet

__all__ = ["replay_fragment", "replay_html"]

_PROBE_HELP = {
    "task": "the pinned task is in the request, unaltered",
    "constraints": "every constraint the user stated is still there",
    "files_modified": "every file the agent modified is still named",
    "latest_failure": "the latest failing command or test is still named",
    "next_step": "the step the agent announced last is still there",
    "latest_user_message": "the newest user message, verbatim",
    "earlier_user_messages": "each earlier user message, by its opening",
    "request_status": "each user request the summary lists shows the transcript's status",
}


def _replay_marks(report: ReplayReport) -> list[Mark]:
    at: dict[int, list[CompactionRecord]] = {}
    for c in report.compactions:
        if c.before_call is not None:
            at.setdefault(c.before_call, []).append(c)
    marks = []
    for call, records in sorted(at.items()):
        kinds = tuple(sorted({r.kind for r in records}, key=KIND_RANK.index))
        text = f"before call {call}: " + "; ".join(
            f"{r.kind} {r.tokens_before:,} → {r.tokens_after:,} tokens" for r in records
        )
        marks.append(Mark(call, kinds, text))
    return marks


def _replay_chart(report: ReplayReport) -> str:
    if not report.calls:
        return '<p class="lcx-muted">No model call.</p>'
    s = report.settings
    budget = int(s.get("max_tokens") or 0)
    mark = int(s.get("high_mark") or 0)
    rules = [Rule("budget", f"budget {budget:,}", budget, "#0f172a", "6 4")] if budget else []
    if mark and mark != budget:
        rules.append(Rule("mark", f"compaction mark {mark:,}", mark, "#16a34a", "2 3"))
    xs = [c.index for c in report.calls]
    series = [
        Series(
            "full",
            "without langctx (full history)",
            [c.full_tokens for c in report.calls],
            "#94a3b8",
            "#e2e8f0",
        ),
        Series(
            "context",
            "with langctx",
            [c.context_tokens for c in report.calls],
            "#2563eb",
            "#bfdbfe",
        ),
    ]
    return chart_block(
        xs,
        series,
        rules=rules,
        marks=_replay_marks(report),
        budget=budget,
        x_label="model call",
        y_label=f"input tokens ({s.get('token_counter', '?')})",
        tip_labels={c.index: f"call {c.index}" for c in report.calls},
    )


def _dropped_title(c: CompactionRecord) -> str:
    folded = sum(1 for a, _ in c.dropped if a == "folded")
    edited = len(c.dropped) - folded
    parts = []
    if c.kind == "merge":
        parts.append(f"merged {c.merged} summaries ({c.messages_covered:,} messages)")
    elif folded:
        parts.append(f"{folded} message{'s' if folded != 1 else ''} folded")
    if edited:
        parts.append(f"{edited} cut in place")
    return ", ".join(parts) or ("nothing" if c.kind == "noop" else "")


def _compaction_row(i: int, c: CompactionRecord) -> str:
    call = "end" if c.before_call is None else f"{c.before_call}"
    dropped = dropped_list(c.dropped if c.kind != "merge" else (), _dropped_title(c))
    return (
        f'<tr class="lcx-compaction" data-kind="{esc(c.kind)}">'
        f'<td class="lcx-num">{i}</td><td class="lcx-num">{call}</td>'
        f"<td>{kind_cell(c.kind, c.trigger, c.level, c.quality)}</td>"
        f"<td>{tokens_cell(c.tokens_before, c.tokens_after)}</td>"
        f"{more_cell(dropped, facts_list(c.facts), summary_text(c.summary))}"
        f"<td>{probe_chips(c.probes)}</td></tr>"
    )


def _replay_probes(report: ReplayReport) -> str:
    after = report.probe_shares()
    every = report.probe_shares(after_compaction=False)
    losses = report.losses()
    lost: dict[str, int] = {}
    for x in losses:
        lost[x.probe] = lost.get(x.probe, 0) + 1
    rows = [
        f'<tr class="lcx-probe" data-probe="{p}"><td><b>{esc(PROBE_LABELS[p])}</b>'
        f'<div class="lcx-muted">{esc(_PROBE_HELP.get(p, ""))}</div></td>'
        f"<td>{share_bar(after[p])}</td><td>{share_bar(every[p])}</td>"
        f'<td class="lcx-num">{lost.get(p, 0)}</td></tr>'
        for p in PROBES
    ]
    probed = len(report.calls_after_compaction())
    table = html_table(
        "lcx-probes",
        [
            "probe",
            f"requests after the first compaction ({probed})",
            f"every request ({len(report.calls)})",
            "facts lost",
        ],
        rows,
        "",
    )
    loss_rows = [
        f'<tr class="lcx-loss"><td>{esc(PROBE_LABELS.get(x.probe, x.probe))}</td>'
        f'<td class="lcx-wide lcx-fact">{esc(x.fact)}</td><td class="lcx-num">{x.first_call}</td>'
        f'<td class="lcx-num">{x.calls}</td>'
        f'<td class="lcx-num">{x.compaction or "before any"}</td></tr>'
        for x in losses
    ]
    lost_table = html_table(
        "lcx-losses",
        ["probe", "fact", "first request without it", "requests without it", "after compaction"],
        loss_rows,
        "No fact was lost: every probe held in every request.",
    )
    return table + _status_note(report) + f"<h3>Lost facts ({len(losses)})</h3>" + lost_table


def _status_note(report: ReplayReport) -> str:
    """The ``request_status`` counts under the probes table (nothing without a section)."""
    n = report.request_status()
    if not n["requests"]:
        return ""
    return (
        f'<p class="lcx-muted lcx-request-status">Request status: {num(n["right"])} of '
        f"{num(n['graded'])} user requests shown with the right status in "
        f"{num(n['requests'])} requests after the first compaction; answered shown as open "
        f"{num(n['answered_shown_open'])}, open shown as answered "
        f"{num(n['open_shown_answered'])}, not matched to a user message "
        f"{num(n['unmatched'])}.</p>"
    )


def _replay_cost(report: ReplayReport, prices: str | PriceSheet) -> str:
    c = report.cost(prices)
    t = report.totals()
    saved = float(c["saved"])

    def change(ours: float, full: float) -> str:
        if not full:
            return ""
        d = ours / full - 1
        return f'<span class="{"lcx-good" if d <= 0 else "lcx-badtext"}">{d * 100:+.1f}%</span>'

    main, base = c["main"], c["main_without"]
    rows = [
        (
            "input tokens",
            num(t["input_tokens"]),
            num(t["input_tokens_full"]),
            change(t["input_tokens"], t["input_tokens_full"]),
        ),
        (
            "largest request",
            num(t["max_context_tokens"]),
            num(t["max_full_tokens"]),
            change(t["max_context_tokens"], t["max_full_tokens"]),
        ),
        (
            "cached input (unchanged prefix)",
            num(main["cached"]),
            num(base["cached"]),
            change(main["cached"], base["cached"]),
        ),
        (
            "uncached input",
            num(main["uncached"]),
            num(base["uncached"]),
            change(main["uncached"], base["uncached"]),
        ),
        ("cached share of input", pct(c["cached_share"]), pct(c["cached_share_without"]), ""),
        ("output tokens (the session's AI messages)", num(main["output"]), num(main["output"]), ""),
        (
            "summarizer tokens (in / out)",
            f"{num(c['summarizer']['input'])} / {num(c['summarizer']['output'])}",
            "–",
            "",
        ),
        (
            f"modeled cost ({esc(c['prices'])} prices)",
            f"${c['with_langctx']:.4f}",
            f"${c['without_langctx']:.4f}",
            change(c["with_langctx"], c["without_langctx"]),
        ),
        (
            "summarizer time on the agent's path",
            f"{c['compaction_s']} s ({c['blocking_summarizer_calls']} blocking calls)",
            "–",
            "",
        ),
    ]
    body = "".join(
        f'<tr><th>{label}</th><td class="lcx-num">{a}</td><td class="lcx-num">{b}</td>'
        f'<td class="lcx-num">{d}</td></tr>'
        for label, a, b, d in rows
    )
    note = (
        f"With langctx each request's unchanged prefix is a cache read and the rest a cache "
        f"write; without, each request extends the previous one. Modeled saving: "
        f"<b>{pct(saved)}</b>."
    )
    return (
        f'<p class="lcx-note">{note}</p><div class="lcx-scroll"><table class="lcx-cost">'
        "<thead><tr><th></th><th>with langctx</th><th>full history</th><th>change</th></tr>"
        f"</thead><tbody>{body}</tbody></table></div>"
    )


def _replay_cards(report: ReplayReport, prices: str | PriceSheet) -> str:
    t = report.totals()
    c = report.cost(prices)
    s = report.settings
    shares = report.probe_shares()
    checked = {p: v for p, v in shares.items() if v is not None}
    if checked:
        worst = min(checked, key=lambda p: checked[p])
        held = sum(1 for v in checked.values() if v >= 0.999)
        probe_value = f"{held}/{len(checked)} held"
        probe_detail = f"lowest: {esc(PROBE_LABELS[worst])} {pct(checked[worst])}"
        probe_tone = "" if held == len(checked) else "lcx-warn-card"
    else:
        probe_value, probe_detail, probe_tone = "n/a", "no compaction to probe", ""
    bad = t["projection_orphans"] + t["task_missing_calls"] + t["over_budget_calls"]
    integrity = (
        f"orphans {t['projection_orphans']} · task missing {t['task_missing_calls']} · "
        f"over budget {t['over_budget_calls']} calls"
    )
    return (
        '<div class="lcx-cards">'
        + card(
            "input tokens",
            f"−{pct(t['reduction'])}" if t["reduction"] >= 0 else f"+{pct(-t['reduction'])}",
            f"{num(t['input_tokens'])} with langctx vs {num(t['input_tokens_full'])} full history",
            "lcx-accent",
        )
        + card(
            "largest request",
            num(t["max_context_tokens"]),
            f"budget {num(s.get('max_tokens'))} · full history {num(t['max_full_tokens'])}",
        )
        + card(
            "compactions",
            f"{t['compactions']} folds",
            f"{t['merges']} merges · {t['placeholder_passes']} placeholder passes · "
            f"{t['truncations']} truncations",
        )
        + card(
            "summaries",
            f"{report.summarizer_calls} written",
            f"summarizer {esc(s.get('summarizer', '?'))}"
            + (f" · {report.fallbacks} fell back" if report.fallbacks else "")
            + (
                f" · {num(report.summarizer_input_tokens)} tokens sent"
                if report.summarizer_input_tokens
                else ""
            ),
        )
        + card(
            f"modeled cost · {esc(c['prices'])}",
            f"${c['with_langctx']:.2f}",
            f"vs ${c['without_langctx']:.2f} full history ({pct(float(c['saved']))} less)",
        )
        + card(
            "cached input",
            pct(c["cached_share"]),
            f"full history {pct(c['cached_share_without'])} · each request's prefix unchanged: "
            f"{pct(t['mean_prefix_share'])} on average",
        )
        + card("amnesia probes", probe_value, probe_detail, probe_tone)
        + card(
            "integrity",
            "OK" if not bad else f"{bad} issues",
            integrity,
            "" if not bad else "lcx-bad-card",
        )
        + "</div>"
    )


def _replay_settings(report: ReplayReport) -> str:
    s = report.settings
    items = [
        ("session", esc(report.session)),
        ("format", esc(report.format or "messages")),
        ("messages", num(report.messages)),
        ("model calls", num(len(report.calls))),
        ("budget", num(s.get("max_tokens"))),
        ("compaction mark", num(s.get("high_mark"))),
        ("recent layer kept", num(s.get("keep_recent_tokens"))),
        ("context window", num(s.get("context_window")) if s.get("context_window") else ""),
        ("cache prices", esc(s["cache_prices"]) if s.get("cache_prices") else ""),
        ("token counter", esc(s.get("token_counter", ""))),
        ("summarizer", esc(s.get("summarizer", ""))),
        (
            "summaries written",
            f"{report.summarizer_calls} ({report.fallbacks} fallbacks)"
            if report.fallbacks
            else str(report.summarizer_calls),
        ),
        ("replay time", f"{report.seconds:.2f} s"),
        ("task", f'<span class="lcx-quote">{esc(report.task)}</span>' if report.task else ""),
    ]
    return html_dl(items)


def _replay_body(report: ReplayReport, prices: str | PriceSheet) -> str:
    calls = len(report.calls)
    header = (
        f'<header class="lcx-header"><h1>langctx replay <span>{esc(report.session)}</span></h1>'
        f'<p class="lcx-sub">{esc(report.format or "messages")} session · '
        f"{report.messages:,} messages · {calls:,} model call{'s' if calls != 1 else ''} · budget "
        f"{num(report.settings.get('max_tokens'))} tokens · counted with "
        f"{esc(report.settings.get('token_counter', '?'))}</p></header>"
    )
    rows = [_compaction_row(i, c) for i, c in enumerate(report.compactions, 1)]
    compactions = html_table(
        "lcx-compactions",
        [
            "#",
            "call",
            "kind · trigger · level · quality",
            "tokens before → after",
            "what left the request · facts kept · summary",
            "probes after",
        ],
        rows,
        "No compaction: every request fit the budget.",
    )
    key = " · ".join(f"{i + 1} {PROBE_LABELS[p]}" for i, p in enumerate(PROBES))
    return (
        header
        + _replay_cards(report, prices)
        + section(
            "Context tokens per model call",
            _replay_chart(report),
            "Each request langctx builds, against the full history an agent without it would "
            "send; triangles mark the compactions (hover for details).",
        )
        + section(
            f"Compactions ({len(report.compactions)})",
            compactions,
            f"One row per compaction, merge, placeholder pass or truncation; call: the first "
            f"request that shows it. Probes after, in order: {key} (✓ held, ✗ failed, – nothing "
            "to check yet).",
        )
        + section("Amnesia probes", _replay_probes(report))
        + section("Cost", _replay_cost(report, prices))
        + section("Settings", _replay_settings(report))
        + notes_section([*report.warnings, *report.notes])
    )


def replay_fragment(report: ReplayReport, *, prices: str | PriceSheet = "anthropic") -> str:
    """The replay report as one ``<div>`` with its own styles and script (a notebook cell's
    output, :meth:`ReplayReport._repr_html_`).

    Args:
        report: the replay's report.
        prices: the price sheet of the cost figures (see :func:`langctx.pricing.price_sheet`).
    """
    return fragment(_replay_body(report, prices), with_style=True)


def replay_html(
    report: ReplayReport, *, prices: str | PriceSheet = "anthropic", title: str | None = None
) -> str:
    """The replay report as one self-contained HTML page (``langctx replay --html``).

    Args:
        report: the replay's report.
        prices: the price sheet of the cost figures (see :func:`langctx.pricing.price_sheet`).
        title: the page title (default: names the session).
    """
    return page(
        title or f"langctx replay: {report.session}",
        fragment(_replay_body(report, prices), with_style=False),
    )
