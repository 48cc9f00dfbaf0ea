"""The examples of `langctx.context_mode.reducers.stack_trace`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.stack_trace import exception_summary, reduce_stack_trace


def test_exception_summary() -> None:
    assert (
        exception_summary("Traceback (most recent call last):\n  ...\n  ...\nOSError: full")
        == "OSError: full"
    )


def test_reduce_stack_trace() -> None:
    trace = "Traceback (most recent call last):\n" + '  File "a.py", line 1\n' * 300
    r = reduce_stack_trace(trace + "OSError: x", meta=OutputMeta(), budget_tokens=500)
    assert r.text.splitlines()[1] == "Exception: OSError: x"
