"""Where a chat history keeps its log and langctx entries: in process, or in a wrapped history."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from langctx.channel import CHANNEL_VERSION, LangctxChannel
from langctx.errors import StateVersionError
from langctx.markers import HISTORY_ID_PREFIX, LEGACY_HISTORY_ID_PREFIX

__all__ = ["STATE_KEY", "Backend", "Batch", "Entries", "InProcess", "Step", "Wrapped", "Write"]

STATE_KEY = "langctx"
"""Default key of the langctx entries in the ``state`` mapping beside a wrapped history."""


@dataclass(slots=True)
class Entries:
    """The langctx entries of one history: compactions, edits, eviction records (plain dicts)."""

    compactions: list[dict[str, Any]] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    evictions: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.compactions or self.edits or self.evictions)

    def lists(self) -> tuple[list[dict[str, Any]], ...]:
        """The three lists: compactions, edits, evictions."""
        return self.compactions, self.edits, self.evictions

    def extend(self, other: Entries) -> None:
        for mine, theirs in zip(self.lists(), other.lists(), strict=True):
            mine.extend(theirs)

    def with_current_ids(self) -> Entries:
        """The entries with ids stored under :data:`~langctx.markers.LEGACY_HISTORY_ID_PREFIX`
        renamed to :data:`~langctx.markers.HISTORY_ID_PREFIX` (a history saved by older langctx)."""
        return Entries(*([_current_ids(e) for e in part] for part in self.lists()))

    def to_state(self) -> LangctxChannel:
        state = LangctxChannel(
            v=CHANNEL_VERSION,
            compactions=[dict(e) for e in self.compactions],
            edits=[dict(e) for e in self.edits],
        )
        state["eviction_log"] = [dict(e) for e in self.evictions]
        return state

    @classmethod
    def from_state(cls, state: object, where: str) -> Entries:
        if state is None:
            return cls()
        if not isinstance(state, Mapping) or state.get("v") != CHANNEL_VERSION:
            version = state.get("v") if isinstance(state, Mapping) else type(state).__name__
            msg = (
                f"langctx state in {where} has version {version!r}, not {CHANNEL_VERSION}; "
                "upgrade langctx, or delete that key to rebuild the entries from the log."
            )
            raise StateVersionError(msg)
        keys = ("compactions", "edits", "eviction_log")
        return cls(*([dict(e) for e in state.get(key, [])] for key in keys))


def _current_ids(value: Any) -> Any:
    """``value`` with every legacy positional id (a whole string, never text) renamed."""
    if isinstance(value, str):
        index = value.removeprefix(LEGACY_HISTORY_ID_PREFIX)
        return HISTORY_ID_PREFIX + index if index != value and index.isdigit() else value
    if isinstance(value, list):
        return [_current_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _current_ids(v) for k, v in value.items()}
    return value


# ---------------------------------------------------------------------------------- backends


@dataclass(frozen=True)
class Write:
    """One write to a backend: new messages from log index ``start`` and the new entries."""

    start: int
    messages: Sequence[BaseMessage]
    encoded: list[str]
    """``messages`` as the backend stores them (``encode``; empty when it keeps objects)."""
    new: Entries
    total: Entries
    """Every entry so far, ``new`` included (for backends that rewrite them whole)."""


@dataclass(frozen=True)
class Batch:
    """Messages to append, as given and as the backend stores them (``encode``)."""

    messages: list[BaseMessage] = field(default_factory=list)
    encoded: list[str] = field(default_factory=list)


@dataclass
class Step:
    """One write in progress: the batch under its log positions, then the entries it made."""

    start: int
    batch: Batch
    tagged: list[BaseMessage]
    """The batch as the memory gets it (positional ids)."""
    new: Entries = field(default_factory=Entries)


class Backend(Protocol):
    """Where a history's full log and langctx entries live (one writer per session)."""

    def describe(self) -> str: ...

    def load(self) -> tuple[list[BaseMessage], Entries]: ...

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]: ...

    def write(self, w: Write) -> None: ...

    async def awrite(self, w: Write) -> None: ...

    def clear(self) -> None: ...

    async def aclear(self) -> None: ...


class InProcess:
    """No persistence: the log lives in the history object only."""

    def describe(self) -> str:
        return "this process"

    def load(self) -> tuple[list[BaseMessage], Entries]:
        return [], Entries()

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]:
        return []

    def write(self, w: Write) -> None:
        return None

    async def awrite(self, w: Write) -> None:
        return None

    def clear(self) -> None:
        return None

    async def aclear(self) -> None:
        return None


class Wrapped:
    """A user's ``BaseChatMessageHistory`` holds the full log; a mapping holds the entries."""

    def __init__(
        self,
        history: BaseChatMessageHistory,
        state: MutableMapping[str, Any] | None,
        key: str,
    ) -> None:
        self.history = history
        self.state = state
        self.key = key

    def describe(self) -> str:
        where = f" with state[{self.key!r}]" if self.state is not None else ""
        return f"the wrapped {type(self.history).__name__}{where}"

    def load(self) -> tuple[list[BaseMessage], Entries]:
        raw = self.state.get(self.key) if self.state is not None else None
        return list(self.history.messages), Entries.from_state(raw, self.describe())

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]:
        return []

    def _save(self, w: Write) -> None:
        # the log first: entries that name messages missing from the log could not be restored
        if w.new and self.state is not None:
            self.state[self.key] = w.total.to_state()

    def write(self, w: Write) -> None:
        if w.messages:
            self.history.add_messages(list(w.messages))
        self._save(w)

    async def awrite(self, w: Write) -> None:
        if w.messages:
            await self.history.aadd_messages(list(w.messages))
        self._save(w)

    def clear(self) -> None:
        self.history.clear()
        if self.state is not None:
            self.state.pop(self.key, None)

    async def aclear(self) -> None:
        await self.history.aclear()
        if self.state is not None:
            self.state.pop(self.key, None)
