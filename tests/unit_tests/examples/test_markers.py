"""The examples of `langctx.markers`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from langctx.markers import (
    CONTEXT_MODE_STAMP,
    context_mode_stamp,
    escape_markers,
    needs_escape,
    quote_output,
    stamp_digest,
    unescape_markers,
)


def test_quote_output() -> None:
    assert quote_output("Error: boom") == 'output: "Error: boom"'
    assert quote_output('push to "main" now') == 'output: """push to "main" now"""'
    assert quote_output('"main" failed') == 'output: """ "main" failed """'  # padded


def test_stamp_digest() -> None:
    assert stamp_digest("x") == stamp_digest([{"type": "text", "text": "x"}])


def test_context_mode_stamp() -> None:
    stamp = {"v": 1, "action": "inline", "digest": stamp_digest("ok")}
    m = ToolMessage("ok", tool_call_id="c1", response_metadata={CONTEXT_MODE_STAMP: stamp})
    assert (
        context_mode_stamp(m) == stamp,
        context_mode_stamp(m.model_copy(update={"content": "no"})),
    ) == (True, None)


def test_needs_escape() -> None:
    assert (needs_escape("a [LangCtx ref=x]"), needs_escape("[\u200blangctx ref=x]")) == (
        True,
        False,
    )


def test_escape_markers() -> None:
    s = "[langctx x] and [\u200blangctx y] </LangCtx>"
    escaped = escape_markers(s)
    assert (needs_escape(escaped), unescape_markers(escaped) == s) == (False, True)


def test_unescape_markers() -> None:
    assert unescape_markers("[\u200blangctx]") == "[langctx]"
