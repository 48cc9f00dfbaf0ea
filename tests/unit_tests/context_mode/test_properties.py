"""Invariants of reduce_output on arbitrary input (hypothesis)."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from langctx.context_mode import reduce_output
from langctx.tokens import count_tokens_approximately

THRESHOLD = 100  # the smallest allowed, so that short generated texts get reduced too

FRAGMENTS = [
    "Traceback (most recent call last):",
    '  File "/app/x.py", line 12, in f',
    "ValueError: bad value",
    "    at render (/app/src/List.tsx:20:5)",
    "src/a.ts(3,5): error TS2304: Cannot find name 'x'.",
    "\tat com.x.Y.z(Y.java:42)",
    "panic: boom",
    "goroutine 1 [running]:",
    "ERROR failed to connect",
    "WARNING deprecated",
    "exit code 1",
    "Command exited with code 2",
    "<html><body><a href='/x'>x</a><button>b</button><input name=q>",
    "</div></p><script>var a=1</script><style>p{}</style>",
    '- button "Save" [ref=e1]',
    "  - /url: /home",
    "id,name,score",
    "1,ann,3",
    "| a | b |",
    "|---|---|",
    " id | name ",
    "----+------",
    '{"a": [1, 2, {"b": "c"}]}',
    "[1, 2, 3]",
    "12:def f(x):",
    "     3\tclass A:",
    "import os",
    "export class X {",
    "# Heading",
    "<langctx:summary>",
    "[langctx ref abc]",
    "\x1b[31mred\x1b[0m",
    "50%\r100%",
    "\x00\x01\x02",
    "\ufffd\udc80",
    "",
    "   ",
    "word " * 30,
]

lines = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=80)), min_size=0, max_size=400
).map("\n".join)
any_text = st.one_of(st.text(max_size=4000), lines)
tools = st.sampled_from([None, "bash", "read", "read_file", "browse_page", "query_db", "open"])
arg_sets = st.sampled_from(
    [None, {}, {"command": "pytest"}, {"path": "a.py"}, {"path": "x.ts"}, {"file_path": "d.csv"},
     {"command": "cat x.json"}, {"path": 3}, {"command": ["ls", "-l"]}, {"offset": "x"}]
)  # fmt: skip

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(text: str, tool: str | None, args: dict[str, Any] | None) -> None:
    original = count_tokens_approximately(text)
    reduced = reduce_output(text, tool_name=tool, args=args, max_inline_tokens=THRESHOLD)
    if original <= THRESHOLD:
        assert reduced is None
        return
    assert reduced is not None
    assert reduced.reduced_tokens == count_tokens_approximately(reduced.text)
    assert reduced.reduced_tokens <= THRESHOLD < original
    assert reduced.reduced_tokens < reduced.original_tokens == original
    assert "<langctx" not in reduced.text.lower()
    assert reduced.text.lower().count("[langctx") <= 2
    assert "\n" not in reduced.removed


@SETTINGS
@given(text=any_text, repeat=st.integers(min_value=1, max_value=60), tool=tools, args=arg_sets)
def test_reduce_output_never_raises_and_never_grows(
    text: str, repeat: int, tool: str | None, args: dict[str, Any] | None
) -> None:
    _check(text * repeat, tool, args)


@SETTINGS
@given(text=lines, repeat=st.integers(min_value=1, max_value=40))
def test_repeated_structured_text(text: str, repeat: int) -> None:
    _check((text + "\n") * repeat, "bash", {"command": "make"})


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=3000))
def test_bytes_always_give_a_bounded_reduction(data: bytes) -> None:
    reduced = reduce_output(data, max_inline_tokens=THRESHOLD)
    assert reduced is not None
    if reduced.kind == "binary" or reduced.original_tokens > THRESHOLD:
        assert reduced.reduced_tokens <= THRESHOLD
    assert "\x00" not in reduced.text or reduced.kind == "text"


@settings(max_examples=100, deadline=None)
@given(text=lines)
def test_reducing_twice_stays_within_budget(text: str) -> None:
    first = reduce_output(text * 5, tool_name="bash", max_inline_tokens=THRESHOLD)
    if first is None:
        return
    second = reduce_output(first.text, tool_name="bash", max_inline_tokens=THRESHOLD)
    assert second is None or second.reduced_tokens <= THRESHOLD
