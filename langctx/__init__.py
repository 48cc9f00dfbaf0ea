"""langctx: layered, compacting memory for long-running LangChain and LangGraph agents.

The core is imported at once; the LangChain and LangGraph integrations load on first use.

Example:
    >>> LayeredChatMemory(max_tokens=8000).context_tokens()
    0
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from langctx.channel import LangctxChannel, channel_update, merge_langctx
from langctx.config import DEFAULT_PRIORITIES, ConfigOptions, MemoryConfig
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
from langctx.state_memory import MemoryOptions, MemorySettings, ThreadView, view_state
from langctx.summarize import LocalSummarizer, ModelSummarizer, PrefixSummarizer, SummaryRequest
from langctx.tokens import ApproximateCounter, TiktokenCounter, TokenCounter, resolve_token_counter

if TYPE_CHECKING:
    from langctx.agent import create_agent
    from langctx.context_mode.middleware import (
        ContextModeMiddleware,
        ContextModeToolProcessor,
    )
    from langctx.context_mode.processor import ContextModeProcessor
    from langctx.context_mode.tools import fetch_context_tool, wrap_tools_with_context_mode
    from langctx.delta_state import LangctxDeltaAgentState, LangctxDeltaState
    from langctx.events import COMPACTION_EVENT
    from langctx.history import LangctxChatMessageHistory, SQLiteChatHistoryStore
    from langctx.langgraph import (
        LangctxAgentState,
        LangctxNode,
        LangctxState,
        make_compact_tool,
        make_pre_model_hook,
        route_after_memory,
    )
    from langctx.middleware import LangctxMiddleware
    from langctx.recovery import OverflowRecovery, with_overflow_recovery
    from langctx.stores.archive import afull_log, full_log
    from langctx.stores.checkpoints import open_checkpointer
    from langctx.stores.compressed import CompressedSerializer
    from langctx.stores.long_term import LongTermMemory

_LAZY: dict[str, str] = {
    name: module
    for module, names in (
        ("langctx.middleware", "LangctxMiddleware"),
        ("langctx.agent", "create_agent"),
        ("langctx.context_mode.middleware", "ContextModeMiddleware ContextModeToolProcessor"),
        ("langctx.context_mode.processor", "ContextModeProcessor"),
        ("langctx.context_mode.tools", "fetch_context_tool wrap_tools_with_context_mode"),
        ("langctx.langgraph", "LangctxNode LangctxState LangctxAgentState make_pre_model_hook"),
        ("langctx.langgraph", "make_compact_tool route_after_memory"),
        ("langctx.recovery", "OverflowRecovery with_overflow_recovery"),
        ("langctx.delta_state", "LangctxDeltaState LangctxDeltaAgentState"),
        ("langctx.stores.archive", "full_log afull_log"),
        ("langctx.stores.checkpoints", "open_checkpointer"),
        ("langctx.stores.compressed", "CompressedSerializer"),
        ("langctx.stores.long_term", "LongTermMemory"),
        ("langctx.events", "COMPACTION_EVENT"),
        ("langctx.history", "LangctxChatMessageHistory SQLiteChatHistoryStore"),
    )
    for name in names.split()
}
"""Names of the integrations and the module each is loaded from on first use."""

__all__ = [
    "COMPACTION_EVENT",
    "DEFAULT_PRIORITIES",
    "ApproximateCounter",
    "BudgetError",
    "CompactionEntry",
    "CompactionEvent",
    "CompressedSerializer",
    "ConfigError",
    "ConfigOptions",
    "ContextModeMiddleware",
    "ContextModeProcessor",
    "ContextModeToolProcessor",
    "ContextOverflowError",
    "EditEntry",
    "FileToolSpec",
    "InvalidHistoryError",
    "InvalidMessageError",
    "LangctxAgentState",
    "LangctxChannel",
    "LangctxChatMessageHistory",
    "LangctxDeltaAgentState",
    "LangctxDeltaState",
    "LangctxError",
    "LangctxMiddleware",
    "LangctxNode",
    "LangctxState",
    "LangctxWarning",
    "LayeredChatMemory",
    "LocalSummarizer",
    "LongTermMemory",
    "MemoryConfig",
    "MemoryOptions",
    "MemorySettings",
    "ModelSummarizer",
    "OverflowRecovery",
    "PrefixSummarizer",
    "ReferenceNotFoundError",
    "SQLiteChatHistoryStore",
    "StateVersionError",
    "SummarizerError",
    "SummaryRequest",
    "ThreadView",
    "TiktokenCounter",
    "TokenCounter",
    "__version__",
    "afull_log",
    "channel_update",
    "create_agent",
    "fetch_context_tool",
    "full_log",
    "make_compact_tool",
    "make_pre_model_hook",
    "merge_langctx",
    "open_checkpointer",
    "resolve_token_counter",
    "route_after_memory",
    "view_state",
    "with_overflow_recovery",
    "wrap_tools_with_context_mode",
]

__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'langctx' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
