"""What a memory reports for dashboards and debugging (``LayeredChatMemory.stats``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langctx.entries import ENTRY_VERSION

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore


def stats(mem: MemoryCore) -> dict[str, Any]:
    """Figures for dashboards and debugging.

    Example:
        >>> from langctx import LayeredChatMemory
        >>> LayeredChatMemory(max_tokens=4000).stats()["budget"]
        4000
    """
    levels: dict[int, int] = {}
    for e in mem._active:
        levels[e["level"]] = levels.get(e["level"], 0) + 1
    return {
        "messages": len(mem._log),
        "context_tokens": mem.context_tokens(),
        "budget": mem.config.max_tokens_resolved,
        "compactions": sum(1 for e in mem._entries if e["trigger"] != "merge"),
        "merges": sum(1 for e in mem._entries if e["trigger"] == "merge"),
        "summaries_by_level": levels,
        "summary_tokens": sum(e["summary_tokens"] for e in mem._active),
        "edits": len(mem._edits),
        "blocking_summarizer_calls": mem._blocking_calls,
        "first_kept_id": mem.first_kept_id,
        "entry_version": ENTRY_VERSION,
    }
