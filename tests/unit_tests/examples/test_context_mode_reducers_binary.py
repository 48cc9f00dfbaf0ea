"""The examples of `langctx.context_mode.reducers.binary`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.binary import looks_binary, reduce_binary


def test_looks_binary() -> None:
    assert (looks_binary("plain text\twith tabs\n"), looks_binary("a\x00b")) == (False, True)


def test_reduce_binary() -> None:
    blob = b"\x7fELF\x02\x01" + b"\x00" * 5000 + b"GLIBC_2.34\x00"
    r = reduce_binary("", meta=OutputMeta(), budget_tokens=300, raw=blob)
    assert (r.text.splitlines()[1], "'GLIBC_2.34'" in r.text) == (
        "binary output, 5,017 bytes (sha256 7cb1cba4f3237a64…)",
        True,
    )
