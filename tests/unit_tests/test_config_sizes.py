"""LangChain's size vocabulary in MemoryConfig: ("tokens", n) and ("fraction", f)."""

from __future__ import annotations

import pytest

from langctx import ConfigError, LangctxMiddleware, LayeredChatMemory, MemoryConfig


def test_tokens_and_fractions_resolve_to_ints() -> None:
    config = MemoryConfig(max_tokens=("fraction", 0.5), context_window=100_000)
    assert config.max_tokens == config.max_tokens_resolved == 50_000
    assert MemoryConfig(max_tokens=("tokens", 6000)).max_tokens == 6000
    keep = MemoryConfig(max_tokens=10_000, keep_recent_tokens=("fraction", 0.25))
    assert keep.keep_recent_tokens == keep.keep_recent_tokens_resolved == 2500


def test_the_same_vocabulary_reaches_every_entry_point() -> None:
    memory = LayeredChatMemory(max_tokens=("tokens", 3000))
    assert memory.config.max_tokens == 3000
    middleware = LangctxMiddleware(max_tokens=("fraction", 0.25), context_window=64_000)
    assert middleware.settings.config.max_tokens == 16_000


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"max_tokens": ("fraction", 0.5)}, "needs context_window"),
        ({"max_tokens": ("fraction", 1.5), "context_window": 9000}, "0 < f <= 1"),
        ({"max_tokens": ("messages", 20)}, r"\('tokens', n\) or \('fraction', f\)"),
        ({"max_tokens": ("tokens", -5)}, "positive int"),
        ({"keep_recent_tokens": ("fraction", 0.9), "max_tokens": 1000}, "compaction mark"),
    ],
)
def test_bad_sizes_are_config_errors(options: dict[str, object], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        MemoryConfig(**options)  # type: ignore[arg-type]


def test_derived_marks_follow_the_fields_of_each_copy() -> None:
    import dataclasses
    import pickle

    config = MemoryConfig(max_tokens=8000)
    assert (config.high_mark, config.pinned_cap_tokens) == (6400, 3348)
    half = dataclasses.replace(config, max_tokens=4000)
    assert half.high_mark == 3200 and config.high_mark == 6400  # no mark shared between copies
    assert pickle.loads(pickle.dumps(config)).high_mark == 6400
    assert config == MemoryConfig(max_tokens=8000)  # the memo is not compared or hashed
    assert hash(config) == hash(MemoryConfig(max_tokens=8000))
    assert "_memo" not in repr(config)


def test_max_context_tokens_names_the_budget_everywhere() -> None:
    from langctx.langgraph import LangctxNode

    assert MemoryConfig(max_context_tokens=6000) == MemoryConfig(max_tokens=6000)
    assert LayeredChatMemory(max_context_tokens=("tokens", 3000)).config.max_tokens == 3000
    assert LangctxNode(max_context_tokens=5000).settings.config.max_tokens == 5000
    middleware = LangctxMiddleware(max_context_tokens=("fraction", 0.25), context_window=64_000)
    assert middleware.settings.config.max_tokens_resolved == 16_000


@pytest.mark.parametrize("make", [MemoryConfig, LayeredChatMemory, LangctxMiddleware])
def test_giving_both_budget_names_is_a_config_error(make: object) -> None:
    with pytest.raises(ConfigError, match="name the same budget"):
        make(max_tokens=4000, max_context_tokens=4000)  # type: ignore[operator]
