"""The steps of Context-mode, written once for sync and async: generators that yield each store or
summarizer call they need (an :data:`Op`), run by :func:`langctx.steps.drive` / ``adrive``."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

from langctx.context_mode.grep import render_grep
from langctx.context_mode.outputs import ContentKind, Reduction
from langctx.context_mode.reduce import build_meta, reduce_output
from langctx.context_mode.reducers.binary import looks_binary
from langctx.context_mode.references import (
    FetchResult,
    ReferenceMeta,
    is_reference_id,
    new_meta,
    not_found,
    out_of_range,
    reference_id,
    render_reference,
)
from langctx.context_mode.slices import render_slice, slice_window, to_raw
from langctx.context_mode.summary import summary_reduction, summary_request
from langctx.errors import ConfigError
from langctx.facts import extract_output_facts, find_exit_code, missing_output_facts
from langctx.markers import NO_THREAD, REFERENCE_MESSAGE_ID_PREFIX, escape_delimiters

if TYPE_CHECKING:
    from langctx.context_mode.processor import ContextModeProcessor

logger = logging.getLogger("langctx.context_mode.processor")  # the processor's warnings

Action = Literal["inline", "reduced", "summarized", "referenced"]
"""What Context-mode did with an output."""

Op = tuple[Any, ...]
"""A call the steps ask for: ``("summarize", request)``, or a ReferenceStore method's name and args."""

_MAX_ATTEMPTS = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessedOutput:
    """What Context-mode made of one output."""

    text: str
    """What goes into the context."""
    action: Action
    kind: ContentKind | None = None
    ref_id: str | None = None
    message_id: str | None = None
    """Id recorded for the message that shows the reference (None when not referenced)."""
    original_tokens: int = 0
    original_bytes: int = 0
    tokens: int = 0
    """Tokens of :attr:`text`."""
    exit_code: int | None = None

    def stamp(self) -> dict[str, Any]:
        """The JSON dict stored under ``CONTEXT_MODE_STAMP`` in the message's ``response_metadata``."""
        keys = "action kind ref_id original_tokens original_bytes tokens exit_code".split()
        return {"v": 1, **{key: getattr(self, key) for key in keys}}


def is_free(meta: ReferenceMeta, existing: ReferenceMeta | None) -> bool:
    """Whether ``meta``'s id is free, or holds these very bytes already."""
    return existing is None or (
        existing["sha256"] == meta["sha256"] and existing["size"] == meta["size"]
    )


def sanitize(text: str) -> str:
    """Lone surrogates cannot be sent to a provider: replace them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def _decode(output: str | bytes) -> tuple[str | bytes, str, bool]:
    """The output (bytes-like made bytes), its text, and whether it is binary."""
    if isinstance(output, bytes | bytearray | memoryview):
        output = bytes(output)
        try:
            text = output.decode("utf-8")
        except UnicodeDecodeError:
            return output, output.decode("utf-8", "replace"), True
        return output, text, looks_binary(text)
    if isinstance(output, str):
        return output, output, False
    msg = f"a tool output must be str or bytes, got {type(output).__name__}."
    raise TypeError(msg)


def processing(
    processor: ContextModeProcessor,
    output: str | bytes,
    tool_name: str | None = None,
    args: Mapping[str, Any] | None = None,
    thread_id: str | None = None,
    tool_call_id: str | None = None,
    message_id: str | None = None,
    *,
    keep: bool = True,
) -> Generator[Op, Any, ProcessedOutput]:
    """The steps of :meth:`ContextModeProcessor.process`; a failed summarizer or store call is
    logged. ``keep=False``: nothing is stored (the output is reduced only)."""
    config, count_tokens = processor.config, processor.count_tokens
    output, text, binary = _decode(output)
    tokens = count_tokens(text)
    raw, source = to_raw(output)
    sizes: dict[str, Any] = {"original_tokens": tokens, "original_bytes": len(raw)}
    if not binary and tokens <= config.max_inline_tokens:
        inline = sanitize(escape_delimiters(text))
        return ProcessedOutput(text=inline, action="inline", tokens=tokens, **sizes)

    hints: dict[str, Any] = {"tool_name": tool_name, "args": args}
    reference = keep and config.references and (binary or tokens > config.reference_min_tokens)
    budget = processor.description_tokens if reference else config.max_inline_tokens
    reduction = _reduce(processor, output, budget, hints)
    check_facts = keep and config.references and not reference and config.reference_lost_facts
    if check_facts and missing_output_facts(extract_output_facts(text), reduction.text):
        reference, budget = True, processor.description_tokens
        reduction = _reduce(processor, output, budget, hints)
    action: Action = "reduced"
    description = reduction
    if processor.summarizer is not None and not binary and reduction.kind in config.summary_kinds:
        summary = yield from _summarizing(processor, text, reduction, budget, tokens, hints)
        if summary is not None:
            action, description = "summarized", summary
    tid = thread_id or NO_THREAD
    sha256 = hashlib.sha256(raw).hexdigest()

    def candidate(attempt: int) -> ReferenceMeta:
        ref_id = reference_id(tid, tool_call_id, sha256, attempt=attempt)
        return new_meta(
            ref_id=ref_id,
            thread_id=tid,
            data=raw,
            source=source,
            tool_name=tool_name,
            tool_call_id=tool_call_id,
            message_id=message_id or f"{REFERENCE_MESSAGE_ID_PREFIX}{ref_id}",
            kind=description.kind,
            tokens=tokens,
            ttl_seconds=config.ttl_seconds,
            sha256=sha256,
        )

    stored = (yield from _storing(tid, candidate, raw)) if reference else None
    text_out = sanitize(description.text)
    if stored is not None:
        action = "referenced"
        text_out = render_reference(
            stored["ref_id"],
            text_out,
            size=stored["size"],
            tokens=tokens,
            slice_tokens=config.max_inline_tokens,
        )
    return ProcessedOutput(
        text=text_out,
        action=action,
        kind=description.kind,
        ref_id=None if stored is None else stored["ref_id"],
        message_id=None if stored is None else stored["message_id"],
        tokens=count_tokens(text_out),
        exit_code=find_exit_code(text),
        **sizes,
    )


def _reduce(
    processor: ContextModeProcessor, output: str | bytes, budget: int, hints: dict[str, Any]
) -> Reduction:
    out = reduce_output(
        output,
        max_inline_tokens=budget,
        count_tokens=processor.count_tokens,
        command_tools=processor.config.command_tools,
        **hints,
    )
    assert out is not None  # the output is over the budget, or bytes
    return out


def _summarizing(
    processor: ContextModeProcessor,
    text: str,
    reduction: Reduction,
    budget: int,
    tokens: int,
    hints: dict[str, Any],
) -> Generator[Op, Any, Reduction | None]:
    """The summarizer's description of ``text`` in ``budget`` tokens (None: it failed)."""
    kind, limit = reduction.kind, max(50, budget - 120)
    request = summary_request(text, kind=kind, max_tokens=limit, reduced=reduction.text, **hints)
    try:
        summary = yield ("summarize", request)
    except Exception as exc:
        logger.warning("langctx context-mode: the summarizer failed (%r); using the reduction", exc)
        return None
    meta = build_meta(text, original_tokens=tokens, count_tokens=processor.count_tokens, **hints)
    return summary_reduction(summary, text, kind=kind, meta=meta, budget_tokens=budget)


def _storing(
    thread_id: str, candidate: Callable[[int], ReferenceMeta], raw: bytes
) -> Generator[Op, Any, ReferenceMeta | None]:
    """Store ``raw`` under the first free id of the attempts' candidates (None: the store failed)."""
    try:
        for meta in map(candidate, range(_MAX_ATTEMPTS)):
            try:
                existing = yield ("meta", thread_id, meta["ref_id"])
            except KeyError:
                existing = None
            if is_free(meta, existing):
                yield ("put", thread_id, meta, raw)
                return meta
    except Exception as exc:
        logger.warning("langctx context-mode: could not store the output (%r); reduced only", exc)
    return None


def fetching(
    processor: ContextModeProcessor,
    ref_id: str,
    thread_id: str | None = None,
    offset: int = 0,
    limit: int | None = None,
    grep: str | None = None,
) -> Generator[Op, Any, FetchResult]:
    """The steps of :meth:`ContextModeProcessor.fetch`.

    Raises:
        ReferenceNotFoundError: not a reference id, or none such in the thread.
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
    total, max_tokens = int(meta["size"]), processor.config.max_inline_tokens
    bounds: dict[str, Any] = {"max_tokens": max_tokens, "count_tokens": processor.count_tokens}
    if grep:
        data = yield ("read", tid, ref_id, 0, total)
        matches = processor.config.grep_max_matches
        result = render_grep(meta, data, grep, offset=offset, max_matches=matches, **bounds)
    elif offset < 0 or offset >= total or (limit is not None and limit <= 0):
        return out_of_range(str(meta["ref_id"]), offset=offset, total=total, limit=limit)
    else:
        window = slice_window(offset, limit, size=total, max_tokens=max_tokens)
        data = yield ("read", tid, ref_id, *window)
        result = render_slice(meta, data, offset, limit=limit, **bounds)
    result = replace(result, message_id=meta.get("message_id"))
    again = reduce_output(  # the text goes through Context-mode again (it fits by construction)
        result.text,
        tool_name="fetch_context",
        max_inline_tokens=max_tokens,
        count_tokens=processor.count_tokens,
    )
    if again is None:
        return result
    return replace(result, text=again.text, data=b"")  # pragma: no cover - by construction
