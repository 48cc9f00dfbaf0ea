"""Where langctx keeps things outside the graph state: the archive, references, long-term
memory, checkpointers. Import the module you use (they need LangGraph)."""
