"""The reference that stands for a stored tool output: its id, its text, and fetch's answers.

``fetch_context`` answers with a :class:`FetchResult`: a slice (:mod:`~langctx.context_mode.slices`),
grep matches (:mod:`~langctx.context_mode.grep`), or why there is nothing to show.

Example:
    >>> rid = reference_id("t1", "call_1", "ab" * 32)
    >>> find_reference_ids(render_reference(rid, "12 tests failed", size=90_000, tokens=22_000,
    ...                                     slice_tokens=1500)) == [rid]
    True
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Literal

from langctx.markers import REF_MARKER, REFERENCE_ID_PREFIX, escape_delimiters
from langctx.tokens import TextCounter, TokenCounter, text_counter

__all__ = [
    "DEFAULT_REFERENCE_MIN_TOKENS",
    "REF_ID_RE",
    "FetchResult",
    "SliceEncoding",
    "fetch_call",
    "find_reference_ids",
    "is_reference_id",
    "out_of_range",
    "reference_frame_tokens",
    "reference_id",
    "render_reference",
]

_ID = re.escape(REFERENCE_ID_PREFIX) + "[0-9a-f]{8}"
REF_ID_RE = re.compile(_ID)
"""What a reference id looks like: ``ctx_`` and eight hex digits."""

SliceEncoding = Literal["utf-8", "utf-8+x", "base64"]
"""How the bytes of a slice are written as text (see :mod:`~langctx.context_mode.slices`)."""

DEFAULT_REFERENCE_MIN_TOKENS = 4_000
"""Outputs over this many tokens are stored and referenced (smaller ones are only reduced)."""

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
    return list(dict.fromkeys(_FOUND.findall(text)))


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

    ``description`` is the reduced text or summary (already escaped); ``size`` the bytes stored,
    ``tokens`` the original output's tokens, ``slice_tokens`` the most one fetched slice may have.

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
