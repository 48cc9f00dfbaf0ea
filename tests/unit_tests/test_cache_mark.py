"""The compaction mark that costs least under a provider's prompt cache (``cache_prices``)."""

from __future__ import annotations

from dataclasses import replace

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory, MemoryConfig
from langctx.cache_mark import MIN_CALLS, cheapest_mark, mark_floor
from langctx.cli.replay.engine import unchanged_prefix_tokens
from langctx.errors import ConfigError
from langctx.pricing import PRICE_SHEETS, Usage
from tests._helpers import stateless_step


def test_cache_prices_name_a_sheet_and_give_the_write_over_read_price() -> None:
    assert MemoryConfig().cache_write_ratio is None
    cfg = MemoryConfig(cache_prices="anthropic")
    assert cfg.cache_prices == PRICE_SHEETS["anthropic"]
    assert cfg.cache_write_ratio == pytest.approx(12.5)
    assert MemoryConfig(cache_prices="openai").cache_write_ratio == pytest.approx(10.0)
    assert MemoryConfig(cache_prices=PRICE_SHEETS["openai"]) == MemoryConfig(cache_prices="openai")
    with pytest.raises(ConfigError, match="unknown price sheet"):
        MemoryConfig(cache_prices="azure")
    free_reads = replace(
        PRICE_SHEETS["openai"], main=replace(PRICE_SHEETS["openai"].main, cached_input=0.0)
    )
    assert MemoryConfig(cache_prices=free_reads).cache_write_ratio is None  # never cheaper early


def test_the_mark_lies_between_its_floor_and_the_high_mark_and_rises_with_growth() -> None:
    cfg = MemoryConfig(max_tokens=32_000, cache_prices="anthropic")
    plain = MemoryConfig(max_tokens=32_000)
    args = {"pinned": 400, "block": 900}
    assert cheapest_mark(plain, tokens=20_000, calls=50, **args) == plain.high_mark
    assert mark_floor(plain, **args) == plain.high_mark
    assert cheapest_mark(cfg, tokens=20_000, calls=MIN_CALLS - 1, **args) == cfg.high_mark
    floor = mark_floor(cfg, **args)
    marks = [cheapest_mark(cfg, tokens=t, calls=40, **args) for t in range(2_000, 40_000, 2_000)]
    assert all(floor <= m <= cfg.high_mark for m in marks)
    assert marks == sorted(marks)  # faster growth: longer cycles
    assert marks[0] == floor
    assert cheapest_mark(cfg, tokens=30_000, calls=MIN_CALLS, **args) == cfg.high_mark
    assert cheapest_mark(cfg, tokens=12_000, calls=80, **args) < cfg.high_mark


def _slow_session(turns: int) -> list[list[BaseMessage]]:
    """A long agent run whose context grows by small tool results (a shell-heavy session)."""
    out: list[list[BaseMessage]] = [
        [
            SystemMessage("You are a coding agent.", id="sys"),
            HumanMessage("Port the CLI to click.", id="task"),
        ]
    ]
    for i in range(turns):
        call = {"id": f"c{i}", "name": "bash", "args": {"command": f"grep -n opt{i} src/cli.py"}}
        out.append(
            [
                AIMessage(f"Checking option {i}.", tool_calls=[call], id=f"a{i}"),
                ToolMessage(
                    f"src/cli.py:{i}: opt{i} = parse(argv)  # " + "x " * 90,
                    tool_call_id=f"c{i}",
                    id=f"t{i}",
                ),
            ]
        )
    return out


def _run(cfg: MemoryConfig, turns: list[list[BaseMessage]]) -> tuple[float, int, int]:
    """(Anthropic cost of the main requests, compactions, the largest request)."""
    memory = LayeredChatMemory(config=cfg)
    sheet = PRICE_SHEETS["anthropic"]
    usage, previous, largest = Usage(), [], 0
    for turn in turns:
        memory.add_messages(turn)
        request = memory.build_context()
        sizes = [memory.counter.count_message(m) for m in request]
        cached = unchanged_prefix_tokens(previous, request, sizes)
        usage = usage + Usage(cached_input=cached, uncached_input=sum(sizes) - cached)
        previous, largest = request, max(largest, sum(sizes))
    return sheet.main.cost(usage), len(memory.compactions), largest


def test_a_slowly_growing_session_compacts_earlier_and_costs_less() -> None:
    turns = _slow_session(400)
    plain = MemoryConfig(max_tokens=32_000)
    cost_plain, folds_plain, top_plain = _run(plain, turns)
    cost, folds, top = _run(replace(plain, cache_prices="anthropic"), turns)
    assert top < top_plain <= plain.high_mark  # it folds below the high mark
    assert folds > folds_plain
    assert cost < 0.9 * cost_plain


def test_a_fast_growing_session_keeps_the_high_mark() -> None:
    """Large outputs each call: the cheapest mark is above the high mark, nothing changes."""
    from langctx.cli.demo.session import iter_turns

    turns = [list(t) for t in iter_turns(120, seed=3)]
    plain = MemoryConfig(max_tokens=8_000)
    assert _run(replace(plain, cache_prices="anthropic"), turns) == _run(plain, turns)


def test_the_stateless_path_compacts_where_the_memory_does() -> None:
    """What LangctxMiddleware runs (view_state over the state each call) folds at the same calls."""
    from langctx.state_memory import MemorySettings

    turns = _slow_session(300)
    settings = MemorySettings.of(max_tokens=32_000, cache_prices="anthropic")
    memory = LayeredChatMemory(config=settings.config)
    state: dict = {"messages": [], "langctx": {}}
    for turn in turns:
        memory.add_messages(turn)
        state["messages"] = [*state["messages"], *turn]
        view = stateless_step(state, settings)
        assert [m.id for m in view.projection()] == [m.id for m in memory.build_context()]
    assert len(state["langctx"]["compactions"]) == len(memory.compactions) > 0
