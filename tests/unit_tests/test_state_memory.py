"""The stateless engine: view_state, ThreadView and MemorySettings over hand-built states."""

from __future__ import annotations

import dataclasses
import gc
import inspect
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import (
    ConfigError,
    InvalidMessageError,
    LayeredChatMemory,
    MemoryConfig,
    StateVersionError,
)
from langctx.channel import CHANNEL_VERSION, merge_langctx
from langctx.config import ConfigOptions
from langctx.count_cache import CachedCounter, shared_cache
from langctx.state_memory import (
    NO_THREAD,
    MemoryOptions,
    MemorySettings,
    ThreadView,
    thread_id_of,
    view_state,
)
from tests._helpers import exchanges, ids_of

KEEP = 600
"""The low mark these budget tests are written for: 30% of 2,000 (the last exchange)."""

SYSTEM = SystemMessage("You are a coding agent.", id="sys")
TASK = HumanMessage("Fix the parser in src/parse.py so that nested lists parse.", id="task")
SETTINGS = MemorySettings.of(max_tokens=2000, keep_recent_tokens=KEEP)


def _compacted(messages: list[BaseMessage]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The state after one due compaction (as the reducer stores it), and its entry."""
    view = view_state({"messages": messages}, SETTINGS)
    entry = view.compact_if_due()
    assert entry is not None
    update = view.update()
    assert update is not None
    return {"messages": messages, "langctx": merge_langctx({}, update)}, dict(entry)


def _with_entry(messages: list[BaseMessage], entry: dict[str, Any]) -> dict[str, Any]:
    return {"messages": messages, "langctx": {"v": 1, "compactions": [entry]}}


# ---------------------------------------------------------------------- view_state


@pytest.mark.parametrize("state", [{}, {"messages": []}, {"messages": [], "langctx": {}}])
def test_empty_state(state: dict[str, Any]) -> None:
    view = view_state(state, SETTINGS)
    assert isinstance(view, ThreadView)
    assert view.projection() == []
    assert view.context_tokens() == 0
    assert view.due() is None and view.compact_if_due() is None
    assert view.update() is None
    assert view.thread_id == NO_THREAD


def test_below_budget_projects_the_state_and_writes_nothing() -> None:
    messages = [SYSTEM, TASK, *exchanges(2)]
    view = view_state({"messages": messages}, SETTINGS, thread_id="t1")
    assert [m.id for m in view.projection()] == ["sys", "task", "a0", "h0", "a1", "h1"]
    assert view.memory.compactions == [] and view.memory.edits == []
    assert view.due() is None and view.compact_if_due() is None
    assert view.update() is None
    assert view.thread_id == "t1"
    assert view.context_tokens() == SETTINGS.counter.count_messages(messages)


def test_calls_leave_no_reference_cycles_for_the_collector() -> None:
    """A view is freed as soon as its call drops it (a cycle per call made the cyclic collector
    run on every few calls of a long thread)."""
    messages = [SYSTEM, TASK, *exchanges(12)]
    state, _ = _compacted(messages)  # the views below read a channel: the window path
    plain = {**state, "messages": [*messages, *exchanges(1, start=12)]}
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            view = view_state(plain, SETTINGS)
            assert view.projection() and view.update() is None  # projected, no memory built
            built = view_state(plain, SETTINGS)
            assert built.memory.messages  # the memory built over the window
            fresh = view_state({"messages": messages}, SETTINGS)
            assert fresh.compact_if_due() is not None and fresh.update() is not None
        del view, built, fresh
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_due_is_proactive_before_a_call_and_threshold_after_a_response() -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    assert view_state({"messages": messages}, SETTINGS).due() == "proactive"
    usage = {"input_tokens": 5000, "output_tokens": 10, "total_tokens": 5010}
    answered = [*messages, AIMessage("Looking.", id="r", usage_metadata=usage)]
    assert view_state({"messages": answered}, SETTINGS).due() == "threshold"


def test_after_a_compaction_the_window_starts_at_the_latest_cut() -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    state, entry = _compacted(messages)
    assert entry["first_kept_id"] == "a11" and entry["task_id"] == "task"

    view = view_state(state, SETTINGS)
    assert [m.id for m in view.memory.messages] == ["sys", "task", "a11", "h11"]
    assert ids_of(view.projection()) == ["sys", "task", None, "a11", "h11"]
    assert [e["id"] for e in view.memory.summaries] == [entry["id"]]
    assert view.memory.first_kept_id == "a11"
    assert view.update() is None and view.due() is None
    assert view.memory.stats()["compactions"] == 1


def test_a_second_compaction_moves_the_window_to_the_new_cut() -> None:
    state, first = _compacted([SYSTEM, TASK, *exchanges(12)])
    state["messages"] = [*state["messages"], *exchanges(12, start=20)]
    view = view_state(state, SETTINGS)
    second = view.compact_if_due()
    # the cut: the last exchange's user message (its answers, shown with each folded request,
    # leave room for no more)
    assert second is not None and second["first_kept_id"] == "h31"
    update = view.update()
    assert update is not None
    written = [e["id"] for e in update["compactions"]]
    assert written[0] == second["id"] and first["id"] not in written  # only what is new
    assert all(e["trigger"] == "merge" for e in update["compactions"][1:])  # and its merges
    stored = {**state, "langctx": merge_langctx(state["langctx"], update)}
    again = view_state(stored, SETTINGS)
    assert [m.id for m in again.memory.messages] == ["sys", "task", "h31"]
    assert ids_of(again.projection())[:2] == ["sys", "task"]
    assert ids_of(again.projection())[-1:] == ["h31"]
    assert {first["id"], second["id"]} <= {e["id"] for e in again.memory.compactions}


def test_an_entry_that_folded_to_the_log_end_projects_the_later_messages() -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    _, entry = _compacted(messages)
    to_end = {**entry, "first_kept_id": None, "covered_ids": [m.id for m in exchanges(12)]}
    later = [AIMessage("Reading the lexer.", id="late-a"), HumanMessage("go on", id="late-h")]
    view = view_state(_with_entry([*messages, *later], to_end), SETTINGS)
    assert [m.id for m in view.memory.messages] == ["sys", "task", "late-a", "late-h"]
    assert ids_of(view.projection()) == ["sys", "task", None, "late-a", "late-h"]
    assert view.update() is None


def test_the_cut_message_removed_by_hand_rebuilds_with_a_reset_update() -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    state, entry = _compacted(messages)
    edited = {**state, "messages": [m for m in messages if m.id != entry["first_kept_id"]]}
    view = view_state(edited, SETTINGS)
    assert [m.id for m in view.projection()] == [m.id for m in edited["messages"]]
    assert view.memory.compactions == []
    update = view.update()
    assert update == {
        "v": CHANNEL_VERSION,
        "compactions": [],
        "edits": [],
        "priorities": {},
        "reset": True,
        "counter": "approximate",  # what the entries' token figures were counted with
    }


@pytest.mark.parametrize("keys", [("task_id",), ("task_id", "provider_compaction_id", "last_id")])
def test_legacy_entries_still_project_the_task(keys: tuple[str, ...]) -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    _, entry = _compacted(messages)
    legacy = {k: v for k, v in entry.items() if k not in keys}
    view = view_state(_with_entry(messages, legacy), SETTINGS)
    # an older entry names no task: the whole state is read (once: the next entry names it)
    assert [m.id for m in view.memory.messages] == [m.id for m in messages]
    assert ids_of(view.projection()) == ["sys", "task", None, "a11", "h11"]
    assert view.update() is None


_LEGACY_KEYS = ("task_id", "provider_compaction_id", "last_id")


def test_legacy_entries_pin_the_task_of_a_custom_is_task() -> None:
    settings = MemorySettings.of(
        max_tokens=2000, keep_recent_tokens=KEEP, is_task=lambda m: m.text.startswith("TASK:")
    )
    greeting = HumanMessage("Hello, I have a question about parsers.", id="greet")
    messages = [SYSTEM, greeting, HumanMessage("TASK: fix the parser", id="task"), *exchanges(12)]
    view = view_state({"messages": messages}, settings)
    entry = view.compact_if_due()
    assert entry is not None and entry["task_id"] == "task"
    legacy = {k: v for k, v in entry.items() if k not in _LEGACY_KEYS}
    window = view_state(_with_entry(messages, legacy), settings)
    assert window.memory.pinned_ids == ["sys", "task"]
    assert [m.id for m in window.projection()][:2] == ["sys", "task"]


def test_legacy_entries_after_a_provider_compaction_keep_the_item() -> None:
    item = AIMessage([{"type": "compaction", "content": "Provider summary."}], id="pc")
    messages = [SYSTEM, TASK, *exchanges(2), item, HumanMessage("go", id="go"), *exchanges(12, 20)]
    _, entry = _compacted(messages)
    legacy = {k: v for k, v in entry.items() if k not in _LEGACY_KEYS}
    full = SETTINGS.new_memory()
    full.restore(messages, compactions=[legacy])
    assert ids_of(full.build_context()) == ["sys", "pc", None, "a31", "h31"]
    window = view_state(_with_entry(messages, legacy), SETTINGS)
    assert ids_of(window.projection()) == ["sys", "pc", None, "a31", "h31"]


def test_a_version_2_entry_is_migrated_on_read() -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    _, entry = _compacted(messages)
    v2 = {k: v for k, v in entry.items() if k != "first_kept_id"}
    v2.update(v=2, first_kept_entry_id="a11")
    view = view_state(_with_entry(messages, v2), SETTINGS)
    assert ids_of(view.projection()) == ["sys", "task", None, "a11", "h11"]


def test_a_provider_compaction_item_before_the_cut_is_in_the_head() -> None:
    item = AIMessage([{"type": "compaction", "content": "Provider summary."}], id="pc")
    messages = [
        SYSTEM,
        TASK,
        *exchanges(2),
        item,
        HumanMessage("go on", id="after"),
        *exchanges(12, start=20),
    ]
    state, entry = _compacted(messages)
    assert entry["provider_compaction_id"] == "pc"
    assert entry["task_id"] is None  # the provider's summary carries the task now
    view = view_state(state, SETTINGS)
    assert [m.id for m in view.memory.messages] == ["sys", "pc", "a31", "h31"]
    assert ids_of(view.projection()) == ["sys", "pc", None, "a31", "h31"]


@pytest.mark.parametrize("where", ["entry", "channel"])
def test_unknown_versions_raise_state_version_error(where: str) -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    _, entry = _compacted(messages)
    if where == "entry":
        state: dict[str, Any] = _with_entry(messages, {**entry, "v": 99})
    else:
        state = {"messages": messages, "langctx": {"v": 99, "compactions": [entry]}}
    with pytest.raises(StateVersionError, match="99"):
        view_state(state, SETTINGS)


@pytest.mark.parametrize("stored", [False, True])
def test_two_fresh_views_of_one_state_agree(stored: bool) -> None:
    messages = [SYSTEM, TASK, *exchanges(12)]
    state = _compacted(messages)[0] if stored else {"messages": messages}

    def once() -> tuple[list[dict[str, Any]], Any]:
        shared_cache().clear()
        view = view_state(state, MemorySettings.of(max_tokens=2000, keep_recent_tokens=KEEP))
        view.compact_if_due()
        update = view.update()
        entries = [
            {k: v for k, v in e.items() if k != "created_at"}
            for e in (update or {}).get("compactions", [])
        ]
        return [m.model_dump() for m in view.projection()], (update is None, entries)

    first, second = once(), once()
    assert first == second
    assert first[1][0] is stored  # a stored compaction leaves nothing to write
    assert len(first[1][1]) == (0 if stored else 1)


def test_thread_id_of() -> None:
    assert thread_id_of(None) == NO_THREAD
    assert thread_id_of({}) == NO_THREAD
    assert thread_id_of({"configurable": {"thread_id": 7}}) == "7"


# ---------------------------------------------------------------------- MemorySettings


def test_memory_settings_of_resolves_once() -> None:
    settings = MemorySettings.of(max_tokens=3000, command_tools=["bash"])
    assert settings.config.max_tokens == 3000
    assert isinstance(settings.counter, CachedCounter)
    assert settings.counter.name == "approximate"
    assert settings.command_tools == frozenset({"bash"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.config = MemoryConfig()  # type: ignore[misc]
    cfg = MemoryConfig(max_tokens=5000)
    assert MemorySettings.of(config=cfg).config is cfg


def test_memory_settings_of_rejects_unknown_options() -> None:
    with pytest.raises(ConfigError, match="max_tokenz"):
        MemorySettings.of(max_tokenz=3000)  # type: ignore[call-arg]


def test_memory_settings_of_rejects_config_and_options_together() -> None:
    with pytest.raises(ConfigError, match="not both"):
        MemorySettings.of(config=MemoryConfig(max_tokens=3000), max_tokens=4000)


def test_memory_settings_of_rejects_invalid_values() -> None:
    with pytest.raises(ConfigError, match="max_tokens"):
        MemorySettings.of(max_tokens=0)


def test_typed_options_match_memory_config() -> None:
    fields = set(inspect.signature(MemoryConfig).parameters)  # max_context_tokens too (InitVar)
    config_keys = set(ConfigOptions.__optional_keys__) | set(ConfigOptions.__required_keys__)
    memory_keys = set(MemoryOptions.__optional_keys__) | set(MemoryOptions.__required_keys__)
    assert config_keys == fields
    assert memory_keys >= config_keys
    assert memory_keys - config_keys == {
        "config",
        "summarizer",
        "token_counter",
        "file_tools",
        "command_tools",
        "on_compaction",
    }


def test_messages_without_ids_get_stable_ones_so_entries_can_name_them() -> None:
    messages = [m.model_copy(update={"id": None}) for m in [SYSTEM, TASK, *exchanges(12)]]
    view = view_state({"messages": messages}, SETTINGS)
    entry = view.compact_if_due()
    assert entry is not None
    state = {"messages": messages, "langctx": merge_langctx({}, view.update())}
    again = view_state(state, SETTINGS)
    assert again.update() is None  # the cut was found: no rebuild, no reset
    assert [m.id for m in again.projection()] == [m.id for m in view.projection()]


@pytest.mark.parametrize("others", [0, 3, 40])
def test_edits_of_window_messages_apply_however_many_edits_the_channel_holds(others: int) -> None:
    """Edits are looked up by message: from the channel's side when it holds fewer edits than
    the window has messages, from the window's side when it holds more; same result."""
    from langctx.entries import new_edit_entry

    messages = [SYSTEM, TASK, *exchanges(3)]
    mine = [
        new_edit_entry(
            message_id=mid,
            reason="placeholder",
            content=f"[{mid} elided]",
            tokens_before=9,
            tokens_after=4,
        )
        for mid in ("h2", "h0")
    ]
    elsewhere = [
        new_edit_entry(
            message_id=f"gone{i}",
            reason="placeholder",
            content="x",
            tokens_before=2,
            tokens_after=1,
        )
        for i in range(others)
    ]
    channel = merge_langctx(
        {}, {"v": 1, "edits": [*elsewhere[: others // 2], *mine, *elsewhere[others // 2 :]]}
    )
    view = view_state({"messages": messages, "langctx": channel}, SETTINGS)
    assert [e["message_id"] for e in view.memory.edits] == ["h0", "h2"]  # in log order
    texts = {m.id: m.content for m in view.projection()}
    assert texts["h0"] == "[h0 elided]" and texts["h2"] == "[h2 elided]"
    assert texts["h1"] == messages[5].content
    assert view.update() is None


def test_active_positions_match_the_active_summaries_at_every_length() -> None:
    """At every length of the channel, ``active_positions`` names the entries no later one
    merged, in projection order."""
    from langctx.cli.demo.session import iter_turns
    from langctx.count_cache import shared_blocks
    from langctx.engine.restoring import active_positions
    from langctx.entries import active_summaries

    memory = LayeredChatMemory(max_tokens=3000)
    for turn in iter_turns(300, seed=4):
        memory.add_messages(turn)
    entries = memory.compactions
    assert sum(e["trigger"] == "merge" for e in entries) >= 5  # merges of merges among them
    shared_blocks().clear()
    for k in range(1, len(entries) + 1):
        if k % 3:
            continue  # several new entries at once, as between two calls
        got = [entries[p - 1]["id"] for p in active_positions(entries[:k])]
        assert got == [e["id"] for e in active_summaries(entries[:k])], k


def test_restore_window_applies_each_message_s_edits_in_order_in_any_interleaving() -> None:
    from langctx.entries import new_edit_entry

    def edit(mid: str, n: int) -> Any:
        return new_edit_entry(
            message_id=mid,
            content=f"[{mid} elided {n}]",
            reason="placeholder",
            tokens_before=9,
            tokens_after=3,
        )

    window = [HumanMessage("Fix the parser.", id="h")]
    for i in range(7):
        call = {"id": f"c{i}", "name": "read_file", "args": {"path": f"f{i}.py"}}
        window += [AIMessage("", tool_calls=[call], id=f"a{i}")]
        window += [ToolMessage("x = 1\n" * 50, tool_call_id=f"c{i}", id=f"m{i}")]
    edits = [edit(f"m{i % 7}", i) for i in range(30)]
    projections = []
    for order in (edits, sorted(edits, key=lambda e: -int(e["message_id"][1:]))):  # stable sort
        memory = LayeredChatMemory(max_tokens=8000)
        memory.restore_window([], window, edits=order)
        projections.append(memory.build_context())
    shown = {m.id: m.content for m in projections[0]}
    assert [shown[f"m{i}"] for i in range(7)] == [
        f"[m{i} elided {i + 28 - 7 * (i > 1)}]" for i in range(7)
    ]
    assert projections[0] == projections[1]


def test_entry_digests_name_what_a_summary_block_shows() -> None:
    """Copies of an entry share its digest; another summary, level or fact gives another."""
    import copy

    from langctx.count_cache import entry_digest
    from tests.unit_tests.test_langctx_channel import _compaction

    entry = {**_compaction(), "facts": {"commands": ["pytest"]}}
    assert entry_digest(copy.deepcopy(entry)) == entry_digest(entry)
    for change in (
        {"summary": "Goal: fix it!"},
        {"level": 2},
        {"read_files": ["b.py"]},
        {"facts": {"commands": ["pytest -x"]}},
        {"covered_count": 5},
    ):
        assert entry_digest({**entry, **change}) != entry_digest(entry), change


def test_threads_with_the_same_ids_keep_their_own_summary_blocks() -> None:
    """Two threads whose messages share ids (a client numbering its messages) but not content
    fold into entries with the same ids and the same model summary: each projection's ledger
    still names its own files (the process-wide block cache is keyed by the entries themselves)."""
    from langchain_core.messages import ToolMessage

    def thread(name: str) -> list[BaseMessage]:
        out: list[BaseMessage] = [
            SystemMessage("Be brief.", id="s"),
            HumanMessage("Fix it.", id="t"),
        ]
        for i in range(40):
            call = {
                "id": f"c{i}",
                "name": "write_file",
                "args": {"path": f"src/{name}_{i}.py", "content": "x = 1\n" * 30},
            }
            out.append(AIMessage("", tool_calls=[call], id=f"a{i}"))
            out.append(ToolMessage("ok " * 40, tool_call_id=f"c{i}", id=f"r{i}"))
        return out

    def summary(request: object) -> str:
        return "Goal: fix it. Done: files written."  # the same text for both threads

    settings = MemorySettings.of(
        max_tokens=3000, summarizer=summary, background_summaries=False, summary_threshold_tokens=0
    )
    projections = {}
    for name in ("alpha", "beta", "alpha"):
        state: dict[str, Any] = {"messages": thread(name), "langctx": {}}
        view = view_state(state, settings)
        assert view.compact_if_due() is not None
        update = view.update()
        assert update is not None
        state["langctx"] = merge_langctx(state["langctx"], update)
        projections[name] = str(view_state(state, settings).projection()[2].content)
    assert "alpha_" in projections["alpha"] and "beta_" not in projections["alpha"]
    assert "beta_" in projections["beta"] and "alpha_" not in projections["beta"]


def test_two_edits_with_one_id_keep_their_own_views() -> None:
    """Two threads whose messages are alike and whose edits share an id (message id, reason, size
    and tokens alike) but not their text: each projection shows its own edit (the process-wide
    cache of edited views is keyed by what the edit says)."""
    from langchain_core.messages import ToolMessage

    from langctx.entries import new_edit_entry

    messages: list[BaseMessage] = [
        SystemMessage("Be brief.", id="s"),
        HumanMessage("Fix it.", id="t"),
        AIMessage("", tool_calls=[{"id": "c1", "name": "run", "args": {}}], id="a1"),
        ToolMessage("long output " * 50, tool_call_id="c1", id="r1"),
    ]
    settings = MemorySettings.of(max_tokens=8000)
    shown = {}
    for text in ("[note A]", "[note B]", "[note A]"):
        edit = new_edit_entry(
            message_id="r1", reason="placeholder", content=text, tokens_before=150, tokens_after=9
        )
        state: dict[str, Any] = {"messages": list(messages), "langctx": {"v": 1, "edits": [edit]}}
        shown[text] = view_state(state, settings).projection()[-1].content
    assert shown == {"[note A]": "[note A]", "[note B]": "[note B]"}


def test_channels_with_the_same_entry_ids_keep_their_own_active_summaries() -> None:
    """Entry ids name what an entry covers, not what merged it: two threads' channels of the same
    length whose first and last entries share ids but whose merges differ each get their own
    active summaries (found by the elision property test as a stale summary block)."""
    from langctx.engine.restoring import active_positions

    def entry(eid: str, level: int, merged: list[str]) -> dict[str, Any]:
        return {"id": eid, "level": level, "merged_from": merged}

    merged = [entry("x", 1, []), entry("m", 1, []), entry("y", 2, ["x", "m"])]
    apart = [entry("x", 1, []), entry("m", 1, []), entry("y", 1, [])]
    for _ in range(2):
        assert active_positions(merged) == (3,)  # type: ignore[arg-type]
        assert active_positions(apart) == (1, 2, 3)  # type: ignore[arg-type]


# ----------------------------------------------------------------- message-likes in the state

HEAD = [SystemMessage("Be brief.", id="s"), HumanMessage("Fix the parser in src/p.py.", id="h")]


@pytest.mark.parametrize(
    "item", [{"role": "user", "content": "hi"}, ("ai", "hello"), "plain text"], ids=repr
)
@pytest.mark.parametrize("where", ["alone", "after the head"])
def test_message_likes_in_the_state_are_converted_with_stable_ids(item: Any, where: str) -> None:
    messages = [item] if where == "alone" else [*HEAD, item]
    settings = MemorySettings.of(max_tokens=4000)
    first = view_state({"messages": messages}, settings).projection()
    again = view_state({"messages": messages}, settings).projection()
    assert all(isinstance(m, BaseMessage) for m in first)
    assert ids_of(first) == ids_of(again)
    memory = LayeredChatMemory(max_tokens=4000)
    memory.add_messages(messages)
    assert [(m.type, m.content) for m in first] == [
        (m.type, m.content) for m in memory.build_context()
    ]


@pytest.mark.parametrize("item", [None, 42, object()], ids=lambda x: type(x).__name__)
@pytest.mark.parametrize("index", [0, 2])
def test_an_item_that_is_no_message_is_refused_by_its_index(item: Any, index: int) -> None:
    messages: list[Any] = [*HEAD]
    messages.insert(index, item)
    with pytest.raises(InvalidMessageError, match=rf"state message {index} \("):
        view_state({"messages": messages}, MemorySettings.of(max_tokens=4000)).projection()


@pytest.mark.parametrize(
    ("value", "contents"),
    [
        ("hello", ["hello"]),
        ({"role": "user", "content": "hi"}, ["hi"]),
        (("user", "hi"), ["hi"]),
        (HumanMessage("x", id="x"), ["x"]),
        ((HumanMessage("a", id="a"), HumanMessage("b", id="b")), ["a", "b"]),
    ],
    ids=["str", "dict", "pair", "message", "tuple of messages"],
)
def test_a_messages_value_that_is_no_list_is_read_as_the_reducer_reads_it(
    value: Any, contents: list[str]
) -> None:
    view = view_state({"messages": value}, MemorySettings.of(max_tokens=4000))
    assert [m.content for m in view.projection()] == contents


def test_a_messages_value_that_is_no_message_is_refused() -> None:
    with pytest.raises(InvalidMessageError, match=r"state message 0 \(int\)"):
        view_state({"messages": 5}, MemorySettings.of(max_tokens=4000)).projection()
