"""Archived batches kept in the state packed: one compressed string each, read when needed.

The in-state archive (``langctx_archive``) is a ``DeltaChannel`` whose snapshot holds every batch,
and every run start reads the latest snapshot back. A batch stored as plain dicts costs that run
start a parse of every archived message; packed, it is one string per batch, parsed only where a
batch is read (:func:`~langctx.archive_repair.checked_batch`): a step reads the newest batch,
``full_log`` all of them.

A packed batch (version 2) is ``{"v": 2, "kind": "langctx_archive_batch", "seq": n, "packed":
s}``, ``s`` the batch (version 1, :class:`~langctx.archive_repair.ArchiveBatch`) as JSON (ASCII),
zlib-compressed, base64. A store keeps batches unpacked (one item each, never re-read whole).

Example:
    >>> batch = {"v": 1, "kind": "langctx_archive_batch", "seq": 3, "thread_id": "t"}
    >>> packed = pack_batch(batch)
    >>> sorted(packed), unpack_batch(packed) == batch
    (['kind', 'packed', 'seq', 'v'], True)
"""

from __future__ import annotations

import base64
import binascii
import json
import zlib
from collections.abc import Mapping
from typing import Any

__all__ = ["PACKED_VERSION", "is_packed", "pack_batch", "unpack_batch"]

PACKED_VERSION = 2
"""Version of a packed batch."""

_KIND = "langctx_archive_batch"

MAX_UNPACKED_BYTES = 1 << 30
"""The most a packed batch may unpack to (a compressed bomb is refused, not expanded)."""


def pack_batch(batch: Mapping[str, Any]) -> dict[str, Any]:
    """``batch`` (version 1, JSON values) packed for the state."""
    text = json.dumps(batch, ensure_ascii=True, separators=(",", ":"))
    data = base64.b64encode(zlib.compress(text.encode("ascii"), 6)).decode("ascii")
    return {"v": PACKED_VERSION, "kind": _KIND, "seq": batch["seq"], "packed": data}


def is_packed(value: Mapping[str, Any]) -> bool:
    """Whether ``value`` (a dict of kind ``langctx_archive_batch``) says it is packed."""
    return value.get("v") == PACKED_VERSION


def unpack_batch(value: Mapping[str, Any]) -> Any:
    """The batch ``value`` packs (not checked: :func:`~langctx.archive_repair.checked_batch`).

    Raises:
        ValueError: ``packed`` is no string, or no base64 / zlib / JSON of one.
    """
    data = value.get("packed")
    if not isinstance(data, str):
        msg = f"its 'packed' is {type(data).__name__}, not a string"
        raise ValueError(msg)
    try:
        inflate = zlib.decompressobj()
        text = inflate.decompress(base64.b64decode(data, validate=True), MAX_UNPACKED_BYTES)
        if inflate.unconsumed_tail:
            msg = f"its 'packed' unpacks to more than {MAX_UNPACKED_BYTES} bytes"
            raise ValueError(msg)
        return json.loads(text)
    except (binascii.Error, zlib.error, UnicodeDecodeError, json.JSONDecodeError) as exc:
        msg = f"its 'packed' cannot be unpacked ({type(exc).__name__})"
        raise ValueError(msg) from exc
