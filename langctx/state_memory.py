"""A thread's memory computed from its graph state on every call (the integrations' engine):
nothing is kept between calls but token counts, so the same state always gives the same memory.

Example:
    >>> from langchain_core.messages import HumanMessage, SystemMessage
    >>> settings = MemorySettings.of(max_tokens=4000)
    >>> state = {"messages": [SystemMessage("Be brief.", id="s"), HumanMessage("Hi", id="h")]}
    >>> view = view_state(state, settings)
    >>> [m.id for m in view.projection()], view.update()
    (['s', 'h'], None)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Unpack

from langchain_core.messages import AIMessage, BaseMessage

from langctx.archive_repair import (
    agrees,
    checked_batch,
    newest_held,
    repaired_channel,
    state_batches,
)
from langctx.channel import (
    ARCHIVE_KEY,
    USERS_DROPPED_KEY,
    USERS_KEY,
    ArchiveRecord,
    LangctxChannel,
    archive_record,
    channel_entries,
    channel_update,
    channel_users,
    check_channel,
    check_version,
    current_entries,
    stored_priorities,
)
from langctx.commands import is_control_message
from langctx.config import ConfigOptions, MemoryConfig, config_from
from langctx.count_cache import CachedCounter
from langctx.engine import log
from langctx.entries import CompactionEntry, EditEntry, active_summaries, user_count
from langctx.facts import FileToolSpec
from langctx.markers import NO_THREAD, checked_thread_id
from langctx.memory import CompactionEvent, LayeredChatMemory, Trigger
from langctx.pricing import PriceSheet
from langctx.state_reading import (
    WithIds,
    archived_covered,
    archived_messages,
    as_messages,
    restore_entries,
    window_start,
)
from langctx.summarize import Summarizer, resolve_summarizer
from langctx.tokens import TokenCounter, resolve_token_counter
from langctx.user_messages import ledger_prefix


def thread_id_of(config: Mapping[str, Any] | None) -> str:
    """The ``thread_id`` of a run's config, or :data:`NO_THREAD`.

    Raises:
        ConfigError: the thread id names a reserved namespace (:func:`checked_thread_id`).
    """
    tid = ((config or {}).get("configurable") or {}).get("thread_id")
    return NO_THREAD if tid is None else checked_thread_id(tid)


class MemoryOptions(ConfigOptions, total=False):
    """Every option of a langctx memory: the :class:`~langctx.MemoryConfig` fields (or ``config``)
    and the memory's collaborators."""

    config: MemoryConfig
    summarizer: object
    """None/"local", a chat model or Runnable, an object with ``summarize``, or a callable."""
    token_counter: object
    """"approximate", "tiktoken", an encoding name, a chat model, a callable, a TokenCounter."""
    file_tools: Mapping[str, FileToolSpec]
    command_tools: Iterable[str]
    on_compaction: Callable[[CompactionEvent], None]


@dataclass(frozen=True, slots=True)
class MemorySettings:
    """Everything a thread's memory is built from, resolved once (build it with :meth:`of`)."""

    config: MemoryConfig
    summarizer: Summarizer
    counter: TokenCounter
    file_tools: Mapping[str, FileToolSpec] | None = None
    command_tools: frozenset[str] | None = None
    on_compaction: Callable[[CompactionEvent], None] | None = None

    @classmethod
    def of(cls, **options: Unpack[MemoryOptions]) -> MemorySettings:
        """Resolve the options of :class:`~langctx.LayeredChatMemory` once.

        Raises:
            ConfigError: an option is unknown or invalid, or both ``config`` and its fields given.
        """
        opts: dict[str, Any] = dict(options)
        counter = resolve_token_counter(opts.pop("token_counter", "approximate"))
        file_tools = opts.pop("file_tools", None)
        command_tools = opts.pop("command_tools", None)
        return cls(
            summarizer=resolve_summarizer(opts.pop("summarizer", None)),
            counter=counter if isinstance(counter, CachedCounter) else CachedCounter(counter),
            file_tools=dict(file_tools) if file_tools is not None else None,
            command_tools=frozenset(command_tools) if command_tools is not None else None,
            on_compaction=opts.pop("on_compaction", None),
            config=config_from(opts.pop("config", None), opts),
        )

    def with_cache_prices(self, prices: str | PriceSheet | None) -> MemorySettings:
        """These settings with ``cache_prices`` set to ``prices`` (see :class:`MemoryConfig`)."""
        return replace(self, config=replace(self.config, cache_prices=prices))

    def with_window(self, window: int, sizes: Mapping[str, Any]) -> MemorySettings:
        """These settings for a model of ``window`` input tokens: ``context_window`` set and the
        ``sizes`` given (``max_tokens``, ``keep_recent_tokens``, fractions too) resolved again."""
        return replace(self, config=replace(self.config, context_window=window, **sizes))

    def with_listener(self, listener: Callable[[CompactionEvent], None]) -> MemorySettings:
        """These settings with ``listener`` as ``on_compaction`` (it should call the old one)."""
        return replace(self, on_compaction=listener)

    def new_memory(self) -> LayeredChatMemory:
        """An empty memory with these settings."""
        return LayeredChatMemory(
            config=self.config,
            summarizer=self.summarizer,
            token_counter=self.counter,
            file_tools=self.file_tools,
            command_tools=self.command_tools,
            on_compaction=self.on_compaction,
        )


class ThreadView:
    """One call's memory of a thread (``thread_id``, or :data:`NO_THREAD`): rebuilt from a state,
    compacted when due."""

    def __init__(
        self,
        memory: LayeredChatMemory,
        *,
        thread_id: str,
        known: int = 0,
        known_edits: int | None = None,
        priorities: Mapping[str, int] | None = None,
        reset: bool = False,
        archive: ArchiveRecord | None = None,
    ) -> None:
        self.memory = memory
        """The memory over the state's window (private to this call)."""
        self.thread_id = thread_id
        if thread_id != NO_THREAD:  # its compactions' spans and summarizer runs say so
            memory.thread_id = thread_id
        self._known = known
        self._known_edits = len(memory.edits) if known_edits is None else known_edits
        self._known_priorities = dict(memory.priorities if priorities is None else priorities)
        self._reset = reset
        self._archive = archive  # a repaired archive record, written with the reset
        log.answer_open_calls(memory)  # this view is for a model call: no call goes unanswered

    def projection(self) -> list[BaseMessage]:
        """What the model should see (pinned, summaries, recent)."""
        return self.memory.build_context()

    def context_tokens(self) -> int:
        """Tokens of the projection, by the memory's counter."""
        return self.memory.context_tokens()

    def due(self) -> Trigger | None:
        """The trigger that fires on this state, if any ("threshold" after a response)."""
        if not self.memory.needs_compaction():
            return None
        log = self.memory.messages
        last = log[-1] if log else None
        return "threshold" if isinstance(last, AIMessage) and last.usage_metadata else "proactive"

    def compact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Compact now (see :meth:`~langctx.LayeredChatMemory.compact`)."""
        return self.memory.compact(
            instructions, trigger=trigger, keep_recent_tokens=keep_recent_tokens
        )

    async def acompact(
        self,
        instructions: str | None = None,
        *,
        trigger: Trigger = "manual",
        keep_recent_tokens: int | None = None,
    ) -> CompactionEntry | None:
        """Async version of `compact`."""
        return await self.memory.acompact(
            instructions, trigger=trigger, keep_recent_tokens=keep_recent_tokens
        )

    def compact_if_due(self) -> CompactionEntry | None:
        """Compact when a trigger fires (what every integration does before projecting)."""
        trigger = self.due()
        return self.compact(trigger=trigger) if trigger else None

    async def acompact_if_due(self) -> CompactionEntry | None:
        """Async version of `compact_if_due`."""
        trigger = self.due()
        return await self.acompact(trigger=trigger) if trigger else None

    def update(self) -> LangctxChannel | None:
        """What to write to the ``langctx`` channel (None: nothing new)."""
        memory, reset, counter = self.memory, self._reset, self.memory.counter
        new_c, new_e, new_p = memory.compactions, memory.edits, memory.priorities
        users, dropped = memory._users  # a reset writes the whole ledger, else what is new
        if not reset:
            new_c, new_e = new_c[self._known :], new_e[self._known_edits :]
            new_p = {k: v for k, v in new_p.items() if self._known_priorities.get(k) != v}
            users, dropped = memory._users_log[memory._users_given :], 0
            if not (new_c or new_e or new_p or users):
                return None
        # the memory is this call's own: its entries go to the channel as they are
        return channel_update(
            compactions=new_c,
            edits=new_e,
            priorities=new_p,
            reset=reset,
            archive=self._archive,
            counter=str(getattr(counter, "inner", counter).name),
            copy=False,
            users=users,
            users_dropped=dropped,
        )


def view_state(
    state: Mapping[str, Any],
    settings: MemorySettings,
    *,
    thread_id: str = NO_THREAD,
    archived: Callable[[], list[Any]] | None = None,
) -> ThreadView:
    """The memory of ``state`` (``messages`` + the ``langctx`` channel); no compaction runs.

    Only the window the projection can reach is read. A channel whose latest cut is not in
    ``messages`` (hand edits, time travel) is rebuilt from the whole state and then reset.

    Raises:
        InvalidMessageError: an item of ``messages`` is no message, or one no request may carry.
    """
    messages = state.get("messages") or []
    if not isinstance(messages, list):  # one message-like (a (role, text) pair too), or several
        pair = isinstance(messages, tuple) and len(messages) == 2 and isinstance(messages[0], str)
        one = pair or isinstance(messages, BaseMessage | str | dict)
        messages = [messages] if one or not isinstance(messages, Iterable) else list(messages)
    try:
        return _view_state(messages, state, settings, thread_id, archived)
    except AttributeError:  # read an id of what is no message: convert, as the memory does
        if all(isinstance(m, BaseMessage) for m in messages):
            check_channel(state.get("langctx"))  # or a corrupt entry: name it
            raise
    except (TypeError, KeyError, ValueError, IndexError):
        check_channel(state.get("langctx"))  # a corrupt entry: a one-line StateVersionError
        raise
    return _view_state(as_messages(messages), state, settings, thread_id, archived)


def _view_state(
    messages: list[BaseMessage],
    state: Mapping[str, Any],
    settings: MemorySettings,
    thread_id: str,
    archived: Callable[[], list[Any]] | None = None,
) -> ThreadView:
    raw = WithIds(messages)
    channel = check_version(state.get("langctx") or {}, "stored")
    repaired = _repaired(channel, state.get(ARCHIVE_KEY), messages)
    if repaired is not None:  # the channel no longer described the archive
        channel = repaired
    comps: list[CompactionEntry] = current_entries(channel.get("compactions"))
    edits: list[EditEntry] = current_entries(channel.get("edits"), "edits")
    span = window_start(raw, comps, channel.get("archive"))
    record = archive_record(channel) if repaired is not None else None
    if span is None:
        return _rebuilt(settings.new_memory(), raw, channel, thread_id, record)
    head, start = span
    window = [m for m in raw[start:] if not is_control_message(m)]
    # what precedes the latest response was an earlier call's checked input
    last_response = next(
        (i for i in range(len(window) - 1, -1, -1) if isinstance(window[i], AIMessage)), 0
    )
    memory = settings.new_memory()
    memory.restore_window(
        head,
        window,
        compactions=comps,
        edits=edits,
        priorities=stored_priorities(channel.get("priorities")),
        validate_from=last_response,
        before=_Before(raw, start, state.get(ARCHIVE_KEY), archived),
        archived_to=_archived_to(channel),
        users=channel.get(USERS_KEY),  # checked there (None: read from the entries' facts)
        users_dropped=channel.get(USERS_DROPPED_KEY, 0),
    )
    # a truncation of the pinned task made while restoring is new: the channel records it, so
    # the next call restores it instead of cutting (and warning) again
    stored = {e["id"] for e in edits}
    known_edits = sum(e["id"] in stored for e in memory.edits)
    return ThreadView(
        memory,
        thread_id=thread_id,
        known=len(comps),
        known_edits=known_edits,
        reset=record is not None,
        archive=record,
    )


def _repaired(
    channel: Mapping[str, Any], held: Any, messages: Sequence[BaseMessage]
) -> LangctxChannel | None:
    """``channel`` repaired from the state's archive (:mod:`langctx.archive_repair`), or None
    when it describes the archive (the usual case: the newest batch checked, its key computed).

    Raises:
        StateVersionError: a batch read cannot be, or the archive cannot repair the channel.
    """
    newest = newest_held(held)
    if newest is None or agrees(archive_record(channel), newest):
        return None
    ids = {str(m.id) for m in messages if m.id is not None}
    return repaired_channel(channel, state_batches(held), ids.__contains__)


def _archived_to(channel: Mapping[str, Any]) -> str | None:
    """The id of the first message after the thread's archived messages (None: none archived)."""
    record = archive_record(channel)
    first = None if record is None else record.get("first_kept")
    return first if isinstance(first, str) and first else None


class _Before:
    """The messages before the window by id, from ``messages`` and the archive, and the archived
    entries' ids: batches read newest first, each once, only as far as a lookup needs (what is
    looked up is almost always in the latest folds)."""

    __slots__ = ("_by_id", "_covered", "_more", "_unread")

    def __init__(
        self,
        raw: WithIds,
        stop: int,
        archived: Any = None,
        more: Callable[[], list[Any]] | None = None,
    ) -> None:
        self._unread = list(archived) if isinstance(archived, list) else []
        self._more = more  # the batches of a store archive, read once if the state's miss
        self._by_id: dict[str, BaseMessage] = {str(m.id): m for m in raw[:stop]}
        self._covered: dict[str, list[str]] = {}

    def _read_next(self) -> bool:
        """Read the newest unread batch (checked: :func:`checked_batch`); False: none left."""
        if not self._unread and self._more is not None:
            self._unread, self._more = list(self._more()), None
        while self._unread:
            batch = checked_batch(self._unread.pop())
            if batch is not None:
                for k, v in archived_messages([batch]).items():
                    self._by_id.setdefault(k, v)
                for k, ids in archived_covered([batch]).items():
                    self._covered.setdefault(k, ids)
                return True
        return False

    def covered(self, entry_id: str) -> list[str] | None:
        while entry_id not in self._covered and self._read_next():
            pass
        return self._covered.get(entry_id)

    def __call__(self, message_id: str) -> BaseMessage | None:
        while message_id not in self._by_id and self._read_next():
            pass
        return self._by_id.get(message_id)


def _rebuilt(
    memory: LayeredChatMemory,
    raw: Sequence[BaseMessage],
    channel: Any,
    thread_id: str,
    archive: ArchiveRecord | None = None,
) -> ThreadView:
    """The whole state restored; channel entries naming messages no longer there are dropped."""
    comps, edits, prio = channel_entries(channel)
    messages = [m for m in raw if not is_control_message(m)]
    present = {str(m.id) for m in messages}
    _, restore = restore_entries(comps, present, archive_record(channel))
    kept_edits = [e for e in edits if e["message_id"] in present]
    kept_prio = {k: v for k, v in prio.items() if k in present}
    users = channel_users(channel)
    if len(restore) < len(comps):  # the user messages of the entries kept: the oldest ones
        fitting: list[CompactionEntry] = restore  # type: ignore[assignment]
        users = ledger_prefix(
            users, sum(user_count(e.get("facts") or {}) for e in active_summaries(fitting))
        )
    memory.restore(
        messages,
        compactions=restore,
        edits=kept_edits,
        priorities=kept_prio,
        users=users[0],
        users_dropped=users[1],
    )
    kept = len(memory.compactions)  # the restore ignores a cut at the task too
    dropped = kept < len(comps) or len(kept_edits) < len(edits) or len(kept_prio) < len(prio)
    return ThreadView(
        memory,
        thread_id=thread_id,
        known=kept,
        known_edits=len(kept_edits),
        priorities=kept_prio,
        reset=dropped or archive is not None,
        archive=archive,
    )
