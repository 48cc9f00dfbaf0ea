"""Reference substitution, pure: reference ids, the reference message, slices and grep of a stored output.

A large tool output is stored and the context gets a reference (an id, a short description, how to
fetch the rest); ``fetch_context`` returns slices or matching lines, each under a token budget.
Offsets count **bytes** of the stored output; each slice says where it starts and ends and how its
body is encoded, so :func:`reassemble` of all slices gives back the original bytes exactly.

Example:
    >>> from langctx.context_mode.ref_store import new_meta
    >>> data = "\\n".join(f"line {i}" for i in range(2000)).encode()
    >>> meta = new_meta(ref_id="ctx_0a1b2c3d", thread_id="t", data=data, source="str")
    >>> first = render_slice(meta, data[:4000], 0, max_tokens=300)
    >>> first.start, first.end < 4000, first.next_offset == first.end
    (0, True, True)
    >>> first.text.splitlines()[0]
    '[langctx ref=ctx_0a1b2c3d slice offset=0 end=... total=... encoding=utf-8]'
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langctx.context_mode.slice_codec import (
    SLICE_ENCODINGS,
    SliceEncoding,
    choose_encoding,
    decode_body,
    encode_body,
    utf8_boundary,
)
from langctx.markers import REF_MARKER, REFERENCE_ID_PREFIX, escape_delimiters
from langctx.tokens import TextCounter, TokenCounter, text_counter

__all__ = [
    "DEFAULT_GREP_MAX_MATCHES",
    "DEFAULT_REFERENCE_MIN_TOKENS",
    "MAX_GREP_PATTERN_CHARS",
    "REF_ID_RE",
    "FetchResult",
    "ParsedSlice",
    "fetch_call",
    "find_reference_ids",
    "is_reference_id",
    "out_of_range",
    "parse_slice",
    "reassemble",
    "reference_frame_tokens",
    "reference_id",
    "render_grep",
    "render_reference",
    "render_slice",
    "slice_window",
]

_ID = re.escape(REFERENCE_ID_PREFIX) + "[0-9a-f]{8}"
REF_ID_RE = re.compile(_ID)
"""What a reference id looks like: ``ctx_`` and eight hex digits."""

DEFAULT_REFERENCE_MIN_TOKENS = 4_000
"""Outputs over this many tokens are stored and referenced (smaller ones are only reduced)."""

DEFAULT_GREP_MAX_MATCHES = 50
"""At most this many matching lines per ``grep`` result."""

MAX_GREP_PATTERN_CHARS = 500
"""Longer grep patterns are refused."""

_GREP_LINE_CHARS = 300
_WINDOW_BYTES_PER_TOKEN = (
    16  # no text needs more bytes per token: a window this big always suffices
)
_SLICE_HEAD = re.compile(
    "^" + re.escape(REF_MARKER) + f"(?P<ref>{_ID})"
    r" slice offset=(?P<start>\d+) end=(?P<end>\d+) "
    r"total=(?P<total>\d+) encoding=(?P<enc>utf-8\+x|utf-8|base64)\]$"
)
_FOUND = re.compile(re.escape(REF_MARKER) + f"({_ID})" + r"\b")


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchResult:
    """One answer of ``fetch_context``: a slice, grep matches, or why there is nothing to show."""

    text: str
    """What the model sees (bounded by the token budget)."""
    ref_id: str
    kind: Literal["slice", "grep", "out_of_range", "invalid"]
    ok: bool = True
    """False when the request could not be served (out-of-range offset, bad limit or pattern)."""
    start: int = 0
    """First byte of the slice (or where the grep started)."""
    end: int = 0
    """Byte after the slice (or after the last line shown by grep)."""
    total: int = 0
    """Size of the stored output in bytes."""
    encoding: SliceEncoding | None = None
    data: bytes = b""
    """The raw bytes of the slice (empty for grep and errors)."""
    next_offset: int | None = None
    """Where the next slice (or the next grep page) starts; None at the end."""
    matches: int = 0
    """Matching lines shown (grep)."""
    message_id: str | None = None
    """Id of the message that showed the reference (set by the processor's fetch)."""


@dataclass(frozen=True, slots=True)
class ParsedSlice:
    """A slice read back from its text (see :func:`parse_slice`)."""

    ref_id: str
    start: int
    end: int
    total: int
    encoding: SliceEncoding
    data: bytes


# ---------------------------------------------------------------------------------------------- ids


def reference_id(thread_id: str, tool_call_id: str | None, sha256: str, *, attempt: int = 0) -> str:
    """A stable reference id for an output: the same thread, call and bytes give the same id.

    ``attempt`` picks another id when the first one is taken by different bytes.

    Example:
        >>> rid = reference_id("t1", "call_1", "ab" * 32)
        >>> rid == reference_id("t1", "call_1", "ab" * 32), is_reference_id(rid)
        (True, True)
    """
    seed = f"{thread_id}\0{tool_call_id or ''}\0{sha256}\0{attempt}".encode()
    return REFERENCE_ID_PREFIX + hashlib.sha256(seed).hexdigest()[:8]


def is_reference_id(value: object) -> bool:
    """Whether ``value`` has the shape of a reference id.

    Example:
        >>> is_reference_id("ctx_0123abcd"), is_reference_id("ctx_../../x")
        (True, False)
    """
    return isinstance(value, str) and REF_ID_RE.fullmatch(value) is not None


def find_reference_ids(text: str) -> list[str]:
    """Reference ids that langctx wrote in ``text`` (in order, no duplicates).

    Only ids in a genuine marker count: a marker inside tool output is escaped, so it is not found.

    Example:
        >>> find_reference_ids('[langctx ref=ctx_0123abcd · ...] [\\u200blangctx ref=ctx_99999999]')
        ['ctx_0123abcd']
    """
    found = _FOUND.findall(text)
    return list(dict.fromkeys(found))


def fetch_call(ref_id: str, *, offset: int | None = None, grep: str | None = None) -> str:
    """How to call ``fetch_context`` for a reference, as shown to the model.

    Example:
        >>> fetch_call("ctx_0123abcd", offset=6000)
        'fetch_context(ref_id="ctx_0123abcd", offset=6000)'
    """
    parts = [f'ref_id="{ref_id}"']
    if grep is not None:
        parts.append(f"grep={escape_delimiters(json.dumps(grep, ensure_ascii=False))}")
    if offset is not None:
        parts.append(f"offset={offset}")
    return f"fetch_context({', '.join(parts)})"


# ------------------------------------------------------------------------------ reference message


def _reference_head(ref_id: str, size: int, tokens: int) -> str:
    return (
        f"{REF_MARKER}{ref_id} · the full output ({size:,} bytes, ~{tokens:,} tokens) is stored; "
        "below is a reduced view]"
    )


def _reference_foot(ref_id: str, slice_tokens: int) -> str:
    return (
        f"{REF_MARKER}{ref_id} · {fetch_call(ref_id, offset=0)} reads it in slices of up to "
        f"~{slice_tokens:,} tokens (offsets are bytes); {fetch_call(ref_id, grep='<regex>')} lists "
        "the matching lines with their offsets]"
    )


def reference_frame_tokens(count_tokens: TokenCounter | TextCounter | None = None) -> int:
    """Tokens the reference's first and last lines take (for budgeting the description).

    Example:
        >>> 40 < reference_frame_tokens() < 150
        True
    """
    count = text_counter(count_tokens)
    head = _reference_head("ctx_00000000", 999_999_999, 999_999_999)
    return count(head) + count(_reference_foot("ctx_00000000", 999_999)) + 4


def render_reference(
    ref_id: str, description: str, *, size: int, tokens: int, slice_tokens: int
) -> str:
    """The text that replaces a referenced output in the context.

    Args:
        ref_id: the reference id.
        description: the reduced text or summary (already escaped).
        size: bytes stored.
        tokens: tokens of the original output.
        slice_tokens: the most tokens one fetched slice may have.

    Example:
        >>> text = render_reference("ctx_0123abcd", "12 tests failed", size=90_000,
        ...                         tokens=22_000, slice_tokens=1500)
        >>> print(text)  # doctest: +NORMALIZE_WHITESPACE
        [langctx ref=ctx_0123abcd · the full output (90,000 bytes, ~22,000 tokens) is stored; below
        is a reduced view]
        12 tests failed
        [langctx ref=ctx_0123abcd · fetch_context(ref_id="ctx_0123abcd", offset=0) reads it in
        slices of up to ~1,500 tokens (offsets are bytes); fetch_context(ref_id="ctx_0123abcd",
        grep="<regex>") lists the matching lines with their offsets]
    """
    return "\n".join(
        [_reference_head(ref_id, size, tokens), description, _reference_foot(ref_id, slice_tokens)]
    )


# ---------------------------------------------------------------------------------------- slices


def slice_window(offset: int, limit: int | None, *, size: int, max_tokens: int) -> tuple[int, int]:
    """The byte range to read from the store for a slice request (a slice never needs more).

    Example:
        >>> slice_window(100, 50, size=1000, max_tokens=1500), slice_window(0, None, size=10, max_tokens=100)
        ((100, 150), (0, 10))
    """
    cap = max_tokens * _WINDOW_BYTES_PER_TOKEN
    span = cap if limit is None else min(limit, cap)
    return offset, min(size, offset + max(0, span))


def out_of_range(ref_id: str, *, offset: int, total: int, limit: int | None = None) -> FetchResult:
    """The answer to a slice request that asks for bytes the output does not have.

    Example:
        >>> print(out_of_range("ctx_0123abcd", offset=5000, total=1200).text)
        [langctx ref=ctx_0123abcd · offset 5000 is out of range: the output has 1,200 bytes, so valid offsets are 0 to 1199]
    """
    if limit is not None and limit <= 0:
        why = f"limit {limit} is not a positive number of bytes; omit it to get as much as fits"
    elif total == 0:
        why = "the output is empty; there is nothing to fetch"
    else:
        why = (
            f"offset {offset} is out of range: the output has {total:,} bytes, so valid offsets "
            f"are 0 to {total - 1}"
        )
    return FetchResult(
        text=f"{REF_MARKER}{ref_id} · {why}]",
        ref_id=ref_id,
        kind="out_of_range",
        ok=False,
        start=offset,
        end=offset,
        total=total,
    )


def _slice_text(
    ref_id: str, start: int, end: int, total: int, enc: SliceEncoding, body: str
) -> str:
    head = f"{REF_MARKER}{ref_id} slice offset={start} end={end} total={total} encoding={enc}]"
    notes = []
    if enc == "utf-8+x":
        notes.append("\\xNN in the body is a raw byte and \\\\ a backslash")
    elif enc == "base64":
        notes.append("the body is base64 of binary bytes")
    if end < total:
        notes.append(f"{total - end:,} bytes left; next: {fetch_call(ref_id, offset=end)}")
    else:
        notes.append("end of the output")
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
    """One slice of a stored output, starting at ``offset``, fitted to ``max_tokens``.

    Args:
        meta: the reference's meta (``ref_id`` and ``size`` are used).
        window: the stored bytes from ``offset`` on (see :func:`slice_window`).
        offset: first byte of the slice (must be in range; see :func:`out_of_range`).
        limit: the most bytes wanted; None: as much as fits. A slice cut for the budget ends at a
            character boundary and, when no limit was given, preferably after a newline.
        max_tokens: the most tokens the whole text may have.
        count_tokens: token counter.

    Example:
        >>> from langctx.context_mode.ref_store import new_meta
        >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=b"\\x00\\x01", source="bytes")
        >>> r = render_slice(meta, b"\\x00\\x01", 0, max_tokens=200)
        >>> r.encoding, r.data, r.next_offset
        ('base64', b'\\x00\\x01', None)
    """
    count = text_counter(count_tokens)
    ref_id, total = str(meta["ref_id"]), int(meta["size"])
    if limit is not None:
        window = window[: max(0, limit)]
    if not window:
        return out_of_range(ref_id, offset=offset, total=total, limit=limit)
    cut = len(window)
    while True:
        if offset + cut < total:
            cut = utf8_boundary(window, cut)
        chunk = window[:cut]
        enc = choose_encoding(chunk)
        text = _slice_text(ref_id, offset, offset + cut, total, enc, encode_body(chunk, enc))
        tokens = count(text)
        if tokens <= max_tokens or cut <= 1:
            break
        cut = max(1, min(cut - 1, int(cut * max_tokens / tokens * 0.95)))
    if limit is None and offset + cut < total and cut < len(window):  # end after a newline
        newline = chunk.rfind(b"\n") + 1
        if newline >= max(1, cut // 2):
            shorter = chunk[:newline]
            enc2 = choose_encoding(shorter)
            text2 = _slice_text(
                ref_id, offset, offset + newline, total, enc2, encode_body(shorter, enc2)
            )
            if count(text2) <= max_tokens:
                chunk, cut, enc, text = shorter, newline, enc2, text2
    end = offset + cut
    return FetchResult(
        text=text,
        ref_id=ref_id,
        kind="slice",
        start=offset,
        end=end,
        total=total,
        encoding=enc,
        data=bytes(chunk),
        next_offset=end if end < total else None,
    )


def parse_slice(text: str) -> ParsedSlice:
    """Read a slice's position, encoding and exact bytes back from its text.

    Raises:
        ValueError: the text is not a slice written by :func:`render_slice`.

    Example:
        >>> from langctx.context_mode.ref_store import new_meta
        >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=b"hi\\xff", source="bytes")
        >>> parse_slice(render_slice(meta, b"hi\\xff", 0, max_tokens=200).text).data
        b'hi\\xff'
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
        ValueError: a slice does not parse, the slices disagree on the total, or bytes are missing.

    Example:
        >>> from langctx.context_mode.ref_store import new_meta
        >>> data = bytes(range(256)) * 8
        >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="bytes")
        >>> texts, offset = [], 0
        >>> while offset is not None:
        ...     r = render_slice(meta, data[offset:], offset, max_tokens=150)
        ...     texts.append(r.text)
        ...     offset = r.next_offset
        >>> reassemble(texts) == data
        True
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


# ------------------------------------------------------------------------------------------- grep


def _compile(pattern: str) -> re.Pattern[bytes]:
    """A bytes regex for ``pattern``: a regex if it compiles, else the literal text.

    Smart case: case-insensitive unless the pattern has an upper-case letter.
    """
    flags = re.MULTILINE if pattern != pattern.lower() else re.MULTILINE | re.IGNORECASE
    raw = pattern.encode("utf-8", "surrogatepass")
    try:
        return re.compile(raw, flags)
    except re.error:
        return re.compile(re.escape(raw), flags)


def _grep_line(line: bytes, match_at: int) -> str:
    text = line.decode("utf-8", "replace").rstrip("\r")
    if len(text) > _GREP_LINE_CHARS:
        lo = max(0, min(match_at - 80, len(text) - _GREP_LINE_CHARS))
        hi = lo + _GREP_LINE_CHARS
        text = ("…" if lo else "") + text[lo:hi] + ("…" if hi < len(text) else "")
    return escape_delimiters(text)


def render_grep(
    meta: Mapping[str, Any],
    data: bytes,
    pattern: str,
    *,
    offset: int = 0,
    max_matches: int = DEFAULT_GREP_MAX_MATCHES,
    max_tokens: int,
    count_tokens: TokenCounter | TextCounter | None = None,
) -> FetchResult:
    """The lines of a stored output that match ``pattern``, with line numbers and byte offsets.

    ``pattern`` is a regular expression, or literal text when it is not a valid one; it ignores
    case unless it has an upper-case letter. The search starts at byte ``offset``; at most
    ``max_matches`` lines and ``max_tokens`` tokens are returned, and the footer says where the
    next page starts.

    Example:
        >>> from langctx.context_mode.ref_store import new_meta
        >>> data = b"ok\\nboom: KeyError x\\nok\\nwarn\\nKeyError again\\n"
        >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
        >>> print(render_grep(meta, data, "KeyError", max_tokens=500).text)  # doctest: +NORMALIZE_WHITESPACE
        [langctx ref=ctx_0123abcd grep "KeyError" from offset 0: 2 matching lines (line number @ byte offset)]
        L2 @3: boom: KeyError x
        L5 @28: KeyError again
        [langctx ref=ctx_0123abcd grep ends · no more matches · read around a match with
        fetch_context(ref_id="ctx_0123abcd", offset=<its @ offset>)]
    """
    count = text_counter(count_tokens)
    ref_id, total = str(meta["ref_id"]), int(meta["size"])
    if len(pattern) > MAX_GREP_PATTERN_CHARS:
        text = f"{REF_MARKER}{ref_id} · the grep pattern is too long ({len(pattern)} chars; at most {MAX_GREP_PATTERN_CHARS})]"
        return FetchResult(text=text, ref_id=ref_id, kind="invalid", ok=False, total=total)
    if offset < 0 or (offset >= total and total > 0):
        return out_of_range(ref_id, offset=offset, total=total)
    rx = _compile(pattern)
    shown = escape_delimiters(json.dumps(pattern, ensure_ascii=False))
    frame = _grep_head(ref_id, shown, offset, 999) + _grep_foot(ref_id, pattern, 10**12, 1)
    budget = max_tokens - count(frame) - 4
    lines: list[str] = []
    used = 0
    pos, lineno, counted = offset, 1 + data.count(b"\n", 0, offset), offset
    next_offset: int | None = None
    while pos <= len(data):
        m = rx.search(data, pos)
        if m is None:
            break
        start = data.rfind(b"\n", 0, m.start()) + 1
        stop = data.find(b"\n", m.start())
        stop = len(data) if stop == -1 else stop
        lineno += data.count(b"\n", counted, start)
        counted = max(counted, start)
        line = f"L{lineno} @{start}: {_grep_line(data[start:stop], m.start() - start)}"
        cost = count(line) + 1
        if len(lines) >= max_matches or used + cost > budget:
            next_offset = max(start, offset)
            break
        lines.append(line)
        used += cost
        pos = stop + 1
    end = min(pos, total) if next_offset is None else next_offset
    head = _grep_head(ref_id, shown, offset, len(lines))
    foot = _grep_foot(ref_id, pattern, next_offset, len(lines))
    return FetchResult(
        text="\n".join([head, *lines, foot]),
        ref_id=ref_id,
        kind="grep",
        start=offset,
        end=end,
        total=total,
        next_offset=next_offset,
        matches=len(lines),
    )


def _grep_head(ref_id: str, shown: str, offset: int, n: int) -> str:
    what = f"{n} matching line{'' if n == 1 else 's'}"
    if n:
        what += " (line number @ byte offset)"
    return f"{REF_MARKER}{ref_id} grep {shown} from offset {offset}: {what}]"


def _grep_foot(ref_id: str, pattern: str, next_offset: int | None, n: int) -> str:
    notes = []
    if next_offset is not None:
        notes.append(f"more matches: {fetch_call(ref_id, grep=pattern, offset=next_offset)}")
    else:
        notes.append("no more matches")
    if n:
        notes.append(
            f'read around a match with fetch_context(ref_id="{ref_id}", offset=<its @ offset>)'
        )
    return f"{REF_MARKER}{ref_id} grep ends · {' · '.join(notes)}]"
