"""The SVG chart of both pages: tokens per call (or checkpoint) against the full history.

Drawn here, as text: areas and lines for the series, dashed rules for the budget and the
compaction mark, a triangle per compaction, axes with ticks and a legend. A log axis when the
full history outgrows the budget :data:`~langctx.cli.replay.plot.LOG_SCALE_RATIO` times, with a
linear twin the page's switch shows.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from langctx.cli.replay.plot import LOG_SCALE_RATIO
from langctx.cli.report_html.parts import KIND_COLORS, KIND_LABELS, KIND_RANK, esc

__all__ = ["Mark", "Rule", "Series", "chart_block"]


def _short(value: float) -> str:
    """A tick label: 800, 1.5k, 20k, 1.2M."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.3g}M"
    if value >= 1_000:
        return f"{value / 1_000:.3g}k"
    return f"{value:.3g}"


@dataclass(frozen=True, slots=True)
class Series:
    """A line over an area: one value per x (``key`` names it in the page: ``data-series``)."""

    key: str
    label: str
    values: Sequence[int]
    color: str
    fill: str


@dataclass(frozen=True, slots=True)
class Rule:
    """A dashed horizontal line with its label: the budget, the compaction mark."""

    key: str
    label: str
    value: int
    color: str
    dash: str


@dataclass(frozen=True, slots=True)
class Mark:
    """The compactions at one x: a triangle and a faint vertical line, ``text`` on hover."""

    x: int
    kinds: tuple[str, ...]
    text: str


_W, _H = 960, 420
_LEFT, _RIGHT, _BOTTOM = 70, 84, 52  # the rules' labels stand right of the plot
_CHAR = 6.9  # average width of a 12.5px legend character


def _linear_ticks(peak: float) -> tuple[float, list[float]]:
    raw = max(peak, 1) / 5
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    top = math.ceil(max(peak, 1) * 1.04 / step) * step
    return top, [i * step for i in range(round(top / step) + 1)]


def _log_ticks(low: float, high: float) -> list[float]:
    ticks = []
    for k in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks += [m * 10**k for m in (1, 2, 5) if low <= m * 10**k <= high]
    return ticks


def _x_ticks(first: int, last: int) -> list[int]:
    span = max(last - first, 1)
    raw = span / 10
    mag = 10 ** max(0, math.floor(math.log10(raw))) if raw >= 1 else 1
    step = next((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), 10 * mag)
    ticks = [t for t in range(0, last + 1, int(step)) if t >= first]
    return ticks if first in ticks or (ticks and ticks[0] - first < step / 2) else [first, *ticks]


def _legend(items: Sequence[tuple[str, str, str]]) -> tuple[str, int]:
    """Legend entries ``(kind, color, label)`` laid out in rows; returns SVG and its height."""
    parts, x, y = [], float(_LEFT), 18
    for kind, color, label in items:
        width = 26 + len(label) * _CHAR + 22
        if x + width > _W - _RIGHT and x > _LEFT:
            x, y = float(_LEFT), y + 22
        if kind == "area":
            swatch = (
                f'<rect x="{x:.0f}" y="{y - 9}" width="18" height="10" rx="2" fill="{color}" '
                f'fill-opacity="0.25" stroke="{color}" stroke-width="2"/>'
            )
        elif kind.startswith("rule"):
            dash = kind.split(":", 1)[1]
            swatch = (
                f'<line x1="{x:.0f}" y1="{y - 4}" x2="{x + 18:.0f}" y2="{y - 4}" stroke="{color}" '
                f'stroke-width="2" stroke-dasharray="{dash}"/>'
            )
        else:  # a compaction kind: the marker
            swatch = (
                f'<path d="M{x + 4:.0f},{y - 10} h10 l-5,8 z" fill="{color}"/>'
                f'<line x1="{x + 9:.0f}" y1="{y - 2}" x2="{x + 9:.0f}" y2="{y + 2}" '
                f'stroke="{color}" stroke-width="1.5"/>'
            )
        parts.append(
            f'<g class="lcx-legend-item">{swatch}<text x="{x + 26:.0f}" y="{y}">'
            f"{esc(label)}</text></g>"
        )
        x += width
    return '<g class="lcx-legend">' + "".join(parts) + "</g>", y + 16


def _label_ys(ys: Sequence[float], gap: float = 14) -> list[float]:
    """The rules' label heights beside the plot: at their lines, pushed apart to ``gap``."""
    order = sorted(range(len(ys)), key=lambda i: ys[i])
    out = list(ys)
    for prev, cur in itertools.pairwise(order):
        out[cur] = max(out[cur], out[prev] + gap)
    return out


def _chart(
    xs: Sequence[int],
    series: Sequence[Series],
    *,
    rules: Sequence[Rule],
    marks: Sequence[Mark],
    log: bool,
    x_label: str,
    y_label: str,
    hidden: bool = False,
) -> str:
    """A line and area chart of ``series`` over ``xs`` with horizontal ``rules`` (budget, mark)
    and vertical ``marks`` (compactions); one ``<svg class="lcx-chart">``."""
    kinds = sorted({k for m in marks for k in m.kinds}, key=KIND_RANK.index)
    legend, top = _legend(
        [("area", s.color, s.label) for s in series]
        + [(f"rule:{r.dash}", r.color, r.label) for r in rules]
        + [(k, KIND_COLORS[k], KIND_LABELS[k]) for k in kinds]
    )
    top += 8
    left, right, bottom = _LEFT, _W - _RIGHT, _H - _BOTTOM
    values = [v for s in series for v in s.values]
    peak = max([*values, *(r.value for r in rules), 1])
    if log:
        low = max(1.0, min([v for v in [*values, *(r.value for r in rules)] if v > 0] or [1]) * 0.8)
        high = peak * 1.35
        ticks = _log_ticks(low, high)
        lo, hi = math.log10(low), math.log10(high)

        def y_of(v: float) -> float:
            return bottom - (math.log10(max(v, low)) - lo) / (hi - lo) * (bottom - top)
    else:
        high, ticks = _linear_ticks(peak)

        def y_of(v: float) -> float:
            return bottom - v / high * (bottom - top)

    x0, x1 = (xs[0], xs[-1]) if xs else (1, 1)
    span = max(x1 - x0, 1) + 1  # half a step of room on each side

    def x_of(x: float) -> float:
        return left + (x - x0 + 0.5) / span * (right - left)

    out = [
        f'<svg class="lcx-chart" data-scale="{"log" if log else "linear"}" '
        f'viewBox="0 0 {_W} {_H}" role="img" preserveAspectRatio="xMidYMid meet" '
        f'data-left="{left}" data-right="{right}" data-top="{top}" data-bottom="{bottom}" '
        f'data-x0="{x0}" data-span="{span}"{" hidden" if hidden else ""}>',
        f"<title>{esc(y_label)} per {esc(x_label)} ({'log' if log else 'linear'} scale)</title>",
        legend,
        f'<rect class="lcx-plot" x="{left}" y="{top}" width="{right - left}" '
        f'height="{bottom - top}" fill="#ffffff" stroke="#e2e8f0"/>',
    ]
    grid = []
    for t in ticks:
        y = y_of(t)
        grid.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#eef2f7"/>'
            f'<text class="lcx-ytick" x="{left - 8}" y="{y + 4:.1f}" text-anchor="end">'
            f"{_short(t)}</text>"
        )
    for t in _x_ticks(x0, x1) if xs else []:
        x = x_of(t)
        grid.append(
            f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 5}" stroke="#94a3b8"/>'
            f'<text class="lcx-xtick" x="{x:.1f}" y="{bottom + 19}" text-anchor="middle">'
            f"{t}</text>"
        )
    out.append('<g class="lcx-grid">' + "".join(grid) + "</g>")
    out.append(
        f'<text class="lcx-axis-label" x="{(left + right) / 2:.0f}" y="{_H - 10}" '
        f'text-anchor="middle">{esc(x_label)}</text>'
        f'<text class="lcx-axis-label" transform="translate(16 {(top + bottom) / 2:.0f}) '
        f'rotate(-90)" text-anchor="middle">{esc(y_label)}{" (log scale)" if log else ""}</text>'
    )
    for m in marks:
        x = x_of(m.x)
        color = KIND_COLORS[m.kinds[0]]
        out.append(
            f'<g class="lcx-mark" data-x="{m.x}" data-kinds="{esc(" ".join(m.kinds))}">'
            f"<title>{esc(m.text)}</title>"
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" stroke="{color}" '
            f'stroke-opacity="0.35" stroke-width="1"/>'
            f'<path d="M{x - 5:.1f},{top} h10 l-5,8 z" fill="{color}"/></g>'
        )
    for s in series:
        pts = [(x_of(x), y_of(v)) for x, v in zip(xs, s.values, strict=True)]
        if not pts:
            continue
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y in pts)
        area = (
            f"M{pts[0][0]:.1f},{bottom} "
            + " ".join(f"L{x:.1f},{y:.1f}" for x, y in pts)
            + f" L{pts[-1][0]:.1f},{bottom} Z"
        )
        out.append(
            f'<path class="lcx-area" data-series="{s.key}" d="{area}" fill="{s.fill}" '
            f'fill-opacity="0.55"/>'
            f'<polyline class="lcx-line" data-series="{s.key}" data-count="{len(pts)}" '
            f'points="{line}" fill="none" stroke="{s.color}" stroke-width="2" '
            f'stroke-linejoin="round"/>'
        )
        if len(pts) == 1:
            out.append(
                f'<circle cx="{pts[0][0]:.1f}" cy="{pts[0][1]:.1f}" r="3" fill="{s.color}"/>'
            )
    for r, y_text in zip(rules, _label_ys([y_of(r.value) for r in rules]), strict=True):
        y = y_of(r.value)
        out.append(
            f'<g class="lcx-rule" data-rule="{r.key}"><line x1="{left}" y1="{y:.1f}" '
            f'x2="{right}" y2="{y:.1f}" stroke="{r.color}" stroke-width="1.5" '
            f'stroke-dasharray="{r.dash}"/><text x="{right + 6}" y="{y_text + 4:.1f}" '
            f'text-anchor="start" fill="{r.color}"><title>{esc(r.label)}</title>'
            f"{esc(r.key)} {_short(r.value)}</text></g>"
        )
    out.append(
        f'<line class="lcx-cross" x1="0" y1="{top}" x2="0" y2="{bottom}" stroke="#0f172a" '
        'stroke-opacity="0.4" visibility="hidden"/>'
    )
    out.append("</svg>")
    return "".join(out)


def chart_block(
    xs: Sequence[int],
    series: Sequence[Series],
    *,
    rules: Sequence[Rule],
    marks: Sequence[Mark],
    budget: int,
    x_label: str,
    y_label: str,
    tip_labels: Mapping[int, str] | None = None,
) -> str:
    """The chart (a log and a linear one when the history outgrows the budget), a scale
    switch that the script shows, the data for the script's tooltip."""
    full_peak = max((v for s in series if s.key == "full" for v in s.values), default=0)
    log = bool(budget) and full_peak > LOG_SCALE_RATIO * budget
    charts = [
        _chart(
            xs,
            series,
            rules=rules,
            marks=marks,
            log=scale,
            hidden=scale != log,
            x_label=x_label,
            y_label=y_label,
        )
        for scale in ((True, False) if log else (False,))
    ]
    data = {
        "x": list(xs),
        "series": [{"label": s.label, "color": s.color, "values": list(s.values)} for s in series],
        "marks": {str(m.x): m.text for m in marks},
        "labels": {str(k): v for k, v in (tip_labels or {}).items()},
    }
    switch = (
        '<div class="lcx-scale" hidden><button type="button" data-scale="log" '
        'aria-pressed="true">log scale</button><button type="button" data-scale="linear" '
        'aria-pressed="false">linear scale</button></div>'
        if log
        else ""
    )
    return (
        f'<div class="lcx-chart-box" data-chart="{esc(json.dumps(data, separators=(",", ":")))}">'
        f'{switch}{"".join(charts)}<div class="lcx-tip" hidden></div></div>'
    )
