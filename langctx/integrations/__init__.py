"""Adapters that put :class:`~langctx.LayeredChatMemory` into LangGraph and LangChain agents.

Each module imports the core; the core never imports them. Import what you use directly:

- :mod:`langctx.integrations.middleware`: ``LangctxMiddleware`` for ``langchain.agents.create_agent``.
- :mod:`langctx.integrations.langgraph`: the memory node for ``StateGraph``, the ``pre_model_hook``
  for ``create_react_agent`` and the ``compact_conversation`` tool.
- :mod:`langctx.integrations.state`: the ``langctx`` state channel and its reducer.
- :mod:`langctx.integrations.archive`: archive mode (folded messages leave the state for a
  LangGraph store) and ``full_log``; :mod:`langctx.integrations.archive_plan` is its pure part.
- :mod:`langctx.integrations.delta_state`: state schemas with delta-stored channels.
- :mod:`langctx.integrations.threads`: ``ThreadMemories``, the per-thread memory cache.
- :mod:`langctx.integrations.recovery`: overflow recovery around a model call.
- :mod:`langctx.integrations.checkpoint`: ``open_checkpointer`` for SQLite and PostgreSQL.
"""
