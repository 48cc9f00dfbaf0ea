"""The examples of `langctx.surrogates`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from langctx.surrogates import encodable_text, replace_surrogates


def test_replace_surrogates() -> None:
    assert (
        replace_surrogates(ToolMessage("ok \udc80 done", tool_call_id="c1")).content
        == "ok \\udc80 done"
    )


def test_encodable_text() -> None:
    assert (encodable_text("ok \ud800"), encodable_text("naïve")) == ("ok \\ud800", "naïve")
