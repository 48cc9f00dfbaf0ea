"""Long-term memory: facts in a per-user LangGraph ``BaseStore`` namespace, found by the store's
semantic search when it has an index, else by keyword (BM25, offline)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, Item, SearchItem

from langctx.config_checks import positive
from langctx.context_mode.tiers import keyword_scores, render_memory_block
from langctx.errors import ConfigError
from langctx.stores.references import namespace_label
from langctx.tokens import TextCounter, TokenCounter, text_counter

__all__ = ["DEFAULT_LONG_TERM_TOKENS", "LONG_TERM_NAMESPACE", "LongTermMemory"]

LONG_TERM_NAMESPACE: tuple[str, ...] = ("langctx", "long_term")
"""Prefix of the per-user namespaces."""

DEFAULT_LONG_TERM_TOKENS = 300
"""Token cap of the block injected into the prompt."""

_MAX_FACT_CHARS = 2_000


class LongTermMemory:
    """Facts in a ``BaseStore`` namespace per user, with search and capped retrieval.

    Args:
        store: the LangGraph store (with an ``index`` for semantic search).
        max_tokens: token cap of :meth:`context_block`.
        limit: facts returned by a search.
        scan_limit: facts read for a keyword search (the newest ones when there are more).
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        namespace: Sequence[str] = LONG_TERM_NAMESPACE,
        max_tokens: int = DEFAULT_LONG_TERM_TOKENS,
        limit: int = 5,
        scan_limit: int = 1_000,
        count_tokens: TokenCounter | TextCounter | None = None,
    ) -> None:
        if not isinstance(store, BaseStore):
            msg = f"store must be a langgraph BaseStore, got {type(store).__name__}."
            raise ConfigError(msg)
        positive("max_tokens", max_tokens)
        positive("limit", limit)
        positive("scan_limit", scan_limit)
        self.store = store
        self.namespace = tuple(namespace)
        self.max_tokens = max_tokens
        self.limit = limit
        self.scan_limit = scan_limit
        self.count_tokens: TextCounter = text_counter(count_tokens)

    @property
    def semantic(self) -> bool:
        """Whether the store has an embedding index (then search is semantic)."""
        return getattr(self.store, "index_config", None) is not None

    def namespace_for(self, config: RunnableConfig | None) -> tuple[str, ...]:
        """The namespace of the run's user (``user_id``, else ``assistant_id``, else "default").

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> LongTermMemory(InMemoryStore()).namespace_for({"configurable": {"user_id": "u.1"}})
            ('langctx', 'long_term', 'u%2E1')
        """
        configurable = (config or {}).get("configurable") or {}
        user = configurable.get("user_id") or configurable.get("assistant_id") or "default"
        return (*self.namespace, namespace_label(str(user)))

    def _item(self, fact: str, tags: Sequence[str] | None) -> tuple[str, dict[str, Any]]:
        text = " ".join(str(fact).split())
        if not text:
            msg = "a fact to remember must not be empty."
            raise ConfigError(msg)
        if len(text) > _MAX_FACT_CHARS:
            msg = f"a fact is at most {_MAX_FACT_CHARS} characters; got {len(text)}. Remember the gist."
            raise ConfigError(msg)
        key = hashlib.sha256(text.lower().encode()).hexdigest()[:16]
        return key, {"v": 1, "text": text, "tags": list(tags or []), "created_at": time.time()}

    def _index(self) -> list[str] | Literal[False]:
        return ["text"] if self.semantic else False

    def remember(
        self, fact: str, *, config: RunnableConfig | None = None, tags: Sequence[str] | None = None
    ) -> str:
        """Store a fact (the same fact twice is one item); returns its key."""
        key, value = self._item(fact, tags)
        self.store.put(self.namespace_for(config), key, value, index=self._index())
        return key

    async def aremember(
        self, fact: str, *, config: RunnableConfig | None = None, tags: Sequence[str] | None = None
    ) -> str:
        """Async version of `remember`."""
        key, value = self._item(fact, tags)
        ns = self.namespace_for(config)
        try:
            await self.store.aput(ns, key, value, index=self._index())
        except NotImplementedError:
            self.store.put(ns, key, value, index=self._index())
        return key

    def _rank(self, query: str, items: Sequence[Item | SearchItem], limit: int) -> list[str]:
        texts = [str(i.value.get("text", "")) for i in items if isinstance(i.value, dict)]
        if self.semantic:
            return texts[:limit]
        scores = keyword_scores(query, texts)
        ranked = sorted(range(len(texts)), key=lambda n: (-scores[n], n))
        return [texts[n] for n in ranked if scores[n] > 0][:limit]

    def _search_kwargs(self, query: str) -> dict[str, Any]:
        if self.semantic:
            return {"query": query, "limit": self.limit}
        return {"limit": self.scan_limit}

    def search(
        self, query: str, *, config: RunnableConfig | None = None, limit: int | None = None
    ) -> list[str]:
        """The facts most relevant to ``query`` (semantic when indexed, else keyword)."""
        items = self.store.search(self.namespace_for(config), **self._search_kwargs(query))
        return self._rank(query, items, limit or self.limit)

    async def asearch(
        self, query: str, *, config: RunnableConfig | None = None, limit: int | None = None
    ) -> list[str]:
        """Async version of `search`."""
        ns, kwargs = self.namespace_for(config), self._search_kwargs(query)
        try:
            items = await self.store.asearch(ns, **kwargs)
        except NotImplementedError:
            items = self.store.search(ns, **kwargs)
        return self._rank(query, items, limit or self.limit)

    def context_block(self, query: str, *, config: RunnableConfig | None = None) -> str | None:
        """The relevant facts as a block of at most ``max_tokens`` tokens (None: none).

        Example:
            >>> from langgraph.store.memory import InMemoryStore
            >>> ltm = LongTermMemory(InMemoryStore())
            >>> _ = ltm.remember("CI runs on Python 3.11.")
            >>> print(ltm.context_block("which python version?"))
            Long-term memory (retrieved for this request; may be outdated):
            - CI runs on Python 3.11.
        """
        return self._block(self.search(query, config=config)) if query.strip() else None

    async def acontext_block(
        self, query: str, *, config: RunnableConfig | None = None
    ) -> str | None:
        """Async version of `context_block`."""
        return self._block(await self.asearch(query, config=config)) if query.strip() else None

    def _block(self, facts: list[str]) -> str | None:
        return render_memory_block(
            facts, max_tokens=self.max_tokens, count_tokens=self.count_tokens
        )
