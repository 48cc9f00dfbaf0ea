"""The examples of `langctx.context_mode.slices`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.references import new_meta
from langctx.context_mode.slices import (
    choose_encoding,
    decode_body,
    encode_body,
    from_raw,
    parse_slice,
    reassemble,
    render_slice,
    slice_window,
    to_raw,
    utf8_boundary,
)


def test_to_raw() -> None:
    assert (to_raw("café"), to_raw(b"\xff")) == ((b"caf\xc3\xa9", "str"), (b"\xff", "bytes"))


def test_from_raw() -> None:
    assert from_raw(*to_raw("a\udcff b")) == "a\udcff b"


def test_utf8_boundary() -> None:
    # data is b"a\xc3\xa9": a cut inside "é" moves back to its first byte
    data = "aé".encode()
    assert (utf8_boundary(data, 2), utf8_boundary(data, 1), utf8_boundary(data, 3)) == (1, 1, 3)


def test_choose_encoding() -> None:
    assert (
        choose_encoding(b"plain"),
        choose_encoding(b"caf\xe9 au lait"),
        choose_encoding(bytes(range(256))),
    ) == ("utf-8", "utf-8+x", "base64")


def test_encode_body() -> None:
    assert (encode_body(b"a\\b\xff [langctx", "utf-8+x"), encode_body(b"\x00\x01", "base64")) == (
        "a\\\\b\\xff [\u200blangctx",
        "AAE=",
    )


def test_decode_body() -> None:
    assert decode_body("AAE=", "base64") == b"\x00\x01"


def test_slice_window() -> None:
    assert (
        slice_window(100, 50, size=1000, max_tokens=1500),
        slice_window(0, None, size=10, max_tokens=100),
    ) == ((100, 150), (0, 10))


def test_render_slice() -> None:
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=b"\x00\x01", source="bytes")
    r = render_slice(meta, b"\x00\x01", 0, max_tokens=200)
    assert (r.encoding, r.data, r.next_offset) == ("base64", b"\x00\x01", None)


def test_parse_slice() -> None:
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=b"hi\xff", source="bytes")
    assert parse_slice(render_slice(meta, b"hi\xff", 0, max_tokens=200).text).data == b"hi\xff"


def test_reassemble() -> None:
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=b"abcdef", source="bytes")
    assert (
        reassemble(
            [
                render_slice(meta, b"def", 3, max_tokens=99).text,
                render_slice(meta, b"abcd", 0, max_tokens=99).text,
            ]
        )
        == b"abcdef"
    )
