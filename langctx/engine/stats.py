"""What a memory reports for dashboards and debugging (``LayeredChatMemory.stats``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langctx.entries import ENTRY_VERSION

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory


def stats(self: LayeredChatMemory) -> dict[str, Any]:
    """Figures for dashboards and debugging.

    Example:
        >>> from langctx import LayeredChatMemory
        >>> LayeredChatMemory(max_tokens=4000).stats()["budget"]
        4000
    """
    levels: dict[int, int] = {}
    for e in self._active:
        levels[e["level"]] = levels.get(e["level"], 0) + 1
    return {
        "messages": len(self._log),
        "context_tokens": self.context_tokens(),
        "budget": self.config.max_tokens_resolved,
        "compactions": sum(1 for e in self._entries if e["trigger"] != "merge"),
        "merges": sum(1 for e in self._entries if e["trigger"] == "merge"),
        "summaries_by_level": levels,
        "summary_tokens": sum(e["summary_tokens"] for e in self._active),
        "edits": len(self._edits),
        "blocking_summarizer_calls": self._blocking_calls,
        "first_kept_id": self.first_kept_id,
        "entry_version": ENTRY_VERSION,
    }
