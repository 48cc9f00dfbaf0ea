"""The page's inline style sheet and script, and the Content-Security-Policy that forbids the rest.

The script draws nothing: it adds the chart's hover read-out and the log/linear switch, and marks
the report's root ``data-ready`` when done (the browser test checks it).
"""

__all__ = ["CSP", "SCRIPT", "STYLE"]

CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
    "img-src data:; base-uri 'none'; form-action 'none'"
)


STYLE = """
.lcx{--ink:#0f172a;--muted:#64748b;--line:#e2e8f0;--soft:#f1f5f9;--accent:#2563eb;
font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;
color:var(--ink);background:#f8fafc;max-width:1280px;margin:0 auto;padding:28px 32px 48px;
box-sizing:border-box}
.lcx *{box-sizing:border-box}
.lcx h1{font-size:24px;margin:0 0 4px;font-weight:650;letter-spacing:-.01em}
.lcx h1 span{color:var(--accent);font-weight:600;overflow-wrap:anywhere}
.lcx h2{font-size:17px;margin:0 0 10px;font-weight:650}
.lcx h3{font-size:14px;margin:18px 0 8px;font-weight:650}
.lcx .lcx-sub{margin:0;color:var(--muted);overflow-wrap:anywhere}
.lcx .lcx-header{margin-bottom:20px}
.lcx .lcx-cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(250px,1fr));gap:12px;
margin-bottom:20px}
.lcx .lcx-card{background:#fff;border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.lcx .lcx-card-label{font-size:12px;text-transform:uppercase;letter-spacing:.04em;color:var(--muted)}
.lcx .lcx-card-value{font-size:22px;font-weight:650;margin:2px 0}
.lcx .lcx-card-detail{font-size:12.5px;color:var(--muted)}
.lcx .lcx-accent .lcx-card-value{color:var(--accent)}
.lcx .lcx-warn-card{border-color:#fcd34d;background:#fffbeb}
.lcx .lcx-bad-card{border-color:#fca5a5;background:#fef2f2}
.lcx .lcx-section{background:#fff;border:1px solid var(--line);border-radius:10px;
padding:16px 18px;margin-bottom:18px}
.lcx .lcx-note{color:var(--muted);margin:0 0 12px;font-size:13px}
.lcx .lcx-muted{color:var(--muted)}
.lcx .lcx-chart-box{position:relative}
.lcx svg.lcx-chart{width:100%;height:auto;display:block;font-size:12.5px;fill:#334155}
.lcx svg.lcx-chart[hidden]{display:none}
.lcx svg .lcx-axis-label{font-size:12.5px;fill:var(--muted)}
.lcx svg .lcx-ytick,.lcx svg .lcx-xtick{font-size:11.5px;fill:var(--muted)}
.lcx svg .lcx-rule text{font-size:12px;font-weight:600;paint-order:stroke;stroke:#fff;
stroke-width:4px;stroke-linejoin:round}
.lcx .lcx-scale{display:flex;justify-content:flex-end;gap:4px;margin:-6px 0 2px}
.lcx .lcx-scale[hidden]{display:none}
.lcx .lcx-scale button{font:inherit;font-size:12px;border:1px solid var(--line);background:#fff;
border-radius:6px;padding:2px 9px;cursor:pointer;color:var(--muted)}
.lcx .lcx-scale button[aria-pressed=true]{background:var(--ink);color:#fff;border-color:var(--ink)}
.lcx .lcx-tip{position:absolute;pointer-events:none;background:#0f172a;color:#fff;font-size:12px;
padding:6px 9px;border-radius:6px;white-space:nowrap;box-shadow:0 4px 12px rgba(0,0,0,.18)}
.lcx .lcx-tip b{font-weight:650}
.lcx .lcx-tip i{display:inline-block;width:9px;height:9px;border-radius:2px;margin-right:5px}
.lcx .lcx-scroll{overflow-x:auto}
.lcx table{border-collapse:collapse;width:100%;font-size:13px}
.lcx th,.lcx td{text-align:left;vertical-align:top;padding:7px 9px;border-bottom:1px solid var(--line)}
.lcx thead th{font-size:12px;font-weight:600;color:var(--muted);background:var(--soft);
white-space:nowrap;position:sticky;top:0}
.lcx tbody tr:hover{background:#f8fafc}
.lcx .lcx-num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.lcx .lcx-time{white-space:nowrap;font-variant-numeric:tabular-nums}
.lcx .lcx-wide{min-width:220px;max-width:460px;overflow-wrap:anywhere}
.lcx td.lcx-more-cell{width:50%;min-width:360px}
.lcx .lcx-more{display:flex;flex-wrap:wrap;gap:2px 18px;align-items:flex-start}
.lcx .lcx-more-item{flex:0 1 auto;max-width:100%;overflow-wrap:anywhere}
.lcx .lcx-more-item:has(details[open]),.lcx .lcx-more-item:has(.lcx-dropped){flex-basis:100%}
.lcx .lcx-dropped ul{margin:2px 0 0;padding-left:18px;list-style:none}
.lcx .lcx-dropped li{margin:2px 0;overflow-wrap:anywhere;font-size:12.5px;text-indent:-18px;
padding-left:18px}
.lcx .lcx-dropped-title{font-size:12.5px;color:var(--muted)}
.lcx .lcx-who{font-weight:600}
.lcx .lcx-fact{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.lcx table.lcx-cost{width:auto;min-width:640px}
.lcx table.lcx-cost tbody th{font-weight:500;color:var(--ink)}
.lcx .lcx-kind{display:inline-block;padding:1px 8px;border-radius:999px;font-size:12px;
font-weight:600;color:var(--c);background:color-mix(in srgb,var(--c) 12%,#fff);
border:1px solid color-mix(in srgb,var(--c) 35%,#fff)}
.lcx .lcx-tokens{white-space:nowrap;font-variant-numeric:tabular-nums}
.lcx .lcx-kept{display:flex;align-items:center;gap:6px;font-size:12px;margin-top:3px}
.lcx .lcx-bar{display:inline-block;height:5px;background:var(--soft);border-radius:3px;width:80px}
.lcx .lcx-bar span{display:block;height:100%;background:var(--accent);border-radius:3px}
.lcx .lcx-kind-detail{font-size:12px;color:var(--muted);margin-top:3px;white-space:nowrap}
.lcx .lcx-share{display:inline-block;vertical-align:middle;width:120px;height:8px;
background:var(--soft);border-radius:4px;margin-right:8px}
.lcx .lcx-share span{display:block;height:100%;border-radius:4px}
.lcx .lcx-share.lcx-ok span{background:#16a34a}
.lcx .lcx-share.lcx-warn span{background:#f59e0b}
.lcx .lcx-share.lcx-bad span{background:#dc2626}
.lcx .lcx-chips{display:inline-flex;gap:2px;white-space:nowrap}
.lcx .lcx-chip{display:inline-block;width:18px;height:18px;line-height:18px;text-align:center;
border-radius:4px;font-size:11px;font-weight:700}
.lcx .lcx-chip.lcx-ok{background:#dcfce7;color:#166534}
.lcx .lcx-chip.lcx-bad{background:#fee2e2;color:#991b1b}
.lcx .lcx-chip.lcx-na{background:var(--soft);color:#94a3b8}
.lcx details summary{cursor:pointer;color:#1e40af}
.lcx details[open] summary{margin-bottom:6px}
.lcx details pre{white-space:pre-wrap;overflow-wrap:anywhere;max-height:360px;overflow:auto;
background:var(--soft);border-radius:6px;padding:8px 10px;margin:0;font-size:12px;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.lcx details ul{margin:0;padding-left:18px;max-height:320px;overflow:auto}
.lcx details li{margin:2px 0;overflow-wrap:anywhere;font-size:12.5px}
.lcx .lcx-facts dl{margin:0}
.lcx .lcx-facts dt{font-weight:600;font-size:12px;color:var(--muted);margin-top:4px}
.lcx .lcx-facts dd{margin:0}
.lcx .lcx-tag{display:inline-block;font-size:10.5px;padding:0 5px;border-radius:4px;
background:var(--soft);color:var(--muted);text-transform:uppercase;letter-spacing:.03em}
.lcx .lcx-tag-placeholder{background:#ffedd5;color:#9a3412}
.lcx .lcx-tag-truncated{background:#e2e8f0;color:#334155}
.lcx .lcx-state{font-size:12px;padding:1px 7px;border-radius:999px;background:var(--soft)}
.lcx .lcx-state.lcx-active{background:#dcfce7;color:#166534}
.lcx .lcx-good{color:#15803d;font-weight:600}
.lcx .lcx-badtext{color:#b91c1c;font-weight:600}
.lcx .lcx-dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0}
.lcx .lcx-dl dt{color:var(--muted)}
.lcx .lcx-dl dd{margin:0;overflow-wrap:anywhere}
.lcx .lcx-quote{font-style:italic}
.lcx code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;
overflow-wrap:anywhere}
.lcx .lcx-layer-summary{margin:4px 0}
.lcx ul{margin:4px 0;padding-left:20px}
"""


SCRIPT = r"""
(function () {
  var root = document.currentScript && document.currentScript.parentElement;
  if (!root) { return; }
  var fmt = function (v) { return Number(v).toLocaleString("en-US"); };
  root.querySelectorAll(".lcx-chart-box").forEach(function (box) {
    var data = JSON.parse(box.getAttribute("data-chart"));
    var tip = box.querySelector(".lcx-tip");
    var switcher = box.querySelector(".lcx-scale");
    if (switcher) {
      switcher.hidden = false;
      switcher.querySelectorAll("button").forEach(function (button) {
        button.addEventListener("click", function () {
          var scale = button.getAttribute("data-scale");
          box.querySelectorAll("svg.lcx-chart").forEach(function (svg) {
            svg.hidden = svg.getAttribute("data-scale") !== scale;
          });
          switcher.querySelectorAll("button").forEach(function (b) {
            b.setAttribute("aria-pressed", String(b === button));
          });
        });
      });
    }
    box.querySelectorAll("svg.lcx-chart").forEach(function (svg) {
      var cross = svg.querySelector(".lcx-cross");
      var num = function (name) { return Number(svg.getAttribute("data-" + name)); };
      var left = num("left"), right = num("right"), x0 = num("x0"), span = num("span");
      svg.addEventListener("mousemove", function (event) {
        var point = svg.createSVGPoint();
        point.x = event.clientX; point.y = event.clientY;
        var at = point.matrixTransform(svg.getScreenCTM().inverse());
        var x = Math.round((at.x - left) / (right - left) * span + x0 - 0.5);
        var i = data.x.indexOf(x);
        if (at.x < left || at.x > right || i < 0) { tip.hidden = true; cross.setAttribute("visibility", "hidden"); return; }
        var sx = left + (x - x0 + 0.5) / span * (right - left);
        cross.setAttribute("x1", sx); cross.setAttribute("x2", sx);
        cross.setAttribute("visibility", "visible");
        tip.textContent = "";
        var line = function (text, color, bold) {
          var row = document.createElement("div");
          if (color) { var dot = document.createElement("i"); dot.style.background = color; row.appendChild(dot); }
          var t = document.createElement(bold ? "b" : "span"); t.textContent = text; row.appendChild(t);
          tip.appendChild(row);
        };
        line(data.labels[x] || ("#" + x), null, true);
        data.series.slice().reverse().forEach(function (s) {
          line(s.label + ": " + fmt(s.values[i]), s.color, false);
        });
        if (data.marks[x]) { line(data.marks[x], null, false); }
        tip.hidden = false;
        var box_ = box.getBoundingClientRect();
        var px = event.clientX - box_.left, py = event.clientY - box_.top;
        var w = tip.offsetWidth;
        tip.style.left = (px + 14 + w > box_.width ? px - w - 14 : px + 14) + "px";
        tip.style.top = Math.max(0, py - 20) + "px";
      });
      svg.addEventListener("mouseleave", function () {
        tip.hidden = true; cross.setAttribute("visibility", "hidden");
      });
    });
  });
  root.setAttribute("data-ready", "1");
})();
"""
