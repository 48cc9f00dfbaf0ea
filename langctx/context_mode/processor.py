"""ContextModeProcessor: what a tool output becomes before it reaches memory.

The steps, in order, for one output:

1. at or under ``max_inline_tokens`` (1,500): passes through unchanged (a langctx delimiter in it
   is neutralised);
2. larger: reduced by content kind (:func:`~langctx.context_mode.reduce_output`), or summarized by
   a model when one is configured (the reduction is the fallback on failure, timeout or an empty
   answer);
3. over ``reference_min_tokens`` (4,000), or when the reduction dropped an exit code, error type
   or file:line, or when it is binary: the raw output is stored (per thread) and the context gets
   a reference (id, the reduced text as description, how to fetch it).

:meth:`ContextModeProcessor.fetch` serves ``fetch_context``: slices (byte offsets) or grep
matches, each bounded by ``max_inline_tokens`` and passed through Context-mode again.

Sync and async twins differ only at the summarizer call and the store calls.

Example:
    >>> processor = ContextModeProcessor()
    >>> log = "\\n".join(f"step {i}: ok" for i in range(8000)) + "\\nValueError: bad\\nexit code 1"
    >>> out = processor.process(log, tool_name="bash", args={"command": "make"}, thread_id="t1")
    >>> out.action, out.tokens <= 1500, "exit code 1" in out.text
    ('referenced', True, True)
    >>> page = processor.fetch(out.ref_id, thread_id="t1", grep="ValueError")
    >>> "ValueError: bad" in page.text
    True
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_core.messages import ToolMessage

from langctx.config import DEFAULT_SUMMARY_TIMEOUT
from langctx.context_mode.outputs import ContentKind, Reduction
from langctx.context_mode.reduce import (
    DEFAULT_MAX_INLINE_TOKENS,
    MIN_INLINE_TOKENS,
    build_meta,
    reduce_output,
)
from langctx.context_mode.reducers.binary import looks_binary
from langctx.context_mode.ref_store import (
    InMemoryReferenceStore,
    ReferenceMeta,
    ReferenceStore,
    new_meta,
    not_found,
)
from langctx.context_mode.references import (
    DEFAULT_GREP_MAX_MATCHES,
    DEFAULT_REFERENCE_MIN_TOKENS,
    FetchResult,
    is_reference_id,
    out_of_range,
    reference_frame_tokens,
    reference_id,
    render_grep,
    render_reference,
    render_slice,
    slice_window,
)
from langctx.context_mode.slice_codec import to_raw
from langctx.context_mode.summary import DEFAULT_SUMMARY_KINDS, summary_reduction, summary_request
from langctx.errors import ConfigError
from langctx.facts import (
    DEFAULT_COMMAND_TOOLS,
    extract_output_facts,
    find_exit_code,
    missing_output_facts,
)
from langctx.facts.tools import command_tool_set
from langctx.markers import (
    CONTEXT_MODE_STAMP,
    NO_THREAD,
    REFERENCE_MESSAGE_ID_PREFIX,
    escape_delimiters,
)
from langctx.summarize import (
    ModelSummarizer,
    Summarizer,
    SummaryRequest,
    acall_summarizer,
    call_summarizer,
)
from langctx.tokens import TextCounter, TokenCounter, text_counter

__all__ = [
    "Action",
    "ContextModeConfig",
    "ContextModeProcessor",
    "ProcessedOutput",
]

logger = logging.getLogger(__name__)

Action = Literal["inline", "reduced", "summarized", "referenced"]
"""What Context-mode did with an output."""

_MAX_ATTEMPTS = 8


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextModeConfig:
    """Thresholds and options of Context-mode (validated on construction).

    Example:
        >>> ContextModeConfig(max_inline_tokens=1000).reference_min_tokens
        4000
    """

    max_inline_tokens: int = DEFAULT_MAX_INLINE_TOKENS
    """Outputs up to this many tokens pass through; every text put in the context (reduction,
    reference, fetched slice) fits it."""

    reference_min_tokens: int = DEFAULT_REFERENCE_MIN_TOKENS
    """Outputs over this many tokens are stored and referenced (at least ``max_inline_tokens``)."""

    references: bool = True
    """Store and reference outputs at all (False: reduce only; nothing is stored)."""

    reference_lost_facts: bool = True
    """Also reference an output whose reduction dropped an exit code, error type or file:line,
    so every fact stays one ``fetch_context`` call away."""

    summary_kinds: frozenset[ContentKind] = field(default_factory=lambda: DEFAULT_SUMMARY_KINDS)
    """Content kinds a configured summarizer compresses (others keep the structural reduction)."""

    summary_timeout: float | None = DEFAULT_SUMMARY_TIMEOUT
    """Seconds a summarizer call may take before the reduction is used (None: no limit); the
    default is :data:`langctx.config.DEFAULT_SUMMARY_TIMEOUT`, the same as compaction's."""

    grep_max_matches: int = DEFAULT_GREP_MAX_MATCHES
    """At most this many matching lines per grep result."""

    ttl_seconds: float | None = None
    """Stored outputs expire after this many seconds (None: never)."""

    command_tools: frozenset[str] = DEFAULT_COMMAND_TOOLS
    """Names of the tools that run shell commands, whose output is reduced as a log (the memory's
    default, :data:`langctx.facts.DEFAULT_COMMAND_TOOLS`; pass the memory's ``command_tools``)."""

    def __post_init__(self) -> None:
        for name in ("max_inline_tokens", "reference_min_tokens", "grep_max_matches"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"{name} must be a positive int, got {value!r}."
                raise ConfigError(msg)
        if self.max_inline_tokens < MIN_INLINE_TOKENS:
            msg = f"max_inline_tokens={self.max_inline_tokens} is too small; use at least {MIN_INLINE_TOKENS}."
            raise ConfigError(msg)
        if self.reference_min_tokens < self.max_inline_tokens:
            msg = (
                f"reference_min_tokens ({self.reference_min_tokens}) must be at least "
                f"max_inline_tokens ({self.max_inline_tokens})."
            )
            raise ConfigError(msg)
        for name in ("summary_timeout", "ttl_seconds"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and value > 0):
                msg = f"{name} must be a positive number of seconds or None, got {value!r}."
                raise ConfigError(msg)
        object.__setattr__(self, "summary_kinds", frozenset(self.summary_kinds))
        object.__setattr__(self, "command_tools", command_tool_set(self.command_tools))


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
        """The JSON dict stored under :data:`~langctx.markers.CONTEXT_MODE_STAMP` in the message's
        ``response_metadata``.

        Example:
            >>> ProcessedOutput(text="x", action="inline").stamp()["action"]
            'inline'
        """
        return {
            "v": 1,
            "action": self.action,
            "kind": self.kind,
            "ref_id": self.ref_id,
            "original_tokens": self.original_tokens,
            "original_bytes": self.original_bytes,
            "tokens": self.tokens,
            "exit_code": self.exit_code,
        }


@dataclass(slots=True)
class _Plan:
    """An output analysed, before the summarizer call and the store write."""

    output: str | bytes
    text: str
    tokens: int
    tool_name: str | None
    args: Mapping[str, Any] | None
    reduction: Reduction | None = None
    reference: bool = False
    budget: int = 0
    summarize: bool = False
    raw: bytes | None = None
    source: Literal["str", "bytes"] = "str"
    sha256: str = ""


def _sanitize(text: str) -> str:
    """Lone surrogates cannot be sent to a provider: replace them."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def _text_content(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in content
    ):
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content)
    return None  # images or other blocks: left as they are


class ContextModeProcessor:
    """Reduce, summarize and reference tool outputs; serve ``fetch_context``.

    Args:
        config: a :class:`ContextModeConfig`; or pass its fields as keywords.
        store: where referenced outputs are kept (default: a process-local
            :class:`~langctx.context_mode.ref_store.InMemoryReferenceStore`; use
            :class:`~langctx.stores.references.BaseStoreReferenceStore` to persist).
        summarizer: a chat model / Runnable (wrapped in a :class:`~langctx.summarize.ModelSummarizer`),
            a ModelSummarizer (the memory's can serve both), or any
            :class:`~langctx.summarize.Summarizer` that handles ``kind="tool_output"``
            requests. None (default): deterministic reductions only.
        count_tokens: a :class:`~langctx.tokens.TokenCounter` or a function counting the tokens
            of a text (default: langctx's estimator).
        **config_kwargs: :class:`ContextModeConfig` fields.
    """

    def __init__(
        self,
        config: ContextModeConfig | None = None,
        *,
        store: ReferenceStore | None = None,
        summarizer: Any = None,
        count_tokens: TokenCounter | TextCounter | None = None,
        **config_kwargs: Any,
    ) -> None:
        if config is not None and config_kwargs:
            msg = "pass either config=ContextModeConfig(...) or its fields as keywords, not both."
            raise ConfigError(msg)
        try:
            self.config = config if config is not None else ContextModeConfig(**config_kwargs)
        except TypeError as exc:
            msg = (
                f"unknown ContextModeProcessor option: {exc}. See ContextModeConfig for the fields."
            )
            raise ConfigError(msg) from exc
        self.store: ReferenceStore = store if store is not None else InMemoryReferenceStore()
        if summarizer is not None and not isinstance(summarizer, Summarizer):
            if not hasattr(summarizer, "invoke"):
                msg = (
                    "summarizer must be a chat model, a ModelSummarizer or another Summarizer "
                    f"that handles kind='tool_output'; got {type(summarizer).__name__}."
                )
                raise ConfigError(msg)
            summarizer = ModelSummarizer(summarizer)
        self.summarizer: Summarizer | None = summarizer
        self.count_tokens: TextCounter = text_counter(count_tokens)
        self._frame = reference_frame_tokens(self.count_tokens)
        smallest = MIN_INLINE_TOKENS + self._frame
        if self.config.references and self.config.max_inline_tokens < smallest:
            msg = (
                f"max_inline_tokens={self.config.max_inline_tokens} leaves no room for a reference "
                f"(its frame takes {self._frame} tokens); use at least {smallest}, or "
                "references=False."
            )
            raise ConfigError(msg)

    # ------------------------------------------------------------------ processing (pure part)

    @property
    def description_tokens(self) -> int:
        """Tokens left for a reference's description once its first and last lines are counted."""
        return self.config.max_inline_tokens - self._frame

    def _plan(
        self, output: str | bytes, tool_name: str | None, args: Mapping[str, Any] | None
    ) -> _Plan | ProcessedOutput:
        cfg = self.config
        if isinstance(output, bytes | bytearray | memoryview):
            output = bytes(output)
            try:
                text = output.decode("utf-8")
                binary = looks_binary(text)
            except UnicodeDecodeError:
                text, binary = output.decode("utf-8", "replace"), True
        elif isinstance(output, str):
            text, binary = output, False
        else:
            msg = f"a tool output must be str or bytes, got {type(output).__name__}."
            raise TypeError(msg)
        tokens = self.count_tokens(text)
        if not binary and tokens <= cfg.max_inline_tokens:
            inline = _sanitize(escape_delimiters(text))
            return ProcessedOutput(
                text=inline,
                action="inline",
                original_tokens=tokens,
                original_bytes=len(to_raw(output)[0]),
                tokens=tokens,
            )
        plan = _Plan(output, text, tokens, tool_name, args)
        plan.reference = cfg.references and (binary or tokens > cfg.reference_min_tokens)
        plan.budget = self.description_tokens if plan.reference else cfg.max_inline_tokens
        plan.reduction = self._reduce(plan)
        if (
            cfg.references
            and not plan.reference
            and cfg.reference_lost_facts
            and missing_output_facts(extract_output_facts(text), plan.reduction.text)
        ):
            plan.reference, plan.budget = True, self.description_tokens
            plan.reduction = self._reduce(plan)
        plan.summarize = (
            self.summarizer is not None and not binary and plan.reduction.kind in cfg.summary_kinds
        )
        return plan

    def _reduce(self, plan: _Plan) -> Reduction:
        out = reduce_output(
            plan.output if isinstance(plan.output, bytes) else plan.text,
            tool_name=plan.tool_name,
            args=plan.args,
            max_inline_tokens=plan.budget,
            count_tokens=self.count_tokens,
            command_tools=self.config.command_tools,
        )
        assert out is not None  # the output is over the budget, or bytes
        return out

    def _summary_request(self, plan: _Plan) -> SummaryRequest:
        assert plan.reduction is not None
        return summary_request(
            plan.text,
            tool_name=plan.tool_name,
            args=plan.args,
            kind=plan.reduction.kind,
            max_tokens=max(50, plan.budget - 120),
            reduced=plan.reduction.text,
        )

    def _with_summary(self, plan: _Plan, summary: str | None) -> Reduction | None:
        assert plan.reduction is not None
        if summary is None:
            return None
        meta = build_meta(
            plan.text,
            tool_name=plan.tool_name,
            args=plan.args,
            original_tokens=plan.tokens,
            count_tokens=self.count_tokens,
        )
        return summary_reduction(
            summary,
            plan.text,
            kind=plan.reduction.kind,
            meta=meta,
            budget_tokens=plan.budget,
        )

    def _raw(self, plan: _Plan) -> tuple[bytes, Literal["str", "bytes"], str]:
        if plan.raw is None:
            raw, source = to_raw(plan.output)
            plan.raw, plan.source, plan.sha256 = raw, source, hashlib.sha256(raw).hexdigest()
        return plan.raw, plan.source, plan.sha256

    def _candidates(
        self,
        plan: _Plan,
        description: Reduction,
        thread_id: str,
        tool_call_id: str | None,
        message_id: str | None,
    ) -> Iterator[ReferenceMeta]:
        """The metas to try, in order: a stable id first, then others if it is taken."""
        raw, source, sha = self._raw(plan)
        for attempt in range(_MAX_ATTEMPTS):
            ref_id = reference_id(thread_id, tool_call_id, sha, attempt=attempt)
            yield new_meta(
                ref_id=ref_id,
                thread_id=thread_id,
                data=raw,
                source=source,
                tool_name=plan.tool_name,
                tool_call_id=tool_call_id,
                message_id=message_id or f"{REFERENCE_MESSAGE_ID_PREFIX}{ref_id}",
                kind=description.kind,
                tokens=plan.tokens,
                ttl_seconds=self.config.ttl_seconds,
                sha256=sha,
            )

    def _result(
        self, plan: _Plan, description: Reduction, summarized: bool, meta: ReferenceMeta | None
    ) -> ProcessedOutput:
        text = _sanitize(description.text)
        action: Action = "summarized" if summarized else "reduced"
        ref_id = message_id = None
        if meta is not None:
            ref_id, message_id, action = meta["ref_id"], meta["message_id"], "referenced"
            text = render_reference(
                ref_id,
                text,
                size=meta["size"],
                tokens=plan.tokens,
                slice_tokens=self.config.max_inline_tokens,
            )
        exit_code = find_exit_code(plan.text)
        return ProcessedOutput(
            text=text,
            action=action,
            kind=description.kind,
            ref_id=ref_id,
            message_id=message_id,
            original_tokens=plan.tokens,
            original_bytes=len(self._raw(plan)[0]),
            tokens=self.count_tokens(text),
            exit_code=exit_code,
        )

    @staticmethod
    def _free(existing: ReferenceMeta | None, meta: ReferenceMeta) -> bool:
        """The id is free, or holds these very bytes already (processing twice is a no-op)."""
        return existing is None or (
            existing["sha256"] == meta["sha256"] and existing["size"] == meta["size"]
        )

    @staticmethod
    def _summary_failed(exc: BaseException) -> None:
        logger.warning("langctx context-mode: the summarizer failed (%r); using the reduction", exc)

    @staticmethod
    def _store_failed(exc: BaseException) -> None:
        logger.warning("langctx context-mode: could not store the output (%r); reduced only", exc)

    # ------------------------------------------------------------------ processing (twins)

    def process(
        self,
        output: str | bytes,
        *,
        tool_name: str | None = None,
        args: Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        tool_call_id: str | None = None,
        message_id: str | None = None,
    ) -> ProcessedOutput:
        """Process one tool output (see the module docstring for the steps).

        Args:
            output: the tool's output, text or bytes.
            tool_name: the tool's name (a hint for the content kind and the summary prompt).
            args: the tool call's arguments (a path or command is a hint too).
            thread_id: the thread whose store namespace keeps the reference.
            tool_call_id: the tool call's id (makes the reference id stable).
            message_id: id of the message that will show the reference.

        Example:
            >>> ContextModeProcessor().process("small").action
            'inline'
        """
        plan = self._plan(output, tool_name, args)
        if isinstance(plan, ProcessedOutput):
            return plan
        description, summarized = self._described(plan, self._summary(plan))
        meta = None
        if plan.reference:
            meta = self._reference(plan, description, thread_id, tool_call_id, message_id)
        return self._result(plan, description, summarized, meta)

    def _summary(self, plan: _Plan) -> str | None:
        """The model summary of a planned output (None: not asked for, or it failed)."""
        if not plan.summarize or self.summarizer is None:
            return None
        request, timeout = self._summary_request(plan), self.config.summary_timeout
        try:
            return call_summarizer(self.summarizer, request, timeout=timeout)
        except Exception as exc:
            self._summary_failed(exc)
            return None

    def _reference(
        self,
        plan: _Plan,
        description: Reduction,
        thread_id: str | None,
        tool_call_id: str | None,
        message_id: str | None,
    ) -> ReferenceMeta | None:
        """Store the raw output under the first free candidate reference (None: store failed)."""
        tid = thread_id or NO_THREAD
        try:
            for candidate in self._candidates(plan, description, tid, tool_call_id, message_id):
                try:
                    existing: ReferenceMeta | None = self.store.meta(tid, candidate["ref_id"])
                except KeyError:
                    existing = None
                if self._free(existing, candidate):
                    self.store.put(tid, candidate, self._raw(plan)[0])
                    return candidate
        except Exception as exc:
            self._store_failed(exc)
        return None

    async def aprocess(
        self,
        output: str | bytes,
        *,
        tool_name: str | None = None,
        args: Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        tool_call_id: str | None = None,
        message_id: str | None = None,
    ) -> ProcessedOutput:
        """Async version of `process`."""
        plan = self._plan(output, tool_name, args)
        if isinstance(plan, ProcessedOutput):
            return plan
        description, summarized = self._described(plan, await self._asummary(plan))
        meta = None
        if plan.reference:
            meta = await self._areference(plan, description, thread_id, tool_call_id, message_id)
        return self._result(plan, description, summarized, meta)

    async def _asummary(self, plan: _Plan) -> str | None:
        """Async version of `_summary`."""
        if not plan.summarize or self.summarizer is None:
            return None
        request, timeout = self._summary_request(plan), self.config.summary_timeout
        try:
            return await acall_summarizer(self.summarizer, request, timeout=timeout)
        except Exception as exc:
            self._summary_failed(exc)
            return None

    async def _areference(
        self,
        plan: _Plan,
        description: Reduction,
        thread_id: str | None,
        tool_call_id: str | None,
        message_id: str | None,
    ) -> ReferenceMeta | None:
        """Async version of `_reference`."""
        tid = thread_id or NO_THREAD
        try:
            for candidate in self._candidates(plan, description, tid, tool_call_id, message_id):
                try:
                    existing: ReferenceMeta | None = await self.store.ameta(
                        tid, candidate["ref_id"]
                    )
                except KeyError:
                    existing = None
                if self._free(existing, candidate):
                    await self.store.aput(tid, candidate, self._raw(plan)[0])
                    return candidate
        except Exception as exc:
            self._store_failed(exc)
        return None

    def _described(self, plan: _Plan, summary: str | None) -> tuple[Reduction, bool]:
        """The text standing for the output: the reduction, or it with the summary wrapped in."""
        assert plan.reduction is not None
        wrapped = self._with_summary(plan, summary)
        return (wrapped, True) if wrapped is not None else (plan.reduction, False)

    # ------------------------------------------------------------------ messages

    def _message_input(self, message: ToolMessage) -> str | None:
        if CONTEXT_MODE_STAMP in (message.response_metadata or {}):
            return None  # processed already: running twice changes nothing
        return _text_content(message.content)

    def _message_output(
        self, message: ToolMessage, result: ProcessedOutput, text: str
    ) -> ToolMessage:
        if result.action == "inline" and result.text == text and isinstance(message.content, str):
            return message
        update: dict[str, Any] = {
            "content": result.text,
            "response_metadata": {
                **(message.response_metadata or {}),
                CONTEXT_MODE_STAMP: result.stamp(),
            },
        }
        if message.id is None and result.message_id is not None:
            update["id"] = result.message_id
        return message.model_copy(update=update)

    def process_message(
        self,
        message: ToolMessage,
        *,
        thread_id: str | None = None,
        args: Mapping[str, Any] | None = None,
    ) -> ToolMessage:
        """Process a ``ToolMessage``: a copy with the processed content, stamped; or the message
        itself when nothing changes (small, already stamped, or content that is not text).

        A referenced message without an id gets one (``langctx-ref-<ref id>``), so its priority can
        be lowered once it is fetched.

        Example:
            >>> from langchain_core.messages import ToolMessage
            >>> big = ToolMessage("word " * 20000, tool_call_id="c1", name="bash")
            >>> out = ContextModeProcessor().process_message(big, thread_id="t")
            >>> out.response_metadata["langctx_context_mode"]["action"], out.id.startswith("langctx-ref-")
            ('referenced', True)
        """
        text = self._message_input(message)
        if text is None:
            return message
        result = self.process(
            text,
            tool_name=message.name,
            args=args,
            thread_id=thread_id,
            tool_call_id=message.tool_call_id,
            message_id=message.id,
        )
        return self._message_output(message, result, text)

    async def aprocess_message(
        self,
        message: ToolMessage,
        *,
        thread_id: str | None = None,
        args: Mapping[str, Any] | None = None,
    ) -> ToolMessage:
        """Async version of `process_message`."""
        text = self._message_input(message)
        if text is None:
            return message
        result = await self.aprocess(
            text,
            tool_name=message.name,
            args=args,
            thread_id=thread_id,
            tool_call_id=message.tool_call_id,
            message_id=message.id,
        )
        return self._message_output(message, result, text)

    # ------------------------------------------------------------------ fetching

    def _check_fetch(self, ref_id: str, offset: int, limit: int | None) -> None:
        if not is_reference_id(ref_id):
            raise not_found(str(ref_id))
        if isinstance(offset, bool) or not isinstance(offset, int):
            msg = f"offset must be an int (a byte offset), got {offset!r}."
            raise ConfigError(msg)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            msg = f"limit must be an int (bytes) or None, got {limit!r}."
            raise ConfigError(msg)

    def _bounded(self, meta: ReferenceMeta, result: FetchResult) -> FetchResult:
        """A fetched text goes through Context-mode again (it fits by construction)."""
        result = replace(result, message_id=meta.get("message_id"))
        again = reduce_output(
            result.text,
            tool_name="fetch_context",
            max_inline_tokens=self.config.max_inline_tokens,
            count_tokens=self.count_tokens,
        )
        if again is None:
            return result
        return replace(result, text=again.text, data=b"")  # pragma: no cover - by construction

    def _slice_request(
        self, meta: ReferenceMeta, offset: int, limit: int | None
    ) -> tuple[int, int] | FetchResult:
        total = meta["size"]
        if offset < 0 or offset >= total or (limit is not None and limit <= 0):
            return out_of_range(meta["ref_id"], offset=offset, total=total, limit=limit)
        return slice_window(offset, limit, size=total, max_tokens=self.config.max_inline_tokens)

    def _grep(self, meta: ReferenceMeta, data: bytes, grep: str, offset: int) -> FetchResult:
        return render_grep(
            meta,
            data,
            grep,
            offset=offset,
            max_matches=self.config.grep_max_matches,
            max_tokens=self.config.max_inline_tokens,
            count_tokens=self.count_tokens,
        )

    def _slice(
        self, meta: ReferenceMeta, window: bytes, offset: int, limit: int | None
    ) -> FetchResult:
        return render_slice(
            meta,
            window,
            offset,
            limit=limit,
            max_tokens=self.config.max_inline_tokens,
            count_tokens=self.count_tokens,
        )

    def fetch(
        self,
        ref_id: str,
        *,
        thread_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
        grep: str | None = None,
    ) -> FetchResult:
        """Read a stored output: the slice at ``offset`` (at most ``limit`` bytes, and at most
        ``max_inline_tokens`` tokens), or with ``grep`` the matching lines from ``offset`` on.

        An out-of-range offset gives a result that states the valid range (``ok=False``).

        Raises:
            ReferenceNotFoundError: the id is unknown, expired, or another thread's.

        Example:
            >>> p = ContextModeProcessor()
            >>> p.fetch("ctx_00000000", thread_id="t")
            Traceback (most recent call last):
            ...
            langctx.errors.ReferenceNotFoundError: no context reference 'ctx_00000000' in this thread ...
        """
        self._check_fetch(ref_id, offset, limit)
        tid = thread_id or NO_THREAD
        meta = self.store.meta(tid, ref_id)
        if grep:
            data = self.store.read(tid, ref_id, 0, meta["size"])
            return self._bounded(meta, self._grep(meta, data, grep, offset))
        window = self._slice_request(meta, offset, limit)
        if isinstance(window, FetchResult):
            return window
        data = self.store.read(tid, ref_id, *window)
        return self._bounded(meta, self._slice(meta, data, offset, limit))

    async def afetch(
        self,
        ref_id: str,
        *,
        thread_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
        grep: str | None = None,
    ) -> FetchResult:
        """Async version of `fetch`."""
        self._check_fetch(ref_id, offset, limit)
        tid = thread_id or NO_THREAD
        meta = await self.store.ameta(tid, ref_id)
        if grep:
            data = await self.store.aread(tid, ref_id, 0, meta["size"])
            return self._bounded(meta, self._grep(meta, data, grep, offset))
        window = self._slice_request(meta, offset, limit)
        if isinstance(window, FetchResult):
            return window
        data = await self.store.aread(tid, ref_id, *window)
        return self._bounded(meta, self._slice(meta, data, offset, limit))

    def reference_meta(self, ref_id: str, *, thread_id: str | None = None) -> ReferenceMeta:
        """The stored meta of a reference (raises ReferenceNotFoundError like :meth:`fetch`)."""
        if not is_reference_id(ref_id):
            raise not_found(str(ref_id))
        return self.store.meta(thread_id or NO_THREAD, ref_id)

    async def areference_meta(self, ref_id: str, *, thread_id: str | None = None) -> ReferenceMeta:
        """Async version of `reference_meta`."""
        if not is_reference_id(ref_id):
            raise not_found(str(ref_id))
        return await self.store.ameta(thread_id or NO_THREAD, ref_id)
