"""State read from a checkpoint is untrusted: every field of an entry is checked on read (one-line
StateVersionError), and a stored summary's size is measured, never believed."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_to_dict,
)

from langctx import LayeredChatMemory, MemorySettings, StateVersionError, view_state
from langctx.channel import merge_langctx


def _session() -> tuple[list[BaseMessage], dict[str, Any]]:
    mem = LayeredChatMemory(max_tokens=2000)
    mem.add_messages([SystemMessage("s", id="s"), HumanMessage("Fix the parser.", id="h")])
    for n in range(12):
        call = {"id": f"c{n}", "name": "read_file", "args": {"path": f"m{n}.py"}}
        mem.add_messages([AIMessage("", id=f"a{n}", tool_calls=[call])])
        mem.add_messages([ToolMessage("x = 1\n" * 80, tool_call_id=f"c{n}", id=f"t{n}")])
    assert mem.compactions
    state = mem.to_state()
    return mem.messages, {k: state[k] for k in ("v", "compactions", "edits", "priorities")}


CORRUPT = [
    ("level", "1", "level must be an int from 1 to 3"),
    ("level", 7, "level must be an int from 1 to 3"),
    ("summary", None, "summary must be a string"),
    ("summary", 12, "summary must be a string"),
    ("id", None, "id must be a non-empty string"),
    ("facts", "x", "facts must be a dict"),
    ("covered_ids", "abc", "covered_ids must be a list of message ids"),
    ("summary_tokens", -3, "summary_tokens must be an int >= 0"),
    ("first_kept_id", 5, "first_kept_id must be a message id or None"),
]


@pytest.mark.parametrize(
    ("field", "value", "error"), CORRUPT, ids=[f"{c[0]}={c[1]!r}" for c in CORRUPT]
)
def test_a_corrupt_entry_field_is_a_one_line_state_version_error(
    field: str, value: object, error: str
) -> None:
    messages, channel = _session()
    *older, last = channel["compactions"]
    bad = {**channel, "compactions": [*older, {**last, field: value}]}
    with pytest.raises(StateVersionError, match=error) as caught:  # as a checkpoint restores it
        LayeredChatMemory.from_state({**bad, "messages": messages_to_dict(messages)})
    assert "\n" not in str(caught.value)
    with pytest.raises(StateVersionError, match=error):  # and the reducer refuses it on a write
        merge_langctx({}, bad)
    settings = MemorySettings.of(max_tokens=2000)
    try:  # the stateless read trusts what the reducer wrote until reading it fails
        view = view_state({"messages": messages, "langctx": bad}, settings)
        view.compact_if_due()
        projection = view.projection()
    except StateVersionError as exc:
        assert error in str(exc) and "\n" not in str(exc)
    else:
        assert settings.counter.count_messages(projection) <= 2000


def test_an_entry_without_its_cut_is_a_state_version_error() -> None:
    messages, channel = _session()
    *older, last = channel["compactions"]
    entry = {k: v for k, v in last.items() if k != "first_kept_id"}
    bad = {**channel, "compactions": [*older, entry]}
    with pytest.raises(StateVersionError, match="lacks"):
        LayeredChatMemory.from_state({**bad, "messages": messages_to_dict(messages)})
    with pytest.raises(StateVersionError, match="lacks"):
        merge_langctx({}, bad)


@pytest.mark.parametrize("lie", [0, 10**9])
def test_a_5mb_summary_never_pushes_a_request_over_budget(lie: int) -> None:
    messages, channel = _session()
    entries = [
        {**e, "summary": "word " * 1_000_000, "summary_tokens": lie} for e in channel["compactions"]
    ]
    settings = MemorySettings.of(max_tokens=2000)
    view = view_state(
        {"messages": messages, "langctx": {**channel, "compactions": entries}}, settings
    )
    projection = view.projection()
    assert settings.counter.count_messages(projection) <= 2000
    assert any("[…cut]" in m.text for m in projection)


# ---------------------------------------------------------------------- the state's archive


def _archived_state() -> dict[str, Any]:
    """A state whose archive holds one real batch (a middleware run with the default archive)."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    from langctx.middleware import LangctxMiddleware
    from langctx.testing import ScriptedChatModel, ai_tool_call

    read = tool("read_file", description="Read a file.")(lambda path: "x = 1\n" * 400)
    calls = [ai_tool_call("read_file", {"path": f"f{i}.py"}) for i in range(12)]
    agent = create_agent(
        ScriptedChatModel(responses=[*calls, "Done."]),
        tools=[read],
        middleware=[LangctxMiddleware(max_tokens=3000)],
        checkpointer=InMemorySaver(),
    )
    out = agent.invoke({"messages": [("user", "Read.")]}, {"configurable": {"thread_id": "h"}})
    assert out["langctx_archive"]
    return dict(out)


@pytest.mark.parametrize(
    "archive",
    [None, "junk", 12, [], ["junk"], [{"kind": "langctx_archive_batch"}], [{"kind": "x"}]],
    ids=["none", "str", "int", "empty", "junk-item", "batch-without-fields", "other-kind"],
)
def test_an_archive_that_lost_its_batches_is_a_one_line_error(archive: Any) -> None:
    from langctx.stores.archive import ArchiveMissingError, full_log

    state = {**_archived_state(), "langctx_archive": archive}
    with pytest.raises(ArchiveMissingError, match=r"^archived batch '\d+-[0-9a-f]+' is not in"):
        full_log(state)


def test_an_archived_batch_this_langctx_cannot_read_is_a_one_line_error() -> None:
    from langctx.stores.archive import ArchiveMissingError, assemble, full_log

    state = _archived_state()
    for bad in ({"messages": [{"type": "nonsense"}]}, {"order": None}):
        batches = [{**b, **bad} for b in state["langctx_archive"]]
        with pytest.raises(ArchiveMissingError, match="was changed or removed"):
            full_log({**state, "langctx_archive": batches})  # its key is its content's digest
        with pytest.raises(StateVersionError, match="cannot be read by this langctx"):
            assemble(batches, state["messages"])  # as read from a store, by its key


@pytest.mark.parametrize("write", ["abc", 12, [1, 2]], ids=["str", "int", "list-of-int"])
def test_the_archive_reducer_refuses_what_is_no_batch(write: Any) -> None:
    from langctx.delta_state import append_batches

    with pytest.raises(StateVersionError, match="takes an archived batch"):
        append_batches([], [write])
