"""project_window (the projection computed without a memory) agrees with the memory it stands for.

Every view of a state is checked both ways: the direct projection, when it answers, must give the
same messages, tokens and trigger decision as a :class:`~langctx.LayeredChatMemory` restored over
the same window. Random agent histories (tests/unit_tests/test_properties.py) are fed to a
stateless loop in random chunks, compacting when due, so the views cover fresh threads, windows
after cuts and merges, edits (placeholders, truncations), pending tool calls, repairs, orphans
and usage calibration.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.channel import merge_langctx
from langctx.cli.demo.session import coding_session, iter_turns
from langctx.count_cache import CachedCounter, Described
from langctx.state_memory import MemorySettings, ThreadView, view_state
from langctx.tokens import ApproximateCounter
from tests._helpers import stateless_step
from tests.unit_tests.test_properties import (
    SETTINGS,
    History,
    build_memory,
    dump,
    histories,
    memory_options,
)


def _settings(options: dict[str, Any]) -> MemorySettings:
    mem = build_memory({**options, "oversize_policy": "truncate"})
    return MemorySettings.of(
        config=mem.config, summarizer=mem.summarizer, token_counter=mem.counter
    )


def check_view(view: ThreadView) -> bool:
    """Assert the direct projection (if any) matches the memory's; True when it answered."""
    fast = view._window
    memory = view.memory  # built now, whatever the view would have done
    if fast is None:
        return False
    assert dump(fast.messages) == dump(memory.build_context())
    assert fast.tokens == memory.context_tokens()
    assert fast.calibrated == memory.calibrated_tokens()
    assert fast.due == memory.needs_compaction()
    return True


def run_stateless(messages: list[BaseMessage], chunks: list[int], s: MemorySettings) -> int:
    """Feed ``messages`` chunk by chunk through view_state, compacting when due; returns how
    many views the direct projection answered."""
    state: dict[str, Any] = {"messages": [], "langctx": {}}
    answered = 0
    at = 0
    for size in chunks:
        state["messages"] = [*state["messages"], *messages[at : at + size]]
        at += size
        view = view_state(state, s)
        answered += check_view(view)
        view.compact_if_due()
        update = view.update()
        if update is not None:
            state["langctx"] = merge_langctx(state["langctx"], update)
    return answered


@settings(SETTINGS, max_examples=60)
@given(history=histories(), options=memory_options())
def test_direct_projection_agrees_with_the_memory(
    history: History, options: dict[str, Any]
) -> None:
    run_stateless(history.messages, history.chunks, _settings(options))


def test_the_direct_projection_answers_most_calls_of_a_coding_session() -> None:
    """The demo's coding session (reads, test runs, edits, giant outputs) at an 8k budget: the
    direct projection answers every view but those a compaction follows or that need a memory."""
    s = MemorySettings.of(max_tokens=8000)
    messages = coding_session(0, seed=3)
    chunks = [len(messages)]
    for turn in iter_turns(150, seed=3):
        messages.extend(turn)
        chunks.append(len(turn))
    answered = run_stateless(messages, chunks, s)
    assert answered >= 0.95 * len(chunks)


THINKING = AIMessage(
    [{"type": "thinking", "thinking": "hm", "signature": "sig"}, {"type": "text", "text": "ok"}],
    id="think",
)


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ([THINKING], "thinking blocks"),
        ([ToolMessage("late", tool_call_id="nobody", id="orphan")], "an orphan result"),
        (
            [
                AIMessage("", tool_calls=[{"id": "c1", "name": "ls", "args": {}}], id="ai"),
                HumanMessage("never mind", id="h9"),
            ],
            "an unanswered call before a human message",
        ),
        ([HumanMessage("Fix it.", id="task")], "a repeated id"),
    ],
)
def test_shapes_only_a_memory_handles_are_left_to_it(extra: list[BaseMessage], why: str) -> None:
    s = MemorySettings.of(max_tokens=8000)
    base = [SystemMessage("You are a coding agent.", id="sys"), HumanMessage("Fix it.", id="task")]
    view = view_state({"messages": [*base, *extra]}, s)
    assert view._window is None, why
    assert view.projection()  # the memory answers instead


def test_a_repeated_id_with_other_content_still_raises() -> None:
    from langctx import InvalidHistoryError

    s = MemorySettings.of(max_tokens=8000)
    messages = [HumanMessage("Fix it.", id="task"), HumanMessage("again", id="task")]
    view = view_state({"messages": messages}, s)
    with pytest.raises(InvalidHistoryError, match="already in the log"):
        view.projection()


class Counting(CachedCounter):
    """A cached approximate counter that records which messages it describes."""

    def __init__(self) -> None:
        super().__init__(ApproximateCounter())
        self.seen: list[str] = []

    def describe(self, message: BaseMessage) -> Described:
        self.seen.append(str(message.id))
        return super().describe(message)


def _fresh_projection(messages: list[BaseMessage], s: MemorySettings) -> list[BaseMessage]:
    """The projection of ``messages`` by a memory (no process-wide scan to resume from)."""
    memory = s.new_memory()
    memory.add_messages(messages)
    return memory.build_context()


def test_a_growing_state_is_scanned_from_where_the_last_call_ended() -> None:
    """Each call's log is the previous one plus new messages: only the new ones are described
    (each message once over the run), and the projection is the memory's."""
    counter = Counting()
    s = MemorySettings.of(max_tokens=50_000, token_counter=counter)
    plain = MemorySettings.of(max_tokens=50_000, token_counter=ApproximateCounter())
    messages: list[BaseMessage] = [
        SystemMessage("Be brief.", id="s"),
        HumanMessage("Fix it.", id="t"),
    ]
    for turn in iter_turns(12, seed=5):
        messages = [*messages, *turn]
        view = view_state({"messages": messages}, s)
        assert view._window is not None
        assert dump(view.projection()) == dump(_fresh_projection(messages, plain))
    assert sorted(counter.seen) == sorted(str(m.id) for m in messages)


def test_a_message_replaced_or_changed_in_place_is_described_again() -> None:
    s = MemorySettings.of(max_tokens=50_000)
    messages: list[BaseMessage] = [
        SystemMessage("Be brief.", id="s"),
        HumanMessage("Fix it.", id="t"),
    ]
    for turn in iter_turns(6, seed=2):
        messages = [*messages, *turn]
    before = view_state({"messages": messages}, s).projection()
    i = next(i for i, m in enumerate(messages) if isinstance(m, ToolMessage))
    # a replacement by id (what LangGraph's add_messages does): a new object, same id
    replaced = [*messages]
    replaced[i] = messages[i].model_copy(update={"content": "short now"})
    view = view_state({"messages": replaced}, s)
    assert view.projection()[i].content == "short now"
    assert view.context_tokens() < sum(s.counter.count_message(m) for m in before)
    # the same object with its content assigned in place
    messages[i].content = "changed in place"
    view = view_state({"messages": messages}, s)
    assert view.projection()[i].content == "changed in place"
    assert dump(view.projection()) == dump(_fresh_projection(messages, s))


def test_two_threads_with_the_same_first_messages_do_not_share_a_scan() -> None:
    s = MemorySettings.of(max_tokens=50_000)
    base: list[BaseMessage] = [SystemMessage("Be brief.", id="s"), HumanMessage("Fix it.", id="t")]
    a = [*base, *[m for turn in iter_turns(4, seed=1) for m in turn]]
    b = [*base, *[m for turn in iter_turns(4, seed=9) for m in turn]]
    for messages in (a, b, a, [*b, HumanMessage("and the docs", id="h-b")]):
        view = view_state({"messages": messages}, s)
        assert dump(view.projection()) == dump(_fresh_projection(messages, s))


def count_whole_projections(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one each time a window is projected whole (not extended)."""
    import langctx.window as window

    whole: list[int] = []
    projected = window._projected

    def counting_projected(*args: Any) -> Any:
        whole.append(1)
        return projected(*args)

    monkeypatch.setattr(window, "_projected", counting_projected)
    return whole


def test_the_call_after_a_cut_extends_what_the_compaction_call_readied(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The compaction call projects the window after its cut over the entries the channel will
    hold: the next call (its messages extend those) describes only its new messages, computes
    no projection whole and renders no summary block. Its projection is still the memory's."""
    import langctx.count_cache as count_cache
    import langctx.engine.layers as layers

    rendered: list[tuple[str, ...]] = []
    render = layers.render_summary_block

    def counting_render(summaries: Any, **kw: Any) -> BaseMessage:
        rendered.append(tuple(e["id"] for e in summaries))
        return render(summaries, **kw)

    digested: list[str] = []
    facts = count_cache.entry_facts

    def counting_facts(entry: Any) -> Any:
        digested.append(entry["id"])
        return facts(entry)

    whole = count_whole_projections(monkeypatch)
    monkeypatch.setattr(layers, "render_summary_block", counting_render)
    monkeypatch.setattr(count_cache, "entry_facts", counting_facts)
    counter = Counting()
    s = MemorySettings.of(max_tokens=8_000, token_counter=counter)
    state: dict[str, Any] = {"messages": coding_session(0, seed=3), "langctx": {}}
    after_cut, folded = 0, False
    for turn in iter_turns(120, seed=3):
        state["messages"] = [*state["messages"], *turn]
        before = len(state["langctx"].get("compactions") or [])
        counter.seen.clear()
        rendered.clear()
        digested.clear()
        whole.clear()
        view = stateless_step(state, s)
        if folded and view._memory is None:  # the call right after a compaction
            after_cut += 1
            assert sorted(counter.seen) == sorted(str(m.id) for m in turn)
            assert rendered == [] and digested == [] and whole == []
            assert check_view(view_state(state, s))
        folded = len(state["langctx"].get("compactions") or []) > before
    assert after_cut >= 10


def test_many_threads_in_one_process_keep_their_projections(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Threads served in turn by one process each find their latest projection: the folds of the
    others (summary blocks, digests, groupings: several records each) do not push it out, so a
    call that does not fold extends it instead of computing the window whole."""

    whole = count_whole_projections(monkeypatch)
    s = MemorySettings.of(max_tokens=6_000)
    threads = 80
    states: list[dict[str, Any]] = []
    turns: list[list[list[BaseMessage]]] = []
    for k in range(threads):
        # each thread its own ids
        start = [m.model_copy(update={"id": f"t{k}-{m.id}"}) for m in coding_session(0, seed=5)]
        states.append({"messages": start, "langctx": {}})
        turns.append(
            [
                [m.model_copy(update={"id": f"t{k}-{m.id}"}) for m in turn]
                for turn in iter_turns(40, seed=5)
            ]
        )
    plain = folds = 0
    for i in range(40):
        for state, own in zip(states, turns, strict=True):
            state["messages"] = [*state["messages"], *own[i]]
            before = len(state["langctx"].get("compactions") or [])
            whole.clear()
            view = stateless_step(state, s)
            if i < 2 or view._memory is not None:
                folds += len(state["langctx"].get("compactions") or []) > before
                continue
            plain += 1
            assert whole == [], i
    assert plain > 1_000 and folds > 2 * threads


def test_a_call_extending_the_last_one_still_applies_an_edit_to_a_new_message() -> None:
    """The projection of a call that only adds messages extends the previous call's, unless a
    new message is one an edit in the channel names (a channel written ahead of the messages,
    as a fork or a replay can leave it): that one is projected edited."""
    from langctx.entries import new_edit_entry

    s = MemorySettings.of(max_tokens=50_000)
    messages: list[BaseMessage] = [SystemMessage("Be brief.", id="s"), HumanMessage("Go.", id="t")]
    edit = new_edit_entry(
        message_id="late",
        content="[elided]",
        reason="placeholder",
        tokens_before=50,
        tokens_after=3,
    )
    channel = merge_langctx({}, {"v": 1, "edits": [edit]})
    first = view_state({"messages": messages, "langctx": channel}, s)
    assert first._window is not None
    grown = [*messages, AIMessage("working", id="a1"), AIMessage("x " * 200, id="late")]
    view = view_state({"messages": grown, "langctx": channel}, s)
    assert view._window is not None
    assert view.projection()[-1].content == "[elided]"
    assert check_view(view)
    plain = [*messages, AIMessage("working", id="a1"), AIMessage("y " * 200, id="other")]
    assert view_state({"messages": plain, "langctx": channel}, s).projection()[-1].id == "other"


def test_an_entry_that_keeps_the_cut_still_changes_the_next_projection() -> None:
    """A channel write that leaves the cut where it is (a background model summary replacing a
    local one is a merge entry of the newest summary) changes the summary block: the next call,
    though its messages extend the previous call's, projects the new block."""
    from langctx.entries import covered_count

    s = MemorySettings.of(max_tokens=8_000)
    state: dict[str, Any] = {"messages": coding_session(0, seed=4), "langctx": {}}
    turns = iter_turns(200, seed=4)
    while not state["langctx"].get("compactions"):
        state["messages"] = [*state["messages"], *next(turns)]
        stateless_step(state, s)
    newest = state["langctx"]["compactions"][-1]
    view_state(state, s)  # the projection this call extends
    upgrade = {
        **newest,
        "id": "cmp-upgrade",
        "summary": "Model summary: the parser is fixed.",
        "trigger": "merge",
        "quality": "model",
        "covered_ids": [],
        "covered_count": covered_count(newest),
        "merged_from": [newest["id"]],
    }
    state["langctx"] = merge_langctx(state["langctx"], {"v": 1, "compactions": [upgrade]})
    state["messages"] = [*state["messages"], HumanMessage("and the docs?", id="h-more")]
    view = view_state(state, s)
    assert view._window is not None
    assert any("the parser is fixed" in str(m.content) for m in view.projection())
    assert check_view(view)
