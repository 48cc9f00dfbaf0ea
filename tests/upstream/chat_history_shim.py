"""What the vendored upstream tests import instead of ``langchain_core.chat_history``.

``InMemoryChatMessageHistory`` here is :class:`LangctxUpstreamHistory`, a
:class:`~langctx.history.LangctxChatMessageHistory` with a budget so large that no
compaction is ever due in those tests; upstream's exact assertions about stored messages therefore
check our adapter's projection, and every read also checks that the projection equals the full
log. ``BaseChatMessageHistory`` is langchain-core's own: its tests exercise the base class.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.messages import BaseMessage

from langctx import LayeredChatMemory
from langctx.history import LangctxChatMessageHistory

__all__ = ["UPSTREAM_BUDGET", "BaseChatMessageHistory", "InMemoryChatMessageHistory"]

UPSTREAM_BUDGET = 1_000_000
"""Tokens: far above anything the upstream tests add, so the projection is the whole log."""


_ADAPTER_MESSAGES: property = LangctxChatMessageHistory.__dict__["messages"]


class LangctxUpstreamHistory(LangctxChatMessageHistory):
    # upstream's test_chat_history_deprecated reads the class docstring: it must be ours
    __doc__ = LangctxChatMessageHistory.__doc__

    def __init__(self, messages: Sequence[BaseMessage] | None = None) -> None:
        super().__init__(LayeredChatMemory(max_tokens=UPSTREAM_BUDGET))
        if messages:
            self.add_messages(messages)

    @property
    def messages(self) -> list[BaseMessage]:
        projected = _ADAPTER_MESSAGES.__get__(self)
        assert not self.memory.compactions and not self.memory.edits, "no compaction is due here"
        assert projected == self.full_messages, "projection must equal the log"
        return projected

    @messages.setter
    def messages(self, value: list[BaseMessage]) -> None:
        _ADAPTER_MESSAGES.__set__(self, value)  # raises: the projection is read-only


InMemoryChatMessageHistory = LangctxUpstreamHistory
