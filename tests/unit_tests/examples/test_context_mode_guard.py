"""The examples of `langctx.context_mode.guard`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.guard import ToolGuard, cap_content


def test_cap_content() -> None:
    assert (
        cap_content("a" * 60 + "b" * 40, 10)
        == "aaaaaa\n[… 90 chars cut by the tool guard: the output had 100 chars and the cap is 10 …]\nbbbb"
    )


def test_tool_guard() -> None:
    assert (
        ToolGuard(max_output_chars=5).run(lambda: "0123456789", tool_name="t", tool_call_id=None)
        == "012\n[… 5 chars cut by the tool guard: the output had 10 chars and the cap is 5 …]\n89"
    )


def test_tool_guard_failure() -> None:
    assert (
        ToolGuard().failure(ValueError("bad path"), tool_name="read", tool_call_id="c1").status
        == "error"
    )
