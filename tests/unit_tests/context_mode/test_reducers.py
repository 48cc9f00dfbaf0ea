"""Each reducer on realistic outputs: what must survive survives, the rest is cut and said so."""

from __future__ import annotations

import re
from typing import Any

import pytest

from langctx.context_mode import Reduction, reduce_output
from langctx.markers import CONTEXT_MODE_MARK
from tests.unit_tests.context_mode import samples as s

BUDGET = 1500


def reduce(text: str, tool: str | None = None, args: dict[str, Any] | None = None) -> Reduction:
    reduced = reduce_output(text, tool_name=tool, args=args, max_inline_tokens=BUDGET)
    assert reduced is not None
    assert reduced.reduced_tokens <= BUDGET < reduced.original_tokens
    lines = reduced.text.splitlines()
    assert lines[0].startswith(CONTEXT_MODE_MARK) and lines[-1].startswith(
        CONTEXT_MODE_MARK + ": removed "
    )
    assert "\n" not in reduced.removed
    return reduced


# --- logs and command output -------------------------------------------------------------------
def test_log_keeps_errors_tracebacks_warnings_exit_code_head_and_tail() -> None:
    r = reduce(s.PYTEST_FAILURE, "bash", {"command": "pytest"})
    assert r.kind == "log"
    for kept in (
        "collected 412 items",  # head
        "FAILED tests/test_parser.py::test_parse_header",
        "Traceback (most recent call last):",  # the whole traceback block
        'File "/repo/tests/test_parser.py", line 42, in test_parse_header',
        "    header = parse_header(raw)",
        'File "/repo/src/parser.py", line 118, in parse_header',
        "    size = int(fields[3])",
        "ValueError: invalid literal for int() with base 10: 'abc'",
        "WARNING: DeprecationWarning",
        "1 failed, 411 passed in 12.34s",  # tail
        "Command exited with code 1",
    ):
        assert kept in r.text, kept
    header = r.text.splitlines()[0]
    assert "bash output" in header and "exit code 1" in header and "took 12.34s" in header
    assert "32,403 chars" in header
    assert r.reduced_tokens < r.original_tokens / 5


def test_log_collapses_near_identical_lines_with_counts() -> None:
    r = reduce(s.PYTEST_FAILURE, "bash", {"command": "pytest"})
    assert re.search(r"PASSED .*\(×\d+\)", r.text)
    assert r.text.count("PASSED") <= 4
    assert "repeated lines collapsed" in r.removed


def test_log_collapse_keeps_every_location() -> None:
    r = reduce(s.TSC_ERRORS, "bash", {"command": "npx tsc"})
    for i in range(150):
        assert f"mode.ts:{100 + 7 * i}" in r.text or f"mode.ts({100 + 7 * i}," in r.text
    assert "error TS2339" in r.text and "Found 150 errors" in r.text


def test_log_says_how_many_facts_did_not_fit() -> None:
    many = "".join(f"lib/m{i}.py:{i}: error: bad thing number {i}\n" for i in range(2000))
    r = reduce(many, "bash", {"command": "mypy ."})
    assert re.search(r"; [\d,]+ facts only in the full output$", r.removed)
    assert re.search(r"\+[\d,]+ more in the full output", r.text)


def _distinct_lines(n: int) -> list[str]:
    """Lines no two of which collapse (the reducer ignores digits when it groups repeats)."""
    return [f"compiled module {chr(97 + i % 26)}{chr(97 + i // 26 % 26)}" for i in range(n)]


def test_log_shows_where_lines_were_cut() -> None:
    r = reduce("\n".join([*_distinct_lines(600), "ERROR: boom"]), "bash", {"command": "make"})
    assert re.search(r"\[… lines \d+–\d+ not shown …\]", r.text)
    assert "ERROR: boom" in r.text


def test_log_does_not_call_collapsed_repeats_cut() -> None:
    # Every line is a repeat of a kept one: nothing is "not shown", the (×N) counts say it all.
    r = reduce(s.PYTEST_FAILURE, "bash", {"command": "pytest"})
    assert "(×360)" in r.text
    assert "not shown" not in r.text
    # A gap of repeats and distinct lines says how many of it are cut.
    lines = [*_distinct_lines(400), *(f"INFO heartbeat {i}" for i in range(3000))]
    lines[200:200] = ["INFO heartbeat 0"] * 3  # repeats of a kept line inside the first gap
    r = reduce("\n".join([*lines, "ERROR: boom"]), "bash", {"command": "run"})
    gaps = re.findall(
        r"\[… (?:(\d+) of )?lines (\d+)–(\d+) not shown …\]",
        r.text,
    )
    assert any(hidden for hidden, _, _ in gaps), r.text
    for hidden, first, last in gaps:
        assert not hidden or 0 < int(hidden) < int(last) - int(first) + 1


def test_log_handles_terminal_control_codes() -> None:
    out = "".join(f"\x1b[32mprogress\x1b[0m {i}%\r{i + 1}%\n" for i in range(2000))
    out += "\x1b[31mERROR\x1b[0m: build failed\nexit code 2\n"
    r = reduce(out, "bash", {"command": "make"})
    assert "\x1b" not in r.text and "\r" not in r.text
    assert "ERROR: build failed" in r.text and "exit code 2" in r.text


def test_log_keeps_location_headers_next_to_their_messages() -> None:
    diag = "".join(
        f"src/core/session.ts:{200 + i}:{i % 9 + 1} parse ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━\n\n"
        f"  × expected a semicolon, found token {i}\n\n"
        f"    {199 + i} │ some code line\n  > {200 + i} │ broken code\n\n"
        for i in range(60)
    )
    r = reduce(diag + "Found 60 errors.\nCommand exited with code 1\n", "bash", {"command": "x"})
    for i in range(60):
        assert f"session.ts:{200 + i}" in r.text


# --- stack traces -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "exception", "location"),
    [
        ("PYTHON_TRACE", "KeyError: 'user_id'", "h0.py"),
        ("JS_TRACE", "TypeError: Cannot read properties of undefined", "List0.tsx:20:5"),
        ("JAVA_TRACE", "java.lang.IllegalStateException: pool closed", "Pool0.java:30"),
        ("GO_PANIC", "panic: runtime error: index out of range", "step0.go:12"),
        ("RUST_PANIC", "thread 'main' panicked at src/parser/lexer.rs:88:17", "step0.rs:40"),
    ],
)
def test_stack_trace_keeps_exception_and_frames(name: str, exception: str, location: str) -> None:
    r = reduce(getattr(s, name))
    assert r.kind == "stack_trace"
    assert exception in r.text
    assert location in r.text


def test_python_trace_leads_with_the_final_exception() -> None:
    r = reduce(s.PYTHON_TRACE)
    assert r.text.splitlines()[1] == "Exception: KeyError: 'user_id'"


def test_java_trace_keeps_the_cause() -> None:
    r = reduce(s.JAVA_TRACE)
    assert "Caused by: java.io.IOException: broken pipe" in r.text
    assert "Conn0.java:50" in r.text


# --- HTML and accessibility snapshots ----------------------------------------------------------
def test_html_keeps_visible_text_and_interactive_elements() -> None:
    r = reduce(s.HTML_PAGE, "browse_page", {"url": "https://shop.example/checkout"})
    assert r.kind == "html"
    for kept in (
        "# Acme Store - Checkout",
        "[Home](/)",
        "[Cart (3)](/cart)",
        "# Checkout",
        '[input type=email name=email label="Email address" placeholder="you@example.com"]',
        '[input name=card label="Card number"]',
        "[select name=country options: France | Germany]",
        '[textarea name=notes placeholder="Delivery notes"]',
        "[button: Pay now]",
        "Product 0: a very nice item",
        "[View product 0](/p/0)",
    ):
        assert kept in r.text, kept
    for dropped in ("font-family", "secret-script-text", "trackEverything", "<div"):
        assert dropped not in r.text
    assert "scripts and styles" in r.removed


@pytest.mark.parametrize(
    "select",
    [
        "<select name=s><option>A<option>B</select>",  # end tags of options are optional
        "<select name=s><option>A</option><option>B</select>",
        "<select name=s><option>A</option><option>B</option></select>",
    ],
)
def test_html_options_without_end_tags_close_at_the_next_option_or_the_select(select: str) -> None:
    page = f"<html><body><h1>Order</h1>{select}<p>Text after the form</p></body></html>"
    r = reduce(page * 80, "browse_page", {"url": "https://shop.example/order"})
    assert "[select name=s options: A | B]" in r.text
    assert "Text after the form" in r.text


def test_accessibility_snapshot_keeps_controls_and_urls() -> None:
    r = reduce(s.A11Y_SNAPSHOT, "browser_snapshot", {})
    assert r.kind == "html"
    assert 'heading "Dashboard"' in r.text
    assert 'link "Report 0" [ref=r0]: (/reports/0)' in r.text
    assert 'button "Delete report 0"' in r.text and 'textbox "Rename report 0"' in r.text
    assert "generic [ref=" not in r.text


@pytest.mark.parametrize(
    "broken",
    [
        "<html><body>" + "<div><p>unclosed <a href='/x'>link " * 400,
        "<html><body><<<>>><!-- never closed " + "<p>text</p>" * 400,
        "<html><body>" + "<table><tr><td>cell</td>" * 500 + "</b></i></span></body>",
        "<!DOCTYPE html><html><body><script>" + "var x = '<p>';" * 800,
    ],
)
def test_malformed_html_never_raises(broken: str) -> None:
    r = reduce(broken, "browse_page", {})
    assert r.kind in ("html", "text")


# --- tables and JSON -----------------------------------------------------------------------------
def test_csv_keeps_columns_and_first_50_rows() -> None:
    r = reduce(s.CSV_TABLE, "query_db", {})
    assert r.kind == "table"
    assert "Columns (4): id, name, email, score" in r.text
    assert "49,user49,user49@example.com" in r.text
    assert "50,user50," not in r.text
    assert "1,950 more rows not shown" in r.text


@pytest.mark.parametrize(("name", "last_row", "more"), [
    ("PSQL_RESULT", "job49", "450 more rows not shown"),
    ("MARKDOWN_TABLE", "src/mod49.py", "350 more rows not shown"),
])  # fmt: skip
def test_line_tables(name: str, last_row: str, more: str) -> None:
    r = reduce(getattr(s, name))
    assert r.kind == "table"
    assert last_row in r.text and more in r.text


def test_psql_keeps_the_row_count_trailer() -> None:
    assert "(500 rows)" in reduce(s.PSQL_RESULT).text


def test_json_array_of_records_keeps_keys_and_first_items() -> None:
    r = reduce(s.JSON_RECORDS, "http_get", {})
    assert r.kind == "json"
    assert "Keys (4): id, title, labels, body" in r.text
    assert '[0] {"id": 0, "title": "Issue 0"' in r.text
    assert "more items not shown" in r.text


def test_json_object_becomes_an_outline() -> None:
    r = reduce(s.JSON_OBJECT)
    assert '"version": "2.4.1"' in r.text
    assert '"hosts": [100 items]' in r.text
    assert '"items": [400 items] keys (3): sku, qty, meta' in r.text


@pytest.mark.parametrize(
    "broken",
    [
        '{"items": [' + '{"a": 1}, ' * 3000,  # truncated JSON
        "[" + '{"a": "b"}, ' * 2000 + "oops]",
        '{"deep": ' * 5000 + "1" + "}" * 5000,  # nested past the recursion limit
    ],
)
def test_malformed_json_falls_back(broken: str) -> None:
    r = reduce(broken)
    assert r.kind in ("json", "log", "text")


def test_malformed_csv_falls_back() -> None:
    ragged = "id,name\n" + "".join(f'{i},"unterminated {i}\n' for i in range(3000))
    assert reduce(ragged, "query_db", {}).kind in ("table", "log", "text")
    with_nul = "a,b\n" + "1,\x002\n" * 3000
    assert reduce(with_nul, "query_db", {}).kind in ("table", "log", "text", "binary")


# --- source files -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "path", "language", "outline"),
    [
        ("PYTHON_SOURCE", "pkg/cache.py", "python", ["L7 class Cache:", "def method_0(self, key: str) -> int:", "def helper(x):"]),
        ("TS_SOURCE", "src/runner.ts", "typescript", ["export interface Options", "export class Runner", "async step0(input: string): Promise<void>", "export function main(): void"]),
        ("GO_SOURCE", "cmd/server.go", "go", ["type Server struct", "func (s *Server) Handle0(w int) error"]),
        ("RUST_SOURCE", "src/store.rs", "rust", ["pub struct Store", "impl Store", "pub fn get_0(&self, k: &str) -> Option<u32>"]),
        ("JAVA_SOURCE", "Service.java", "java", ["public class Service", "public List<String> fetch0(int id)"]),
        ("C_SOURCE", "src/point.c", "c", ["struct point", "static int compute_0(struct point* p, int n)"]),
        ("MARKDOWN_DOC", "docs/DESIGN.md", "markdown", ["L1 # Design", "## Section 0", "## Section 29"]),
    ],
)  # fmt: skip
def test_source_becomes_path_language_size_and_outline(
    name: str, path: str, language: str, outline: list[str]
) -> None:
    text = getattr(s, name)
    r = reduce(text, "read", {"path": path})
    assert r.kind == "source"
    assert f"path {path}" in r.text.splitlines()[0]
    assert f"{language} source · {text.count(chr(10)) + 1:,} lines · {len(text):,} chars" in r.text
    for entry in outline:
        assert entry in r.text, entry
    assert "file body" in r.removed


def test_source_lists_imports_not_the_body() -> None:
    r = reduce(s.TS_SOURCE, "read", {"path": "src/runner.ts"})
    assert "Imports (2): node:fs/promises, ./agent.js" in r.text
    assert "const v3 = input.length" not in r.text


def test_markdown_headings_inside_code_fences_are_not_outline() -> None:
    r = reduce(s.MARKDOWN_DOC, "read", {"path": "README.md"})
    assert "# not a heading" not in r.text


def test_numbered_listing_keeps_viewer_notes_and_file_line_numbers() -> None:
    r = reduce(s.SWE_AGENT_LISTING, "open", {"command": "open src/marshmallow/fields.py 1374"})
    assert "[File: /repo/src/marshmallow/fields.py (1997 lines total)]" in r.text
    assert "(423 more lines below)" in r.text
    assert "L1374 class Field0(Base):" in r.text
    assert "file lines 1374–1573" in r.text
    assert "python source" in r.text


def test_cat_n_listing_of_c() -> None:
    r = reduce(s.CAT_N_LISTING, "str_replace_editor", {"command": "view", "path": "/ws/match.c"})
    assert "L1 static bool match_0(ast_t* ast)" in r.text
    assert "L476 static bool match_475(ast_t* ast)" in r.text


def test_read_with_offset_numbers_lines_from_the_offset() -> None:
    r = reduce(s.PYTHON_SOURCE, "read", {"path": "pkg/cache.py", "offset": 100})
    assert "L106 class Cache:" in r.text


def test_exception_names_in_a_source_body_are_listed() -> None:
    r = reduce(s.PYTHON_SOURCE, "read", {"path": "pkg/cache.py"})
    assert "ValueError" in r.text


# --- anything else ------------------------------------------------------------------------------
def test_text_keeps_head_and_tail_and_says_what_was_cut() -> None:
    prose = "".join(
        f"Paragraph {i}. " + "Lorem ipsum dolor sit amet. " * 12 + "\n" for i in range(400)
    )
    r = reduce(prose)
    assert r.kind == "text"
    assert "Paragraph 0." in r.text and "Paragraph 399." in r.text
    assert "Paragraph 200." not in r.text
    assert re.search(r"\[… [\d,]+ chars not shown \(lines [\d,]+–[\d,]+\) …\]", r.text)
    assert "from the middle" in r.removed


def test_text_on_one_huge_line() -> None:
    r = reduce("word " * 200_000)
    assert r.kind == "text"
    assert "chars not shown" in r.text


def test_a_collapsed_error_shows_its_last_copy_when_the_numbers_differ() -> None:
    log = "\n".join(
        f"ERROR worker {i} failed: KeyError 'x{i}'" if i % 97 == 0 else f"INFO step {i} ok"
        for i in range(4000)
    )
    text = reduce_output(log, tool_name="bash", args={"command": "make"}).text
    assert "ERROR worker 0 failed: KeyError 'x0' (×42; last: ERROR worker 3977 failed" in text
    same = "\n".join(["ERROR: disk full"] * 300 + [f"INFO {i}" for i in range(3000)])
    assert "ERROR: disk full (×300)" in reduce_output(same, tool_name="bash").text
