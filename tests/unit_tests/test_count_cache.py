"""CachedCounter and MessageCountCache: hits, misses, recounts, the LRU bound, counter keys."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.count_cache import (
    CachedCounter,
    MessageCountCache,
    counter_key,
    shared_cache,
    text_counter,
)
from langctx.tokens import ApproximateCounter, TiktokenCounter

TEXT = "Fix the parser in src/parse.py so that nested lists parse."


class CountingCounter(ApproximateCounter):
    """An approximate counter that records which messages it really counted."""

    def __init__(self, cache_key: str = "counting") -> None:
        super().__init__(cache_size=1)
        self.counted: list[str | None] = []
        self.cache_key = cache_key  # a stable name: its counts may be cached

    def count_message(self, message: BaseMessage) -> int:
        self.counted.append(message.id)
        return self._count_uncached(message)


def test_a_message_seen_again_is_a_hit() -> None:
    inner = CountingCounter()
    counter = CachedCounter(inner, MessageCountCache(maxsize=8))
    m = HumanMessage(TEXT, id="h1")
    first = counter.count_message(m)
    assert first == ApproximateCounter().count_message(m)
    assert counter.count_message(m) == first
    assert counter.count_message(HumanMessage(TEXT, id="h1")) == first  # an equal copy
    assert (counter.cache.misses, counter.cache.hits) == (1, 2)
    assert inner.counted == ["h1"]
    assert len(counter.cache) == 1


def test_changed_content_under_the_same_id_is_recounted() -> None:
    inner = CountingCounter()
    counter = CachedCounter(inner, MessageCountCache(maxsize=8))
    short = counter.count_message(HumanMessage("short", id="m"))
    long = counter.count_message(HumanMessage(TEXT * 20, id="m"))
    assert long == ApproximateCounter().count_message(HumanMessage(TEXT * 20))
    assert long > short
    calls = [{"name": "read_file", "args": {"path": "a.py"}, "id": "c1", "type": "tool_call"}]
    with_calls = counter.count_message(AIMessage(TEXT * 20, id="m", tool_calls=calls))
    assert with_calls > long  # a different type and tool calls: recounted
    assert inner.counted == ["m", "m", "m"]
    assert counter.cache.misses == 3 and counter.cache.hits == 0
    assert len(counter.cache) == 3  # each version its own entry
    assert counter.count_message(HumanMessage("short", id="m")) == short  # back: still known
    assert counter.cache.hits == 1 and inner.counted == ["m", "m", "m"]


def test_the_cache_is_a_bounded_lru() -> None:
    inner = CountingCounter()
    counter = CachedCounter(inner, MessageCountCache(maxsize=2))
    a, b, c = (HumanMessage(f"{TEXT} {k}", id=k) for k in "abc")
    counter.count_message(a)
    counter.count_message(b)
    counter.count_message(a)  # a is now the most recent
    counter.count_message(c)  # evicts b, the least recently used
    assert len(counter.cache) == 2
    inner.counted.clear()
    counter.count_message(a)
    counter.count_message(c)
    assert inner.counted == []
    counter.count_message(b)
    assert inner.counted == ["b"]
    assert len(counter.cache) == 2


def test_messages_without_id_are_not_cached() -> None:
    inner = CountingCounter()
    counter = CachedCounter(inner, MessageCountCache(maxsize=8))
    m = HumanMessage(TEXT)
    assert counter.count_message(m) == counter.count_message(m)
    assert inner.counted == [None, None]
    assert len(counter.cache) == 0
    assert (counter.cache.hits, counter.cache.misses) == (0, 0)


def test_different_built_in_counters_do_not_share_counts() -> None:
    cache = MessageCountCache(maxsize=8)
    approx = CachedCounter(ApproximateCounter(), cache)
    exact = CachedCounter(TiktokenCounter("o200k_base"), cache)
    legacy = CachedCounter(TiktokenCounter("cl100k_base"), cache)
    m = HumanMessage("naïve Unicode: 日本語のテキスト " * 30, id="m")
    counts = [c.count_message(m) for c in (approx, exact, legacy)]
    assert counts == [
        ApproximateCounter().count_message(m),
        TiktokenCounter("o200k_base").count_message(m),
        TiktokenCounter("cl100k_base").count_message(m),
    ]
    assert len(set(counts)) == 3  # the test would not notice sharing otherwise
    assert cache.misses == 3 and len(cache) == 3


def test_counters_of_one_kind_share_counts_and_custom_ones_are_kept_apart() -> None:
    cache = MessageCountCache(maxsize=8)
    m = HumanMessage(TEXT, id="m")
    CachedCounter(ApproximateCounter(), cache).count_message(m)
    CachedCounter(ApproximateCounter(), cache).count_message(m)
    assert (cache.misses, cache.hits) == (1, 1)  # another worker's counter, same counts
    first, second = CountingCounter("one"), CountingCounter("two")
    CachedCounter(first, cache).count_message(m)
    CachedCounter(second, cache).count_message(m)
    assert first.counted == ["m"] and second.counted == ["m"]
    assert counter_key(first) != counter_key(second)
    assert counter_key(CachedCounter(first)) == counter_key(first)
    again = CountingCounter("one")  # the same declared name: the same counts, shared
    CachedCounter(again, cache).count_message(m)
    assert again.counted == []
    anonymous = CountingCounter()
    anonymous.cache_key = None  # type: ignore[assignment]  # no stable name: never cached
    for _ in range(2):
        CachedCounter(anonymous, cache).count_message(m)
    assert anonymous.counted == ["m", "m"] and counter_key(anonymous) is None


def test_built_in_counters_with_other_options_do_not_share_counts() -> None:
    cache = MessageCountCache(maxsize=8)
    m = HumanMessage(TEXT, id="m")
    CachedCounter(ApproximateCounter(), cache).count_message(m)
    padded = CachedCounter(ApproximateCounter(message_overhead=50), cache)
    assert padded.count_message(m) == ApproximateCounter(message_overhead=50).count_message(m)


def test_clear_forgets_counts_and_statistics() -> None:
    cache = MessageCountCache(maxsize=8)
    counter = CachedCounter(ApproximateCounter(), cache)
    counter.count_message(HumanMessage(TEXT, id="m"))
    counter.count_message(HumanMessage(TEXT, id="m"))
    cache.clear()
    assert len(cache) == 0 and (cache.hits, cache.misses) == (0, 0)
    assert CachedCounter(ApproximateCounter()).cache is shared_cache()


def test_describe_is_computed_once_per_content() -> None:
    from langctx.count_cache import describe

    inner = CountingCounter()
    counter = CachedCounter(inner, MessageCountCache(maxsize=8))
    ai = AIMessage("", id="a1", tool_calls=[{"id": "c1", "name": "read", "args": {"p": "x"}}])
    first = describe(counter, ai)
    assert describe(counter, ai) is first
    assert first.call_ids == ("c1",) and not first.thinking and first.view is None
    assert first.tokens == ApproximateCounter().count_message(ai)
    assert inner.counted == ["a1"]
    edited = ai.model_copy(
        update={"tool_calls": [{"id": "c1", "name": "read", "args": {"p": "y"}}]}
    )
    assert describe(counter, edited) is not first  # same id, other arguments (a human edit)


def test_describe_tells_apart_what_the_fingerprint_reads() -> None:
    """Invalid tool calls, a genuine Context-mode stamp and delimiters in the content change what
    the log does with a message, so each is its own cache entry; a forged stamp changes nothing."""
    from langchain_core.messages import ToolMessage

    from langctx.count_cache import describe
    from langctx.markers import CONTEXT_MODE_STAMP, stamp_digest

    counter = CachedCounter(ApproximateCounter(), MessageCountCache(maxsize=16))
    plain = AIMessage("x", id="a1")
    invalid = AIMessage(
        "x", id="a1", invalid_tool_calls=[{"id": "c9", "name": "run", "args": "{", "error": "bad"}]
    )
    assert describe(counter, plain).call_ids == ()
    assert describe(counter, invalid).call_ids == ("c9",)
    raw = ToolMessage("see </langctx:summary>", tool_call_id="c9", id="t1")
    forged = raw.model_copy(update={"response_metadata": {CONTEXT_MODE_STAMP: {"v": 1}}})
    genuine = {CONTEXT_MODE_STAMP: {"v": 1, "digest": stamp_digest(raw.content)}}
    stamped = raw.model_copy(update={"response_metadata": genuine})
    escaped = describe(counter, raw)
    assert escaped.view is not None and "\u200b" in str(escaped.view.content)
    assert describe(counter, forged).view == escaped.view
    assert describe(counter, stamped).view is None  # Context-mode escaped what it had to


def test_describe_without_a_cached_counter_computes_directly() -> None:
    from langctx.count_cache import describe

    m = HumanMessage("Fix the flaky test in tests/test_io.py", id="h1")
    d = describe(ApproximateCounter(), m)
    assert d.substantive and d.tokens == ApproximateCounter().count_message(m)
    assert not describe(ApproximateCounter(), HumanMessage("/mode", id="h2")).substantive


def test_a_built_in_inner_counter_is_not_cached_twice() -> None:
    inner = ApproximateCounter()
    counter = CachedCounter(inner, MessageCountCache(maxsize=8))
    m = HumanMessage(TEXT, id="h1")
    assert counter.describe(m).tokens == counter.count_message(m)
    assert len(counter.cache) == 1  # the description holds the count
    other = HumanMessage(TEXT + " more", id="h2")
    tokens = counter.count_message(other)
    assert counter.describe(other).tokens == tokens and len(counter.cache) == 2  # one per version
    assert len(inner._cache) == 0  # counted past the inner counter's own cache
    assert counter.count_message(m) == inner.count_message(m)


def _per_message(k: int) -> Any:
    def count(messages: Sequence[BaseMessage]) -> int:  # a distinct function per memory
        return sum(len(m.text) // (k % 7 + 1) + k for m in messages)

    return count


def test_300_counting_functions_never_read_each_others_counts() -> None:
    """Each of 300 memories counts with its own function, created and dropped in turn (a dead
    function's ``id()`` is soon another's), over a window that compacts: through ``view_state``
    and ``LayeredChatMemory``. Keyed by ``id()``, 27 of 300 views read a dead counter's counts."""
    import gc

    from langctx import LayeredChatMemory
    from langctx.state_memory import MemorySettings, view_state

    msgs: list[BaseMessage] = [
        SystemMessage("Be a coding agent.", id="s"),
        HumanMessage("Fix.", id="h"),
    ]
    for j in range(30):
        call = {"id": f"c{j}", "name": "read", "args": {}}
        msgs += [AIMessage("", id=f"a{j}", tool_calls=[call])]
        msgs += [ToolMessage("reading the file " * 50, tool_call_id=f"c{j}", id=f"t{j}")]
    wrong = 0
    gc.freeze()  # each collect below scans only what the loop made: ~1 ms, not a whole worker's heap
    try:
        for k in range(300):
            fn = _per_message(k)
            settings = MemorySettings.of(max_tokens=3000, token_counter=fn)
            view = view_state({"messages": msgs}, settings)
            wrong += view.context_tokens() != fn(view.projection())
            mem = LayeredChatMemory(max_tokens=3000, token_counter=_per_message(k))
            mem.add_messages(msgs)
            wrong += mem.context_tokens() != _per_message(k)(mem.build_context())
            del fn, settings, view, mem
            gc.collect()
    finally:
        gc.unfreeze()
    assert wrong == 0


def test_a_rendered_block_is_shared_only_under_the_same_summary_cap() -> None:
    """The shared block cache keys every config value the block reads: two memories that differ
    only in their summary cap never share a block (one reused the other's, over its budget)."""
    from langctx.config import MemoryConfig
    from langctx.engine.layers import summary_block
    from langctx.entries import new_compaction_entry

    summary = "Conclusions:\n" + "\n".join(f"- step {k}: parsed module_{k}.py" for k in range(40))
    entry = new_compaction_entry(
        summary=summary,
        summary_tokens=400,
        tokens_before=0,
        tokens_after=0,
        read_files=[],
        modified_files=[],
        facts={},
        level=1,
        covered_ids=["m1"],
        first_kept_id=None,
        trigger="threshold",
        quality="local",
    )
    counter = ApproximateCounter()
    wide = MemoryConfig(max_tokens=8000, max_summary_tokens=300, max_facts_tokens=300)
    narrow = MemoryConfig(max_tokens=8000, max_summary_tokens=60, max_facts_tokens=300)
    _, wide_tokens = summary_block([entry], wide, counter)
    _, narrow_tokens = summary_block([entry], narrow, counter)
    assert narrow_tokens < wide_tokens


class TextCountingCounter(ApproximateCounter):
    """An approximate counter that records the texts it really counted."""

    def __init__(self, cache_key: str | None) -> None:
        super().__init__()
        self.texts: list[str] = []
        self.cache_key = cache_key

    def count_text(self, text: str) -> int:
        self.texts.append(text)
        return super().count_text(text)


def test_a_block_line_is_counted_once_per_counter_key_and_every_time_without_one() -> None:
    """A fold renders again the lines of requests the ledger held: counted once by content for
    a counter with a stable key (two counters of one key share them), every time without."""
    line = '- [answered] "Fix the parser." → the agent answered: "Done."'
    first, second = TextCountingCounter("lines"), TextCountingCounter("lines")
    assert text_counter(first)(line) == text_counter(second)(line) == first.count_text(line)
    assert first.texts == [line, line] and second.texts == []  # the direct call, then shared
    keyless = TextCountingCounter(None)
    count = text_counter(keyless)
    count(line), count(line)
    assert keyless.texts == [line, line]
