"""The examples of `langctx.stores.archive_plan`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import ToolMessage

from langctx.stores.archive_plan import lean_message_dict


def test_lean_message_dict() -> None:
    assert lean_message_dict(ToolMessage("ok", tool_call_id="c1", id="t1")) == {
        "type": "tool",
        "data": {"content": "ok", "id": "t1", "tool_call_id": "c1"},
    }
