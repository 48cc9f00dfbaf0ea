"""A coding agent whose context is managed by langctx (the graph ``langgraph.json`` points at).

It reads, writes and edits files and runs commands in a sandbox directory
(``LANGCTX_SANDBOX``, default a fresh temporary directory holding a small buggy project).
With ``OPENAI_API_KEY`` set it uses ``ChatOpenAI``; offline it plays a scripted session.
The LangGraph server supplies the checkpointer, so the compaction entries persist with the thread.
"""

from __future__ import annotations

import os

from langctx.cli.demo.agent import build_coding_agent

graph = build_coding_agent(
    sandbox=os.environ.get("LANGCTX_SANDBOX"),
    max_tokens=int(os.environ.get("LANGCTX_BUDGET", "8000")),
)
