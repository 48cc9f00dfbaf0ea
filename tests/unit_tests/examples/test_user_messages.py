"""The examples of `langctx.user_messages`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from langctx.user_messages import stored_user_messages, user_text


def test_user_text() -> None:
    assert (
        user_text(HumanMessage("<system-reminder>x</system-reminder>Also keep 3.9 support"))
        == "Also keep 3.9 support"
    )
    assert user_text(HumanMessage("/compact")) == ""


def test_stored_user_messages() -> None:
    assert stored_user_messages([{"id": "u1", "text": "Fix it.", "short": 1}, {"id": 2}, "hi"]) == [
        {"id": "u1", "text": "Fix it.", "short": True}
    ]
