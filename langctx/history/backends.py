"""Where a chat history keeps its log and langctx entries: in process, or in a wrapped history."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from langctx.channel import CHANNEL_VERSION, LangctxChannel
from langctx.errors import StateVersionError
from langctx.markers import HISTORY_ID_PREFIX, LEGACY_HISTORY_ID_PREFIX

STATE_KEY = "langctx"
"""Default key of the langctx entries in the ``state`` mapping beside a wrapped history."""


@dataclass(slots=True)
class Entries:
    """The langctx entries of one history: compactions, edits, eviction records and the folded
    user messages, each once (plain dicts; the memory's ledger is read from the last)."""

    compactions: list[dict[str, Any]] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    evictions: list[dict[str, Any]] = field(default_factory=list)
    users: list[dict[str, Any]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.compactions or self.edits or self.evictions or self.users)

    def lists(self) -> tuple[list[dict[str, Any]], ...]:
        """The four lists: compactions, edits, evictions, folded user messages."""
        return self.compactions, self.edits, self.evictions, self.users

    def extend(self, other: Entries) -> None:
        for mine, theirs in zip(self.lists(), other.lists(), strict=True):
            mine.extend(theirs)

    def with_current_ids(self) -> Entries:
        """The entries with legacy positional ids renamed (a history saved by older langctx)."""
        return Entries(*([_current_ids(e) for e in part] for part in self.lists()))

    def to_state(self) -> LangctxChannel:
        return LangctxChannel(
            v=CHANNEL_VERSION,
            compactions=[dict(e) for e in self.compactions],
            edits=[dict(e) for e in self.edits],
            eviction_log=[dict(e) for e in self.evictions],
            users=[dict(e) for e in self.users],
        )

    @classmethod
    def from_state(cls, state: object, where: str) -> Entries:
        if state is None:
            return cls()
        version = state.get("v") if isinstance(state, Mapping) else type(state).__name__
        if not isinstance(state, Mapping) or version not in (1, CHANNEL_VERSION):
            msg = (
                f"langctx state in {where} has version {version!r}, not {CHANNEL_VERSION}; "
                "upgrade langctx, or delete that key to rebuild the entries from the log."
            )
            raise StateVersionError(msg)
        keys = ("compactions", "edits", "eviction_log", "users")
        lists = [state.get(key) or [] for key in keys]
        if not all(isinstance(v, list) and all(isinstance(e, Mapping) for e in v) for v in lists):
            msg = (
                f"langctx state in {where} holds entries that are not lists of dicts; "
                "delete that key to rebuild the entries from the log."
            )
            raise StateVersionError(msg)
        return cls(*([dict(e) for e in v] for v in lists))


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


@dataclass
class Step:
    """One write: messages appended from log index ``start``, then the entries they made."""

    start: int
    messages: list[BaseMessage]
    encoded: list[str]
    """``messages`` as the backend stores them (``encode``)."""
    tagged: list[BaseMessage]
    """``messages`` as the memory gets them (positional ids)."""
    new: Entries = field(default_factory=Entries)
    total: Entries = field(default_factory=Entries)
    """Every entry so far, ``new`` included (for backends that rewrite them whole)."""


class Backend:
    """Where a history's full log and langctx entries live (this base: in the history only)."""

    def describe(self) -> str:
        return "this process"

    def load(self) -> tuple[list[BaseMessage], Entries]:
        return [], Entries()

    def encode(self, messages: Sequence[BaseMessage]) -> list[str]:
        """``messages`` as the backend stores them (empty when it keeps the objects)."""
        return []

    def write(self, step: Step) -> None:
        return None

    async def awrite(self, step: Step) -> None:
        return None

    def clear(self) -> None:
        return None

    async def aclear(self) -> None:
        return None


@dataclass(eq=False)
class Wrapped(Backend):
    """A user's ``BaseChatMessageHistory`` holds the full log; a mapping holds the entries."""

    history: BaseChatMessageHistory
    state: MutableMapping[str, Any] | None
    key: str

    def describe(self) -> str:
        where = f" with state[{self.key!r}]" if self.state is not None else ""
        return f"the wrapped {type(self.history).__name__}{where}"

    def load(self) -> tuple[list[BaseMessage], Entries]:
        raw = self.state.get(self.key) if self.state is not None else None
        return list(self.history.messages), Entries.from_state(raw, self.describe())

    def _save(self, step: Step) -> None:
        # the log first: entries that name messages missing from the log could not be restored
        if step.new and self.state is not None:
            self.state[self.key] = step.total.to_state()

    def write(self, step: Step) -> None:
        if step.messages:
            self.history.add_messages(list(step.messages))
        self._save(step)

    async def awrite(self, step: Step) -> None:
        if step.messages:
            await self.history.aadd_messages(list(step.messages))
        self._save(step)

    def clear(self) -> None:
        self.history.clear()
        if self.state is not None:
            self.state.pop(self.key, None)

    async def aclear(self) -> None:
        await self.history.aclear()
        if self.state is not None:
            self.state.pop(self.key, None)
