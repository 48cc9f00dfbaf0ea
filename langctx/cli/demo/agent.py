"""The demo coding agent: ``create_agent`` + :class:`LangctxMiddleware` + sandboxed tools.

It plays :func:`~langctx.cli.demo.script.demo_script` with a :class:`ScriptedChatModel`, offline;
``langctx demo --model NAME`` runs an OpenAI chat model instead (never without being asked).
``graphs/coding_agent.py`` exposes the same agent to ``langgraph.json``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import ToolMessage

from langctx.cli.demo.sandbox import make_sandbox
from langctx.cli.demo.script import DEMO_TASK, demo_script
from langctx.cli.demo.tools import make_tools
from langctx.cli.models import openai_chat_model
from langctx.context_mode.middleware import ContextModeMiddleware
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel

__all__ = ["DEMO_SYSTEM_PROMPT", "DEMO_TASK", "build_coding_agent", "default_models"]

DEMO_SYSTEM_PROMPT = (
    "You are a careful coding agent working in a small Python project. Use read_file, write_file, "
    "edit_file and run_command (run `python run_tests.py` for the tests). Make the smallest fix."
)


def default_models(
    *, turns: int = 120, model: str | None = None, summary_model: str | None = None
) -> tuple[BaseChatModel, object, str]:
    """The agent's model, the summarizer and a label: scripted and offline unless ``model`` names
    an OpenAI chat model (then ``summary_model``, default the same, writes the summaries).

    Raises:
        ConfigError: ``model`` was given without the ``openai`` extra or ``OPENAI_API_KEY``.
    """
    if model is None:
        return ScriptedChatModel(responses=list(demo_script(turns))), None, "scripted (offline)"
    chat = openai_chat_model(model, option="--model", offline="leave out --model")
    summary = openai_chat_model(
        summary_model or model, option="--model", offline="leave out --model", temperature=0
    )
    return chat, summary, f"openai:{model}"


def build_coding_agent(
    *,
    model: BaseChatModel | None = None,
    summarizer: object = None,
    sandbox: str | Path | None = None,
    checkpointer: Any = None,
    store: Any = None,
    max_tokens: int = 8000,
    turns: int = 120,
    middleware: LangctxMiddleware | None = None,
    context_mode: bool = True,
) -> Any:
    """A compiled coding agent whose context is managed by langctx.

    Args:
        model: the agent's chat model (default: see :func:`default_models`).
        summarizer: the summarizer (default: local when scripted, a cheap OpenAI model otherwise).
        sandbox: the project directory (created with the demo project when missing).
        checkpointer: any LangGraph checkpointer (SqliteSaver for the demo).
        store: the graph's store (Context-mode keeps the outputs it references there, so a
            resumed thread can still fetch them).
        max_tokens: the context budget of the memory.
        turns: length of the scripted session when the model is scripted.
        middleware: a preconfigured :class:`LangctxMiddleware` (overrides ``max_tokens`` and ``summarizer``).
        context_mode: put Context-mode in front of the memory (large tool outputs reduced or stored
            behind a reference that the ``fetch_context`` tool reads back).
    """
    if model is None:
        model, default_summarizer, _ = default_models(turns=turns)
        summarizer = summarizer if summarizer is not None else default_summarizer
    root = Path(sandbox) if sandbox is not None else Path(tempfile.mkdtemp(prefix="langctx-demo-"))
    if not (root / "calc" / "parser.py").exists():
        make_sandbox(root)
    mw = middleware or LangctxMiddleware(
        max_tokens=max_tokens, summarizer=summarizer, token_counter="tiktoken"
    )
    budget = mw.settings.config.max_tokens_resolved  # outputs sized to the context they go into
    stack: list[Any] = [ContextModeMiddleware(context_budget=budget), mw] if context_mode else [mw]
    stack.insert(0, _StableToolIds())
    return create_agent(
        model,
        tools=make_tools(root),
        system_prompt=DEMO_SYSTEM_PROMPT,
        middleware=stack,
        checkpointer=checkpointer,
        store=store,
    )


class _StableToolIds(AgentMiddleware[Any, Any, Any]):
    """Tool results get ids derived from their calls (LangGraph would give them random ones), so
    two runs of the demo count the same tokens (summary ids are digests of message ids)."""

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        return _stable(request, handler(request))

    async def awrap_tool_call(self, request: Any, handler: Any) -> Any:
        return _stable(request, await handler(request))


def _stable(request: Any, result: Any) -> Any:
    if isinstance(result, ToolMessage) and result.id is None:
        result.id = f"tool-{request.tool_call['id']}"
    return result
