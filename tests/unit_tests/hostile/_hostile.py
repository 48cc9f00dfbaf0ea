"""Shared strategies and checks of the hostile-input suite (issue 41, item 8)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory
from langctx.errors import LangctxError

BUDGET = 2000

# ------------------------------------------------------------------ hostile scalars

NASTY_TEXT = st.sampled_from(
    [
        "",
        "\x00",
        "a\x00b",
        "\ud800",  # a lone surrogate (not UTF-8 encodable)
        "x\udfff" * 3,
        "\u202e\u2066",
        "<langctx:summary>",
        "</langctx:summary>",
        "..",
        "../../etc/passwd",
        "\r\n\x1b[2J",
        "word " * 200_000,  # 1 MB
    ]
)
NASTY_INT = st.sampled_from([-1, -(2**63), 2**63, 2**64 + 1, 10**30, 0])
NASTY_FLOAT = st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 1e308])

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    NASTY_INT,
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    NASTY_TEXT,
)
JSONISH = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), NASTY_TEXT), inner, max_size=4),
    ),
    max_leaves=12,
)
"""Arbitrary JSON-ish values: dicts, lists, strings (NUL, surrogates, 1 MB), ints, floats."""


# ------------------------------------------------------------------ checks


def assert_one_line_langctx_error(exc: BaseException) -> None:
    """The documented refusal: a langctx error whose message is one line."""
    assert isinstance(exc, LangctxError), f"{type(exc).__name__}: {str(exc)[:300]}"
    text = str(exc)
    assert "\n" not in text and text.strip(), repr(text[:300])


def refused_or(call: Callable[[], Any]) -> tuple[Any, BaseException | None]:
    """``call()``'s value, or the langctx error it raised (checked one line); anything else is
    re-raised (the property fails)."""
    try:
        return call(), None
    except Exception as exc:  # the property: only a one-line langctx error
        assert_one_line_langctx_error(exc)
        return None, exc


# ------------------------------------------------------------------ mutations of a valid value

MISSING = object()


def paths(value: Any, prefix: tuple[Any, ...] = (), depth: int = 6) -> Iterator[tuple[Any, ...]]:
    """The path of every dict key and list item under ``value``."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in items:
        yield (*prefix, key)
        if isinstance(child, dict | list) and depth > 1:
            yield from paths(child, (*prefix, key), depth - 1)


def get(value: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        value = value[key]
    return value


def put(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    """A copy of ``value`` with the item at ``path`` set to ``new`` (MISSING: removed)."""
    out = dict(value) if isinstance(value, dict) else list(value)
    head, *rest = path
    if rest:
        out[head] = put(value[head], tuple(rest), new)
    elif new is MISSING:
        del out[head]
    else:
        out[head] = new
    return out


@st.composite
def mutated(draw: st.DrawFn, valid: Any, other: Any = None, most: int = 3) -> Any:
    """``valid`` with 1..``most`` hostile changes: a key dropped, a value of another type, a list
    truncated, a huge / NUL / surrogate string, a negative or huge int, NaN, or the value at the
    same path in ``other`` (another thread's)."""
    value = valid
    for _ in range(draw(st.integers(1, most))):
        where = list(paths(value))
        if not where:
            break
        path = draw(st.sampled_from(where))
        old = get(value, path)
        kinds = ["drop", "junk", "nasty"]
        if isinstance(old, list) and old:
            kinds.append("truncate")
        if other is not None:
            try:
                theirs = get(other, path)
            except (KeyError, IndexError, TypeError):
                pass
            else:
                kinds.append("swap")
        kind = draw(st.sampled_from(kinds))
        if kind == "drop":
            new = MISSING
        elif kind == "junk":
            new = draw(JSONISH)
        elif kind == "nasty":
            new = draw(st.one_of(NASTY_TEXT, NASTY_INT, NASTY_FLOAT))
        elif kind == "truncate":
            new = old[: draw(st.integers(0, len(old) - 1))]
        else:
            new = theirs
        value = put(value, path, new)
    return value


# ------------------------------------------------------------------ a real session


@functools.cache
def memory_session() -> tuple[tuple[BaseMessage, ...], dict[str, Any]]:
    """A LayeredChatMemory session with folds and edits: its log and ``to_state()``."""
    mem = LayeredChatMemory(max_tokens=BUDGET)
    mem.add_messages([SystemMessage("s", id="s"), HumanMessage("Fix the parser.", id="h")])
    for n in range(10):
        call = {"id": f"c{n}", "name": "read_file", "args": {"path": f"m{n}.py"}}
        mem.add_messages([AIMessage("Reading.", id=f"a{n}", tool_calls=[call])])
        mem.add_messages([ToolMessage("x = 1\n" * 90, tool_call_id=f"c{n}", id=f"t{n}")])
        if n == 4:
            mem.add_messages([HumanMessage("Keep Python 3.9 support.", id="u4")])
    assert mem.compactions
    return tuple(mem.messages), dict(mem.to_state())


def assert_request_pairs(sent: list[BaseMessage]) -> None:
    """No orphan tool call or result in ``sent``, except the calls of a trailing AI message still
    waiting for its results (the model asked; the tools have not answered yet)."""
    from tests._helpers import assert_pairs_intact

    last = max((i for i, m in enumerate(sent) if isinstance(m, AIMessage)), default=None)
    if last is not None and all(isinstance(m, ToolMessage) for m in sent[last + 1 :]):
        done = {m.tool_call_id for m in sent[last + 1 :] if isinstance(m, ToolMessage)}
        calls = [c for c in sent[last].tool_calls if c["id"] in done]
        sent = [
            *sent[:last],
            sent[last].model_copy(update={"tool_calls": calls}),
            *sent[last + 1 :],
        ]
    assert_pairs_intact(sent)


HUGE_REPR = "ignore:Generating overly large repr:hypothesis.errors.HypothesisWarning"
