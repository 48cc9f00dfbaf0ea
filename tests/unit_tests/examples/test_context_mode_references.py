"""The examples of `langctx.context_mode.references`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.references import (
    InMemoryReferenceStore,
    fetch_call,
    find_reference_ids,
    is_expired,
    is_reference_id,
    new_meta,
    not_found,
    out_of_range,
    process_reference_store,
    reference_frame_tokens,
    reference_id,
    render_reference,
)


def test_reference_id() -> None:
    rid = reference_id("t1", "call_1", "ab" * 32)
    assert (rid == reference_id("t1", "call_1", "ab" * 32), is_reference_id(rid)) == (True, True)


def test_is_reference_id() -> None:
    assert (is_reference_id("ctx_0123abcd"), is_reference_id("ctx_../../x")) == (True, False)


def test_find_reference_ids() -> None:
    assert find_reference_ids(
        "[langctx ref=ctx_0123abcd · ...] [\u200blangctx ref=ctx_99999999]"
    ) == ["ctx_0123abcd"]


def test_fetch_call() -> None:
    assert (
        fetch_call("ctx_0123abcd", offset=6000)
        == 'fetch_context(ref_id="ctx_0123abcd", offset=6000)'
    )


def test_reference_frame_tokens() -> None:
    assert 40 < reference_frame_tokens() < 150


def test_render_reference() -> None:
    text = render_reference(
        "ctx_0123abcd", "12 tests failed", size=90_000, tokens=22_000, slice_tokens=1500
    )
    assert (
        str(text.splitlines()[0])
        == "[langctx ref=ctx_0123abcd · the full output (90,000 bytes, ~22,000 tokens) is stored; below is a reduced view]"
    )


def test_out_of_range() -> None:
    assert (
        str(out_of_range("ctx_0123abcd", offset=5000, total=1200).text)
        == "[langctx ref=ctx_0123abcd · offset 5000 is out of range: the output has 1,200 bytes, so valid offsets are 0 to 1199]"
    )


def test_new_meta() -> None:
    assert new_meta(ref_id="ctx_1", thread_id="t", data=b"abc", source="bytes")["size"] == 3


def test_is_expired() -> None:
    assert (is_expired({"expires_at": 10.0}, now=11.0), is_expired({"expires_at": None})) == (
        True,
        False,
    )


def test_not_found() -> None:
    assert str(not_found("ctx_x")).startswith("no context reference 'ctx_x'")


def test_in_memory_reference_store() -> None:
    store = InMemoryReferenceStore()
    store.put("t", new_meta(ref_id="ctx_1", thread_id="t", data=b"hi", source="str"), b"hi")
    assert store.read("t", "ctx_1", 1, 2) == b"i"


def test_process_reference_store() -> None:
    assert process_reference_store() is process_reference_store()
