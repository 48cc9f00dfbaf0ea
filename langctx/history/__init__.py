"""``BaseChatMessageHistory`` adapter: langctx memory behind ``RunnableWithMessageHistory``, with
its log in process, in a wrapped history or in SQLite."""

from langctx.history.backends import STATE_KEY
from langctx.history.chat_history import LangctxChatMessageHistory
from langctx.history.sqlite import SQLiteChatHistoryStore

__all__ = ["STATE_KEY", "LangctxChatMessageHistory", "SQLiteChatHistoryStore"]
