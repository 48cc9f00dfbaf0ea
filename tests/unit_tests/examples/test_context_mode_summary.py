"""The examples of `langctx.context_mode.summary`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.reduce import build_meta
from langctx.context_mode.summary import summary_reduction, summary_request, tool_kind


def test_tool_kind() -> None:
    assert (
        tool_kind("read_file", {"path": "a.py"}),
        tool_kind("run_sql", {"q": "select 1"}, "table"),
    ) == ("read_file", "query_db")
    assert (tool_kind("browser_navigate", {"url": "https://x"}, "html"), tool_kind(None, None)) == (
        "browse_page",
        "default",
    )


def test_summary_request() -> None:
    assert (
        summary_request("x" * 10, tool_name="read_file", args={"path": "a.py"}).tool_kind
        == "read_file"
    )


def test_summary_reduction() -> None:
    out = "x\n" * 3000 + 'File "a.py", line 3\nKeyError: 1\nexit code 1'
    r = summary_reduction(
        "A KeyError.", out, kind="log", meta=build_meta(out, tool_name="bash"), budget_tokens=300
    )
    assert ("A KeyError." in r.text, "a.py:3" in r.text, r.reduced_tokens <= 300) == (
        True,
        True,
        True,
    )
