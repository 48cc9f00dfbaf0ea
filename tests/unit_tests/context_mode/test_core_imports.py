"""Context-mode's core depends on langchain-core only: no LangGraph, no LangChain agents."""

from __future__ import annotations

import subprocess
import sys

CORE = [
    "langctx.context_mode",
    "langctx.context_mode.config",
    "langctx.context_mode.grep",
    "langctx.context_mode.guard",
    "langctx.context_mode.plan",
    "langctx.context_mode.processor",
    "langctx.context_mode.prompt",
    "langctx.context_mode.reduce",
    "langctx.context_mode.references",
    "langctx.context_mode.slices",
    "langctx.context_mode.summary",
    "langctx.context_mode.tiers",
    "langctx.context_mode.wrapped_tool",
]


def test_core_modules_load_no_integration_library() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {CORE!r}: importlib.import_module(name)\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & {'langgraph', 'langchain', 'psycopg'})\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
