"""Binary output: detect it and describe it instead of showing it."""

from __future__ import annotations

import hashlib
import re

from langctx.context_mode.outputs import OutputMeta, Reduction
from langctx.context_mode.reducers._layout import body_budget, clip, finish

_SAMPLE = 65_536
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
_PRINTABLE_RUN = re.compile(rb"[\x20-\x7e]{6,}")
_BINARY_SHARE = 0.10
_HEX_BYTES = 64
_MAX_STRINGS = 12
_SCAN_BYTES = 1 << 20  # printable strings are looked for in the first and last MiB


def looks_binary(text: str) -> bool:
    """Whether ``text`` is binary: in its first 64 KiB a NUL, or over 10% control characters."""
    sample = text[:_SAMPLE]
    if not sample:
        return False
    bad = len(_CONTROL.findall(sample))
    return "\x00" in sample or bad > _BINARY_SHARE * len(sample)


def _hex_preview(raw: bytes) -> list[str]:
    head = raw[:_HEX_BYTES]
    rows = []
    for offset in range(0, len(head), 16):
        chunk = head[offset : offset + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        printable = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        rows.append(f"{offset:08x}  {hexes:<47}  {printable}")
    return rows


def reduce_binary(
    text: str, *, meta: OutputMeta, budget_tokens: int, raw: bytes | None = None
) -> Reduction:
    """Describe binary output: its size, a hex preview and the printable strings in it.

    ``raw``: the original bytes, when the output came as bytes.
    """
    data = raw if raw is not None else text.encode("utf-8", errors="surrogatepass")
    digest = hashlib.sha256(data).hexdigest()[:16]
    scan = (
        data if len(data) <= 2 * _SCAN_BYTES else data[:_SCAN_BYTES] + b"\0" + data[-_SCAN_BYTES:]
    )
    strings = list(dict.fromkeys(m.group(0).decode("ascii") for m in _PRINTABLE_RUN.finditer(scan)))
    if len(strings) > _MAX_STRINGS:  # the first and the last ones
        half = _MAX_STRINGS // 2
        strings = [*strings[:half], "…", *strings[-half:]]
    summary = f"binary output, {len(data):,} bytes (sha256 {digest}…)"
    shown = ", ".join("…" if s == "…" else repr(clip(s, 60)) for s in strings)
    printable = f"printable strings: {shown}" if strings else ""
    budget = body_budget("binary", meta, budget_tokens)
    count = meta.count_tokens
    body = [summary]
    used = count(summary) + count(printable) + 2
    hex_rows = _hex_preview(data)
    if hex_rows and used + count(hex_rows[0]) + 4 <= budget:
        body.append("hex preview:")
        for row in hex_rows:
            used += count(row) + 1
            if used > budget:
                break
            body.append(row)
    if printable:
        body.append(printable)
    removed = f"the binary content ({len(data):,} bytes); only a preview is shown"
    return finish("binary", meta, budget_tokens, body, removed)
