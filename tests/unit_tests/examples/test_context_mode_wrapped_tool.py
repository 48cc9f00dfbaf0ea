"""The examples of `langctx.context_mode.wrapped_tool`'s helpers, moved here from their docstrings."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from langctx.channel import run_update
from langctx.context_mode.wrapped_tool import reference_namespace, thread_id_from_config
from langctx.errors import ConfigError
from langctx.markers import NO_THREAD


def test_thread_id_from_config() -> None:
    assert thread_id_from_config({"configurable": {"thread_id": 7}}) == "7"


def test_reference_namespace() -> None:
    assert reference_namespace({"configurable": {"thread_id": "t1"}}, None) == "t1"
    run = run_update()
    state = {"messages": [HumanMessage("hi", id="m1")], "langctx": run}
    assert reference_namespace({}, state) == f"{NO_THREAD}:run:{run['run']}"
    # a message id names nothing: outside a graph, the no-thread namespace
    assert reference_namespace({}, {"messages": [HumanMessage("hi", id="m1")]}) == NO_THREAD
    assert reference_namespace({}, {"langctx": {"v": 1, "run": "m1"}}) == NO_THREAD


@pytest.mark.parametrize("tid", [NO_THREAD, f"{NO_THREAD}:m1", f"{NO_THREAD}:run:{'0' * 32}"])
def test_a_reserved_thread_id_is_refused(tid: str) -> None:
    with pytest.raises(ConfigError, match="reserved by langctx"):
        reference_namespace({"configurable": {"thread_id": tid}}, None)
