"""Draw a :class:`~langctx.cli.replay.ReplayReport` with matplotlib: tokens per model call.

The request size per call with langctx and with the full history, the budget and the compaction
mark, and each compaction; the y axis turns logarithmic past an eightfold overflow. It draws on an
Agg canvas of its own (the global backend is left alone); matplotlib is imported only here.

Example:
    >>> import tempfile
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from langctx.cli.replay import replay_session
    >>> report = replay_session([HumanMessage("hi", id="h"), AIMessage("hello", id="a")])
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = plot_report(report, Path(d) / "r.png")
    ...     path.read_bytes()[:8] == b"\\x89PNG\\r\\n\\x1a\\n"
    True
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langctx.cli.replay.engine import ReplayReport

__all__ = ["LOG_SCALE_RATIO", "draw_report", "plot_report"]

LOG_SCALE_RATIO = 8
"""Use a log y axis when the largest full-history request exceeds the budget this many times."""

_STYLE = {
    "fold": {"color": "tab:red", "linestyle": "-", "alpha": 0.35, "label": "compaction (fold)"},
    "merge": {"color": "tab:purple", "linestyle": ":", "alpha": 0.6, "label": "summary merge"},
    "placeholder": {
        "color": "tab:orange",
        "linestyle": "--",
        "alpha": 0.5,
        "label": "tool outputs replaced",
    },
    "truncate": {"color": "black", "linestyle": "-.", "alpha": 0.5, "label": "newest turn cut"},
}


def draw_report(
    report: ReplayReport, *, log_scale: bool | None = None, title: str | None = None
) -> Any:
    """Draw the report on a new matplotlib ``Figure`` (not attached to pyplot) and return it.

    Args:
        report: the replay's report.
        log_scale: force a log (True) or linear (False) y axis; None: decide by
            :data:`LOG_SCALE_RATIO`.
        title: the title; default names the session and the reduction.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> from langctx.cli.replay import replay_session
        >>> r = replay_session([HumanMessage("hi", id="h"), AIMessage("yo", id="a")])
        >>> draw_report(r, log_scale=True).axes[0].get_yscale()
        'log'
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter

    budget = int(report.settings.get("max_tokens") or 0)
    mark = int(report.settings.get("high_mark") or 0)
    x = [c.index for c in report.calls]
    full = [c.full_tokens for c in report.calls]
    ctx = [c.context_tokens for c in report.calls]

    fig = Figure(figsize=(11, 5.5), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.plot(x, full, color="tab:gray", linewidth=1.4, label="without langctx (full history)")
    ax.plot(x, ctx, color="tab:blue", linewidth=1.4, label="with langctx")
    if budget:
        ax.axhline(budget, color="black", linestyle="--", linewidth=1, label=f"budget {budget:,}")
    if mark and mark != budget:
        ax.axhline(
            mark, color="tab:green", linestyle=":", linewidth=1, label=f"compaction mark {mark:,}"
        )
    seen: set[str] = set()
    for c in report.compactions:
        if c.before_call is None or c.kind not in _STYLE:
            continue
        style: dict[str, Any] = dict(_STYLE[c.kind])
        label = style.pop("label")
        ax.axvline(c.before_call, linewidth=0.9, label=None if c.kind in seen else label, **style)
        seen.add(c.kind)
    peak = max([*full, *ctx, budget, 1])
    if log_scale is None:
        log_scale = bool(budget) and max(full, default=0) > LOG_SCALE_RATIO * budget
    if log_scale:
        ax.set_yscale("log")
        low = min([v for v in [*ctx, *full] if v > 0], default=1)
        ax.set_ylim(max(1, low * 0.8), peak * 1.5)
    else:
        ax.set_ylim(0, peak * 1.08)
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:,.0f}"))
    ax.set_xlim(0.5, max(x[-1], 1) + 0.5 if x else 1.5)
    ax.set_xlabel("model call")
    ax.set_ylabel(f"input tokens per call ({report.settings.get('token_counter', '?')})")
    ax.grid(True, which="major", alpha=0.25)
    ax.set_title(
        title
        or (
            f"{report.session}: {len(report.calls)} model calls, "
            f"{100 * report.reduction:.1f}% fewer input tokens with langctx"
        )
    )
    # the empty corner: top left on a linear axis, bottom right on a log one
    ax.legend(loc="lower right" if log_scale else "upper left", fontsize="small", framealpha=0.9)
    return fig


def plot_report(
    report: ReplayReport,
    path: str | Path,
    *,
    log_scale: bool | None = None,
    title: str | None = None,
) -> Path:
    """Draw the report (see :func:`draw_report`) and save it as a PNG at ``path``.

    Returns:
        The path written.
    """
    out = Path(path)
    fig = draw_report(report, log_scale=log_scale, title=title)
    fig.savefig(out, format="png")
    return out
