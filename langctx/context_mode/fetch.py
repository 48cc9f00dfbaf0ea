"""One ``fetch_context`` request, pure: its checks, the bytes to read, and what the model sees.

:func:`fetch_window` says which bytes of the stored output a request needs (a slice's window, or
all of them for grep); :func:`fetch_answer` renders them as a slice or grep matches under the token
budget and passes the text through Context-mode again.

Example:
    >>> from langctx.context_mode.ref_store import new_meta
    >>> data = b"ok\\nboom: KeyError x\\nok\\n"
    >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
    >>> from langctx.context_mode.config import ContextModeConfig
    >>> config = ContextModeConfig()
    >>> start, end = fetch_window(meta, offset=0, limit=None, grep="KeyError", config=config)
    >>> fetch_answer(meta, data[start:end], offset=0, limit=None, grep="KeyError", config=config).matches
    1
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from langctx.context_mode.config import ContextModeConfig
from langctx.context_mode.grep import render_grep
from langctx.context_mode.reduce import reduce_output
from langctx.context_mode.ref_store import not_found
from langctx.context_mode.references import FetchResult, is_reference_id, out_of_range
from langctx.context_mode.slices import render_slice, slice_window
from langctx.errors import ConfigError
from langctx.tokens import TextCounter, TokenCounter

__all__ = ["check_fetch", "fetch_answer", "fetch_window"]


def check_fetch(ref_id: str, offset: int, limit: int | None) -> None:
    """Refuse a request whose id, offset or limit is not of the right type.

    Raises:
        ReferenceNotFoundError: ``ref_id`` does not look like a reference id.
        ConfigError: ``offset`` is not an int, or ``limit`` is neither an int nor None.
    """
    if not is_reference_id(ref_id):
        raise not_found(str(ref_id))
    if isinstance(offset, bool) or not isinstance(offset, int):
        msg = f"offset must be an int (a byte offset), got {offset!r}."
        raise ConfigError(msg)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
        msg = f"limit must be an int (bytes) or None, got {limit!r}."
        raise ConfigError(msg)


def fetch_window(
    meta: Mapping[str, Any],
    *,
    offset: int,
    limit: int | None,
    grep: str | None,
    config: ContextModeConfig,
) -> tuple[int, int] | FetchResult:
    """The byte range to read for a request, or the answer when it asks for bytes there are not.

    Example:
        >>> from langctx.context_mode.config import ContextModeConfig
        >>> meta, config = {"ref_id": "ctx_0123abcd", "size": 10}, ContextModeConfig()
        >>> fetch_window(meta, offset=0, limit=None, grep="x", config=config)
        (0, 10)
        >>> fetch_window(meta, offset=10, limit=None, grep=None, config=config).ok
        False
    """
    total = int(meta["size"])
    if grep:
        return 0, total
    if offset < 0 or offset >= total or (limit is not None and limit <= 0):
        return out_of_range(str(meta["ref_id"]), offset=offset, total=total, limit=limit)
    return slice_window(offset, limit, size=total, max_tokens=config.max_inline_tokens)


def fetch_answer(
    meta: Mapping[str, Any],
    data: bytes,
    *,
    offset: int,
    limit: int | None,
    grep: str | None,
    config: ContextModeConfig,
    count_tokens: TokenCounter | TextCounter | None = None,
) -> FetchResult:
    """What the model sees of ``data``, the bytes read at :func:`fetch_window`: the slice at
    ``offset``, or with ``grep`` the matching lines from ``offset`` on."""
    max_tokens = config.max_inline_tokens
    if grep:
        result = render_grep(
            meta,
            data,
            grep,
            offset=offset,
            max_matches=config.grep_max_matches,
            max_tokens=max_tokens,
            count_tokens=count_tokens,
        )
    else:
        result = render_slice(
            meta, data, offset, limit=limit, max_tokens=max_tokens, count_tokens=count_tokens
        )
    result = replace(result, message_id=meta.get("message_id"))
    again = reduce_output(  # the text goes through Context-mode again (it fits by construction)
        result.text,
        tool_name="fetch_context",
        max_inline_tokens=max_tokens,
        count_tokens=count_tokens,
    )
    if again is None:
        return result
    return replace(result, text=again.text, data=b"")  # pragma: no cover - by construction
