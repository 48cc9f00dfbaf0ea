"""The HTML reports (``replay --html``, ``inspect --html``, ``ReplayReport._repr_html_``).

The pages are parsed with :mod:`html.parser`: one row per compaction, a chart point per model
call, session text escaped (a ``<script>`` or ``<img>`` in a tool output stays text), and
nothing that points outside the page. The browser test renders them
(tests/integration_tests/test_report_browser.py).
"""

from __future__ import annotations

import io
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.cli import main
from langctx.cli.inspect import open_store
from langctx.cli.inspect.history import thread_history
from langctx.cli.replay import PROBES, ReplayReport, read_session, render, replay_session
from langctx.cli.report_html import inspect_html, replay_fragment, replay_html
from langctx.cli.report_html.parts import DROPPED_SHOWN
from langctx.errors import ConfigError
from tests._report_pages import (
    BUDGET,
    HOSTILE,
    PI,
    THREAD,
    Page,
    assert_self_contained,
    write_thread_db,
)


def _session(hostile: str = HOSTILE, turns: int = 30) -> list[BaseMessage]:
    messages: list[BaseMessage] = [
        SystemMessage("You are a coding agent.", id="s"),
        HumanMessage(f"Fix the parser. Never edit tests. {hostile}", id="h"),
    ]
    for i in range(turns):
        call = {"id": f"c{i}", "name": "read_file", "args": {"path": f"src/f{i}.py"}}
        out = hostile if i == 3 else "x = 1\n" * 120
        messages += [
            AIMessage(f"Reading f{i}.", id=f"a{i}", tool_calls=[call]),
            ToolMessage(out, tool_call_id=f"c{i}", id=f"t{i}", name="read_file"),
        ]
    return [*messages, AIMessage("Done.", id="end")]


@pytest.fixture(scope="module")
def pi_report() -> ReplayReport:
    return replay_session(read_session(PI), max_tokens=8000)


def test_one_row_per_compaction_and_a_point_per_call(pi_report: ReplayReport) -> None:
    page = replay_html(pi_report)
    parsed = assert_self_contained(page)
    rows = parsed.having("tr", "lcx-compaction")
    assert len(pi_report.compactions) > 10
    assert len(rows) == len(pi_report.compactions)
    assert [r["data-kind"] for r in rows] == [c.kind for c in pi_report.compactions]
    lines = parsed.having("polyline", "lcx-line")
    charts = parsed.having("svg", "lcx-chart")
    assert len(charts) == 2  # the full history outgrows the budget: log scale, and linear
    assert len(lines) == 2 * len(charts)
    for line in lines:
        assert int(line["data-count"] or 0) == len(pi_report.calls)
        assert len((line["points"] or "").split()) == len(pi_report.calls)
    calls = {c.before_call for c in pi_report.compactions if c.before_call is not None}
    assert len(parsed.having("g", "lcx-mark")) == len(calls) * len(charts)
    assert {r["data-rule"] for r in parsed.having("g", "lcx-rule")} == {"budget", "mark"}
    assert len(parsed.having("tr", "lcx-probe")) == len(PROBES)
    assert len(parsed.having("tr", "lcx-loss")) == len(pi_report.losses())
    text = " ".join(parsed.text)
    for figure in ("input tokens", "cached share of input", "modeled cost", "budget 8,000"):
        assert figure in text


def test_every_compaction_shows_its_summary_facts_and_what_it_dropped(
    pi_report: ReplayReport,
) -> None:
    folds = [c for c in pi_report.compactions if c.kind == "fold"]
    assert folds and all(c.summary and c.facts for c in folds)
    assert all(sum(a == "folded" for a, _ in c.dropped) == c.messages_covered for c in folds)
    truncated = [c for c in pi_report.compactions if any(a == "truncated" for a, _ in c.dropped)]
    assert truncated  # the session's huge first outputs were cut in place
    parsed = Page(replay_html(pi_report))
    assert len(parsed.having("details", "lcx-summary")) == sum(
        1 for c in pi_report.compactions if c.summary
    )
    assert len(parsed.having("details", "lcx-facts")) >= len(folds)
    assert len(parsed.having("div", "lcx-dropped")) >= len(folds)
    d = pi_report.to_dict()["compactions"][1]
    assert d["summary"] and d["facts"] and d["dropped"][0][0] == "folded"


def test_rule_labels_stand_beside_the_plot_apart(pi_report: ReplayReport) -> None:
    """The budget and compaction-mark labels never cover a line: they are right of the plot."""
    page = replay_html(pi_report)
    for svg in re.findall(r'<svg class="lcx-chart".*?</svg>', page, re.S):
        right = float(re.search(r'data-right="([\d.]+)"', svg).group(1))  # type: ignore[union-attr]
        labels = re.findall(
            r'<g class="lcx-rule" data-rule="(\w+)">.*?<text x="([\d.]+)" y="([\d.]+)"', svg
        )
        assert {k for k, _, _ in labels} == {"budget", "mark"}
        assert all(float(x) > right for _, x, _ in labels)
        ys = sorted(float(y) for _, _, y in labels)
        assert all(b - a >= 12 for a, b in itertools.pairwise(ys))


def test_dropped_messages_read_as_role_and_first_words(pi_report: ReplayReport) -> None:
    page = replay_html(pi_report)
    lists = re.findall(r'<div class="lcx-dropped">(.*?)</div><ul>(.*?)</ul>', page, re.S)
    dropped = [c.dropped for c in pi_report.compactions if c.kind != "merge" and c.dropped]
    assert len(lists) == len(dropped)
    for (_, shown), items in zip(lists, dropped, strict=True):
        whos = re.findall(r'<span class="lcx-who">([^<]*)</span>', shown)
        assert whos == [text.split(": ", 1)[0] for _, text in items[:DROPPED_SHOWN]]
        assert all(w.split()[0] in ("human", "ai", "tool", "system") for w in whos)


def test_session_text_is_escaped() -> None:
    report = replay_session(_session(), max_tokens=2000)
    page = replay_html(report)
    parsed = assert_self_contained(page)
    assert "<script>document" not in page and "<img" not in page and "<a href" not in page
    assert "&lt;script&gt;document.title=&quot;pwned&quot;&lt;/script&gt;" in page
    assert any('<script>document.title="pwned"' in t for t in parsed.text)  # shown as text
    assert page.count("<title>langctx replay: session</title>") == 1


def test_a_page_without_session_urls_names_no_url() -> None:
    report = replay_session(_session(hostile="<b>bold</b> & <i>more</i>"), max_tokens=2000)
    for page in (replay_html(report), replay_fragment(report)):
        assert "http://" not in page and "https://" not in page
        assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;i&gt;more&lt;/i&gt;" in page


def test_repr_html_renders_in_a_notebook() -> None:
    report = replay_session(_session(), max_tokens=2000)
    fragment = report._repr_html_()
    assert fragment.startswith('<div class="lcx">') and fragment.endswith("</div>")
    parsed = assert_self_contained(fragment)
    assert parsed.tags["style"] == 1 and parsed.tags["html"] == 0
    assert len(parsed.having("tr", "lcx-compaction")) == len(report.compactions)


def test_a_session_without_compaction_or_with_one_call() -> None:
    report = replay_session([HumanMessage("hi", id="h"), AIMessage("hello", id="a")])
    parsed = assert_self_contained(replay_html(report))
    assert parsed.having("tr", "lcx-compaction") == []
    assert len(parsed.having("svg", "lcx-chart")) == 1  # linear only: nothing outgrew the budget
    assert "No compaction" in " ".join(parsed.text)


def test_cli_replay_writes_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, data = tmp_path / "report.html", tmp_path / "report.json"
    args = ["replay", str(PI), "--budget", "8k", "--html", str(out), "--json", str(data)]
    assert main(args) == 0
    assert f"HTML report written to {out}" in capsys.readouterr().out
    report = json.loads(data.read_text(encoding="utf-8"))
    parsed = assert_self_contained(out.read_text(encoding="utf-8"))
    assert len(parsed.having("tr", "lcx-compaction")) == len(report["compactions"])
    missing = tmp_path / "nowhere" / "r.html"
    assert main(["replay", str(PI), "--html", str(missing)]) == 2
    assert "--html" in capsys.readouterr().err and not missing.exists()


@pytest.fixture(scope="module")
def thread_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_thread_db(tmp_path_factory.mktemp("html") / "checkpoints.sqlite")


def test_cli_inspect_writes_the_page(thread_db: Path, tmp_path: Path, capsys: Any) -> None:
    out = tmp_path / "thread.html"
    args = ["inspect", "--db", str(thread_db), "--thread", THREAD, "--budget", str(BUDGET)]
    assert main([*args, "--json", "--html", str(out)]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)  # stdout stays JSON; the note goes to stderr
    assert f"HTML report written to {out}" in captured.err
    page = out.read_text(encoding="utf-8")
    parsed = assert_self_contained(page)
    assert len(report["timeline"]) >= 5  # a timeline of many compactions
    assert len(parsed.having("tr", "lcx-compaction")) == len(report["timeline"])
    with open_store(db=thread_db) as store:
        checkpoints = store.thread(THREAD).checkpoints
    (line, *_) = parsed.having("polyline", "lcx-line")
    assert int(line["data-count"] or 0) == checkpoints
    assert "&lt;script&gt;document.title" in page and "<script>document" not in page
    assert all(r["summary"] and "folded" in r for r in report["timeline"])
    titles = re.findall(r'<div class="lcx-dropped-title">([^<]*)</div>', page)
    folds = [r for r in report["timeline"] if r["trigger"] != "merge"]
    assert len(titles) == len(folds)
    for title, r in zip(titles, folds, strict=True):  # no id ranges: the messages themselves
        assert r["first_covered_id"] not in title and title.endswith("messages folded")
    assert page.count('<span class="lcx-who">') >= len(folds)


def test_cli_inspect_html_needs_a_thread(
    thread_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "t.html"
    assert main(["inspect", "--db", str(thread_db), "--html", str(out)]) == 2
    assert "--html needs --thread" in capsys.readouterr().err and not out.exists()


def test_thread_history_samples_long_threads(thread_db: Path) -> None:
    with open_store(db=thread_db) as store:
        count = store.thread(THREAD).checkpoints
        latest = store.thread(THREAD).latest_checkpoint_id
        earlier = store.checkpoint_ids(THREAD)[10]
        every = thread_history(store, THREAD, budget=BUDGET)
        few = thread_history(store, THREAD, budget=BUDGET, limit=5)
        upto = thread_history(store, THREAD, checkpoint_id=earlier)
        with pytest.raises(ConfigError):
            thread_history(store, THREAD, limit=-1)
    assert len(every) == count > 20 and every[-1].checkpoint_id == latest
    assert len(few) == 5 and [few[0].checkpoint_id, few[-1].checkpoint_id] == [
        every[0].checkpoint_id,
        latest,
    ]
    assert upto[-1].checkpoint_id == earlier and len(upto) == count - 10
    assert every[-1].compactions > 0 and every[-1].context_tokens < every[-1].full_tokens
    assert [p.full_tokens for p in every] == sorted(p.full_tokens for p in every)


def test_inspect_page_of_bare_state_values() -> None:
    from langctx.cli.inspect import build_report

    page = inspect_html(build_report({"messages": [("user", "Fix <it>.")]}))
    parsed = assert_self_contained(page)
    assert "Fix &lt;it&gt;." in page and parsed.having("svg", "lcx-chart") == []


def test_progress_waits_for_its_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    for rich in (True, False):
        monkeypatch.setattr(render, "_rich_available", lambda rich=rich: rich)
        buf = io.StringIO()
        with render.progress(enabled=True, file=buf, delay=60) as tick:
            for done in range(1, 4):
                tick(done, 3)
        assert buf.getvalue() == ""
    buf = io.StringIO()
    with render.progress(enabled=True, file=buf, unit="checkpoints") as tick:
        tick(1, 2)
        tick(2, 2)
    assert "replaying 2/2 checkpoints" in buf.getvalue()


def test_control_characters_in_a_tool_name_never_reach_the_page() -> None:
    """A tool named with NUL and other control characters put raw NUL bytes in the page."""
    messages = _session(turns=30)
    name = "read\x00file\x1b[31m\x7f\x85"
    for m in messages:
        if isinstance(m, AIMessage) and m.tool_calls:
            m.tool_calls[0]["name"] = name
        if isinstance(m, ToolMessage):
            m.name = name
    report = replay_session(messages, max_tokens=2000)
    for page in (replay_html(report), replay_fragment(report)):
        bad = re.findall("[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f\ud800-\udfff]", page)
        assert bad == []
        page.encode("utf-8")  # writable as the UTF-8 file the CLI writes
    assert "read\ufffdfile" in replay_html(report)
