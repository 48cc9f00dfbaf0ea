"""LangctxChatMessageHistory: projection, cache, compaction on add, persistence, bad input."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)
from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
from langchain_core.runnables.history import RunnableWithMessageHistory

from langctx import (
    ConfigError,
    InvalidHistoryError,
    InvalidMessageError,
    LayeredChatMemory,
    StateVersionError,
)
from langctx.channel import CHANNEL_VERSION
from langctx.history import (
    STATE_KEY,
    LangctxChatMessageHistory,
    SQLiteChatHistoryStore,
)
from langctx.testing import ScriptedChatModel, ai_tool_call

ROOT = Path(__file__).resolve().parents[2]

# langchain-core warns whenever RunnableWithMessageHistory is constructed (deprecated since 1.3.3);
# that is upstream's warning about the runnable, not ours, so these tests ignore exactly it.
RWMH_DEPRECATED = (
    "ignore:RunnableWithMessageHistory is deprecated:"
    "langchain_core._api.deprecation.LangChainDeprecationWarning"
)
# ... and when InMemoryChatMessageHistory itself is instantiated (deprecated since 1.6.4).
IN_MEMORY_DEPRECATED = (
    "ignore:The class `InMemoryChatMessageHistory` was deprecated:"
    "langchain_core._api.deprecation.LangChainDeprecationWarning"
)

BUDGET = 1500


def turn(i: int) -> list[BaseMessage]:
    """One id-less exchange of about 130 tokens."""
    return [
        HumanMessage(f"question {i}: " + "context " * 40),
        AIMessage(f"answer {i}: " + "reply " * 40),
    ]


class ListHistory(BaseChatMessageHistory):
    """A user's own full-log store (stands in for a SQL-backed history)."""

    def __init__(self) -> None:
        self.messages: list[BaseMessage] = []
        self.add_calls = 0

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.add_calls += 1
        self.messages.extend(messages)

    def clear(self) -> None:
        self.messages = []


def count_calls(monkeypatch: pytest.MonkeyPatch, obj: object, name: str) -> list[int]:
    """Wrap obj.name to count its calls; returns a one-item list holding the count."""
    calls = [0]
    original: Callable[..., Any] = getattr(obj, name)

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(obj, name, spy)
    return calls


def added(n: int) -> list[BaseMessage]:
    return [m for i in range(n) for m in turn(i)]


# ---------------------------------------------------------------------------------- projection


def test_without_compaction_messages_are_exactly_what_was_added() -> None:
    history = LangctxChatMessageHistory(max_tokens=100_000)
    msgs = [SystemMessage("sys"), HumanMessage("hi"), AIMessage("hello", id="run-1")]
    history.add_messages(msgs)
    assert history.messages == msgs
    assert history.full_messages == msgs
    assert history.messages[0] is msgs[0]  # the very objects, not copies
    assert [m.id for m in history.messages] == [None, None, "run-1"]
    assert str(history) == "System: sys\nHuman: hi\nAI: hello"


def test_compaction_on_add_bounds_projection_and_keeps_full_log() -> None:
    history = LangctxChatMessageHistory(max_tokens=BUDGET)
    for i in range(40):
        history.add_messages(turn(i))
        assert history.memory.context_tokens() <= BUDGET
        assert history.memory.counter.count_messages(history.messages) <= BUDGET
    assert history.memory.compactions
    assert history.full_messages == added(40)  # complete, in order, ids as given (none)
    assert len(history.messages) < len(history.full_messages)
    assert history.messages[0] == HumanMessage(turn(0)[0].content)  # the task stays pinned
    assert "[langctx] Earlier conversation history was compacted" in history.messages[1].text
    assert history.messages[-1] == turn(39)[1]


def test_messages_is_cached_and_stable(monkeypatch: pytest.MonkeyPatch) -> None:
    history = LangctxChatMessageHistory(max_tokens=BUDGET)
    for i in range(20):
        history.add_messages(turn(i))
    builds = count_calls(monkeypatch, history.memory, "build_context")
    first, second = history.messages, history.messages
    assert builds[0] == 1  # two reads, one build
    assert first == second and first is not second
    first.clear()  # a caller mutating its copy does not touch the cache
    assert history.messages == second
    assert builds[0] == 1
    history.add_messages(turn(20))  # a write invalidates
    assert builds[0] == 1  # ... lazily
    assert history.messages[-1] == turn(20)[1]
    assert history.messages[-1] == turn(20)[1]
    assert builds[0] == 2


async def test_aget_messages_uses_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    history = LangctxChatMessageHistory(max_tokens=BUDGET)
    await history.aadd_messages(turn(0))
    builds = count_calls(monkeypatch, history.memory, "build_context")
    assert await history.aget_messages() == await history.aget_messages() == turn(0)
    assert builds[0] == 1


@pytest.mark.parametrize("tool_id", [None, "tool-1"])
def test_edited_view_keeps_the_id_it_was_added_with(tool_id: str | None) -> None:
    history = LangctxChatMessageHistory(max_tokens=2000)
    history.add_messages([HumanMessage("Fix the parser in parser.py."), AIMessage("ok")])
    call = ai_tool_call("run_command", {"command": "pytest"}, call_id="c1")
    big = ToolMessage(
        "FAILED test_x.py::test_a - AssertionError\n" * 400, tool_call_id="c1", id=tool_id
    )
    history.add_messages([call, big])
    assert history.memory.edits  # the newest turn alone was too large: truncated in place
    shown = [m for m in history.messages if isinstance(m, ToolMessage)]
    assert len(shown) == 1 and shown[0].id == tool_id
    assert "message langctx-hist-3 in the log" in shown[0].text  # == full_messages[3]
    assert shown[0].content != big.content and "characters cut here" in shown[0].text
    assert history.full_messages[-1] is big  # the log keeps the original


def test_ids_are_the_callers_like_any_chat_history() -> None:
    history = LangctxChatMessageHistory()
    msg = AIMessage("hello", id="run-1")
    other = AIMessage("something else", id="run-1")  # a reused id is not the memory's business
    history.add_messages([HumanMessage("hi"), msg])
    history.add_messages([msg, other])
    assert history.full_messages == history.messages == [HumanMessage("hi"), msg, msg, other]
    assert [m.id for m in history.memory.messages] == [f"langctx-hist-{i}" for i in range(4)]


def test_equality_and_repr() -> None:
    a, b = LangctxChatMessageHistory(), LangctxChatMessageHistory(max_tokens=50_000)
    a.add_messages(turn(0))
    assert a != b
    b.add_messages(turn(0))
    assert a == b
    assert "full_messages=2" in repr(a)


def test_messages_cannot_be_assigned() -> None:
    history = LangctxChatMessageHistory()
    with pytest.raises(AttributeError, match="append-only"):
        history.messages = [HumanMessage("x")]


def test_docstring_says_legacy_and_links_the_alternative() -> None:
    doc = LangctxChatMessageHistory.__doc__ or ""
    assert "deprecated" in doc
    assert "https://docs.langchain.com/oss/python/langchain/short-term-memory" in doc


# ---------------------------------------------------------------------------------- RunnableWithMessageHistory


@pytest.mark.filterwarnings(RWMH_DEPRECATED)
def test_runnable_with_message_history_end_to_end(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedChatModel(
        responses=[lambda msgs: f"reply to {msgs[-1].text[:11]}: " + "words " * 40], cycle=True
    )
    history = LangctxChatMessageHistory(max_tokens=BUDGET)
    builds = count_calls(monkeypatch, history.memory, "build_context")
    chain = RunnableWithMessageHistory(model, lambda session_id: history)
    config: Any = {"configurable": {"session_id": "s1"}}
    for i in range(30):
        before = history.messages
        question = HumanMessage(f"question {i}: " + "context " * 40)
        out = chain.invoke([question], config)
        assert model.calls[-1] == [*before, question]  # the model saw the projection + input
        assert history.full_messages[-2:] == [question, out]
        assert history.memory.context_tokens() <= BUDGET
    assert builds[0] == 30  # RunnableWithMessageHistory reads twice a turn; one build per turn
    assert history.memory.compactions
    assert len(history.full_messages) == 60
    assert [m.type for m in history.full_messages] == ["human", "ai"] * 30


@pytest.mark.filterwarnings(RWMH_DEPRECATED)
async def test_runnable_with_message_history_async(monkeypatch: pytest.MonkeyPatch) -> None:
    model = ScriptedChatModel(responses=["answer " * 40], cycle=True)
    with SQLiteChatHistoryStore.from_conn_string(":memory:", max_tokens=BUDGET) as store:
        prompt = ChatPromptTemplate.from_messages([MessagesPlaceholder("h"), ("human", "{q}")])
        chain = RunnableWithMessageHistory(
            prompt | model, store.get_history, input_messages_key="q", history_messages_key="h"
        )
        config: Any = {"configurable": {"session_id": "s1"}}
        for i in range(20):
            before = store.get_history("s1").messages
            await chain.ainvoke({"q": f"question {i}: " + "context " * 40}, config)
            assert model.calls[-1][:-1] == before  # the model saw the projection
        history = store.get_history("s1")
        assert history.memory.compactions
        assert len(history.full_messages) == 40
        assert history.memory.context_tokens() <= BUDGET
        assert store.open_history("s1").messages == history.messages  # persisted as it went


# ---------------------------------------------------------------------------------- async twins


async def test_async_twins() -> None:
    history = LangctxChatMessageHistory(max_tokens=BUDGET)
    for i in range(30):
        await history.aadd_messages(turn(i))
        assert history.memory.context_tokens() <= BUDGET
    assert history.memory.compactions
    assert history.full_messages == added(30)
    twin = LangctxChatMessageHistory(max_tokens=BUDGET)
    for i in range(30):
        twin.add_messages(turn(i))
    for i in (30, 31, 32):  # turns more: /compact has an older turn to fold
        history.add_messages(turn(i))
        twin.add_messages(turn(i))
    entry, sync_entry = await history.acompact("keep the numbers"), twin.compact("keep the numbers")
    assert entry is not None and sync_entry is not None
    assert entry["covered_ids"] == sync_entry["covered_ids"]
    await history.aclear()
    assert await history.aget_messages() == [] and history.full_messages == []


async def test_concurrent_aadd_messages_keep_call_order(tmp_path: Path) -> None:
    with SQLiteChatHistoryStore.from_conn_string(
        str(tmp_path / "h.db"), max_tokens=BUDGET
    ) as store:
        history = store.get_history("s")
        await asyncio.gather(*(history.aadd_messages(turn(i)) for i in range(25)))
        assert history.full_messages == added(25)
        assert store.open_history("s").full_messages == added(25)


def test_sync_twin_matches_async() -> None:
    sync = LangctxChatMessageHistory(max_tokens=BUDGET)
    for i in range(30):
        sync.add_messages(turn(i))
    other = LangctxChatMessageHistory(max_tokens=BUDGET)

    async def fill() -> None:
        for i in range(30):
            await other.aadd_messages(turn(i))

    asyncio.run(fill())
    assert [m.content for m in sync.messages[2:]] == [m.content for m in other.messages[2:]]
    assert len(sync.memory.compactions) == len(other.memory.compactions)


# ---------------------------------------------------------------------------------- wrapped history


def test_wrapped_history_gets_the_full_log_and_state_the_entries() -> None:
    store, state = ListHistory(), dict[str, Any]()
    history = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    for i in range(30):
        history.add_messages(turn(i))
    assert store.messages == added(30)  # exactly what was added, ids untouched
    assert store.add_calls == 30  # one bulk write per add
    saved = state[STATE_KEY]
    assert saved["v"] == CHANNEL_VERSION == 2
    assert [e["id"] for e in saved["compactions"]] == [e["id"] for e in history.memory.compactions]
    json.dumps(saved)  # JSON-safe

    reopened = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    assert reopened.messages == history.messages
    assert reopened.full_messages == history.full_messages

    # after a restart the next write compacts from the restored entries (same projection to
    # start from; later summaries may differ, as entry ids are random and counted as tokens)
    n = len(reopened.memory.compactions)
    for i in range(30, 45):
        reopened.add_messages(turn(i))
        assert reopened.memory.context_tokens() <= BUDGET
    assert len(reopened.memory.compactions) > n
    assert [e["id"] for e in state[STATE_KEY]["compactions"]][:n] == [
        e["id"] for e in history.memory.compactions
    ]
    assert store.messages == reopened.full_messages == added(45)


@pytest.mark.filterwarnings(IN_MEMORY_DEPRECATED)
async def test_wrapping_in_memory_chat_message_history_async() -> None:
    from langchain_core.chat_history import InMemoryChatMessageHistory

    store, state = InMemoryChatMessageHistory(), dict[str, Any]()
    history = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    for i in range(25):
        await history.aadd_messages(turn(i))
    assert store.messages == added(25)
    reopened = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    assert reopened.messages == history.messages
    await history.aclear()
    assert store.messages == [] and STATE_KEY not in state


def test_entries_saved_with_the_old_id_prefix_restore_the_same_projection() -> None:
    store, state = ListHistory(), dict[str, Any]()
    history = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    for i in range(30):
        history.add_messages(turn(i))
    assert history.memory.compactions
    old = json.loads(json.dumps(state[STATE_KEY]).replace('"langctx-hist-', '"lcx-hist-'))
    assert "langctx-hist-" not in json.dumps(old["compactions"])
    reopened = LangctxChatMessageHistory(history=store, state={STATE_KEY: old}, max_tokens=BUDGET)
    assert reopened.messages == history.messages
    assert reopened.memory.compactions == history.memory.compactions


def test_wrapping_an_existing_long_history_compacts_on_request() -> None:
    store = ListHistory()
    store.add_messages(added(40))
    history = LangctxChatMessageHistory(history=store, max_tokens=BUDGET)
    assert history.messages == added(40)  # opening never compacts ...
    assert history.compact() is not None  # ... compact() (or the next add) does
    assert history.memory.context_tokens() <= BUDGET
    assert history.full_messages == added(40)


def test_state_that_does_not_match_the_log_is_a_clear_error() -> None:
    store, state = ListHistory(), dict[str, Any]()
    history = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    for i in range(30):
        history.add_messages(turn(i))
    store.clear()  # the log cleared behind langctx's back
    with pytest.raises(StateVersionError, match="disagree"):
        LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    state[STATE_KEY] = {"v": 99}
    with pytest.raises(StateVersionError, match="version 99"):
        LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)


@pytest.mark.parametrize(
    "hostile",
    [
        {"compactions": [5]},
        {"compactions": "abc"},
        {"edits": {"a": 1}},
        {"compactions": [{"id": "cmp-1", "level": "1"}]},
    ],
)
def test_hostile_stored_entries_are_a_one_line_error(hostile: dict[str, Any]) -> None:
    store, state = ListHistory(), dict[str, Any]()
    history = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    for i in range(30):
        history.add_messages(turn(i))
    state[STATE_KEY] = {**state[STATE_KEY], **hostile}
    with pytest.raises(StateVersionError) as caught:
        LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    assert "\n" not in str(caught.value)


# ---------------------------------------------------------------------------------- SQLite


def test_sqlite_two_instances_rebuild_the_same_projection(tmp_path: Path) -> None:
    path = str(tmp_path / "chat.db")
    with LangctxChatMessageHistory.from_conn_string(path, "s1", max_tokens=BUDGET) as history:
        for i in range(30):
            history.add_messages(turn(i))
        projection, entries = history.messages, history.memory.compactions
        history.add_messages([ai_tool_call("read_file", {"path": "a.py"}, call_id="c1")])
        history.add_messages(
            [ToolMessage("x = 1", tool_call_id="c1", name="read_file"), AIMessage("ok")]
        )
        projection, full = history.messages, history.full_messages
        assert entries
    with LangctxChatMessageHistory.from_conn_string(path, "s1", max_tokens=BUDGET) as again:
        assert again.messages == projection
        assert again.full_messages == full
        assert [e["id"] for e in again.memory.compactions] == [
            e["id"] for e in history.memory.compactions
        ]
        again.add_messages(turn(99))  # and keeps compacting from there
        assert again.memory.context_tokens() <= BUDGET
    with LangctxChatMessageHistory.from_conn_string(path, "other", max_tokens=BUDGET) as other:
        assert other.messages == []  # sessions are separate


@pytest.mark.parametrize("stored", ["{not json", "[1, 2]", "5"])
def test_a_corrupt_sqlite_entry_row_is_a_one_line_error(tmp_path: Path, stored: str) -> None:
    path = str(tmp_path / "chat.db")
    with LangctxChatMessageHistory.from_conn_string(path, "s1", max_tokens=BUDGET) as history:
        for i in range(30):
            history.add_messages(turn(i))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE langctx_history_entries SET entry = ?", (stored,))
    with (
        pytest.raises(StateVersionError, match=r"entry \d+ is not a JSON object; it was not"),
        LangctxChatMessageHistory.from_conn_string(path, "s1", max_tokens=BUDGET),
    ):
        pass


def test_a_memory_factory_that_is_falsy_is_still_used(tmp_path: Path) -> None:
    class Factory:  # callable, and false in a boolean context (as an empty container is)
        def __len__(self) -> int:
            return 0

        def __call__(self) -> LayeredChatMemory:
            return LayeredChatMemory(max_tokens=4321)

    with SQLiteChatHistoryStore.from_conn_string(str(tmp_path / "h.db"), memory=Factory()) as store:
        assert store.get_history("s").memory.config.max_tokens == 4321


def test_sqlite_writes_are_inserts_of_the_new_rows_only(tmp_path: Path) -> None:
    with SQLiteChatHistoryStore.from_conn_string(
        str(tmp_path / "h.db"), max_tokens=BUDGET
    ) as store:
        history = store.get_history("s")
        for i in range(30):
            history.add_messages(turn(i))
        statements: list[str] = []
        store.conn.set_trace_callback(statements.append)
        for i in range(30, 40):
            history.add_messages(turn(i))
        store.conn.set_trace_callback(None)
        writes = [s for s in statements if s.split()[0].upper() in {"INSERT", "UPDATE", "DELETE"}]
        assert all(s.startswith("INSERT") for s in writes)
        assert sum("langctx_history_messages" in s for s in writes) == 20  # 10 turns x 2
        n_msgs, n_entries = store.conn.execute(
            "SELECT (SELECT COUNT(*) FROM langctx_history_messages),"
            " (SELECT COUNT(*) FROM langctx_history_entries)"
        ).fetchone()
        assert n_msgs == 80
        mem = history.memory
        snapshot = mem.to_state()  # each folded user message in one row, whatever merged it,
        folded = len(snapshot.get("users") or []) + snapshot.get("users_dropped", 0)
        answered = sum(1 for u in snapshot.get("users") or [] if u.get("answer"))
        assert folded > 0 and answered > 0  # and one more when a later fold finds its answer
        rows = len(mem.compactions) + len(mem.edits) + len(mem.eviction_log) + folded
        assert rows <= n_entries <= rows + answered


CHILD = """
import json, sys
from langchain_core.messages import AIMessage, HumanMessage, messages_to_dict
from langctx.history import LangctxChatMessageHistory
with LangctxChatMessageHistory.from_conn_string(sys.argv[1], "s1", max_tokens=1500) as h:
    before = messages_to_dict(h.messages)
    for i in range(30, 45):
        h.add_messages([HumanMessage(f"question {i}: " + "context " * 40),
                        AIMessage(f"answer {i}: " + "reply " * 40)])
    after = messages_to_dict(h.messages)
print(json.dumps({"before": before, "after": after, "full": len(h.full_messages)}))
"""


def test_sqlite_persistence_across_processes_without_warnings(tmp_path: Path) -> None:
    path = str(tmp_path / "chat.db")
    with LangctxChatMessageHistory.from_conn_string(path, "s1", max_tokens=BUDGET) as history:
        for i in range(30):
            history.add_messages(turn(i))
        mine = messages_to_dict(history.messages)
    # a fresh interpreter with every warning an error: importing and using the adapter is clean
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", CHILD, path],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert out.returncode == 0 and out.stderr == "", out.stderr
    child = json.loads(out.stdout)
    assert child["before"] == mine  # the child rebuilt exactly our projection
    assert child["full"] == 90
    with LangctxChatMessageHistory.from_conn_string(path, "s1", max_tokens=BUDGET) as history:
        assert messages_to_dict(history.messages) == child["after"]  # and we rebuild the child's
        assert history.full_messages == added(45)


def test_sqlite_concurrent_writer_is_refused_and_rolled_back(tmp_path: Path) -> None:
    with SQLiteChatHistoryStore.from_conn_string(
        str(tmp_path / "h.db"), max_tokens=BUDGET
    ) as store:
        first, second = store.open_history("s"), store.open_history("s")
        first.add_messages(turn(0))
        before = second.messages
        with pytest.raises(InvalidHistoryError, match="another history"):
            second.add_messages(turn(1))
        assert second.messages == before and second.full_messages == []
        assert store.open_history("s").full_messages == turn(0)


def test_sqlite_clear_removes_only_that_session(tmp_path: Path) -> None:
    with SQLiteChatHistoryStore.from_conn_string(
        str(tmp_path / "h.db"), max_tokens=BUDGET
    ) as store:
        for sid in ("a", "b"):
            for i in range(20):
                store.get_history(sid).add_messages(turn(i))
        store.get_history("a").clear()
        assert store.open_history("a").full_messages == []
        assert store.open_history("b").full_messages == added(20)
        store.get_history("a").add_messages(turn(0))
        assert store.open_history("a").messages == turn(0)


def test_sqlite_round_trips_tool_calls_and_metadata(tmp_path: Path) -> None:
    msgs: list[BaseMessage] = [
        SystemMessage("sys"),
        HumanMessage("go", additional_kwargs={"k": [1, 2]}),
        AIMessage(
            "",
            id="run-7",
            tool_calls=[{"id": "c1", "name": "read_file", "args": {"path": "a.py"}}],
            usage_metadata={"input_tokens": 10, "output_tokens": 2, "total_tokens": 12},
        ),
        ToolMessage("x = 1", tool_call_id="c1", name="read_file", status="success"),
    ]
    path = str(tmp_path / "h.db")
    with LangctxChatMessageHistory.from_conn_string(path, "s") as history:
        history.add_messages(msgs)
    with LangctxChatMessageHistory.from_conn_string(path, "s") as history:
        assert history.full_messages == msgs
        assert history.messages == msgs


def test_sqlite_bad_path_is_a_config_error(tmp_path: Path) -> None:
    bad = str(tmp_path / "missing-dir" / "h.db")
    with (
        pytest.raises(ConfigError, match="missing-dir"),
        SQLiteChatHistoryStore.from_conn_string(bad),
    ):
        pass


def test_sqlite_user_connection_and_lazy_setup() -> None:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    store = SQLiteChatHistoryStore(conn, memory=lambda: LayeredChatMemory(max_tokens=BUDGET))
    assert not store.is_setup
    store.get_history("s").add_messages(turn(0))
    assert store.is_setup
    assert store.open_history("s").messages == turn(0)
    conn.close()


# ---------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "bad",
    [
        ["hello"],
        "hello",
        [("user", "hi")],
        [{"role": "user", "content": "hi"}],
        [None],
        [1],
        42,
        [RemoveMessage(id="m1")],
    ],
)
def test_non_messages_raise_invalid_message_error(bad: Any, tmp_path: Path) -> None:
    with LangctxChatMessageHistory.from_conn_string(str(tmp_path / "h.db"), "s") as history:
        history.add_messages(turn(0))
        with pytest.raises(InvalidMessageError):
            history.add_messages(bad)
        with pytest.raises(InvalidMessageError):
            asyncio.run(history.aadd_messages(bad))
        assert history.full_messages == turn(0)
    with LangctxChatMessageHistory.from_conn_string(str(tmp_path / "h.db"), "s") as history:
        assert history.full_messages == turn(0)  # nothing written


def test_unserialisable_message_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    with LangctxChatMessageHistory.from_conn_string(str(tmp_path / "h.db"), "s") as history:
        with pytest.raises(InvalidMessageError, match="JSON"):
            history.add_messages([HumanMessage("hi", additional_kwargs={"obj": object()})])
        assert history.full_messages == [] and history.memory.messages == []


def test_refused_messages_roll_back_memory_and_store() -> None:
    store = ListHistory()
    history = LangctxChatMessageHistory(history=store, max_tokens=BUDGET, orphan_policy="error")
    history.add_messages([HumanMessage("hi"), AIMessage("hello", id="run-1")])
    before = history.messages
    with pytest.raises(InvalidHistoryError, match="orphan_policy"):
        history.add_messages([HumanMessage("more"), ToolMessage("x", tool_call_id="nope")])
    assert history.messages == before
    assert history.full_messages == store.messages == before
    assert len(history.memory.messages) == 2  # the memory was rebuilt, "more" is gone
    history.add_messages([HumanMessage("more")])  # and the history still works
    assert history.messages[-1] == HumanMessage("more")


async def test_refused_messages_roll_back_memory_and_store_async() -> None:
    store = ListHistory()
    history = LangctxChatMessageHistory(history=store, max_tokens=BUDGET, orphan_policy="error")
    await history.aadd_messages([HumanMessage("hi"), AIMessage("hello", id="run-1")])
    before = history.messages
    with pytest.raises(InvalidHistoryError, match="orphan_policy"):
        await history.aadd_messages([HumanMessage("more"), ToolMessage("x", tool_call_id="nope")])
    assert history.messages == before
    assert history.full_messages == store.messages == before
    assert len(history.memory.messages) == 2
    await history.aadd_messages([HumanMessage("more")])
    assert history.messages[-1] == HumanMessage("more")


class FailingState(dict):  # type: ignore[type-arg]
    """An entries mapping whose writes fail once armed (a full disk, a dropped connection)."""

    armed = False

    def __setitem__(self, key: Any, value: Any) -> None:
        if self.armed:
            raise OSError("disk full")
        super().__setitem__(key, value)


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_failed_entries_write_rolls_compact_back(asynchronous: bool) -> None:
    store, state = ListHistory(), FailingState()
    history = LangctxChatMessageHistory(history=store, state=state, max_tokens=BUDGET)
    for i in range(12):
        history.add_messages(turn(i))
    before, entries = history.messages, history.memory.compactions
    state.armed = True
    with pytest.raises(OSError, match="disk full"):
        if asynchronous:
            asyncio.run(history.acompact("keep the numbers"))
        else:
            history.compact("keep the numbers")
    assert history.memory.compactions == entries and history.messages == before
    assert len(history.full_messages) == len(store.messages) == 24
    state.armed = False
    assert history.compact("keep the numbers") is not None  # and the history still works


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match="projection"):
        LangctxChatMessageHistory(history=LangctxChatMessageHistory())
    with pytest.raises(ConfigError, match="history="):
        LangctxChatMessageHistory(state={})
    with pytest.raises(ConfigError, match="not both"):
        LangctxChatMessageHistory(LayeredChatMemory(), max_tokens=10)
    used = LayeredChatMemory()
    used.add_messages([HumanMessage("x")])
    with pytest.raises(ConfigError, match="empty"):
        LangctxChatMessageHistory(used)
    with pytest.raises(ConfigError):
        LangctxChatMessageHistory(max_tokens=-5)
    with pytest.raises(ConfigError, match="session_id"):
        SQLiteChatHistoryStore(sqlite3.connect(":memory:")).get_history("")
    with pytest.raises(ConfigError, match="unknown memory option"):
        SQLiteChatHistoryStore(sqlite3.connect(":memory:"), max_tokes=100)


# ---------------------------------------------------------------------------------- warnings


def test_using_the_adapter_emits_no_deprecation_warning() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        history = LangctxChatMessageHistory()
        history.add_messages(turn(0))
        history.add_user_message("x")
        _ = history.messages, str(history)
    assert [str(w.message) for w in caught] == []
