"""Inspect a thread's memory in a LangGraph checkpoint database: ``langctx inspect``'s library.

Open a database read-only with :func:`open_store` (a SQLite file or a PostgreSQL URI; nothing is
created or migrated), list its threads, and describe one thread's memory at its latest (or a given)
checkpoint with :func:`inspect_thread`: the layers the model sees (pinned, summaries by level,
recent), the compaction timeline, the in-place edits and the eviction log, and the figures.
:func:`build_report` does the same from state values you already hold; ``print_report`` and
``print_threads`` (in :mod:`langctx.inspect.render`) draw them with rich, or as plain text.

Example:
    >>> import os, tempfile
    >>> from langgraph.checkpoint.sqlite import SqliteSaver
    >>> from langgraph.graph import START, StateGraph
    >>> from langctx.integrations.state import LangctxState
    >>> path = os.path.join(tempfile.mkdtemp(), "checkpoints.sqlite")
    >>> builder = StateGraph(LangctxState)
    >>> _ = builder.add_node("echo", lambda s: {"messages": [("ai", "Hello!")]})
    >>> _ = builder.add_edge(START, "echo")
    >>> with SqliteSaver.from_conn_string(path) as saver:
    ...     _ = builder.compile(checkpointer=saver).invoke(
    ...         {"messages": [("user", "Hi")]}, {"configurable": {"thread_id": "t1"}})
    >>> with open_store(db=path) as store:
    ...     [(t.thread_id, t.checkpoints) for t in store.threads()]
    ...     report = inspect_thread(store, "t1")
    [('t1', 3)]
    >>> report.figures["messages_in_state"], report.to_dict()["checkpoint"]["latest"]
    (2, True)
"""

from langctx.inspect.errors import (
    CheckpointNotFoundError,
    DatabaseNotFoundError,
    InspectError,
    NotACheckpointDatabaseError,
    ThreadNotFoundError,
)
from langctx.inspect.report import REPORT_VERSION, ThreadReport, build_report, inspect_thread
from langctx.inspect.store import CheckpointStore, ThreadInfo, open_store

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
