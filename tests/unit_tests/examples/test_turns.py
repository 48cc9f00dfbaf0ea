"""The examples of `langctx.turns`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langctx.turns import group_units, pair_errors


def test_pair_errors() -> None:
    call = AIMessage("", tool_calls=[{"id": "c1", "name": "read", "args": {}}])
    assert pair_errors([ToolMessage("x", tool_call_id="c0"), call]) == (1, 1)


def test_group_units() -> None:
    think = [{"type": "thinking", "thinking": "plan", "signature": "sig"}]
    call = {"id": "c1", "name": "read", "args": {}}
    msgs = [
        HumanMessage("fix it", id="h"),
        AIMessage(think, id="a", tool_calls=[call]),
        ToolMessage("x", tool_call_id="c1", id="t1"),
        AIMessage("done", id="b"),
    ]
    # "done" has no thinking: no unit of its own
    assert [u.start for u in group_units(msgs).units] == [0, 1]
