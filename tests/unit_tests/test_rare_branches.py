"""Branches of the outline, log, shell, error-line, HTML and detection code that the other tests do
not reach (pinned before these functions were split into smaller ones)."""

from __future__ import annotations

from langctx.context_mode.detect import detect_kind
from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.html import extract_page
from langctx.context_mode.reducers.log import MAX_FACT_LINES, reduce_log
from langctx.facts.failures import error_lines
from langctx.facts.shell_parse import parse_command
from langctx.source_outline import outline_source


def _outline(lines: list[str], language: str) -> tuple[list[str], list[tuple[int, int, str]]]:
    o = outline_source(lines, language=language)
    return o.imports, [(d.line, d.depth, d.text) for d in o.declarations]


def test_ruby_outline() -> None:
    lines = [
        "require 'json'",
        'require_relative "lib/x"',
        "",
        "module Shop",
        "  class Cart < Base",
        "    def add(item)",
        "    end",
        "  end",
        "end",
    ]
    assert _outline(lines, "ruby") == (
        ["json", "lib/x"],
        [(4, 0, "module Shop"), (5, 1, "class Cart < Base"), (6, 2, "def add(item)")],
    )


def test_php_outline() -> None:
    lines = [
        "<?php",
        "abstract class Base {",
        "    public static function make(): self {",
        "    }",
        "}",
        "function helper($x) {",
        "}",
    ]
    assert _outline(lines, "php") == (
        [],
        [
            (2, 0, "abstract class Base"),
            (3, 1, "public static function make(): self"),
            (6, 0, "function helper($x)"),
        ],
    )


def test_log_says_how_many_middle_fact_lines_were_not_analysed() -> None:
    text = "\n".join(f"error {i}" for i in range(MAX_FACT_LINES + 10))
    r = reduce_log(text, meta=OutputMeta(original_tokens=len(text) // 4), budget_tokens=300)
    assert "; 10 middle error/warning lines not analysed" in r.removed


def test_popd_forgets_the_directory() -> None:
    assert parse_command("pushd src && cat a.py").read == ("src/a.py",)
    cmd = parse_command("pushd src && popd && cat a.py")
    assert cmd.read == ("a.py",)
    assert cmd.programs == ("pushd", "popd", "cat")


def test_error_lines_of_a_long_output_skip_its_middle() -> None:
    text = "\n".join(["error: first", *["ok"] * 200, "error: middle", *["ok"] * 400, "error: last"])
    assert error_lines(text) == ("error: first", "error: last")


def test_error_lines_of_a_traceback_cut_before_its_exception() -> None:
    text = 'building\nTraceback (most recent call last):\n  File "a.py", line 1, in <module>\n    main()'
    assert error_lines(text) == ("Traceback (most recent call last):",)


def test_html_end_tags_inside_skipped_elements_and_long_selects() -> None:
    options = "".join(f"<option>o{i}</option>" for i in range(10))
    page = f'<svg><a href="/x">icon</a></svg><p>Pick</p><select name="n">{options}</select>'
    assert extract_page(page) == (
        ["Pick", "[select name=n options: o0 | o1 | o2 | o3 | o4 | o5 | o6 | o7 | +2 more]"],
        1,
    )


def test_detect_kind_from_the_extension() -> None:
    assert detect_kind('[{"a": 1}]', tool_name="tool", args={"path": "d.json"}) == "json"
    assert detect_kind("name\nbob", tool_name="tool", args={"path": "t.csv"}) == "table"
    assert detect_kind("name\nbob") == "text"
