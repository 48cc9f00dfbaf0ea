"""A thread's context over its checkpoints: the timeline of ``langctx inspect --html``.

:func:`thread_history` rebuilds the memory at each checkpoint of a thread, oldest first, up to
the one inspected, as :func:`~langctx.cli.inspect.inspect_thread` does for one (nothing is
compacted or written), and keeps the figures a chart needs (:class:`HistoryPoint`).

Example:
    >>> import os, tempfile
    >>> from langgraph.checkpoint.sqlite import SqliteSaver
    >>> from langgraph.graph import START, StateGraph
    >>> from langctx.cli.inspect import open_store
    >>> from langctx.langgraph import LangctxState
    >>> path = os.path.join(tempfile.mkdtemp(), "checkpoints.sqlite")
    >>> graph = StateGraph(LangctxState).add_node("echo", lambda s: {"messages": [("ai", "Hi!")]})
    >>> with SqliteSaver.from_conn_string(path) as saver:
    ...     _ = graph.add_edge(START, "echo").compile(checkpointer=saver).invoke(
    ...         {"messages": [("user", "Hi")]}, {"configurable": {"thread_id": "t1"}})
    >>> with open_store(db=path) as store:
    ...     [p.messages for p in thread_history(store, "t1")]
    [0, 1, 2]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langctx.cli.inspect.report import ThreadReport, inspect_thread
from langctx.cli.inspect.store import CheckpointStore
from langctx.errors import ConfigError
from langctx.tokens import TokenCounterSpec, resolve_token_counter

__all__ = ["DEFAULT_HISTORY_POINTS", "HistoryPoint", "thread_history"]

DEFAULT_HISTORY_POINTS = 300
"""Checkpoints read for the timeline at most; a longer thread is sampled evenly (the first and
the inspected checkpoint always included)."""


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    """The memory at one checkpoint of a thread."""

    checkpoint_id: str
    step: int | None
    """The checkpoint's ``step`` metadata (-1 for a run's input)."""
    messages: int
    """Messages in the state."""
    context_tokens: int
    """Tokens of the context the model sees (what langctx projects)."""
    full_tokens: int
    """Tokens of the full history."""
    compactions: int = 0
    merges: int = 0
    placeholders: int = 0
    truncations: int = 0


def _sample(ids: list[str], limit: int) -> list[str]:
    if limit <= 0 or len(ids) <= limit:
        return ids
    if limit == 1:
        return ids[-1:]
    step = (len(ids) - 1) / (limit - 1)
    return [ids[round(i * step)] for i in range(limit)]


def thread_history(
    store: CheckpointStore,
    thread_id: str,
    *,
    checkpoint_id: str | None = None,
    budget: int | None = None,
    token_counter: TokenCounterSpec | None = None,
    archive: Any = None,
    limit: int = DEFAULT_HISTORY_POINTS,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[HistoryPoint]:
    """The memory's figures at each checkpoint of ``thread_id``, oldest first.

    Args:
        store: an open checkpoint database (:func:`~langctx.cli.inspect.store.open_store`).
        thread_id: the thread.
        checkpoint_id: the last checkpoint to read (default: the thread's latest).
        budget: the memory's ``max_tokens``, as for :func:`~langctx.cli.inspect.inspect_thread`.
        token_counter: how to count (default: the counter the run recorded, else "approximate");
            resolved once, so its per-message cache serves every checkpoint.
        archive: the LangGraph store of an archive-mode run (see ``inspect_thread``).
        limit: checkpoints read at most (0: all); a longer thread is sampled evenly.
        on_progress: called with ``(checkpoints read, checkpoints to read)`` after each.

    Raises:
        ThreadNotFoundError: no checkpoint belongs to ``thread_id``.
        CheckpointNotFoundError: the thread has no checkpoint ``checkpoint_id``.
    """
    if limit < 0:
        msg = f"limit must be >= 0 (0: every checkpoint), got {limit}."
        raise ConfigError(msg)
    ids = list(reversed(store.checkpoint_ids(thread_id)))
    if checkpoint_id:
        store.checkpoint(thread_id, checkpoint_id)  # raises CheckpointNotFoundError
        ids = ids[: ids.index(checkpoint_id) + 1] if checkpoint_id in ids else ids
    chosen = _sample(ids, limit)

    def read(cid: str, counter: object) -> ThreadReport:
        return inspect_thread(
            store,
            thread_id,
            checkpoint_id=cid,
            budget=budget,
            token_counter=counter,
            archive=archive,
        )

    last = None
    if token_counter is None and chosen:  # the counter the run recorded, as the report uses
        last = read(chosen[-1], None)
        token_counter = str(last.figures["token_counter"])
    counter = resolve_token_counter(token_counter) if token_counter is not None else None
    points: list[HistoryPoint] = []
    for cid in chosen:
        report = last if last is not None and cid == chosen[-1] else read(cid, counter)
        f = report.figures
        points.append(
            HistoryPoint(
                checkpoint_id=cid,
                step=(report.checkpoint or {}).get("step"),
                messages=int(f["messages_in_state"]),
                context_tokens=int(f["context_tokens"]),
                full_tokens=int(f["full_history_tokens"]),
                compactions=int(f["compactions"]),
                merges=int(f["merges"]),
                placeholders=int(f["placeholders"]),
                truncations=int(f["truncations"]),
            )
        )
        if on_progress is not None:
            on_progress(len(points), len(chosen))
    return points
