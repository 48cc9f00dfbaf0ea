"""Archive mode: folded messages leave ``messages`` for one append-only batch per compaction, in
the state's ``langctx_archive`` key or a LangGraph store; :func:`full_log` gives the whole
conversation back (docs/persistence.md, "Archive mode")."""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from functools import partial
from typing import Any, Literal, overload

from langchain_core.messages import BaseMessage, convert_to_messages, messages_from_dict
from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp

from langctx.archive_packing import pack_batch
from langctx.archive_repair import (
    agrees,
    check_placed,
    checked_batch,
    newest_batch,
    state_batches,
    thread_entries,
)
from langctx.channel import ARCHIVE_KEY, archive_record
from langctx.errors import ConfigError, LangctxError, StateVersionError
from langctx.state_memory import NO_THREAD, ThreadView
from langctx.steps import adrive, drive
from langctx.stores.archive_plan import ArchiveBatch, ArchivePlan, batch_key, plan_archive
from langctx.stores.references import abatch, namespace_label, refresh_on_read

__all__ = [
    "ARCHIVE_NAMESPACE",
    "Archive",
    "ArchiveMissingError",
    "ArchiveOption",
    "afull_log",
    "archive_namespace",
    "aread_batches",
    "assemble",
    "full_log",
    "read_batches",
    "thread_entries",
]

ARCHIVE_NAMESPACE: tuple[str, ...] = ("langctx", "archive")
"""Prefix of the per-thread archive namespaces."""

ArchiveOption = BaseStore | bool | Literal["state", "auto"] | None
"""What ``archive=`` accepts: ``"auto"`` (the middleware's default: the graph's store when it has
one, else the state), ``"state"`` (the state's ``langctx_archive`` key), a store, True (the graph's
store), or None/False (no archive)."""

_PAGE = 500


class ArchiveMissingError(LangctxError, LookupError):
    """A batch the state's archive record names is not in the store (``key``: its key)."""

    def __init__(self, message: str, *, key: str) -> None:
        super().__init__(message)
        self.key = key


def archive_namespace(thread_id: str) -> tuple[str, ...]:
    """The store namespace of a thread's archive.

    Example:
        >>> archive_namespace("run.1")
        ('langctx', 'archive', 'run%2E1')
    """
    return (*ARCHIVE_NAMESPACE, namespace_label(str(thread_id)))


class Archive:
    """Archive mode for one integration: where batches go, and the archive step itself.

    Args:
        store: ``"state"``, ``"auto"`` (the graph's store when it has one, else the state), a
            set-up LangGraph ``BaseStore``, or True for the graph's own store.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> Archive.from_option(InMemoryStore()) is not None, Archive.from_option(None)
        (True, None)
        >>> Archive.from_option("state").in_state
        True
        >>> auto = Archive.from_option("auto")
        >>> auto.at(None).in_state, auto.at(InMemoryStore()).in_state
        (True, False)
    """

    def __init__(self, store: BaseStore | bool | Literal["state", "auto"] = True) -> None:
        if (
            store is not True
            and store not in ("state", "auto")
            and not isinstance(store, BaseStore)
        ):
            msg = (
                f'archive= takes "auto", "state", a langgraph BaseStore (InMemoryStore, '
                f"SqliteStore, PostgresStore), True for the graph's store, or None, got {store!r}."
            )
            raise ConfigError(msg)
        self.auto = store == "auto"
        self.in_state = store == "state"
        self.store: BaseStore | None = store if isinstance(store, BaseStore) else None

    def at(self, runtime_store: BaseStore | None) -> Archive:
        """This archive for a step of a graph whose store is ``runtime_store``: ``"auto"``
        resolved (the graph's store, else the state), any other as it is."""
        if not self.auto:
            return self
        return Archive(True) if runtime_store is not None else _IN_STATE

    @classmethod
    def from_option(cls, option: ArchiveOption) -> Archive | None:
        """An :class:`Archive` for an ``archive=`` argument (None when archive mode is off)."""
        return None if option is None or option is False else cls(option)

    def resolve(self, runtime_store: BaseStore | None) -> BaseStore:
        """The store to write to: the configured one, else the graph's."""
        store = self.store if self.store is not None else runtime_store
        if store is None:
            msg = (
                "archive=True needs the graph's store, and this graph has none: pass "
                "store=... to compile() / create_agent(), or pass the store itself as archive=."
            )
            raise ConfigError(msg)
        return store

    def check(self, state: Mapping[str, Any], thread_id: str) -> None:
        """Raise when the batches go to the state and the graph's state schema has no key for them.

        Raises:
            ConfigError: ``archive="state"``, a thread, and no ``langctx_archive`` in ``state``.
        """
        if self.in_state and thread_id != NO_THREAD and ARCHIVE_KEY not in state:
            msg = (
                f'archive="state" (and "auto" on a graph without a store) keeps folded messages '
                f"in the state's {ARCHIVE_KEY!r} key, and this graph's state schema has none: add "
                f"`{ARCHIVE_KEY}: NotRequired[ArchivedBatches]` (from langctx.delta_state) to the "
                "schema, as LangctxState does, or pass archive=None to keep every message in "
                "`messages`, or a store as archive= (docs/persistence.md)."
            )
            raise ConfigError(msg)

    def plan(self, state: Mapping[str, Any], view: ThreadView) -> ArchivePlan | None:
        """The archive step for ``state`` after ``view`` synced it (None: nothing to archive, or no
        thread, or no ``langctx_archive`` key in the state: :meth:`check` first)."""
        if view.thread_id == NO_THREAD or (self.in_state and ARCHIVE_KEY not in state):
            return None
        plan = plan_archive(
            thread_id=view.thread_id,
            raw=list(state.get("messages") or []),
            first_kept_id=view.memory.first_kept_id,
            pinned_ids=view.memory.pinned_ids,
            channel=state.get("langctx"),
            update=view.update(),
            in_state=self.in_state,
        )
        if plan is not None:
            plan.in_state = self.in_state
        return plan

    @staticmethod
    def write(store: BaseStore, plan: ArchivePlan) -> None:
        """Write the plan's batch, unless an earlier attempt of the same step already did."""
        drive(_writing(store, plan), store.batch)

    @staticmethod
    async def awrite(store: BaseStore, plan: ArchivePlan) -> None:
        """Async version of `write`."""
        await adrive(_writing(store, plan), partial(abatch, store))

    @staticmethod
    def apply(out: dict[str, Any], plan: ArchivePlan | None) -> dict[str, Any]:
        """A node's update (its ``langctx``: the view's latest) plus the plan's removals, channel
        update and (in the state) batch."""
        if plan is None:
            return out
        update = {
            **out,
            "messages": [*(out.get("messages") or []), *plan.removals],
            "langctx": plan.channel_with(out.get("langctx")),
        }
        if plan.in_state:  # packed: a run start reads the archive's snapshot back
            update[ARCHIVE_KEY] = [pack_batch(plan.batch)]
        return update


_IN_STATE = Archive("state")


def _writing(
    store: BaseStore, plan: ArchivePlan
) -> Generator[tuple[GetOp] | tuple[PutOp], Any, None]:
    ns = archive_namespace(plan.batch["thread_id"])
    (found,) = yield (GetOp(ns, plan.key, refresh_ttl=refresh_on_read(store)),)
    if found is None:  # packed, as in the state: zlib over the batch's JSON (a third of it)
        yield (PutOp(ns, plan.key, pack_batch(plan.batch), index=False),)


def read_batches(
    store: BaseStore | None, thread_id: str | None, state: Mapping[str, Any]
) -> list[ArchiveBatch]:
    """The archived batches of ``state``'s history, oldest first (arguments as :func:`full_log`)."""
    reading = _reading(store, thread_id, state)
    return drive(reading, lambda ops: store.batch(ops))  # type: ignore[union-attr]


async def aread_batches(
    store: BaseStore | None, thread_id: str | None, state: Mapping[str, Any]
) -> list[ArchiveBatch]:
    """Async version of `read_batches`."""
    reading = _reading(store, thread_id, state)
    return await adrive(reading, partial(abatch, store))  # type: ignore[arg-type]


def _state_items(state: Mapping[str, Any]) -> dict[str, Any]:
    """The batches the state holds, by key (what is no batch left out).

    Raises:
        StateVersionError: a batch this langctx cannot read (:func:`checked_batch`).
    """
    return {batch_key(b): b for b in state_batches(state.get(ARCHIVE_KEY))}


def _reading(
    store: BaseStore | None, thread_id: str | None, state: Mapping[str, Any]
) -> Generator[tuple[SearchOp | GetOp, ...], Any, list[ArchiveBatch]]:
    """Reading the archive as store operations: yields each one, is sent its result (the
    namespace listed page by page, then a batch the listing missed fetched by key)."""
    items = _state_items(state)
    if store is None or thread_id is None:
        chain, missing = _chain(items, state)
        if missing is not None:
            msg = (
                f"archived batch {missing!r} is not in the state's {ARCHIVE_KEY!r}: a batch there "
                "was changed or removed, or the thread archived to a store (pass it: "
                "full_log(store, thread_id, state))."
            )
            raise ArchiveMissingError(msg, key=missing)
        return chain
    ns = archive_namespace(thread_id)
    refresh = refresh_on_read(store)
    offset = 0
    unrecorded = archive_record(state.get("langctx")) is None  # the archive may say otherwise
    while unrecorded or _chain(items, state)[1] is not None:
        (page,) = yield (SearchOp(ns, limit=_PAGE, offset=offset, refresh_ttl=refresh),)
        _collect(items, page)
        if len(page) < _PAGE:
            break
        offset += _PAGE
    while (missing := _chain(items, state)[1]) is not None:
        (item,) = yield (GetOp(ns, missing, refresh_ttl=refresh),)
        if item is None or checked_batch(item.value) is None:
            what = "not in the store" if item is None else "something else in the store"
            msg = (
                f"archived batch {missing!r} is {what}; the state's archive record "
                "names it. Pass the store this thread archived to (archive=...)."
            )
            raise ArchiveMissingError(msg, key=missing)
        _collect(items, [item])
    return _chain(items, state)[0]


@overload
def full_log(state: Mapping[str, Any], /) -> list[BaseMessage]: ...


@overload
def full_log(
    store: BaseStore | None, thread_id: str | None, state: Mapping[str, Any], /
) -> list[BaseMessage]: ...


def full_log(*args: Any) -> list[BaseMessage]:
    """The thread's whole conversation (archived and live messages, in order).

    ``full_log(state)`` for the in-state archive; ``full_log(store, thread_id, state)`` for a
    store. ``state``: ``graph.get_state(config).values``, or what ``invoke`` returned.

    Raises:
        ArchiveMissingError: a batch the state names is not in the state or the store.

    Example:
        >>> from langgraph.store.memory import InMemoryStore
        >>> full_log({"messages": [("user", "hi")]})[0].content
        'hi'
        >>> full_log(InMemoryStore(), "t1", {"messages": [("user", "hi")]})[0].content
        'hi'
    """
    store, thread_id, state = _log_args(args)
    return assemble(read_batches(store, thread_id, state), state.get("messages") or [])


@overload
async def afull_log(state: Mapping[str, Any], /) -> list[BaseMessage]: ...


@overload
async def afull_log(
    store: BaseStore | None, thread_id: str | None, state: Mapping[str, Any], /
) -> list[BaseMessage]: ...


async def afull_log(*args: Any) -> list[BaseMessage]:
    """Async version of `full_log`."""
    store, thread_id, state = _log_args(args)
    return assemble(await aread_batches(store, thread_id, state), state.get("messages") or [])


def _log_args(args: Sequence[Any]) -> tuple[BaseStore | None, str | None, Mapping[str, Any]]:
    if len(args) == 1 and isinstance(args[0], Mapping):
        return None, None, args[0]
    if len(args) == 3 and isinstance(args[2], Mapping):
        store, thread_id, state = args
        if store is None or isinstance(store, BaseStore):
            return store, thread_id, state
    msg = "full_log takes (state) or (store, thread_id, state), state being the graph's values."
    raise TypeError(msg)


def assemble(batches: Sequence[ArchiveBatch], live: Sequence[Any]) -> list[BaseMessage]:
    """Archived batches (oldest first) and the live messages, merged back into one ordered log."""
    current = convert_to_messages(list(live))
    by_id = {str(m.id): m for m in current if m.id is not None}
    placed: dict[str, BaseMessage] = {}
    for batch in batches:
        archived, order = _read_batch(batch)
        for mid in order:
            m = archived.get(mid) or by_id.get(mid)
            if mid not in placed and m is not None:
                placed[mid] = m
    return [*placed.values(), *(m for m in current if m.id is None or str(m.id) not in placed)]


def _read_batch(batch: Mapping[str, Any]) -> tuple[dict[str, BaseMessage], list[str]]:
    """A batch's messages by id and its order.

    Raises:
        StateVersionError: ``batch`` is no batch this langctx reads.
    """
    if checked_batch(batch) is None:
        msg = f"an archived batch cannot be read by this langctx: it is a {type(batch).__name__}"
        raise StateVersionError(msg)
    try:
        archived = {str(m.id): m for m in messages_from_dict(batch["messages"])}
        order = list(batch["order"])
    except (KeyError, TypeError, ValueError) as exc:
        problem = " ".join(f"{type(exc).__name__}: {exc}".split())[:300]  # pydantic's: lines
        msg = f"archived batch {batch.get('seq')!r} cannot be read by this langctx: {problem}"
        raise StateVersionError(msg) from exc
    return archived, order


def _collect(items: dict[str, Any], found: Sequence[Item | None]) -> None:
    """The store's batches of ``found`` into ``items`` by key (each checked, the rest left out)."""
    for item in found:
        if item is not None and (batch := checked_batch(item.value)) is not None:
            items[item.key] = batch  # unpacked


def _last_key(items: Mapping[str, Any], state: Mapping[str, Any]) -> str | None:
    """Key of the batch that ends the archive: the one the channel's record names, unless the
    archive's newest batch says otherwise (:mod:`langctx.archive_repair`).

    Raises:
        StateVersionError: the state holds archived messages that neither the channel nor the
            messages place (:func:`check_placed`).
    """
    record = archive_record(state.get("langctx"))
    held = state_batches(state.get(ARCHIVE_KEY))
    if record is not None and not held:  # a store's archive: the record names its end
        return record.get("last")
    present = _present(state).__contains__
    newest = newest_batch(state_batches(list(items.values())), present)
    if newest is not None and not agrees(record, newest):
        return batch_key(newest)  # type: ignore[arg-type]
    if newest is None and held:
        check_placed(held, record, present)
    return record.get("last") if record else None


def _present(state: Mapping[str, Any]) -> set[str]:
    """The ids of the state's messages."""
    ids = (
        m.get("id") if isinstance(m, Mapping) else getattr(m, "id", None)
        for m in state.get("messages") or ()
    )
    return {str(i) for i in ids if i is not None}


def _chain(
    items: Mapping[str, Any], state: Mapping[str, Any]
) -> tuple[list[ArchiveBatch], str | None]:
    """The batches of the chain the state's archive record ends, as far as ``items`` hold them
    (oldest first), and the first key they miss (None: the chain is complete)."""
    key = _last_key(items, state)
    out: list[ArchiveBatch] = []
    while key is not None and key in items:
        if len(out) == len(items):  # more batches than there are: a "prev" leads back
            msg = (
                f"the archived batches link in a cycle at {key!r} (the archive was edited); "
                "restore the thread's archive batches from a backup."
            )
            raise StateVersionError(msg)
        out.append(items[key])
        key = items[key].get("prev")
    return out[::-1], key
