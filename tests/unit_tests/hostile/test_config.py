"""Hostile configuration (issue 41, items 6 and 8): ``MemoryConfig`` / memory options,
``LangctxMiddleware`` keyword arguments and ``PriceSheet`` prices given arbitrary values.

The property: construction raises a one-line ``ConfigError``, or it succeeds and the first
compactions work (a request within the configured budget, tool pairs intact); never a crash at the
first compaction."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from langchain.agents import create_agent  # imported once, before any example is timed
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool

from langctx import ConfigError, LayeredChatMemory, MemoryConfig
from langctx.middleware import LangctxMiddleware
from langctx.pricing import ModelPrices, PriceSheet
from langctx.testing import ScriptedChatModel, ai_tool_call
from tests.unit_tests.hostile._hostile import assert_request_pairs, refused_or

NUMBERS = st.one_of(
    st.integers(-5, 5),
    st.integers(0, 30_000),
    st.sampled_from([2**31, 2**63, 10**12, 10**30, -(2**63)]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(0, 1),
)
VALUES = st.one_of(
    NUMBERS,
    st.none(),
    st.booleans(),
    st.text(max_size=6),
    st.sampled_from(["tiktoken", "approximate", "human", "system", "error", "repair", "truncate"]),
    st.tuples(st.sampled_from(["tokens", "fraction", "messages", "x"]), NUMBERS),
    st.lists(NUMBERS, max_size=2),
)
FIELDS = [
    "max_tokens",
    "max_context_tokens",
    "reserve_ratio",
    "context_window",
    "reserve_tokens",
    "keep_recent_tokens",
    "output_share",
    "proactive_ratio",
    "summary_threshold_tokens",
    "background_summaries",
    "max_summaries",
    "merge_count",
    "max_level2",
    "summary_share",
    "user_messages_share",
    "reports_share",
    "subagent_tools",
    "max_summary_tokens",
    "max_facts_tokens",
    "placeholder_min_tokens",
    "summary_role",
    "oversize_policy",
    "orphan_policy",
    "summary_timeout",
    "max_summarizer_input_tokens",
    "cache_prices",
    "token_counter",
    "summarizer",
    "no_such_option",
]
_TOKENS = st.one_of(
    st.integers(0, 60_000),
    st.tuples(st.just("tokens"), st.integers(0, 60_000)),
    st.tuples(st.just("fraction"), st.floats(0, 1)),
)
_PLAUSIBLE: dict[str, st.SearchStrategy[Any]] = {
    **dict.fromkeys(
        [
            "max_tokens",
            "max_context_tokens",
            "context_window",
            "reserve_tokens",
            "keep_recent_tokens",
            "summary_threshold_tokens",
            "max_summary_tokens",
            "max_facts_tokens",
            "placeholder_min_tokens",
            "max_summarizer_input_tokens",
        ],
        _TOKENS,
    ),
    **dict.fromkeys(
        [
            "reserve_ratio",
            "output_share",
            "proactive_ratio",
            "summary_share",
            "user_messages_share",
            "reports_share",
        ],
        st.floats(0, 1),
    ),
    "subagent_tools": st.sampled_from(
        [("task",), ["task", "read_file"], (), "task", [""], {"task"}]
    ),
    **dict.fromkeys(["max_summaries", "merge_count", "max_level2"], st.integers(0, 8)),
    "summary_role": st.sampled_from(["human", "system", "ai"]),
    "oversize_policy": st.sampled_from(["truncate", "error"]),
    "orphan_policy": st.sampled_from(["repair", "error"]),
    "summary_timeout": st.floats(0, 10),
    "background_summaries": st.booleans(),
    "cache_prices": st.sampled_from([None, "anthropic", "openai", "none"]),
    "token_counter": st.sampled_from(["approximate", "tiktoken", "o200k_base"]),
    "summarizer": st.sampled_from([None, "local"]),
}


@st.composite
def _options(draw: st.DrawFn) -> dict[str, Any]:
    """1..4 options, each a plausible value of its field (3 in 4) or anything."""
    names = draw(st.lists(st.sampled_from(FIELDS), min_size=1, max_size=4, unique=True))
    out = {}
    for name in names:
        plausible = _PLAUSIBLE.get(name, VALUES)
        out[name] = draw(st.one_of(plausible, plausible, plausible, VALUES), label=name)
    return out


OPTIONS = _options()


def _session(n: int = 14) -> list[Any]:
    out: list[Any] = [
        SystemMessage("You are a coding agent.", id="s"),
        HumanMessage("Fix it.", id="h"),
    ]
    for i in range(n):
        call = {"id": f"c{i}", "name": "read_file", "args": {"path": f"m{i}.py"}}
        out += [
            AIMessage("Reading.", id=f"a{i}", tool_calls=[call]),
            ToolMessage("x = 1\n" * (40 + 40 * (i % 3)), tool_call_id=f"c{i}", id=f"t{i}"),
        ]
    return out


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS)
def test_any_memory_options_are_a_config_error_or_compact(options: dict[str, Any]) -> None:
    mem, refused = refused_or(lambda: LayeredChatMemory(**options))
    if refused is not None:
        assert isinstance(refused, ConfigError), repr(refused)
        event("refused")
        return
    event("built")
    budget = mem.config.max_tokens_resolved
    for m in _session():
        mem.add_messages([m])  # proactive compactions run here
    mem.compact()  # and one on demand
    sent = mem.build_context()
    note(f"budget {budget}, sent {mem.counter.count_messages(sent)}")
    assert mem.counter.count_messages(sent) <= budget
    assert_request_pairs(sent)
    assert len(mem.messages) == len(_session())


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(
    options=st.one_of(
        OPTIONS,
        st.dictionaries(
            st.sampled_from(
                [
                    "max_overflow_retries",
                    "compact_tool",
                    "archive",
                    "prompt_cache_key",
                    "tool_output_processor",
                    "overflow_matcher",
                ]
            ),
            VALUES,
            min_size=1,
            max_size=3,
        ),
    )
)
def test_any_middleware_options_are_a_config_error_or_run(options: dict[str, Any]) -> None:
    middleware, refused = refused_or(lambda: LangctxMiddleware(**options))
    if refused is not None:
        assert isinstance(refused, ConfigError), repr(refused)
        event("refused")
        return
    event("built")
    read = tool("read_file", description="Read a file.")(lambda path: "x = 1\n" * 300)
    calls = [ai_tool_call("read_file", {"path": f"f{i}.py"}, call_id=f"c{i}") for i in range(8)]
    model = ScriptedChatModel(responses=[*calls, "Done."])
    agent = create_agent(model, tools=[read], middleware=[middleware])
    out, refused = refused_or(
        lambda: agent.invoke({"messages": [HumanMessage("Read.", id="task")]})
    )
    assert refused is None or isinstance(refused, ConfigError), repr(refused)
    if refused is not None:  # an option only the first step can check (archive=True, no store)
        event("refused at the first step")
        return
    settings_ = middleware.settings_for(model)
    budget = settings_.config.max_tokens_resolved
    for sent in model.calls:
        assert settings_.counter.count_messages(sent) <= budget
        assert_request_pairs(sent)
    assert out["messages"][-1].text == "Done."


PRICES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 0.3, 3.0, 15.0, math.nan, "3", None, True, [1]]),
)


@settings(max_examples=200)
@given(
    prices=st.tuples(PRICES, PRICES, PRICES, PRICES),
    summarizer=st.tuples(PRICES, PRICES, PRICES, PRICES),
)
def test_any_price_sheet_is_a_config_error_or_prices_every_compaction(
    prices: tuple[Any, ...], summarizer: tuple[Any, ...]
) -> None:
    fields = ("input", "cached_input", "cache_write", "output")

    def sheet() -> PriceSheet:
        return PriceSheet(
            name="hostile",
            main=ModelPrices(**dict(zip(fields, prices, strict=True))),
            summarizer=ModelPrices(**dict(zip(fields, summarizer, strict=True))),
        )

    built, refused = refused_or(sheet)
    event("refused" if refused is not None else "built")
    if refused is not None:
        assert isinstance(refused, ConfigError), repr(refused)
        return
    events: list[Any] = []
    mem = LayeredChatMemory(max_tokens=2000, cache_prices=built, on_compaction=events.append)
    for m in _session():
        mem.add_messages([m])
    assert mem.compactions and events
    for e in events:
        for value in vars(e).values() if hasattr(e, "__dict__") else ():
            if isinstance(value, float):
                assert math.isfinite(value), e
    assert all(
        math.isfinite(float(x))
        for x in (mem.stats().get("cost") or {}).values()
        if isinstance(x, int | float)
    )


@pytest.mark.parametrize("processor", [0, "trim", [len]], ids=repr)
def test_a_tool_output_processor_that_cannot_be_called_is_refused_at_construction(
    processor: object,
) -> None:
    """Found by the property above: ``tool_output_processor=0`` was accepted and the first tool
    call ended in ``TypeError: 'int' object is not callable`` from inside the graph."""
    with pytest.raises(ConfigError, match="tool_output_processor must be a callable") as info:
        LangctxMiddleware(tool_output_processor=processor)  # type: ignore[arg-type]
    assert "\n" not in str(info.value)


def test_the_options_strategy_reaches_both_outcomes() -> None:
    """The checks above are not vacuous: a bad option is refused, a good one compacts."""
    with pytest.raises(ConfigError):
        MemoryConfig(max_tokens=-1)
    mem = LayeredChatMemory(max_tokens=2000)
    for m in _session():
        mem.add_messages([m])
    assert mem.compactions
