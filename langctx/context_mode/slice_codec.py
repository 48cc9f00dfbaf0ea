"""Lossless text for stored bytes: how a slice of a stored tool output is written into a message.

A stored output is bytes (:func:`to_raw`). :func:`choose_encoding` picks one of three encodings
for a slice: ``utf-8`` (valid UTF-8 without NUL bytes, as is), ``utf-8+x`` (mostly text: the other
bytes written ``\\xNN``, a backslash ``\\\\``) or ``base64``. In the text encodings anything that
looks like a langctx marker is broken with a zero-width space, reversibly, so a slice can never
forge a marker and :func:`decode_body` still gives back the exact bytes.

Example:
    >>> data = b"ok [langctx ref=ctx_00000000]\\n\\xff\\x00 done"
    >>> encoding = choose_encoding(data)
    >>> body = encode_body(data, encoding)
    >>> encoding, "[langctx" in body, decode_body(body, encoding) == data
    ('utf-8+x', False, True)
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Literal, get_args

from langctx.markers import escape_markers, unescape_markers

__all__ = [
    "SLICE_ENCODINGS",
    "SliceEncoding",
    "choose_encoding",
    "decode_body",
    "encode_body",
    "from_raw",
    "to_raw",
    "utf8_boundary",
]

SliceEncoding = Literal["utf-8", "utf-8+x", "base64"]
"""How the bytes of a slice are written as text."""

SLICE_ENCODINGS: tuple[SliceEncoding, ...] = get_args(SliceEncoding)
"""Every :data:`SliceEncoding`."""

_MAX_ESCAPED_SHARE = 0.10  # above this share of raw bytes, base64 is shorter and no less readable
_NEEDS_X = re.compile(r"[\\\x00\udc80-\udcff]")
_X_SEQUENCE = re.compile(r"\\(?:\\|x([0-9a-f]{2}))")


def to_raw(output: str | bytes) -> tuple[bytes, Literal["str", "bytes"]]:
    """The bytes to store for a tool output, and what it was.

    A ``str`` is encoded as UTF-8 with ``surrogatepass``, so every string (lone surrogates from a
    ``surrogateescape`` decode included) is stored losslessly.

    Example:
        >>> to_raw("café"), to_raw(b"\\xff")
        ((b'caf\\xc3\\xa9', 'str'), (b'\\xff', 'bytes'))
    """
    if isinstance(output, str):
        return output.encode("utf-8", "surrogatepass"), "str"
    return bytes(output), "bytes"


def from_raw(data: bytes, source: str) -> str | bytes:
    """Inverse of :func:`to_raw`.

    Example:
        >>> from_raw(*to_raw("a\\udcff b")) == "a\\udcff b"
        True
    """
    return data.decode("utf-8", "surrogatepass") if source == "str" else data


def utf8_boundary(data: bytes, cut: int) -> int:
    """Move ``cut`` back to the start of the UTF-8 character it splits, if it splits one.

    Returns ``cut`` unchanged when it already falls between characters, when the bytes around it
    are not valid UTF-8, or when moving it would leave nothing before it.

    Example:
        >>> data = "aé".encode()  # b"a\\xc3\\xa9"
        >>> utf8_boundary(data, 2), utf8_boundary(data, 1), utf8_boundary(data, 3)
        (1, 1, 3)
    """
    if cut <= 0 or cut >= len(data) or not 0x80 <= data[cut] <= 0xBF:
        return cut
    for back in range(1, 4):
        pos = cut - back
        if pos <= 0:
            return cut
        byte = data[pos]
        if byte >= 0xC0:
            return pos
        if byte < 0x80:
            return cut
    return cut


def choose_encoding(data: bytes) -> SliceEncoding:
    """Pick the encoding that shows ``data`` most readably, losslessly.

    Example:
        >>> choose_encoding(b"plain"), choose_encoding(b"caf\\xe9 au lait"), choose_encoding(bytes(range(256)))
        ('utf-8', 'utf-8+x', 'base64')
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "surrogateescape")
    else:
        if "\x00" not in text:
            return "utf-8"
    raw = sum(1 for ch in text if ch == "\x00" or "\udc80" <= ch <= "\udcff")
    return "utf-8+x" if raw <= _MAX_ESCAPED_SHARE * max(1, len(data)) else "base64"


def _x_escape(match: re.Match[str]) -> str:
    ch = match.group(0)
    if ch == "\\":
        return "\\\\"
    if ch == "\x00":
        return "\\x00"
    return f"\\x{ord(ch) - 0xDC00:02x}"


def _x_unescape(match: re.Match[str]) -> str:
    hex_byte = match.group(1)
    if hex_byte is None:
        return "\\"
    value = int(hex_byte, 16)
    return chr(value) if value < 0x80 else chr(0xDC00 + value)


def encode_body(data: bytes, encoding: SliceEncoding) -> str:
    """Write ``data`` as text in ``encoding`` (markers escaped in the text encodings).

    Example:
        >>> encode_body(b"a\\\\b\\xff", "utf-8+x")
        'a\\\\\\\\b\\\\xff'
        >>> encode_body(b"\\x00\\x01", "base64")
        'AAE='
    """
    if encoding == "base64":
        return base64.b64encode(data).decode("ascii")
    if encoding == "utf-8":
        return escape_markers(data.decode("utf-8"))
    text = data.decode("utf-8", "surrogateescape")
    return escape_markers(_NEEDS_X.sub(_x_escape, text))


def decode_body(body: str, encoding: str) -> bytes:
    """Inverse of :func:`encode_body`.

    Raises:
        ValueError: ``encoding`` is unknown or ``body`` is not valid in it.

    Example:
        >>> decode_body("AAE=", "base64")
        b'\\x00\\x01'
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
