"""Any JSON a stored entry's ``facts`` can hold renders, merges and summarizes without raising.

A checkpoint is untrusted: the facts of an entry (and its file lists) are generated here with the
keys langctx reads -- in the right shape, in wrong shapes (None, numbers, strings where lists go,
lists of non-dicts, dicts missing keys, negative or huge counts, huge strings, lone surrogates) --
and unknown keys beside them. They go through the pure functions and a real memory; the only
exception allowed is a one-line :class:`~langctx.StateVersionError`, and every projection stays
within its budget.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langctx import LayeredChatMemory, MemorySettings, StateVersionError, view_state
from langctx.config import MemoryConfig
from langctx.engine.layers import summary_block
from langctx.entries import new_compaction_entry, read_entry
from langctx.facts import extract_facts
from langctx.facts.record import stored_facts
from langctx.projection import render_facts
from langctx.summarize import SummaryRequest
from langctx.summarize.local import render_local_summary
from langctx.summarize.text import merge_summary_facts, summary_facts
from langctx.tokens import ApproximateCounter

BUDGET = 2000

SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

SPECIAL_TEXTS = [
    "",
    "   ",
    "\ud800",
    "ok \udc80 done",
    "line one\nline two",
    "</langctx:summary> <langctx:facts>",
    "src/app.py",
    "Do not edit tests.",
]
huge_texts = st.sampled_from([1, 300, 819, 4_000, 12_000]).map(lambda n: "word " * n)
texts = st.one_of(st.sampled_from(SPECIAL_TEXTS), huge_texts, st.text(max_size=40))
ints = st.one_of(st.integers(-3, 3), st.sampled_from([-(2**63), 2**64, 10**40]), st.integers())
scalars = st.one_of(st.none(), st.booleans(), ints, st.floats(), texts)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=10,
)
"""Any JSON value (and what msgpack adds: any int, non-finite floats)."""


def _either(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly the right shape, sometimes any JSON."""
    return st.one_of(right, right, json_values)


def _record(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A dict with some of ``fields`` (each of the right shape or not) and maybe unknown keys."""
    return st.fixed_dictionaries(
        {}, optional={k: _either(v) for k, v in fields.items()} | {"extra": json_values}
    )


paths = st.lists(texts, max_size=6)
commands = st.lists(
    _either(
        _record(
            command=texts,
            exit_code=st.one_of(st.none(), ints),
            ok=st.sampled_from([True, False, None]),
            message_id=st.one_of(st.none(), texts),
        )
    ),
    max_size=5,
)
errors = st.lists(
    _either(
        _record(
            command=st.one_of(st.none(), texts),
            lines=st.lists(texts, max_size=5),
            message_id=st.one_of(st.none(), texts),
            summary_lines=st.lists(texts, max_size=3),
        )
    ),
    max_size=4,
)
user_messages = st.lists(
    _either(
        _record(
            id=texts,
            text=texts,
            short=st.booleans(),
            constraints=st.lists(texts, max_size=3),
        )
    ),
    max_size=5,
)
FACT_KEYS: dict[str, st.SearchStrategy[Any]] = {
    "read_files": paths,
    "modified_files": paths,
    "read_files_dropped": ints,
    "commands": commands,
    "errors": errors,
    "constraints": st.lists(texts, max_size=5),
    "next_step": st.one_of(st.none(), texts),
    "user_messages": user_messages,
    "user_messages_dropped": ints,
}
"""The keys of ``facts`` that langctx reads (extractors, merges, ledger, local summary, quoted
user messages), each with values of its shape."""

facts_dicts = st.fixed_dictionaries(
    {},
    optional={k: _either(v) for k, v in FACT_KEYS.items()}
    | {"unknown": json_values, "": json_values},
)
file_lists = st.lists(texts, max_size=5)
"""An entry's own ``read_files`` / ``modified_files`` (a list of strings, checked on read)."""


def _counter() -> ApproximateCounter:
    return ApproximateCounter()


def _sendable(messages: list[BaseMessage]) -> None:
    """Every text of ``messages`` encodes as UTF-8 (a provider request can carry it)."""
    for m in messages:
        m.text.encode("utf-8")


@SETTINGS
@given(parts=st.lists(facts_dicts, min_size=1, max_size=4), cap=st.integers(1, 400))
def test_any_facts_merge_and_render(parts: list[dict[str, Any]], cap: int) -> None:
    count = _counter().count_text
    merged = merge_summary_facts(*parts)
    for facts in (*parts, merged):
        render_facts(facts).encode("utf-8")
        render_facts(facts, max_tokens=cap, count=count).encode("utf-8")
        for kind in ("turns", "merge"):
            request = SummaryRequest(kind=kind, facts=facts, max_tokens=cap)  # type: ignore[arg-type]
            text = render_local_summary(request, count=count)
            assert count(text) <= cap
            text.encode("utf-8")
        stored = stored_facts(facts)
        assert stored_facts(stored) == stored  # the stored shape reads back as it is
    assert merge_summary_facts(merged) == merged  # merging is idempotent on merged facts


@SETTINGS
@given(
    facts=st.lists(st.tuples(facts_dicts, file_lists, file_lists), min_size=1, max_size=3),
    pinned=st.integers(0, 1500),
)
def test_any_facts_give_a_summary_block(
    facts: list[tuple[dict[str, Any], list[str], list[str]]], pinned: int
) -> None:
    config = MemoryConfig(max_tokens=BUDGET)
    counter = _counter()
    stored = [
        new_compaction_entry(
            summary=f"summary {n}",
            level=1,
            covered_ids=[f"m{n}"],
            first_kept_id=f"m{n + 1}",
            tokens_before=100,
            tokens_after=10,
            trigger="manual",
            quality="local",
            read_files=read,
            modified_files=modified,
            facts=f,
        )
        for n, (f, read, modified) in enumerate(facts)
    ]
    try:  # read as they enter a memory (the block takes what it is given as it is)
        entries = [read_entry(e) for e in stored]
    except StateVersionError as exc:  # refused in one line (a path over 4096 characters)
        _one_line(exc)
        return
    message, tokens = summary_block(entries, config, counter, pinned_tokens=pinned)
    assert message is not None
    assert tokens == counter.count_message(message)
    _sendable([message])


@functools.cache
def _session() -> tuple[tuple[BaseMessage, ...], dict[str, Any]]:
    """A 12-turn tool session under a 2000-token budget: its log and its saved state."""
    mem = LayeredChatMemory(max_tokens=BUDGET)
    mem.add_messages(
        [SystemMessage("s", id="s"), HumanMessage("Fix the parser. Do not edit tests.", id="h")]
    )
    for n in range(12):
        if n % 3 == 0:
            call = {"id": f"c{n}", "name": "bash", "args": {"command": f"pytest tests/t{n}.py"}}
            out = (
                "FAILED tests/t.py::test_x - AssertionError\n1 failed\nexit code 1\n" + "x\n" * 200
            )
        elif n % 3 == 1:
            call = {"id": f"c{n}", "name": "write_file", "args": {"path": f"src/m{n}.py"}}
            out = "ok"
        else:
            call = {"id": f"c{n}", "name": "read_file", "args": {"path": f"m{n}.py"}}
            out = "x = 1\n" * 80
        mem.add_messages([AIMessage(f"Next I will check m{n}.py.", id=f"a{n}", tool_calls=[call])])
        mem.add_messages([ToolMessage(out, tool_call_id=f"c{n}", id=f"t{n}")])
        if n == 6:
            mem.add_messages([HumanMessage("Also keep Python 3.9 support.", id="h2")])
    assert len(mem.compactions) >= 2
    return tuple(mem.messages), dict(mem.to_state())


def _more(n: int) -> list[BaseMessage]:
    call = {"id": f"x{n}", "name": "read_file", "args": {"path": f"more{n}.py"}}
    return [
        AIMessage("Let me read more.", id=f"xa{n}", tool_calls=[call]),
        ToolMessage("y = 2\n" * 60, tool_call_id=f"x{n}", id=f"xt{n}"),
    ]


def _one_line(exc: StateVersionError) -> None:
    assert "\n" not in str(exc)


@SETTINGS
@given(
    facts=st.lists(st.tuples(facts_dicts, file_lists, file_lists), min_size=1, max_size=4),
    data=st.data(),
)
def test_a_restored_memory_with_any_facts_stays_within_budget(
    facts: list[tuple[dict[str, Any], list[str], list[str]]], data: st.DataObject
) -> None:
    messages, state = _session()
    compactions = [dict(e) for e in state["compactions"]]
    for f, read, modified in facts:
        at = data.draw(st.integers(0, len(compactions) - 1))
        compactions[at].update(facts=f, read_files=read, modified_files=modified)
    saved = {**state, "compactions": compactions}
    try:
        mem = LayeredChatMemory.from_state(saved, max_tokens=BUDGET)
    except StateVersionError as exc:
        _one_line(exc)
        return
    _sendable(mem.build_context())
    assert mem.context_tokens() <= BUDGET
    for n in range(4):
        mem.add_messages(_more(n))
        _sendable(mem.build_context())
        assert mem.context_tokens() <= BUDGET
    mem.compact()
    _sendable(mem.build_context())
    assert mem.context_tokens() <= BUDGET
    LayeredChatMemory.from_state(mem.to_state(), max_tokens=BUDGET).build_context()

    channel = {k: saved[k] for k in ("v", "compactions", "edits", "priorities")}
    options = MemorySettings.of(max_tokens=BUDGET)
    try:
        view = view_state({"messages": [*messages, *_more(9)], "langctx": channel}, options)
        view.compact_if_due()
        projection = view.projection()
    except StateVersionError as exc:
        _one_line(exc)
    else:
        assert options.counter.count_messages(projection) <= BUDGET
        _sendable(projection)


@pytest.mark.parametrize("value", [None, True, 7, "abc", ["x", 1], [{}], {"a": 1}])
@pytest.mark.parametrize("key", sorted(FACT_KEYS))
def test_each_known_key_of_any_shape_renders(key: str, value: object) -> None:
    """Every known key holding a value of the wrong shape, alone (the cases the fuzzer may miss),
    in an entry whose own file lists are empty (so that the facts' own are read)."""
    count = _counter().count_text
    facts = {key: value}
    merged = merge_summary_facts(facts, facts)
    render_facts(merged, max_tokens=100, count=count)
    render_facts(facts, max_tokens=100, count=count)
    request = SummaryRequest(kind="turns", facts=facts, max_tokens=100)
    assert count(render_local_summary(request, count=count)) <= 100
    _, state = _session()
    *older, last = state["compactions"]
    last = {**last, "facts": {**last["facts"], **facts}, "read_files": [], "modified_files": []}
    saved = {**state, "compactions": [*older, last]}
    try:
        mem = LayeredChatMemory.from_state(saved, max_tokens=BUDGET)
    except StateVersionError as exc:
        _one_line(exc)
        return
    mem.add_messages(_more(0))
    mem.build_context()
    assert mem.context_tokens() <= BUDGET


plain_texts = st.one_of(
    st.sampled_from([t for t in SPECIAL_TEXTS if t.isascii()]),
    st.sampled_from(
        [
            "cat a.py > b.py",
            "sed -i 's/a/b/' src/x.py && pytest -q",
            "sed -n 1,20p ./src/app.py",
            "*** Begin Patch\n*** Update File: a.py\n@@\n-x\n+y\n*** End Patch",
            'python -c \'open("o.txt", "w")\'',
            "rg -n foo src/ | head",
            "FAILED tests/t.py::test_x - AssertionError\n1 failed in 0.1s\nexit code 1",
            "Traceback (most recent call last):\nKeyError: 'x'\nexit code 2",
        ]
    ),
    huge_texts,
    st.text(st.characters(exclude_categories=("Cs",)), max_size=40),
)
"""Text without lone surrogates: the log refuses them in calls, and escapes them in results."""
plain_json = st.recursive(
    st.one_of(st.none(), st.booleans(), ints, st.floats(), plain_texts),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(plain_texts, inner, max_size=3),
    max_leaves=6,
)
ARG_KEYS = [
    "command",
    "cmd",
    "commands",
    "script",
    "code",
    "path",
    "file_path",
    "filename",
    "file",
    "paths",
    "patch",
    "input",
    "old_str",
    "new_str",
    "content",
]
TOOL_NAMES = [
    "bash",
    "shell",
    "exec_command",
    "read_file",
    "write_file",
    "edit_file",
    "apply_patch",
    "str_replace_editor",
    "view",
    "open",
    "multiedit",
    "python",
    "unknown_tool",
    "Bash",
]
calls = st.builds(
    dict,
    name=st.sampled_from(TOOL_NAMES),
    args=st.fixed_dictionaries(
        {}, optional={k: st.one_of(plain_texts, plain_json) for k in ARG_KEYS}
    ),
)
results = st.fixed_dictionaries(
    {
        "content": st.one_of(
            plain_texts,
            st.lists(st.one_of(plain_texts, st.builds(dict, text=plain_texts)), max_size=3),
        ),
        "status": st.sampled_from(["success", "error"]),
        "answered": st.booleans(),
    }
)


@SETTINGS
@given(steps=st.lists(st.tuples(st.lists(calls, min_size=1, max_size=3), results), max_size=6))
def test_odd_tool_calls_give_facts_in_the_stored_shape(
    steps: list[tuple[list[dict[str, Any]], dict[str, Any]]],
) -> None:
    """What the extractors write from any tool calls reads back unchanged (the stored shape)."""
    messages: list[BaseMessage] = [HumanMessage("Fix it. Never push.", id="h")]
    for n, (step, result) in enumerate(steps):
        ids = [f"c{n}.{k}" for k in range(len(step))]
        messages.append(
            AIMessage(
                "Next I will run it.",
                id=f"a{n}",
                tool_calls=[{**c, "id": i} for c, i in zip(step, ids, strict=True)],
            )
        )
        for i in ids if result["answered"] else ids[:1]:
            messages.append(
                ToolMessage(result["content"], tool_call_id=i, status=result["status"], id=f"t{i}")
            )
    facts = extract_facts(messages)
    assert stored_facts(facts) == facts
    both = summary_facts(messages)
    assert stored_facts(both) == both
    assert merge_summary_facts(both, both) == stored_facts(merge_summary_facts(both, both))
    render_facts(both, max_tokens=200, count=_counter().count_text)
