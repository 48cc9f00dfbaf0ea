"""Slices of a stored output: byte windows that fit a token budget and reassemble exactly.

Slice bodies are ``utf-8``, ``utf-8+x`` (other bytes as ``\\xNN``) or ``base64``; markers in the
text encodings are broken reversibly, so :func:`reassemble` of all slices gives back the bytes.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from langctx.context_mode.references import (
    REF_ID_RE,
    FetchResult,
    SliceEncoding,
    fetch_call,
    out_of_range,
)
from langctx.markers import REF_MARKER, escape_markers, unescape_markers
from langctx.tokens import TextCounter, TokenCounter, text_counter

SLICE_ENCODINGS: tuple[SliceEncoding, ...] = get_args(SliceEncoding)
"""Every :data:`SliceEncoding`."""

_MAX_ESCAPED_SHARE = 0.10  # above this share of raw bytes, base64 is shorter and no less readable
_RAW_BYTE = re.compile(r"[\x00\udc80-\udcff]")  # NUL, or a byte not valid UTF-8 (surrogateescape)
_NEEDS_X = re.compile(r"[\\\x00\udc80-\udcff]")
_X_SEQUENCE = re.compile(r"\\(?:\\|x([0-9a-f]{2}))")


def to_raw(output: str | bytes) -> tuple[bytes, Literal["str", "bytes"]]:
    """The bytes to store for a tool output (a ``str`` losslessly, surrogates too), and its type."""
    if isinstance(output, str):
        return output.encode("utf-8", "surrogatepass"), "str"
    return bytes(output), "bytes"


def from_raw(data: bytes, source: str) -> str | bytes:
    """Inverse of :func:`to_raw`."""
    return data.decode("utf-8", "surrogatepass") if source == "str" else data


def utf8_boundary(data: bytes, cut: int) -> int:
    """Move ``cut`` back to the start of the UTF-8 character it splits (if valid UTF-8)."""
    if cut <= 0 or cut >= len(data) or not 0x80 <= data[cut] <= 0xBF:
        return cut
    for pos in range(cut - 1, max(0, cut - 4), -1):
        if data[pos] >= 0xC0:
            return pos
        if data[pos] < 0x80:
            return cut
    return cut


def choose_encoding(data: bytes) -> SliceEncoding:
    """The encoding that shows ``data`` most readably, losslessly."""
    raw = len(_RAW_BYTE.findall(data.decode("utf-8", "surrogateescape")))
    if not raw:
        return "utf-8"
    return "utf-8+x" if raw <= _MAX_ESCAPED_SHARE * max(1, len(data)) else "base64"


def _x_escape(match: re.Match[str]) -> str:
    ch = match.group(0)  # a backslash, NUL, or a raw byte decoded as a surrogate (U+DC80-U+DCFF)
    return "\\\\" if ch == "\\" else f"\\x{ord(ch) & 0xFF:02x}"


def _x_unescape(match: re.Match[str]) -> str:
    hex_byte = match.group(1)
    if hex_byte is None:
        return "\\"
    value = int(hex_byte, 16)
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def encode_body(data: bytes, encoding: SliceEncoding) -> str:
    """Write ``data`` as text in ``encoding`` (markers escaped in the text encodings)."""
    if encoding == "base64":
        return base64.b64encode(data).decode("ascii")
    if encoding == "utf-8":
        return escape_markers(data.decode("utf-8"))
    text = data.decode("utf-8", "surrogateescape")
    return escape_markers(_NEEDS_X.sub(_x_escape, text))


def decode_body(body: str, encoding: str) -> bytes:
    """Inverse of :func:`encode_body`.

    Raises:
        ValueError: unknown ``encoding`` or a ``body`` not valid in it.
    """
    if encoding == "base64":
        try:
            return base64.b64decode(body.encode("ascii"), validate=True)
        except (binascii.Error, UnicodeEncodeError) as exc:
            msg = f"the slice body is not valid base64: {exc}"
            raise ValueError(msg) from exc
    if encoding == "utf-8":
        return unescape_markers(body).encode("utf-8")
    if encoding == "utf-8+x":
        text = _X_SEQUENCE.sub(_x_unescape, unescape_markers(body))
        return text.encode("utf-8", "surrogateescape")
    msg = f"unknown slice encoding {encoding!r}; expected one of {', '.join(SLICE_ENCODINGS)}."
    raise ValueError(msg)


_ENCODING_NOTES = {
    "utf-8+x": "\\xNN in the body is a raw byte and \\\\ a backslash",
    "base64": "the body is base64 of binary bytes",
}
# No text needs more bytes per token: a window this big always suffices.
_WINDOW_BYTES_PER_TOKEN = 16
_SLICE_HEAD = re.compile(
    "^" + re.escape(REF_MARKER) + f"(?P<ref>{REF_ID_RE.pattern})"
    r" slice offset=(?P<start>\d+) end=(?P<end>\d+) "
    r"total=(?P<total>\d+) encoding=(?P<enc>utf-8\+x|utf-8|base64)\]$"
)


@dataclass(frozen=True, slots=True)
class ParsedSlice:
    """A slice read back from its text (:func:`parse_slice`)."""

    ref_id: str
    start: int
    end: int
    total: int
    encoding: SliceEncoding
    data: bytes


def slice_window(offset: int, limit: int | None, *, size: int, max_tokens: int) -> tuple[int, int]:
    """The byte range to read from the store for a slice request (a slice never needs more)."""
    cap = max_tokens * _WINDOW_BYTES_PER_TOKEN
    span = cap if limit is None else min(limit, cap)
    return offset, min(size, offset + max(0, span))


def _slice_text(
    ref_id: str, start: int, end: int, total: int, enc: SliceEncoding, body: str
) -> str:
    head = f"{REF_MARKER}{ref_id} slice offset={start} end={end} total={total} encoding={enc}]"
    notes = [_ENCODING_NOTES[enc]] if enc in _ENCODING_NOTES else []
    left = f"{total - end:,} bytes left; next: {fetch_call(ref_id, offset=end)}"
    notes.append(left if end < total else "end of the output")
    foot = f"{REF_MARKER}{ref_id} slice ends · {' · '.join(notes)}]"
    return f"{head}\n{body}\n{foot}"


def render_slice(
    meta: Mapping[str, Any],
    window: bytes,
    offset: int,
    *,
    limit: int | None = None,
    max_tokens: int,
    count_tokens: TokenCounter | TextCounter | None = None,
) -> FetchResult:
    """One slice of a stored output from ``offset``, fitted to ``max_tokens``.

    ``window``: the stored bytes from ``offset`` on (:func:`slice_window`); ``limit``: the most
    bytes wanted (None: as much as fits, preferably ending after a newline).
    """
    count = text_counter(count_tokens)
    ref_id, total = str(meta["ref_id"]), int(meta["size"])
    if limit is not None:
        window = window[: max(0, limit)]
    if not window:
        return out_of_range(ref_id, offset=offset, total=total, limit=limit)

    def slice_of(cut: int) -> FetchResult:
        chunk, end = window[:cut], offset + cut
        enc = choose_encoding(chunk)
        return FetchResult(
            text=_slice_text(ref_id, offset, end, total, enc, encode_body(chunk, enc)),
            ref_id=ref_id,
            kind="slice",
            start=offset,
            end=end,
            total=total,
            encoding=enc,
            data=bytes(chunk),
            next_offset=end if end < total else None,
        )

    cut = len(window)
    while True:  # shrink the slice until its text fits
        if offset + cut < total:
            cut = utf8_boundary(window, cut)
        fitted = slice_of(cut)
        tokens = count(fitted.text)
        if tokens <= max_tokens or cut <= 1:
            break
        cut = max(1, min(cut - 1, int(cut * max_tokens / tokens * 0.95)))
    if limit is None and offset + cut < total and cut < len(window):  # end after a newline
        newline = window.rfind(b"\n", 0, cut) + 1
        if newline >= max(1, cut // 2):
            whole_lines = slice_of(newline)
            if count(whole_lines.text) <= max_tokens:
                return whole_lines
    return fitted


def parse_slice(text: str) -> ParsedSlice:
    """Read a slice's position, encoding and exact bytes back from its text.

    Raises:
        ValueError: not a slice written by :func:`render_slice`.
    """
    head, sep, rest = text.partition("\n")
    body, sep2, _foot = rest.rpartition("\n")
    m = _SLICE_HEAD.match(head)
    if not (m and sep and sep2):
        msg = "not a langctx slice: it must start with '[langctx ref=... slice offset=...]'."
        raise ValueError(msg)
    enc = m.group("enc")
    assert enc in SLICE_ENCODINGS
    data = decode_body(body, enc)
    start, end = int(m.group("start")), int(m.group("end"))
    if len(data) != end - start:
        msg = f"the slice body decodes to {len(data)} bytes, but its header says {end - start}."
        raise ValueError(msg)
    return ParsedSlice(m.group("ref"), start, end, int(m.group("total")), enc, data)


def reassemble(slices: Iterable[str]) -> bytes:
    """Join slice texts (in any order, overlaps allowed) back into the stored bytes.

    Raises:
        ValueError: a slice does not parse, the totals disagree, or bytes are missing.
    """
    parts = sorted((parse_slice(t) for t in slices), key=lambda p: p.start)
    if not parts:
        return b""
    total = parts[0].total
    out = bytearray()
    for part in parts:
        if part.total != total:
            msg = "the slices come from outputs of different sizes."
            raise ValueError(msg)
        if part.start > len(out):
            msg = f"bytes {len(out)} to {part.start} are missing; fetch that slice too."
            raise ValueError(msg)
        out += part.data[len(out) - part.start :]
    if len(out) != total:
        msg = f"only {len(out)} of {total} bytes are covered; fetch the rest."
        raise ValueError(msg)
    return bytes(out)
