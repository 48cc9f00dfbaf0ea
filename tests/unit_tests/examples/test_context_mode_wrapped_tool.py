"""The examples of `langctx.context_mode.wrapped_tool`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from langctx.context_mode.wrapped_tool import reference_namespace, thread_id_from_config


def test_thread_id_from_config() -> None:
    assert thread_id_from_config({"configurable": {"thread_id": 7}}) == "7"


def test_reference_namespace() -> None:
    assert reference_namespace({"configurable": {"thread_id": "t1"}}, None) == "t1"
    assert (
        reference_namespace({}, {"messages": [HumanMessage("hi", id="m1")]})
        == "__langctx_no_thread__:m1"
    )
