"""Inspect a thread's memory in a LangGraph checkpoint database: ``langctx inspect``'s library.

:func:`open_store` opens a SQLite file or a PostgreSQL URI read-only (nothing is created or
migrated) and lists its threads; :func:`inspect_thread` describes one thread's memory at its latest
(or a given) checkpoint, :func:`build_report` the memory of state values you already hold;
``print_report`` and ``print_threads`` (:mod:`langctx.cli.inspect.render`) draw them.

Example:
    >>> import os, tempfile
    >>> from langgraph.checkpoint.sqlite import SqliteSaver
    >>> from langgraph.graph import START, StateGraph
    >>> from langctx.langgraph import LangctxState
    >>> path = os.path.join(tempfile.mkdtemp(), "checkpoints.sqlite")
    >>> graph = StateGraph(LangctxState).add_node("echo", lambda s: {"messages": [("ai", "Hi!")]})
    >>> with SqliteSaver.from_conn_string(path) as saver:
    ...     _ = graph.add_edge(START, "echo").compile(checkpointer=saver).invoke(
    ...         {"messages": [("user", "Hi")]}, {"configurable": {"thread_id": "t1"}})
    >>> with open_store(db=path) as store:
    ...     [(t.thread_id, t.checkpoints) for t in store.threads()]
    ...     inspect_thread(store, "t1").figures["messages_in_state"]
    [('t1', 3)]
    2
"""

from langctx.cli.inspect.errors import (
    CheckpointNotFoundError,
    DatabaseNotFoundError,
    InspectError,
    NotACheckpointDatabaseError,
    ThreadNotFoundError,
)
from langctx.cli.inspect.report import REPORT_VERSION, ThreadReport, build_report, inspect_thread
from langctx.cli.inspect.store import CheckpointStore, ThreadInfo, open_store

__all__ = [
    "REPORT_VERSION",
    "CheckpointNotFoundError",
    "CheckpointStore",
    "DatabaseNotFoundError",
    "InspectError",
    "NotACheckpointDatabaseError",
    "ThreadInfo",
    "ThreadNotFoundError",
    "ThreadReport",
    "build_report",
    "inspect_thread",
    "open_store",
]
