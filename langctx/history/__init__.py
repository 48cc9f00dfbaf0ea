"""``BaseChatMessageHistory`` adapter: langctx memory behind ``RunnableWithMessageHistory``.

:class:`LangctxChatMessageHistory` (:mod:`langctx.history.chat_history`) keeps its log in
process, in a wrapped history (:mod:`langctx.history.backends`) or in SQLite
(:class:`SQLiteChatHistoryStore`, :mod:`langctx.history.sqlite`).
"""

from langctx.history.backends import STATE_KEY
from langctx.history.chat_history import LangctxChatMessageHistory
from langctx.history.sqlite import SQLiteChatHistoryStore

__all__ = ["STATE_KEY", "LangctxChatMessageHistory", "SQLiteChatHistoryStore"]
