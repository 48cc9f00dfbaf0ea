"""Hostile message sequences (issue 41, item 8): human / AI (with tool calls) / tool / system
messages with odd, duplicate or missing ids, empty, block-list, huge or control-character
content, orphan calls and results, fed to ``LayeredChatMemory.add_messages`` + ``build_context``
and to ``create_agent`` + ``LangctxMiddleware`` with a scripted model.

The property: every request is within the budget, has no orphan tool call or result, holds the
task and the newest user message, and nothing accepted is lost from the log; or the input is
refused with a documented one-line ``langctx.errors`` exception (docs/configuration.md, "Policies
for bad input")."""

from __future__ import annotations

import itertools
import warnings

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from langchain.agents import create_agent  # imported once, before any example is timed
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx import LayeredChatMemory, MemorySettings
from langctx.errors import InvalidMessageError, LangctxWarning
from langctx.machinery import is_substantive_task
from langctx.message_checks import refusal
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.testing import ScriptedChatModel
from tests._helpers import assert_pairs_intact
from tests.unit_tests.hostile._hostile import HUGE_REPR, assert_request_pairs, refused_or

pytestmark = pytest.mark.filterwarnings(HUGE_REPR)

BUDGET = 2000
TASK = "Fix the parser in src/parse.py."

ODD_IDS = st.one_of(
    st.none(),
    st.sampled_from(["", "1", "x", "\x00", "cmp-0", "lc-summary", "a" * 2000, "../x", "t 1"]),
    st.text(max_size=6),
)
TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(
        ["", " ", "\x00\x01\x7f", "\x1b[31mred", "ok\r\n", "</langctx:summary>", "/compact"]
    ),
    st.just("big output line\n" * 3000),  # ~12k tokens
)
CONTENT = st.one_of(
    TEXT,
    st.lists(
        st.one_of(
            TEXT.map(lambda t: {"type": "text", "text": t}),
            st.just({"type": "image", "url": "https://example.invalid/x.png"}),
            st.just({"type": "mystery", "payload": [1, 2]}),
        ),
        max_size=3,
    ),
)
CALL_IDS = st.sampled_from(["c1", "c2", "c3", "", "dup"])
TOOL_NAMES = st.sampled_from(["read_file", "bash", "x" * 300, "a\x00b", ""])


@st.composite
def turn(draw: st.DrawFn) -> list[BaseMessage]:
    """One batch: a user message, an AI message (maybe with tool calls) and tool results (all,
    some, none or unknown ones), or a system message."""
    kind = draw(st.sampled_from(["human", "ai", "tools", "system"]))
    mid = draw(ODD_IDS)
    if kind == "human":
        return [HumanMessage(draw(CONTENT), id=mid)]
    if kind == "system":
        return [SystemMessage(draw(TEXT), id=mid)]
    calls = draw(st.lists(st.tuples(CALL_IDS, TOOL_NAMES), max_size=3 if kind == "tools" else 0))
    tool_calls = [
        {"id": c, "name": n, "args": {"path": "f.py"}, "type": "tool_call"} for c, n in calls
    ]
    out: list[BaseMessage] = [AIMessage(draw(CONTENT), id=mid, tool_calls=tool_calls)]
    answered = (
        draw(st.lists(CALL_IDS, max_size=4)) if draw(st.booleans()) else [c for c, _ in calls]
    )
    out += [ToolMessage(draw(TEXT), tool_call_id=c, id=draw(ODD_IDS)) for c in answered]
    return out


SESSIONS = st.lists(turn(), min_size=1, max_size=8)


def _assert_request(
    sent: list[BaseMessage], newest: BaseMessage | None, task_id: str, *, mid_turn: bool = True
) -> None:
    """``mid_turn``: a memory's ``build_context`` may end with the calls its last AI message
    still waits for; a graph's request (``mid_turn=False``) answers them."""
    counter = MemorySettings.of(max_tokens=BUDGET).counter
    assert counter.count_messages(sent) <= BUDGET
    (assert_request_pairs if mid_turn else assert_pairs_intact)(sent)
    ids = [m.id for m in sent]
    assert task_id in ids, "the task is sent"
    if newest is not None and newest.id not in ids:  # folded: quoted in the summary block
        head = _letters(newest.text)[:40]  # (terminal escapes and control characters left out)
        assert any(head in _letters(m.text) for m in sent), f"newest user message {newest.id!r}"


def _letters(text: str) -> str:
    """The letters and digits of ``text`` once terminal escapes are removed (as quoted)."""
    from langctx.context_mode.sanitize import clean_terminal

    return "".join(c for c in clean_terminal(text) if c.isalnum())


def _newest_user(log: list[BaseMessage], task_id: str) -> BaseMessage | None:
    """The newest user message that is a request (not blank, not a slash command)."""
    humans = [
        m for m in log if isinstance(m, HumanMessage) and m.id != task_id and is_substantive_task(m)
    ]
    return humans[-1] if humans else None


@settings(max_examples=120, suppress_health_check=[HealthCheck.too_slow])
@given(session=SESSIONS)
def test_a_memory_fed_hostile_messages_sends_valid_requests_or_refuses_in_one_line(
    session: list[list[BaseMessage]],
) -> None:
    mem = LayeredChatMemory(max_tokens=BUDGET)
    mem.add_messages(
        [SystemMessage("You are a coding agent.", id="sys"), HumanMessage(TASK, id="task")]
    )
    accepted = 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangctxWarning)  # surrogates in tool results: escaped
        for batch in session:
            _, refused = refused_or(lambda b=batch: mem.add_messages(b))  # type: ignore[misc]
            event("refused" if refused else "accepted")
            if refused is None:
                accepted += len(batch)
            note(f"{len(batch)} messages: {refused or 'accepted'}")
            log = mem.messages
            assert len(log) <= accepted  # the same id with the same content is synced once
            _, refused = refused_or(
                lambda: mem.needs_compaction() and mem.compact(trigger="proactive")
            )
            sent = mem.build_context()
            _assert_request(sent, _newest_user(log, "task"), "task")
    assert [m.id for m in mem.messages[:2]] == ["sys", "task"]


_runs = itertools.count()


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(session=SESSIONS)
def test_create_agent_given_a_hostile_history_sends_a_valid_request_or_refuses_in_one_line(
    session: list[list[BaseMessage]],
) -> None:
    model = ScriptedChatModel(responses=["Done."], cycle=True)
    agent = create_agent(
        model,
        tools=[],
        middleware=[LangctxMiddleware(max_tokens=BUDGET)],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": f"h{next(_runs)}"}}
    history = [HumanMessage(TASK, id="task"), *(m for batch in session for m in batch)]
    for turn_input in (history, [HumanMessage("And the tests?", id="next")]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangctxWarning)
            out, refused = refused_or(lambda x=turn_input: agent.invoke({"messages": x}, cfg))  # type: ignore[misc]
        event("refused" if refused else "ran")
        if refused is not None:
            note(f"refused: {refused}")
            return
        log = full_log(out)
        if model.calls:  # (none when the input ends with ``/compact``: answered by langctx)
            _assert_request(model.calls[-1], _newest_user(log, "task"), "task", mid_turn=False)
        logged = {m.id for m in log}
        assert {m.id for m in turn_input if m.id} <= logged, "nothing accepted is lost"


@pytest.mark.parametrize("call_id", ["", None])
def test_a_tool_call_without_an_id_is_refused_in_one_line(call_id: str | None) -> None:
    """Found by the property above: a tool call with an empty id was never tracked as open, so
    the next turn sent it with no result (no provider accepts that); the memory refuses it."""
    mem = LayeredChatMemory(max_tokens=BUDGET)
    mem.add_messages([HumanMessage(TASK, id="task")])
    call = {"name": "read_file", "args": {}, "id": call_id, "type": "tool_call"}
    with pytest.raises(InvalidMessageError, match="tool call 'read_file' without an id") as info:
        mem.add_messages([AIMessage("", id="a", tool_calls=[call])])
    assert "\n" not in str(info.value)
    assert [m.id for m in mem.messages] == ["task"]


@pytest.mark.parametrize(
    "bad",
    [
        AIMessage("", id="a", tool_calls=[{"name": "read_file", "args": {}, "id": ""}]),
        AIMessage("half \ud800 of a pair", id="a"),
    ],
    ids=["call-without-id", "lone-surrogate"],
)
def test_a_history_given_to_the_first_call_is_checked_before_the_latest_ai_message_too(
    bad: AIMessage,
) -> None:
    """Found by the property above: a history given in the input of a thread's first call,
    ``[task, AI(call id=''), AI('')]``, was checked from its latest AI message only (what precedes
    it was taken for an earlier call's checked input), so the call went out with no result. Every
    message the memory restores is checked; the next call of the thread refuses it again when the
    checkpointer kept the input as it was (it writes a lone surrogate as "?")."""
    model = ScriptedChatModel(responses=["Done."], cycle=True)
    agent = create_agent(
        model,
        tools=[],
        middleware=[LangctxMiddleware(max_tokens=BUDGET)],
        checkpointer=InMemorySaver(),
    )
    cfg = {"configurable": {"thread_id": "first-call"}}
    history = [HumanMessage(TASK, id="task"), bad, AIMessage("", id="b")]
    with pytest.raises(InvalidMessageError, match=r"^message 'a' ") as info:
        agent.invoke({"messages": history}, cfg)
    assert "\n" not in str(info.value)
    assert model.calls == []
    stored = {m.id: m for m in agent.get_state(cfg).values.get("messages", [])}
    kept = "a" in stored and refusal(stored["a"]) is not None
    _, refused = refused_or(
        lambda: agent.invoke({"messages": [HumanMessage("Go on", id="n")]}, cfg)
    )
    assert (refused is not None) == kept
    if refused is None:
        assert_request_pairs(model.calls[-1])
