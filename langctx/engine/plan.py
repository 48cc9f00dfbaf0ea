"""The plan of a compaction and the constants the engine's parts share."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from langctx.entries import CompactionEntry, EditEntry
from langctx.summarize import SummaryRequest

SUMMARY_OVERHEAD = 40
"""Delimiters and attributes per summary, in tokens (generous)."""

Trigger = Literal["threshold", "proactive", "manual", "overflow"]


@dataclass(slots=True)
class Plan:
    """A compaction decided but not yet written (the summarizer call sits in between)."""

    trigger: str
    tokens_before: int
    cut: int  # absolute log index of the first kept message
    batch: list[int] = field(default_factory=list)  # absolute log indices folded into the summary
    absorbed: list[CompactionEntry] = field(default_factory=list)  # mechanical summaries replaced
    request: SummaryRequest | None = None  # None: no summarizer call (mechanical or local)
    quality: str = "none"
    placeholders: list[EditEntry] = field(default_factory=list)  # in-place edits (fold or alone)
    pending: int = 0  # evicted tokens the new mechanical entry stands for (no model summary yet)
    upgrade: SummaryRequest | None = None  # the model summary to compute in the background
    keep: int | None = None  # recent tokens a fold by the marks keeps (None: manual, overflow)
    users: list[dict[str, Any]] = field(default_factory=list)  # the batch's user messages (ledger)
    answered: dict[str, str] = field(default_factory=dict)  # earlier requests the batch answers


@dataclass(frozen=True, slots=True)
class CompactionEvent:
    """What a listener is told when a compaction starts (``entry`` None) and ends, and when a
    background model summary is dropped (``"dropped"``: ``entry`` keeps its local summary)."""

    phase: Literal["start", "end", "dropped"]
    trigger: str
    tokens_before: int
    tokens_after: int | None = None
    duration_s: float | None = None
    entry: CompactionEntry | None = None
    edits: int = 0
    mode: Literal["blocking", "background", "none"] = "none"
    """``blocking``: a summarizer call ran on the caller's path; ``background``: the model's summary
    runs off it; ``none``: no model involved."""
    detail: str = ""
    """For ``"dropped"``: why the model summary was not used."""
    waited_s: float = 0.0
    """Seconds the compaction waited for background summaries (within ``summary_wait``)."""
