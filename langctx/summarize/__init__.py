"""Summaries: the request type, the model and local summarizers, and how a spec becomes one."""

from langctx.summarize.calls import acall_summarizer, call_summarizer, summary_text
from langctx.summarize.local import LocalSummarizer, render_local_summary
from langctx.summarize.model import ModelSummarizer
from langctx.summarize.prefix import PrefixSummarizer
from langctx.summarize.request import (
    CallableSummarizer,
    Summarizer,
    SummaryRequest,
    resolve_summarizer,
)
from langctx.summarize.text import (
    extract_constraints,
    extract_next_step,
    summary_facts,
    truncate_to_tokens,
)

__all__ = [
    "CallableSummarizer",
    "LocalSummarizer",
    "ModelSummarizer",
    "PrefixSummarizer",
    "Summarizer",
    "SummaryRequest",
    "acall_summarizer",
    "call_summarizer",
    "extract_constraints",
    "extract_next_step",
    "render_local_summary",
    "resolve_summarizer",
    "summary_facts",
    "summary_text",
    "truncate_to_tokens",
]
