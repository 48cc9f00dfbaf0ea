"""A compaction by the marks cuts the tool outputs it keeps to their share of the budget.

The fold sends what it keeps anew, so the cut breaks no prompt cache; between two folds every
request is the previous one plus new messages.
"""

from __future__ import annotations

from dataclasses import replace
from itertools import pairwise

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory, MemoryConfig
from langctx.cli.demo.session import iter_turns
from langctx.cli.replay.engine import unchanged_prefix_tokens
from langctx.errors import ConfigError
from langctx.markers import TRUNCATION_MARK
from langctx.pricing import PRICE_SHEETS, Usage
from langctx.state_memory import MemorySettings
from tests._helpers import stateless_step

HEAD = [
    SystemMessage("You are a coding agent.", id="sys"),
    HumanMessage("Fix the parser in src/calc/parser.py.", id="task"),
]
CUT = TRUNCATION_MARK.split("{")[0]


def _read(i: int, lines: int, *, calls: int = 1) -> list[BaseMessage]:
    """One turn reading ``calls`` files of ``lines`` lines each."""
    tcs = [
        {"id": f"c{i}-{k}", "name": "read_file", "args": {"path": f"src/m{i}_{k}.py"}}
        for k in range(calls)
    ]
    body = "".join(f"def f{n}(x):\n    return x + {n}\n" for n in range(lines))
    outputs = [
        ToolMessage(body, tool_call_id=tc["id"], name="read_file", id=f"t{i}-{k}")
        for k, tc in enumerate(tcs)
    ]
    return [AIMessage(f"Reading {calls} file(s).", tool_calls=tcs, id=f"a{i}"), *outputs]


def _memory(**options: object) -> LayeredChatMemory:
    memory = LayeredChatMemory(max_tokens=8_000, token_counter="tiktoken", **options)
    memory.add_messages(HEAD)
    return memory


def _view(memory: LayeredChatMemory, message_id: str) -> BaseMessage:
    return next(m for m in memory.build_context() if m.id == message_id)


def test_a_fold_cuts_a_kept_giant_output_to_its_share() -> None:
    memory = _memory()
    for i in range(6):
        memory.add_messages(_read(i, 40))
    memory.add_messages(_read(6, 900))  # ~15k tokens: over the mark, so a fold
    cap = memory.config.output_cap_tokens
    assert cap == 1_000 and memory.compactions
    giant = _view(memory, "t6-0")
    assert CUT in giant.text and memory.counter.count_message(giant) <= cap
    assert giant.text.startswith("def f0(x)") and giant.text.rstrip().endswith("+ 899")
    whole = next(m for m in memory.messages if m.id == "t6-0")
    assert memory.counter.count_message(whole) > 10_000  # the log keeps it whole
    assert memory.eviction_log[-1]["action"] == "truncate"
    assert memory.context_tokens() <= memory.config.keep_recent_tokens_resolved + 1_000


def test_outputs_within_their_share_and_the_agents_words_stay_whole() -> None:
    memory = _memory()
    for i in range(10):
        memory.add_messages(_read(i, 40))  # ~500 tokens each
    long_words = AIMessage("I will now explain the plan in detail. " * 150, id="plan")
    memory.add_messages([long_words, HumanMessage("Go on.", id="go")])
    assert memory.compactions
    assert all(CUT not in m.text for m in memory.build_context())
    assert _view(memory, "plan").content == long_words.content


def test_several_large_outputs_of_one_turn_share_the_low_mark() -> None:
    memory = _memory()
    memory.add_messages(_read(0, 40))
    memory.add_messages(_read(1, 300, calls=3))  # three ~5k outputs in one turn
    keep = memory.config.keep_recent_tokens_resolved
    sizes = [memory.counter.count_message(_view(memory, f"t1-{k}")) for k in range(3)]
    assert all(CUT in _view(memory, f"t1-{k}").text for k in range(3))
    assert max(sizes) - min(sizes) < 50 and sum(sizes) <= keep


def test_a_manual_compaction_cuts_no_output() -> None:
    memory = _memory()
    for i in range(4):
        memory.add_messages(_read(i, 100))  # ~1.3k tokens each: over the share, under the mark
    assert not memory.compactions
    memory.compact()
    assert memory.compactions and all(CUT not in m.text for m in memory.build_context())


def test_output_share_is_validated_and_sets_the_cap() -> None:
    assert MemoryConfig().output_cap_tokens == 1_000
    assert MemoryConfig(max_tokens=32_000, output_share=0.25).output_cap_tokens == 8_000
    for bad in (0, 1, 1.5, True, "0.1"):
        with pytest.raises(ConfigError, match="output_share"):
            MemoryConfig(output_share=bad)  # type: ignore[arg-type]


def _requests(config: MemoryConfig, turns: int) -> tuple[list[list[BaseMessage]], list[int]]:
    """The requests of the demo session and the compactions written before each."""
    memory = LayeredChatMemory(config=config)
    memory.add_messages(HEAD)
    requests, folds = [], []
    for turn in iter_turns(turns, seed=1):
        memory.add_messages(turn)
        requests.append(memory.build_context())
        folds.append(len(memory.compactions))
    return requests, folds


def test_requests_between_folds_are_append_only() -> None:
    config = MemoryConfig(max_tokens=8_000)
    requests, folds = _requests(config, 150)
    counter = LayeredChatMemory(config=config).counter
    assert folds[-1] >= 10
    for (before, after), (n, m) in zip(pairwise(requests), pairwise(folds), strict=True):
        assert counter.count_messages(after) <= config.max_tokens_resolved
        if n == m:  # no compaction in between: the previous request plus new messages
            assert [x.id for x in after[: len(before)]] == [x.id for x in before]
            assert after[: len(before)] == before


def test_the_kept_output_cut_makes_the_session_cheaper() -> None:
    """Anthropic cost of the main requests: outputs cut to an eighth vs kept up to the low mark."""

    def cost(config: MemoryConfig) -> float:
        requests, _ = _requests(config, 200)
        counter = LayeredChatMemory(config=config).counter
        usage, previous = Usage(), []
        for request in requests:
            sizes = [counter.count_message(m) for m in request]
            cached = unchanged_prefix_tokens(previous, request, sizes)
            usage = usage + Usage(cached_input=cached, uncached_input=sum(sizes) - cached)
            previous = request
        return PRICE_SHEETS["anthropic"].main.cost(usage)

    config = MemoryConfig(max_tokens=8_000)
    assert cost(config) < 0.95 * cost(replace(config, output_share=0.2))  # 0.91x measured


def test_the_stateless_path_cuts_what_the_memory_cuts() -> None:
    settings = MemorySettings.of(max_tokens=8_000)
    memory = LayeredChatMemory(config=settings.config)
    state: dict = {"messages": list(HEAD), "langctx": {}}
    memory.add_messages(HEAD)
    for turn in iter_turns(80, seed=2):
        memory.add_messages(turn)
        state["messages"] = [*state["messages"], *turn]
        view = stateless_step(state, settings)
        assert view.projection() == memory.build_context()
    assert any(e["reason"] == "truncate" for e in state["langctx"]["edits"])
