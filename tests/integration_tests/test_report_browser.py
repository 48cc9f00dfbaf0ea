"""The HTML reports in a real browser: headless Chromium loads each page, runs its script, dumps
the DOM and takes a screenshot.

Chromium is Debian's ``chromium`` package; without it these tests skip, unless
``LANGCTX_REQUIRE_BROWSER=1`` (CI) makes its absence a failure. Chromium gets no network (every
host name resolves to nothing) on top of the page's own Content-Security-Policy. Set
``LANGCTX_UPDATE_SCREENSHOTS=1`` to copy the replay screenshot to bench/results/ for the docs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from langctx.cli import main
from tests._report_pages import BUDGET, PI, THREAD, Page, write_thread_db

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "bench" / "results" / "replay_report.png"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_PROBE = """
window.addEventListener("load", function () {
  var svg = document.querySelector("svg.lcx-chart");
  var r = svg.getBoundingClientRect();
  svg.dispatchEvent(new MouseEvent("mousemove", {
    clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true}));
  var tip = document.querySelector(".lcx-tip");
  document.body.setAttribute("data-tip", tip.hidden ? "" : tip.textContent);
  document.querySelector('.lcx-scale button[data-scale="linear"]').click();
  var shown = Array.from(document.querySelectorAll("svg.lcx-chart")).filter(function (x) {
    return !x.hidden; }).map(function (x) { return x.getAttribute("data-scale"); });
  document.body.setAttribute("data-scales", shown.join(","));
});
"""
"""Hovers the chart's middle and clicks "linear scale", then writes what it saw on <body>."""


@pytest.fixture(scope="module")
def browser() -> str:
    """The Chromium binary (skips, or fails under LANGCTX_REQUIRE_BROWSER=1, without one)."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        why = "headless Chromium is not installed (apt-get install chromium)"
        if os.environ.get("LANGCTX_REQUIRE_BROWSER") == "1":
            pytest.fail(f"LANGCTX_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    return found


def _chromium(browser: str, tmp_path: Path, page: Path, *args: str) -> str:
    command = [
        browser,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--no-first-run",
        "--disable-extensions",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        *args,
        page.resolve().as_uri(),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _render(browser: str, tmp_path: Path, page: Path, name: str) -> tuple[Page, Path]:
    """The page's DOM after its script ran, and a screenshot of its top 2000 pixels."""
    dom = _chromium(browser, tmp_path, page, "--dump-dom")
    shot = tmp_path / f"{name}.png"
    _chromium(browser, tmp_path, page, f"--screenshot={shot}", "--window-size=1280,2000")
    assert shot.read_bytes()[:8] == PNG_MAGIC and shot.stat().st_size > 50_000
    parsed = Page(dom)
    (root,) = [a for t, a in parsed.elements if t == "div" and a.get("class") == "lcx"]
    assert root.get("data-ready") == "1"  # the inline script ran to its end
    return parsed, shot


def test_replay_page_in_chromium(
    browser: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    page, data = tmp_path / "replay.html", tmp_path / "replay.json"
    args = ["replay", str(PI), "--budget", "8000", "--html", str(page), "--json", str(data)]
    assert main(args) == 0
    capsys.readouterr()
    report = json.loads(data.read_text(encoding="utf-8"))
    dom, shot = _render(browser, tmp_path, page, "replay")
    assert len(dom.having("tr", "lcx-compaction")) == len(report["compactions"]) > 10
    charts = dom.having("svg", "lcx-chart")
    assert [c.get("data-scale") for c in charts] == ["log", "linear"]
    assert "hidden" not in charts[0] and "hidden" in charts[1]
    for line in dom.having("polyline", "lcx-line"):
        assert len((line["points"] or "").split()) == len(report["calls"])
    (switch,) = dom.having("div", "lcx-scale")
    assert "hidden" not in switch  # shown by the script
    assert len(dom.having("tr", "lcx-probe")) == len(report["probes"])
    assert dom.tags["script"] == 1 and dom.tags["img"] == 0
    if os.environ.get("LANGCTX_UPDATE_SCREENSHOTS") == "1":
        shutil.copyfile(shot, SCREENSHOT)
    # the page's script at work: a hover shows the call's figures; the switch shows linear
    probe = tmp_path / "replay-probe.html"
    probe.write_text(
        page.read_text(encoding="utf-8").replace("</body>", f"<script>{_PROBE}</script></body>"),
        encoding="utf-8",
    )
    dom = Page(_chromium(browser, tmp_path, probe, "--dump-dom"))
    body = next(attrs for tag, attrs in dom.elements if tag == "body")
    tip, scales = str(body.get("data-tip")), str(body.get("data-scales"))
    assert tip.startswith("call ") and "with langctx: " in tip and "full history" in tip, tip
    assert scales == "linear", scales


def test_inspect_page_in_chromium(
    browser: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = write_thread_db(tmp_path / "checkpoints.sqlite")
    page = tmp_path / "inspect.html"
    args = ["inspect", "--db", str(db), "--thread", THREAD, "--budget", str(BUDGET), "--json"]
    assert main([*args, "--html", str(page)]) == 0
    report = json.loads(capsys.readouterr().out)
    dom, _ = _render(browser, tmp_path, page, "inspect")
    assert len(dom.having("tr", "lcx-compaction")) == len(report["timeline"]) >= 5
    assert len(dom.having("svg", "lcx-chart")) == 1  # linear: the history stays under 8x budget
    (context, *_) = [x for x in dom.having("polyline", "lcx-line") if x["data-series"] == "context"]
    assert int(context["data-count"] or 0) == report["checkpoint"]["checkpoints_in_thread"]
    # the hostile tool output stayed text: nothing ran, nothing loaded, the title is ours
    assert dom.tags["script"] == 1 and dom.tags["img"] == 0 and dom.tags["a"] == 0
    assert dom.title == f"langctx inspect: {THREAD}"
    assert any('<script>document.title="pwned"</script>' in t for t in dom.text)
