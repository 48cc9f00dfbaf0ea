"""One ``fetch_context`` request: :func:`fetching`, its checks, reads and answer as steps.

Like :func:`~langctx.context_mode.plan.processing`, it yields the store calls it needs (the meta,
then the bytes a slice needs, or all of them for grep) and renders the answer as a slice or grep
matches under the token budget, passed through Context-mode again.

Example:
    >>> from langctx.context_mode.ref_store import new_meta
    >>> from langctx.context_mode.plan import drive
    >>> from langctx.context_mode.processor import ContextModeProcessor
    >>> processor, data = ContextModeProcessor(), b"ok\\nboom: KeyError x\\nok\\n"
    >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=data, source="str")
    >>> processor.store.put("t", meta, data)
    >>> def call(op):  # make the store call the steps ask for
    ...     return getattr(processor.store, op[0])(*op[1:])
    >>> drive(fetching(processor, "ctx_0123abcd", "t", grep="KeyError"), call).matches
    1
    >>> drive(fetching(processor, "ctx_0123abcd", "t", offset=99), call).ok
    False
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from langctx.context_mode.grep import render_grep
from langctx.context_mode.plan import Op
from langctx.context_mode.reduce import reduce_output
from langctx.context_mode.ref_store import not_found
from langctx.context_mode.references import FetchResult, is_reference_id, out_of_range
from langctx.context_mode.slices import render_slice, slice_window
from langctx.errors import ConfigError
from langctx.markers import NO_THREAD

if TYPE_CHECKING:
    from langctx.context_mode.processor import ContextModeProcessor

__all__ = ["fetching"]


def fetching(
    processor: ContextModeProcessor,
    ref_id: str,
    thread_id: str | None = None,
    offset: int = 0,
    limit: int | None = None,
    grep: str | None = None,
) -> Generator[Op, Any, FetchResult]:
    """The steps that answer a request to ``processor``: the slice at ``offset``, or with ``grep``
    the matching lines from ``offset`` on; a request for bytes the output does not have gets a
    result saying so.

    Raises:
        ReferenceNotFoundError: ``ref_id`` does not look like a reference id, or the store has no
            such reference for the thread.
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
    tid = thread_id or NO_THREAD
    meta = yield ("meta", tid, ref_id)
    config, count_tokens = processor.config, processor.count_tokens
    total, max_tokens = int(meta["size"]), config.max_inline_tokens
    if grep:
        data = yield ("read", tid, ref_id, 0, total)
        result = render_grep(
            meta,
            data,
            grep,
            offset=offset,
            max_matches=config.grep_max_matches,
            max_tokens=max_tokens,
            count_tokens=count_tokens,
        )
    elif offset < 0 or offset >= total or (limit is not None and limit <= 0):
        return out_of_range(str(meta["ref_id"]), offset=offset, total=total, limit=limit)
    else:
        window = slice_window(offset, limit, size=total, max_tokens=max_tokens)
        data = yield ("read", tid, ref_id, *window)
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
