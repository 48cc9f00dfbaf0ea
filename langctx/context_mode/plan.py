"""What a tool output becomes, decided before any call: :func:`plan_output` and :class:`OutputPlan`.

A small output passes through at once (a :class:`ProcessedOutput`). A large one gets a plan: its
reduction under the token budget, whether a model is to summarize it, and whether it is
referenced. The processor makes the summarizer and store calls; the plan turns their answers
into the :class:`ProcessedOutput`.

Example:
    >>> from langctx.context_mode.config import ContextModeConfig
    >>> from langctx.tokens import text_counter
    >>> plan = plan_output("word " * 9000, config=ContextModeConfig(), count_tokens=text_counter(None),
    ...                    description_tokens=1400, tool_name="bash")
    >>> plan.reference, plan.result(None).action
    (True, 'reduced')
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from langctx.context_mode.config import ContextModeConfig
from langctx.context_mode.outputs import ContentKind, Reduction
from langctx.context_mode.reduce import build_meta, reduce_output
from langctx.context_mode.reducers.binary import looks_binary
from langctx.context_mode.ref_store import ReferenceMeta, new_meta
from langctx.context_mode.references import reference_id, render_reference
from langctx.context_mode.slice_codec import to_raw
from langctx.context_mode.summary import summary_reduction
from langctx.context_mode.summary import summary_request as tool_summary_request
from langctx.facts import extract_output_facts, find_exit_code, missing_output_facts
from langctx.markers import NO_THREAD, REFERENCE_MESSAGE_ID_PREFIX, escape_delimiters
from langctx.summarize import SummaryRequest
from langctx.tokens import TextCounter

__all__ = ["Action", "OutputPlan", "ProcessedOutput", "is_free", "plan_output"]

Action = Literal["inline", "reduced", "summarized", "referenced"]
"""What Context-mode did with an output."""

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


@dataclass(slots=True, kw_only=True)
class OutputPlan:
    """A large output analysed: its reduction, and the summary and reference still to make."""

    output: str | bytes
    text: str
    tokens: int
    tool_name: str | None
    args: Mapping[str, Any] | None
    thread_id: str
    tool_call_id: str | None
    message_id: str | None
    reduction: Reduction
    budget: int
    """Tokens the description may have (less when the reference's frame goes around it)."""
    reference: bool
    summarize: bool
    """Whether a model is to summarize the output (see :meth:`summary_request`)."""
    config: ContextModeConfig
    count_tokens: TextCounter
    raw: bytes = field(init=False)
    """The bytes stored when the output is referenced."""
    source: Literal["str", "bytes"] = field(init=False)
    sha256: str = field(init=False)
    description: Reduction = field(init=False)
    """What stands for the output: the reduction, or the summary once :meth:`describe` got one."""
    summarized: bool = False

    def __post_init__(self) -> None:
        self.raw, self.source = to_raw(self.output)
        self.sha256 = hashlib.sha256(self.raw).hexdigest()
        self.description = self.reduction

    def summary_request(self) -> SummaryRequest:
        """What to ask the summarizer for this output."""
        return tool_summary_request(
            self.text,
            tool_name=self.tool_name,
            args=self.args,
            kind=self.reduction.kind,
            max_tokens=max(50, self.budget - 120),
            reduced=self.reduction.text,
        )

    def describe(self, summary: str | None) -> None:
        """Let the model's summary (None: there is none) stand for the output."""
        if summary is None:
            return
        meta = build_meta(
            self.text,
            tool_name=self.tool_name,
            args=self.args,
            original_tokens=self.tokens,
            count_tokens=self.count_tokens,
        )
        self.description = summary_reduction(
            summary, self.text, kind=self.reduction.kind, meta=meta, budget_tokens=self.budget
        )
        self.summarized = True

    def candidates(self) -> Iterator[ReferenceMeta]:
        """The metas to store the output under, in order: a stable id first, others if it is taken."""
        for attempt in range(_MAX_ATTEMPTS):
            ref_id = reference_id(self.thread_id, self.tool_call_id, self.sha256, attempt=attempt)
            yield new_meta(
                ref_id=ref_id,
                thread_id=self.thread_id,
                data=self.raw,
                source=self.source,
                tool_name=self.tool_name,
                tool_call_id=self.tool_call_id,
                message_id=self.message_id or f"{REFERENCE_MESSAGE_ID_PREFIX}{ref_id}",
                kind=self.description.kind,
                tokens=self.tokens,
                ttl_seconds=self.config.ttl_seconds,
                sha256=self.sha256,
            )

    def result(self, meta: ReferenceMeta | None) -> ProcessedOutput:
        """The processed output, referenced under ``meta`` (None: not stored)."""
        text = sanitize(self.description.text)
        action: Action = "summarized" if self.summarized else "reduced"
        ref_id = message_id = None
        if meta is not None:
            ref_id, message_id, action = meta["ref_id"], meta["message_id"], "referenced"
            text = render_reference(
                ref_id,
                text,
                size=meta["size"],
                tokens=self.tokens,
                slice_tokens=self.config.max_inline_tokens,
            )
        return ProcessedOutput(
            text=text,
            action=action,
            kind=self.description.kind,
            ref_id=ref_id,
            message_id=message_id,
            original_tokens=self.tokens,
            original_bytes=len(self.raw),
            tokens=self.count_tokens(text),
            exit_code=find_exit_code(self.text),
        )


def is_free(meta: ReferenceMeta, existing: ReferenceMeta | None) -> bool:
    """Whether ``meta``'s id is free, or holds these very bytes already (storing twice is a no-op).

    Example:
        >>> from langctx.context_mode.ref_store import new_meta
        >>> meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=b"x", source="str")
        >>> is_free(meta, None), is_free(meta, meta), is_free(meta, {**meta, "sha256": "0"})
        (True, True, False)
    """
    return existing is None or (
        existing["sha256"] == meta["sha256"] and existing["size"] == meta["size"]
    )


def sanitize(text: str) -> str:
    """Lone surrogates cannot be sent to a provider: replace them.

    Example:
        >>> sanitize("a\\udcffb") == "a\\ufffd\\ufffd\\ufffdb", sanitize("ok")
        (True, 'ok')
    """
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


def plan_output(
    output: str | bytes,
    *,
    config: ContextModeConfig,
    count_tokens: TextCounter,
    description_tokens: int,
    summarize: bool = False,
    tool_name: str | None = None,
    args: Mapping[str, Any] | None = None,
    thread_id: str | None = None,
    tool_call_id: str | None = None,
    message_id: str | None = None,
) -> OutputPlan | ProcessedOutput:
    """Pass a small output through, or plan a large one (see the module docstring).

    ``description_tokens`` is the budget of a referenced output's description; ``summarize``, that
    a summarizer is configured (the plan asks it when the kind is one of ``config.summary_kinds``).
    The call's fields are those of
    :meth:`~langctx.context_mode.processor.ContextModeProcessor.process`.
    """
    output, text, binary = _decode(output)
    tokens = count_tokens(text)
    if not binary and tokens <= config.max_inline_tokens:
        inline = sanitize(escape_delimiters(text))
        return ProcessedOutput(
            text=inline,
            action="inline",
            original_tokens=tokens,
            original_bytes=len(to_raw(output)[0]),
            tokens=tokens,
        )

    def reduce(budget: int) -> Reduction:
        out = reduce_output(
            output if isinstance(output, bytes) else text,
            tool_name=tool_name,
            args=args,
            max_inline_tokens=budget,
            count_tokens=count_tokens,
            command_tools=config.command_tools,
        )
        assert out is not None  # the output is over the budget, or bytes
        return out

    reference = config.references and (binary or tokens > config.reference_min_tokens)
    budget = description_tokens if reference else config.max_inline_tokens
    reduction = reduce(budget)
    if (
        config.references
        and not reference
        and config.reference_lost_facts
        and missing_output_facts(extract_output_facts(text), reduction.text)
    ):
        reference, budget = True, description_tokens
        reduction = reduce(budget)
    return OutputPlan(
        output=output,
        text=text,
        tokens=tokens,
        tool_name=tool_name,
        args=args,
        thread_id=thread_id or NO_THREAD,
        tool_call_id=tool_call_id,
        message_id=message_id,
        reduction=reduction,
        budget=budget,
        reference=reference,
        summarize=summarize and not binary and reduction.kind in config.summary_kinds,
        config=config,
        count_tokens=count_tokens,
    )
