"""``BaseChatMessageHistory`` adapter: langctx memory behind ``RunnableWithMessageHistory``."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage, RemoveMessage

from langctx.entries import CompactionEntry
from langctx.errors import ConfigError, InvalidMessageError, StateVersionError
from langctx.history.backends import STATE_KEY, Backend, Entries, Step, Wrapped
from langctx.markers import HISTORY_ID_PREFIX
from langctx.memory import LayeredChatMemory


class LangctxChatMessageHistory(BaseChatMessageHistory):
    """A ``BaseChatMessageHistory`` whose ``messages`` is a compacted langctx projection.

    Legacy API, deprecated by langchain-core: prefer the ``create_agent`` middleware or the
    LangGraph node (https://docs.langchain.com/oss/python/langchain/short-term-memory).

    ``messages`` is cached until the next write; ``full_messages`` is the log exactly as added
    (the memory knows each message by its position). Write through the history, not through
    ``memory``. One writer per SQLite session.

    Args:
        memory: an empty :class:`~langctx.LayeredChatMemory` (default: one of ``memory_kwargs``).
        history: a history that stores the full log (default: this object only).
        state: a mapping that stores the entries of the wrapped ``history`` under ``state_key``
            (without it, entries are lost on restart).

    Raises:
        ConfigError: conflicting or invalid options.
        StateVersionError: stored entries that disagree with the log, or of an unknown version.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> history = LangctxChatMessageHistory(max_tokens=1500)
        >>> history.add_user_message("hello")
        >>> history.add_ai_message("hi!")
        >>> str(history)
        'Human: hello\\nAI: hi!'
        >>> for i in range(40):
        ...     history.add_messages([HumanMessage(f"step {i}: " + "details " * 30), AIMessage("done")])
        >>> len(history.full_messages), len(history.messages) < 82, len(history.memory.compactions) > 0
        (82, True, True)
    """

    def __init__(
        self,
        memory: LayeredChatMemory | None = None,
        *,
        history: BaseChatMessageHistory | None = None,
        state: MutableMapping[str, Any] | None = None,
        state_key: str = STATE_KEY,
        **memory_kwargs: Any,
    ) -> None:
        super().__init__()
        if isinstance(history, LangctxChatMessageHistory):
            msg = (
                "history= must store the full log, but a LangctxChatMessageHistory returns a "
                "projection; wrap the store it wraps, or use it directly."
            )
            raise ConfigError(msg)
        if history is not None and not isinstance(history, BaseChatMessageHistory):
            msg = f"history= must be a BaseChatMessageHistory, got {type(history).__name__}."
            raise ConfigError(msg)
        if state is not None and history is None:
            msg = "state= stores the entries beside a wrapped history; pass history= too."
            raise ConfigError(msg)
        if not isinstance(state_key, str) or not state_key:
            msg = f"state_key must be a non-empty string, got {state_key!r}."
            raise ConfigError(msg)
        backend = Backend() if history is None else Wrapped(history, state, state_key)
        self._open(resolve_memory(memory, memory_kwargs), backend)

    @classmethod
    def _from_backend(
        cls, memory: LayeredChatMemory, backend: Backend
    ) -> LangctxChatMessageHistory:
        self = cls.__new__(cls)
        BaseChatMessageHistory.__init__(self)
        self._open(memory, backend)
        return self

    @classmethod
    @contextmanager
    def from_conn_string(
        cls,
        conn_string: str,
        session_id: str,
        *,
        memory: LayeredChatMemory | None = None,
        **memory_kwargs: Any,
    ) -> Iterator[LangctxChatMessageHistory]:
        """Open one session of a SQLite database (a file path or ``":memory:"``); closes it after.

        Example:
            >>> with LangctxChatMessageHistory.from_conn_string(":memory:", "s1") as history:
            ...     history.add_user_message("hello")
            ...     [m.content for m in history.messages]
            ['hello']
        """
        mem = resolve_memory(memory, memory_kwargs)
        from langctx.history.sqlite import SQLiteChatHistoryStore

        with SQLiteChatHistoryStore.from_conn_string(conn_string) as store:
            yield cls._from_backend(mem, store._backend(session_id))

    def _open(self, memory: LayeredChatMemory, backend: Backend) -> None:
        self._memory = memory
        self._backend = backend
        self._lock = threading.RLock()
        self._alock = asyncio.Lock()  # binds to a loop only when a writer waits
        messages, saved = backend.load()
        self._reset(saved.with_current_ids())
        self._commit(Step(0, messages, [], [self._tag(m, i) for i, m in enumerate(messages)]))
        if messages or self._saved:
            try:
                self._restore_memory()
            except StateVersionError as exc:
                msg = (
                    f"{backend.describe()}: {exc} The stored log and the langctx entries "
                    "disagree (was one cleared or edited without the other?); delete the "
                    "entries to rebuild them from the log."
                )
                raise StateVersionError(msg) from exc

    def _reset(self, saved: Entries) -> None:
        """Empty the log (the memory aside) and start from the entries ``saved``."""
        self._log: list[BaseMessage] = []  # exactly what was added
        self._memlog: list[BaseMessage] = []  # what the memory got (positional ids)
        self._tags: dict[str, int] = {}  # positional id -> index in the log
        self._saved = saved
        self._cache: list[BaseMessage] | None = None

    @property
    def memory(self) -> LayeredChatMemory:
        """The engine (read it for stats and entries; write through the history)."""
        return self._memory

    @property
    def messages(self) -> list[BaseMessage]:
        """The projection the model should see (cached until the next write)."""
        with self._lock:
            if self._cache is None:
                self._cache = self._project()
            return list(self._cache)

    @messages.setter
    def messages(self, value: list[BaseMessage]) -> None:
        msg = (
            "LangctxChatMessageHistory.messages is a read-only projection and the log is "
            "append-only; use clear() and add_messages() instead."
        )
        raise AttributeError(msg)

    async def aget_messages(self) -> list[BaseMessage]:
        """Async version of `messages` (no I/O: the projection is held in memory)."""
        return self.messages

    @property
    def full_messages(self) -> list[BaseMessage]:
        """The complete append-only log, exactly as added."""
        with self._lock:
            return list(self._log)

    def _project(self) -> list[BaseMessage]:
        out: list[BaseMessage] = []
        for m in self._memory.build_context():
            i = self._tags.get(m.id) if isinstance(m.id, str) else None
            if i is None:
                out.append(m)  # the summary block or a repaired tool result
            elif m is self._memlog[i]:
                out.append(self._log[i])  # unchanged: hand back the very message added
            else:  # an edited view (placeholder, truncation), under the message's own id
                out.append(m.model_copy(update={"id": self._log[i].id}))
        return out

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Append messages to the log and the store, then compact if a trigger fires (on any
        error nothing is kept).

        Raises:
            InvalidMessageError: not a langchain-core message, or not storable as JSON (SQLite).
            InvalidHistoryError: another writer appended to the same SQLite session, or the memory
                refused the messages.
        """
        if not (batch := _as_messages(messages)):
            return
        encoded = self._backend.encode(batch)  # before any lock
        with self._lock, self._writing(batch, encoded) as step:
            self._memory.add_messages(step.tagged)
            self._backend.write(self._written(step))

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        """Async version of `add_messages`."""
        if not (batch := _as_messages(messages)):
            return
        encoded = self._backend.encode(batch)
        async with self._alock:
            with self._writing(batch, encoded) as step:
                await self._memory.aadd_messages(step.tagged)
                await self._backend.awrite(self._written(step))

    def compact(self, instructions: str | None = None) -> CompactionEntry | None:
        """Compact now and persist the entries; returns the new entry (None: nothing to compact)."""
        with self._lock, self._writing([], []) as step:
            entry = self._memory.compact(instructions)
            self._backend.write(self._written(step))
        return entry

    async def acompact(self, instructions: str | None = None) -> CompactionEntry | None:
        """Async version of `compact`."""
        async with self._alock:
            with self._writing([], []) as step:
                entry = await self._memory.acompact(instructions)
                await self._backend.awrite(self._written(step))
        return entry

    def clear(self) -> None:
        """Forget everything: the log, the entries, and the stored rows of this session."""
        with self._lock:
            self._backend.clear()
            self._memory.clear()
            self._reset(Entries())

    async def aclear(self) -> None:
        """Async version of `clear`."""
        async with self._alock:
            await self._backend.aclear()
            with self._lock:
                self._memory.clear()
                self._reset(Entries())

    def _tag(self, message: BaseMessage, index: int) -> BaseMessage:
        """The message as the memory gets it: under its position in the log."""
        return message.model_copy(update={"id": f"{HISTORY_ID_PREFIX}{index}"})

    @contextmanager
    def _writing(self, batch: list[BaseMessage], encoded: list[str]) -> Iterator[Step]:
        """A write of ``batch``, committed when the block succeeds; on any error inside, the memory
        is rebuilt from the committed log."""
        with self._lock:
            start = len(self._log)
            tagged = [self._tag(m, start + k) for k, m in enumerate(batch)]
        step = Step(start, batch, encoded, tagged)
        try:
            yield step
        except BaseException:
            self._restore_memory()
            raise
        with self._lock:
            self._commit(step)

    def _written(self, step: Step) -> Step:
        """``step`` with the entries the memory made since the last commit (for the backend)."""
        mem, saved = self._memory, self._saved
        step.new = Entries(
            [dict(e) for e in mem.compactions[len(saved.compactions) :]],
            [dict(e) for e in mem.edits[len(saved.edits) :]],
            [dict(r) for r in mem.eviction_log[len(saved.evictions) :]],
            [dict(u) for u in mem._users_log[len(saved.users) :]],
        )
        step.total = Entries(*(a + b for a, b in zip(saved.lists(), step.new.lists(), strict=True)))
        return step

    def _commit(self, step: Step) -> None:
        start = len(self._log)
        self._log.extend(step.messages)
        self._memlog.extend(step.tagged)
        self._tags.update((f"{HISTORY_ID_PREFIX}{i}", i) for i in range(start, len(self._log)))
        self._saved.extend(step.new)
        self._cache = None

    def _restore_memory(self) -> None:
        """Rebuild the memory from the committed log and entries."""
        with self._lock:
            self._cache = None
            self._memory.restore(
                self._memlog,
                compactions=self._saved.compactions,
                edits=self._saved.edits,
                eviction_log=self._saved.evictions,
                users=self._saved.users or None,  # none: a history from before the ledger
            )

    def __eq__(self, other: object) -> bool:
        """Equal when both the full log and the projection are equal."""
        if not isinstance(other, LangctxChatMessageHistory):
            return NotImplemented
        return self.full_messages == other.full_messages and self.messages == other.messages

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(messages={self.messages!r}, "
            f"full_messages={len(self._log)}, compactions={len(self._saved.compactions)}, "
            f"store={self._backend.describe()!r})"
        )


def resolve_memory(
    memory: LayeredChatMemory | None, memory_kwargs: Mapping[str, Any]
) -> LayeredChatMemory:
    """``memory`` checked (an empty ``LayeredChatMemory``), or a new one of ``memory_kwargs``."""
    if memory is None:
        return LayeredChatMemory(**memory_kwargs)
    if memory_kwargs:
        msg = (
            f"pass either memory=LayeredChatMemory(...) or memory options "
            f"({', '.join(sorted(memory_kwargs))}), not both."
        )
        raise ConfigError(msg)
    if not isinstance(memory, LayeredChatMemory):
        msg = f"memory must be a LayeredChatMemory, got {type(memory).__name__}."
        raise ConfigError(msg)
    if memory.messages:
        msg = (
            "the memory already holds messages; give the history an empty LayeredChatMemory "
            "(the history owns the log and restores it from its store)."
        )
        raise ConfigError(msg)
    return memory


def _as_messages(messages: object) -> list[BaseMessage]:
    if isinstance(messages, BaseMessage):
        messages = [messages]
    if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Iterable):
        msg = (
            f"add_messages takes a sequence of langchain-core messages, got "
            f"{type(messages).__name__} {messages!r:.80}; use add_user_message(text) or "
            "langchain_core.messages.convert_to_messages(...)."
        )
        raise InvalidMessageError(msg)
    out = list(messages)
    for m in out:
        if not isinstance(m, BaseMessage):
            msg = (
                f"add_messages takes langchain-core messages, got {type(m).__name__} {m!r:.80}; "
                "convert it first, e.g. with langchain_core.messages.convert_to_messages."
            )
            raise InvalidMessageError(msg)
        if isinstance(m, RemoveMessage):
            msg = "a RemoveMessage cannot be added: the log is append-only. Use clear() to start over."
            raise InvalidMessageError(msg)
    return out
