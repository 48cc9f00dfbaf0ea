"""ContextModeProcessor: what a tool output becomes before it reaches memory (docs/context-mode.md).

Small outputs pass through, larger ones are reduced (or summarized), and the largest, binary ones or
those whose reduction lost a fact are stored and referenced; ``fetch`` serves ``fetch_context``.

Example:
    >>> processor = ContextModeProcessor()
    >>> log = "\\n".join(f"step {i}: ok" for i in range(8000)) + "\\nValueError: bad\\nexit code 1"
    >>> out = processor.process(log, tool_name="bash", args={"command": "make"}, thread_id="t1")
    >>> out.action, out.tokens <= 1500, "exit code 1" in out.text
    ('referenced', True, True)
    >>> "ValueError: bad" in processor.fetch(out.ref_id, thread_id="t1", grep="ValueError").text
    True
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from typing import Any

from langchain_core.messages import ToolMessage

from langctx.context_mode.config import INLINE_SHARE, ContextModeConfig
from langctx.context_mode.plan import Op, ProcessedOutput, fetching, processing
from langctx.context_mode.reduce import MIN_INLINE_TOKENS
from langctx.context_mode.references import (
    FetchResult,
    InMemoryReferenceStore,
    ReferenceMeta,
    ReferenceStore,
    is_reference_id,
    not_found,
    reference_frame_tokens,
)
from langctx.errors import ConfigError
from langctx.markers import CONTEXT_MODE_STAMP, NO_THREAD, context_mode_stamp, stamp_digest
from langctx.steps import adrive, drive
from langctx.summarize import ModelSummarizer, Summarizer, acall_summarizer, call_summarizer
from langctx.tokens import TextCounter, TokenCounter, text_counter


class ContextModeProcessor:
    """Reduce, summarize and reference tool outputs; serve ``fetch_context``.

    Args:
        config: a :class:`ContextModeConfig`; or pass its fields as keywords.
        store: where referenced outputs are kept (default: an ``InMemoryReferenceStore``).
        summarizer: a chat model (wrapped in a ``ModelSummarizer``) or a ``Summarizer`` handling
            ``kind="tool_output"``; None: deterministic reductions only.
        count_tokens: a ``TokenCounter`` or a text -> tokens function (default: the estimator).
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
        smallest, inline = MIN_INLINE_TOKENS + self._frame, self.config.max_inline_tokens
        if self.config.references and inline < smallest:
            budget = self.config.context_budget
            no_room = f"leaves no room for a reference (its frame takes {self._frame} tokens)"
            if budget is not None and budget * INLINE_SHARE < smallest:
                need = f"context_budget of at least {math.ceil(smallest / INLINE_SHARE)}"
                msg = f"context_budget={budget} caps max_inline_tokens at {inline}, which {no_room}"
            else:
                need, msg = f"at least {smallest}", f"max_inline_tokens={inline} {no_room}"
            msg = f"{msg}; use {need}, or references=False."
            raise ConfigError(msg)

    @property
    def description_tokens(self) -> int:
        """Tokens left for a reference's description beside its first and last lines."""
        return self.config.max_inline_tokens - self._frame

    def _call(self, op: Op) -> Any:
        """Make a call the steps ask for: the summarizer, or a store method."""
        name, *args = op
        if name == "summarize":
            assert self.summarizer is not None
            return call_summarizer(self.summarizer, *args, timeout=self.config.summary_timeout)
        return getattr(self.store, name)(*args)

    async def _acall(self, op: Op) -> Any:
        """Async version of `_call`."""
        name, *args = op
        if name == "summarize":
            assert self.summarizer is not None
            return await acall_summarizer(
                self.summarizer, *args, timeout=self.config.summary_timeout
            )
        return await getattr(self.store, f"a{name}")(*args)

    def process(
        self,
        output: str | bytes,
        *,
        tool_name: str | None = None,
        args: Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        tool_call_id: str | None = None,
        message_id: str | None = None,
        keep: bool = True,
    ) -> ProcessedOutput:
        """Process one tool output, text or bytes.

        Args:
            tool_name: a hint for the content kind and the summary prompt (as are ``args``).
            thread_id: the thread whose store namespace keeps the reference.
            keep: False: store nothing (reduce only), for a run that has no namespace.
            tool_call_id: makes the reference id stable.
            message_id: id of the message that will show the reference.

        Example:
            >>> ContextModeProcessor().process("small").action
            'inline'
        """
        steps = processing(
            self, output, tool_name, args, thread_id, tool_call_id, message_id, keep=keep
        )
        return drive(steps, self._call)

    async def aprocess(
        self,
        output: str | bytes,
        *,
        tool_name: str | None = None,
        args: Mapping[str, Any] | None = None,
        thread_id: str | None = None,
        tool_call_id: str | None = None,
        message_id: str | None = None,
        keep: bool = True,
    ) -> ProcessedOutput:
        """Async version of `process`."""
        steps = processing(
            self, output, tool_name, args, thread_id, tool_call_id, message_id, keep=keep
        )
        return await adrive(steps, self._acall)

    def _message_steps(
        self,
        message: ToolMessage,
        thread_id: str | None,
        args: Mapping[str, Any] | None,
        keep: bool = True,
    ) -> Generator[Op, Any, ToolMessage]:
        content = message.content
        if context_mode_stamp(message) is not None:
            return message  # processed already: running twice changes nothing
        blocks = [content] if isinstance(content, str) else content
        if not all(
            isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text") for b in blocks
        ):
            return message  # images or other blocks: left as they are
        text = "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in blocks)
        result = yield from processing(
            self, text, message.name, args, thread_id, message.tool_call_id, message.id, keep=keep
        )
        if result.action == "inline" and result.text == text and isinstance(content, str):
            return message
        update: dict[str, Any] = {
            "content": result.text,
            "response_metadata": {
                **(message.response_metadata or {}),
                CONTEXT_MODE_STAMP: {**result.stamp(), "digest": stamp_digest(result.text)},
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
        keep: bool = True,
    ) -> ToolMessage:
        """A stamped copy of ``message`` with the processed content, or ``message`` if unchanged.

        A referenced message without an id gets ``langctx-ref-<ref id>`` (its priority drops on fetch).

        Example:
            >>> big = ToolMessage("word " * 20000, tool_call_id="c1", name="bash")
            >>> out = ContextModeProcessor().process_message(big, thread_id="t")
            >>> out.response_metadata["langctx_context_mode"]["action"], out.id.startswith("langctx-ref-")
            ('referenced', True)
        """
        return drive(self._message_steps(message, thread_id, args, keep), self._call)

    async def aprocess_message(
        self,
        message: ToolMessage,
        *,
        thread_id: str | None = None,
        args: Mapping[str, Any] | None = None,
        keep: bool = True,
    ) -> ToolMessage:
        """Async version of `process_message`."""
        return await adrive(self._message_steps(message, thread_id, args, keep), self._acall)

    def fetch(
        self,
        ref_id: str,
        *,
        thread_id: str | None = None,
        offset: int = 0,
        limit: int | None = None,
        grep: str | None = None,
    ) -> FetchResult:
        """The slice at byte ``offset`` (at most ``limit`` bytes), or with ``grep`` the matching
        lines from ``offset`` on; an out-of-range request gives ``ok=False``.

        Raises:
            ReferenceNotFoundError: the id is unknown, expired, or another thread's.

        Example:
            >>> ContextModeProcessor().fetch("ctx_00000000", thread_id="t")
            Traceback (most recent call last):
            langctx.errors.ReferenceNotFoundError: no context reference 'ctx_00000000' in this thread ...
        """
        return drive(fetching(self, ref_id, thread_id, offset, limit, grep), self._call)

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
        return await adrive(fetching(self, ref_id, thread_id, offset, limit, grep), self._acall)

    def reference_meta(self, ref_id: str, *, thread_id: str | None = None) -> ReferenceMeta:
        """The stored meta of a reference (raises like :meth:`fetch`)."""
        if not is_reference_id(ref_id):
            raise not_found(str(ref_id))
        return self.store.meta(thread_id or NO_THREAD, ref_id)

    async def areference_meta(self, ref_id: str, *, thread_id: str | None = None) -> ReferenceMeta:
        """Async version of `reference_meta`."""
        if not is_reference_id(ref_id):
            raise not_found(str(ref_id))
        return await self.store.ameta(thread_id or NO_THREAD, ref_id)
