"""A grep pattern the model writes cannot stall the process (issue 41, item 2).

Matching runs on the ``regex`` engine with a deadline and without the interpreter lock; a pattern
the engine would expand when compiling is refused before. Thirty catastrophic patterns go through
the real ``fetch_context`` tool of an agent over a stored megabyte, each answered within a bound.
"""

from __future__ import annotations

import re
import threading
import time
from itertools import pairwise
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

from langctx import ContextModeMiddleware, LangctxMiddleware
from langctx.context_mode import grep
from langctx.context_mode.grep import render_grep
from langctx.context_mode.references import new_meta
from langctx.testing import ScriptedChatModel, ai_tool_call

CATASTROPHIC = [
    "a?" * 26 + "a" * 26 + "$",  # exponential without nesting
    "a*a*a*a*b",  # polynomial
    ".*.*.*.*.*=Z",
    r"\w*\w*\w*\w*!",
    "[a-z]*[a-z]*[a-z]*1",
    "a{0,30}a{0,30}a{0,30}b",  # bounded repeats
    "(?:a|a)?" * 24,
    ".*" * 249 + "Z",  # 499 characters
    "(?=a*a*a*a*b)",  # lookaround around a polynomial
    "(?=.*.*.*.*=Z)x",
    "(?!a*a*a*b)a{5}",
    "(?<=a*a*a*)b",
    "(a+)+$",  # nested: exponential
    "(a|aa)*c",
    "(a|a)*c",
    r"(\d+\.)+\d+$",
    "(a*)*b",
    "(.*a){20}",
    r"(a)\1*c",  # a backreference
    "(?:a+){10}b",
    r"^(\w+\s?)*$",
    "(x+x+)+y",
    "(?:a{0,30}){0,30}b",
    "a*" * 250,  # 500 characters
    "[ab]*" * 100,  # 500 characters
    "(a?){25}a{25}",
    r"([a-z]+)*\d",
    r"\s*\S*\s*\S*\s*\S*#",
    "(.*?,){11}P",  # the classic CSV one
    "(?:(?:(?:a{100}){100}){100}){100}",  # gigabytes if compiled
]
_BLOCK = (
    "a" * 30_000
    + "\n"
    + "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20.21.22.23.24.25x\n"
    + "word " * 2_000
    + "\n"
    + "a,b,c,d,e,f,g,h,i,j,k,l,m,n,o\n"
    + "x" * 5_000
    + "\n"
)
MEGABYTE = (_BLOCK * (1_000_000 // len(_BLOCK) + 1))[:1_000_000]
BOUND = 3.0  # seconds per pattern: generous for a loaded machine (docs/context-mode.md: ≤ 1 s)


def test_thirty_catastrophic_patterns_through_the_agent_each_answer_in_bounded_time() -> None:
    assert len(CATASTROPHIC) == 30 and max(map(len, CATASTROPHIC)) == 500

    def dump_output() -> str:
        """Print the build output."""
        return MEGABYTE

    asked: list[float] = []
    seen: list[BaseMessage] = []  # the newest message of each model call: the previous answer
    refs: list[str] = []  # the stored output's id, read once (a fold may take the message away)

    def grep_with(pattern: str) -> Any:
        def step(messages: list[BaseMessage]) -> Any:
            asked.append(time.perf_counter())
            seen.append(messages[-1])
            if not refs:
                stored = next(m for m in messages if isinstance(m, ToolMessage))
                refs.extend(re.findall(r"ctx_[0-9a-f]{8}", stored.text)[:1])
            return ai_tool_call("fetch_context", {"ref_id": refs[0], "grep": pattern})

        return step

    def done(messages: list[BaseMessage]) -> str:
        asked.append(time.perf_counter())
        seen.append(messages[-1])
        return "Done."

    model = ScriptedChatModel(
        responses=[ai_tool_call("dump_output", {}), *map(grep_with, CATASTROPHIC), done]
    )
    agent = create_agent(
        model,
        tools=[dump_output],
        middleware=[ContextModeMiddleware(store=InMemoryStore()), LangctxMiddleware()],
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "grep"}, "recursion_limit": 200}
    result = agent.invoke({"messages": [("user", "Look for the failure.")]}, config)

    answers = seen[1:]
    assert all(isinstance(m, ToolMessage) and m.name == "fetch_context" for m in answers)
    assert len(answers) == 30 and result["messages"][-1].text == "Done."
    waits = [later - earlier for earlier, later in pairwise(asked)]
    slow = {p: round(w, 2) for p, w in zip(CATASTROPHIC, waits, strict=True) if w > BOUND}
    assert not slow
    for pattern, answer in zip(CATASTROPHIC, answers, strict=True):
        text = answer.text
        assert " grep " in text or text.count("\n") == 0, (pattern, text[:300])
        if answer.status == "error":  # one line, saying why and what to do
            assert re.search(r"took longer than|repeats too much", text), (pattern, text)


def _meta(data: bytes) -> dict[str, Any]:
    return new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")


def test_grep_patterns_that_backtrack_answer_in_bounded_time() -> None:
    from langctx.context_mode.grep import render_grep
    from langctx.context_mode.references import new_meta

    data = (
        b"a" * 60
        + b"b\nf((x\n"
        + b"1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20.21.22x\n"
        + b"a" * 30_000
        + b"\nok\n"
    )
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
    for pattern in (
        "(a+)+$",
        r"(\d+\.)+\d+$",
        "(a|aa)*c",
        r"(a)\1*c",
        "a*a*a*a*c",
        "a?" * 26 + "a" * 26 + "$",
    ):
        started = time.perf_counter()
        result = render_grep(meta, data, pattern, max_tokens=500, timeout=0.2)
        assert time.perf_counter() - started < 2, pattern
        if not result.ok:  # refused: one line, the ref id and the reason in it
            assert result.kind == "invalid" and result.text.count("\n") == 0, pattern
            assert "ctx_0123abcd" in result.text and "took longer than 0.2 s" in result.text
    for pattern in ("a+b", r"[\d.]+x", "ok|b$", "(?:1\\.)?2", "f((", "(a+)+b"):
        assert render_grep(meta, data, pattern, max_tokens=500).matches >= 1, pattern


def test_grep_refuses_what_the_engine_would_expand_or_cannot_compile(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langctx.context_mode.grep import render_grep
    from langctx.context_mode.references import new_meta

    data = b"aaa\nbbb\n"
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
    for pattern, why in (
        ("(?:(?:(?:a{100}){100}){100}){100}", "repeats too much"),  # gigabytes when compiled
        ("((((a{99}){99}){99}){99}){99}", "repeats too much"),
        ("(?x)(?:a{1000}#)\n){1000}", "verbose mode"),  # a comment would hide the nesting
        ("a" * 501, "is too long (501 chars"),
    ):
        started = time.perf_counter()
        result = render_grep(meta, data, pattern, max_tokens=500)
        assert time.perf_counter() - started < 2, pattern
        assert not result.ok and result.kind == "invalid" and why in result.text, result.text
        assert result.text.count("\n") == 0

    def too_deep(*args: Any, **kwargs: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(grep.regex, "compile", too_deep)
    result = render_grep(meta, data, "(a)", max_tokens=500)
    assert not result.ok and "cannot be compiled (RecursionError)" in result.text


def test_a_grep_that_times_out_after_some_matches_shows_them_and_where_to_go_on() -> None:
    from langctx.context_mode.grep import render_grep
    from langctx.context_mode.references import new_meta

    data = b"ab\nxab\n" + b"a" * 30_000 + b"\nab\n"
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
    result = render_grep(meta, data, "a*a*a*a*b", max_tokens=500, timeout=0.2)
    assert result.ok and result.matches == 2 and result.next_offset == 7
    assert "the search stopped after 0.2 s: go on with fetch_context(" in result.text
    assert 'grep="a*a*a*a*b", offset=7)' in result.text


def test_a_long_grep_lets_other_threads_run() -> None:
    """The engine releases the interpreter lock while it matches: other agents go on."""
    data = b"a" * 30_000 + b"\nb\n"  # a "b" somewhere: the engine cannot rule a match out at once
    results: list[Any] = []
    worker = threading.Thread(
        target=lambda: results.append(
            render_grep(_meta(data), data, "a*a*a*a*b", max_tokens=500, timeout=1.5)
        )
    )
    worker.start()
    gaps, last = [], time.perf_counter()
    while worker.is_alive():  # the longest this thread waited for the lock between two steps
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    assert results[0].kind == "invalid" and "took longer than 1.5 s" in results[0].text
    assert len(gaps) > 1000 and max(gaps) < 0.75
