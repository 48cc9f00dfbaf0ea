"""langctx: layered, compacting memory for long-running LangChain and LangGraph agents.

Example:
    >>> from langctx import LayeredChatMemory
    >>> mem = LayeredChatMemory(max_tokens=8000)
    >>> mem.context_tokens()
    0
"""

from langctx.config import MemoryConfig
from langctx.entries import CompactionEntry, EditEntry
from langctx.errors import (
    BudgetError,
    ConfigError,
    ContextOverflowError,
    InvalidHistoryError,
    InvalidMessageError,
    LangctxError,
    LangctxWarning,
    ReferenceNotFoundError,
    StateVersionError,
    SummarizerError,
)
from langctx.facts import FileToolSpec
from langctx.memory import CompactionEvent, LayeredChatMemory
from langctx.summarize import LocalSummarizer, ModelSummarizer, SummaryRequest
from langctx.tokens import ApproximateCounter, TiktokenCounter, TokenCounter, resolve_token_counter

__all__ = [
    "ApproximateCounter",
    "BudgetError",
    "CompactionEntry",
    "CompactionEvent",
    "ConfigError",
    "ContextOverflowError",
    "EditEntry",
    "FileToolSpec",
    "InvalidHistoryError",
    "InvalidMessageError",
    "LangctxError",
    "LangctxWarning",
    "LayeredChatMemory",
    "LocalSummarizer",
    "MemoryConfig",
    "ModelSummarizer",
    "ReferenceNotFoundError",
    "StateVersionError",
    "SummarizerError",
    "SummaryRequest",
    "TiktokenCounter",
    "TokenCounter",
    "__version__",
    "resolve_token_counter",
]

__version__ = "0.1.0"
