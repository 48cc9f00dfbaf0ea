"""One memory step before a model call, shared by the LangGraph node and the middleware."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore

from langctx.commands import handled_command, pending_command
from langctx.entries import CompactionEntry
from langctx.state_memory import NO_THREAD, MemorySettings, ThreadView, view_state
from langctx.stores.archive import Archive, read_batches
from langctx.stores.archive_plan import ArchivePlan

__all__ = ["ArchiveWrite", "MemoryStep"]

logger = logging.getLogger("langctx")

ArchiveWrite = tuple[BaseStore, ArchivePlan]
"""Where an archive batch goes and the plan that holds it (``Archive.write(*batch)``)."""


class MemoryStep:
    """The thread's memory for one model call, and what the step decided.

    Raises:
        ConfigError: archive mode in the state, over a state without the archive's key.

    Attributes:
        command: the pending ``/compact`` message and its instructions, if any.
        handled: after :meth:`compact`, the command's removal and its notice (None: no command).
        plan: after :meth:`compact`, the archive plan (None: nothing to archive).
    """

    def __init__(
        self,
        state: Mapping[str, Any],
        settings: MemorySettings,
        *,
        thread_id: str,
        archive: Archive | None = None,
        store: Callable[[], BaseStore | None] = lambda: None,
    ) -> None:
        if archive is not None:
            archive.check(state, thread_id)
        self.state = state
        self.thread_id = thread_id
        self.command = pending_command(state.get("messages") or [])
        archived = None  # a store archive: read for what the state does not hold
        if archive is not None and not archive.in_state and thread_id != NO_THREAD:
            archived = partial(_stored_batches, archive, store, thread_id, state)
        self.view: ThreadView = view_state(state, settings, thread_id=thread_id, archived=archived)
        self.archive = archive
        self.store = store
        self.handled: list[BaseMessage] | None = None
        self.plan: ArchivePlan | None = None
        self._before = self.view.context_tokens() if self.command else 0

    def compact(self) -> ArchiveWrite | None:
        """Compact on ``/compact``, or when due; writes the archive batch to its store (returned),
        if any."""
        view, command = self.view, self.command
        entry = view.compact(command[1] or None) if command else view.compact_if_due()
        if (batch := self._compacted(entry)) is not None:
            Archive.write(*batch)
        return batch

    async def acompact(self) -> ArchiveWrite | None:
        """Async version of `compact`."""
        view, command = self.view, self.command
        entry = await (view.acompact(command[1] or None) if command else view.acompact_if_due())
        if (batch := self._compacted(entry)) is not None:
            await Archive.awrite(*batch)
        return batch

    def update(self, out: dict[str, Any]) -> dict[str, Any]:
        """``out`` plus the view's channel update and the archive plan's part (the view may have
        compacted again, on overflow: the plan goes with its latest update)."""
        if (channel := self.view.update()) is not None:
            out["langctx"] = channel
        return Archive.apply(out, self.plan)

    def _compacted(self, entry: CompactionEntry | None) -> ArchiveWrite | None:
        if self.command is not None:
            self.handled = handled_command(
                self.command, entry, tokens=self._before, tokens_after=self.view.context_tokens()
            )
        if self.archive is None:
            return None
        self.plan = self.archive.plan(self.state, self.view)
        if self.plan is None or self.plan.in_state:
            return None  # a batch in the state is written with the step's update
        return self.archive.resolve(self.store()), self.plan


def _stored_batches(
    archive: Archive,
    store: Callable[[], BaseStore | None],
    thread_id: str,
    state: Mapping[str, Any],
) -> list[Any]:
    """The thread's batches in its store archive, oldest first, for what a step looks up before
    its window (the messages of a fold whose background summary ran in another process); []
    when the store cannot be read here (an async-only store: the fold keeps its local summary)."""
    try:
        return read_batches(archive.resolve(store()), thread_id, state)
    except Exception as exc:  # a lookup aid: the step goes on without it
        logger.warning("langctx: the archive store could not be read for a lookup (%s)", exc)
        return []
