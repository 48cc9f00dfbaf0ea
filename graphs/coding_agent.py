"""A coding agent whose context is managed by langctx (the graph ``langgraph.json`` points at).

It reads, writes and edits files and runs commands in a sandbox directory
(``LANGCTX_SANDBOX``, default a fresh temporary directory holding a small buggy project).
Offline it plays the demo's scripted session (``LANGCTX_TURNS`` model calls, then again from the
start, so a thread can take any number of runs); ``LANGCTX_MODEL`` names an OpenAI chat model to
use instead (needs ``OPENAI_API_KEY``). ``LANGCTX_BUDGET`` is the context budget (default 8000).
The LangGraph server supplies the checkpointer, so the compaction entries persist with the thread.
"""

from __future__ import annotations

import os

from langctx.cli.demo.agent import build_coding_agent, default_models
from langctx.cli.demo.script import demo_script
from langctx.testing import ScriptedChatModel

_turns = int(os.environ.get("LANGCTX_TURNS", "120"))
_model, _summarizer, _ = default_models(turns=_turns, model=os.environ.get("LANGCTX_MODEL"))
if isinstance(_model, ScriptedChatModel):
    _model = ScriptedChatModel(responses=list(demo_script(_turns)), cycle=True)

graph = build_coding_agent(
    model=_model,
    summarizer=_summarizer,
    sandbox=os.environ.get("LANGCTX_SANDBOX"),
    max_tokens=int(os.environ.get("LANGCTX_BUDGET", "8000")),
)
