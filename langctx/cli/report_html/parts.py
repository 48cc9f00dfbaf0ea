"""The pieces both pages are built of: escaping, number formats, cards, tables, cells, the shell.

Every text that comes from a session or a checkpoint goes through :func:`esc`.

Example:
    >>> esc('<script>alert("x")</script>')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;'
    >>> num(12345), pct(0.25)
    ('12,345', '25.0%')
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from langctx.cli.replay.render import PROBE_LABELS
from langctx.cli.replay.truth import PROBES
from langctx.cli.report_html.assets import CSP, SCRIPT, STYLE

__all__ = [
    "KIND_COLORS",
    "KIND_LABELS",
    "KIND_RANK",
    "card",
    "dropped_list",
    "esc",
    "facts_list",
    "fragment",
    "html_dl",
    "html_table",
    "kind_cell",
    "more_cell",
    "notes_section",
    "num",
    "page",
    "pct",
    "printable",
    "probe_chips",
    "section",
    "share_bar",
    "summary_text",
    "tokens_cell",
    "utc_time",
]

KIND_COLORS = {
    "fold": "#dc2626",
    "merge": "#7c3aed",
    "placeholder": "#ea580c",
    "truncate": "#334155",
    "noop": "#94a3b8",
}


KIND_LABELS = {
    "fold": "compaction (fold)",
    "merge": "summary merge",
    "placeholder": "outputs replaced",
    "truncate": "newest turn cut",
    "noop": "nothing to do",
}


KIND_RANK = ("fold", "truncate", "placeholder", "merge", "noop")
"""The compaction kinds (:class:`~langctx.cli.replay.CompactionRecord`), most telling first: a
chart mark with several takes the first one's colour."""
_FACT_ORDER = (
    "constraints",
    "user_messages",
    "next_step",
    "errors",
    "commands",
    "modified_files",
    "read_files",
)


_CONTROLS = re.compile("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
"""What may not stand in an HTML page: C0/C1 control characters (tab, newline, form feed and
carriage return aside), DEL, lone surrogates."""


def printable(text: str) -> str:
    """``text`` with the characters an HTML page may not hold replaced by U+FFFD."""
    return _CONTROLS.sub("\ufffd", text)


def esc(text: object) -> str:
    """``text`` escaped for HTML (markup, quotes) and :func:`printable`."""
    return html.escape(printable(str(text)), quote=True)


def num(value: float | int | None) -> str:
    return "–" if value is None else f"{value:,.0f}"


def pct(value: float | None, digits: int = 1) -> str:
    return "n/a" if value is None else f"{100 * value:.{digits}f}%"


def utc_time(at: object) -> str:
    """An ISO time as ``YYYY-MM-DD HH:MM:SS`` (UTC), escaped."""
    return esc(str(at or "")[:19].replace("T", " "))


def card(label: str, value: str, detail: str = "", tone: str = "") -> str:
    cls = f"lcx-card {tone}".strip()
    return (
        f'<div class="{cls}"><div class="lcx-card-label">{label}</div>'
        f'<div class="lcx-card-value">{value}</div>'
        + (f'<div class="lcx-card-detail">{detail}</div>' if detail else "")
        + "</div>"
    )


def _fact_item(item: object) -> str:
    if isinstance(item, Mapping):
        if isinstance(item.get("text"), str):  # a user message: {"id", "text"}
            return str(item["text"])
        if "lines" in item:
            lines = "; ".join(str(x) for x in item.get("lines") or [])
            cmd = item.get("command")
            return f"{cmd}: {lines}" if cmd else lines
        if "command" in item:
            code = item.get("exit_code")
            state = "" if code is None else f" (exit {code})"
            return f"{item['command']}{state}"
        return json.dumps(item, sort_keys=True, ensure_ascii=False)
    return str(item)


def facts_list(facts: Mapping[str, Any]) -> str:
    """The facts an entry kept, as a collapsible list ('' when none)."""
    keys = [k for k in _FACT_ORDER if k in facts] + sorted(k for k in facts if k not in _FACT_ORDER)
    groups, total = [], 0
    for key in keys:
        value = facts[key]
        items = value if isinstance(value, list | tuple) else [value]
        items = [x for x in items if x not in (None, "", [], {})]
        if not items:
            continue
        total += len(items)
        lis = "".join(f"<li>{esc(_fact_item(x))}</li>" for x in items)
        groups.append(f"<dt>{esc(key.replace('_', ' '))}</dt><dd><ul>{lis}</ul></dd>")
    if not total:
        return '<span class="lcx-muted">no facts kept</span>'
    return (
        f'<details class="lcx-facts"><summary>{total} fact{"s" if total != 1 else ""} kept'
        f"</summary><dl>{''.join(groups)}</dl></details>"
    )


def summary_text(text: str) -> str:
    if not text:
        return '<span class="lcx-muted">no summary</span>'
    lines = len(text.splitlines())
    return (
        f'<details class="lcx-summary"><summary>summary ({lines} line{"s" if lines != 1 else ""})'
        f"</summary><pre>{esc(text)}</pre></details>"
    )


DROPPED_SHOWN = 4
"""Dropped messages listed openly under a compaction; the rest behind "N more"."""
_FIRST_WORDS = 90


def _dropped_item(action: str, text: str, *, short: bool) -> str:
    """One dropped message: what happened to it, its role (and tool), its first words."""
    who, sep, rest = text.partition(": ")
    if not sep:  # a message the report could not name: its id
        who, rest = "message", text
    if short and len(rest) > _FIRST_WORDS:
        rest = rest[: _FIRST_WORDS - 1].rsplit(" ", 1)[0] + " …"
    return (
        f'<li><span class="lcx-tag lcx-tag-{esc(action)}">{esc(action)}</span> '
        f'<span class="lcx-who">{esc(who)}</span> {esc(rest)}</li>'
    )


def dropped_list(items: Sequence[tuple[str, str]], title: str) -> str:
    """What left the request: the first :data:`DROPPED_SHOWN` messages as role + first words,
    the rest behind a toggle."""
    if not items:
        return f'<span class="lcx-muted">{title}</span>' if title else ""
    shown = "".join(_dropped_item(a, t, short=True) for a, t in items[:DROPPED_SHOWN])
    rest = items[DROPPED_SHOWN:]
    more = (
        f'<details class="lcx-dropped-more"><summary>{len(rest):,} more</summary><ul>'
        + "".join(_dropped_item(a, t, short=False) for a, t in rest)
        + "</ul></details>"
        if rest
        else ""
    )
    return (
        f'<div class="lcx-dropped"><div class="lcx-dropped-title">{title}</div>'
        f"<ul>{shown}</ul>{more}</div>"
    )


def more_cell(dropped: str, facts: str, summary: str) -> str:
    """What left the request, the facts kept and the summary: toggles side by side; an open
    one takes the cell's width."""
    parts = "".join(f'<div class="lcx-more-item">{x}</div>' for x in (dropped, facts, summary) if x)
    return f'<td class="lcx-more-cell"><div class="lcx-more">{parts}</div></td>'


def tokens_cell(before: int, after: int) -> str:
    share = after / before if before else 1.0
    saved = 1 - share
    return (
        f'<div class="lcx-tokens">{num(before)} → <b>{num(after)}</b></div>'
        f'<div class="lcx-kept"><span class="lcx-bar" title="{pct(share)} kept"><span style="width:'
        f'{max(0.0, min(1.0, share)) * 100:.1f}%"></span></span>'
        f'<span class="lcx-muted">{"−" if saved >= 0 else "+"}{pct(abs(saved), 0)}</span></div>'
    )


def kind_cell(kind: str, trigger: object, level: object, quality: object) -> str:
    """The kind's badge over its trigger, level and quality."""
    details = [
        f'<span title="trigger">{esc(trigger)}</span>',
        f'<span title="level">level {esc(level)}</span>' if level not in (None, "") else "",
        f'<span title="quality">{esc(quality)}</span>' if quality not in (None, "", "none") else "",
    ]
    return (
        f'<span class="lcx-kind" style="--c:{KIND_COLORS.get(kind, "#64748b")}">{esc(kind)}</span>'
        f'<div class="lcx-kind-detail">{" · ".join(d for d in details if d)}</div>'
    )


def probe_chips(probes: Mapping[str, bool | None]) -> str:
    chips = []
    for p in PROBES:
        v = probes.get(p)
        cls, mark = ("na", "–") if v is None else (("ok", "✓") if v else ("bad", "✗"))
        state = "n/a" if v is None else ("held" if v else "failed")
        chips.append(
            f'<span class="lcx-chip lcx-{cls}" title="{esc(PROBE_LABELS[p])}: {state}">{mark}</span>'
        )
    return '<span class="lcx-chips">' + "".join(chips) + "</span>"


def share_bar(share: float | None) -> str:
    if share is None:
        return '<span class="lcx-muted">n/a</span>'
    tone = "ok" if share >= 0.999 else ("warn" if share >= 0.8 else "bad")
    return (
        f'<div class="lcx-share lcx-{tone}"><span style="width:{share * 100:.1f}%"></span></div>'
        f"<b>{pct(share)}</b>"
    )


def html_table(cls: str, headers: Sequence[str], rows: Sequence[str], empty: str) -> str:
    if not rows:
        return f'<p class="lcx-muted">{empty}</p>'
    head = "".join(f"<th>{h}</th>" for h in headers)
    return (
        f'<div class="lcx-scroll"><table class="{cls}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def html_dl(items: Sequence[tuple[str, str]]) -> str:
    return (
        '<dl class="lcx-dl">'
        + "".join(f"<dt>{k}</dt><dd>{v}</dd>" for k, v in items if v != "")
        + "</dl>"
    )


def section(title: str, body: str, note: str = "") -> str:
    return (
        f'<section class="lcx-section"><h2>{title}</h2>'
        + (f'<p class="lcx-note">{note}</p>' if note else "")
        + body
        + "</section>"
    )


def notes_section(lines: Sequence[str]) -> str:
    if not lines:
        return ""
    return section("Notes", "<ul>" + "".join(f"<li>{esc(x)}</li>" for x in lines) + "</ul>")


def fragment(body: str, *, with_style: bool) -> str:
    style = f"<style>{STYLE}</style>" if with_style else ""
    return printable(f'<div class="lcx">{style}{body}<script>{SCRIPT}</script></div>')


def page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="color-scheme" content="light">'
        f"<title>{esc(title)}</title><style>body{{margin:0;background:#f8fafc}}{STYLE}</style>"
        "</head>"
        f"<body>{printable(body)}</body></html>\n"
    )
