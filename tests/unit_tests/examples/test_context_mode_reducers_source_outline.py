"""The examples of `langctx.source_outline`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.source_outline import language_for_path, outline_source


def test_language_for_path() -> None:
    assert language_for_path("src/app/main.tsx") == "typescript"


def test_outline_source() -> None:
    ts = ["import { a } from './a.js';", "export class X {", "  run(): void {", "  }", "}"]
    outline = outline_source(ts, language="typescript")
    assert (outline.imports, [(d.line, d.depth, d.text) for d in outline.declarations]) == (
        ["./a.js"],
        [(2, 0, "export class X"), (3, 1, "run(): void")],
    )
