"""A pending background summary gives the same model inputs whichever process holds its job.

``create_agent`` + ``LangctxMiddleware`` (background summaries on, a model summarizer, archive
mode at its default and off) runs a session with a ``/compact`` in it, twice: once in a process
that keeps its jobs (each waited for), once in one that forgets them before every model call, as
a worker that serves the next call of the thread and never ran the job would. Every model input
must be the same: a fold's model summary is applied at the next fold from the state (archived
messages included), and a ``/compact`` leaves it to its own summary in both. The two runs are
compared call by call, so every fold waits for what is pending (``summary_wait=None``): with the
default bound, what is ready at a fold depends on time (test_summary_wait_agents.py checks that
case against a fresh process's projection instead).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langctx.cli.demo.session import SYSTEM_PROMPT
from langctx.engine import background
from langctx.middleware import LangctxMiddleware
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import (
    config,
    first_input,
    session_script,
    session_tools,
)
from tests.integration_tests._turn_worker import ToolMessageIds

COMPACT_AT = 3
"""The user turn that is ``/compact``."""


def summarize(request: SummaryRequest) -> str:
    """A model summary that depends on its whole input."""
    last = request.messages[-1].text[:60] if request.messages else ""
    return (
        "Goal:\n- fix the parser\nCurrent status:\n"
        f"- {len(request.messages)} messages, {len(request.summaries)} earlier summaries\n"
        f"- last: {last}"
    )


@pytest.fixture(autouse=True)
def _no_jobs() -> Iterator[None]:
    background.clear()
    yield
    background.clear()


def _session(archive: str | None, *, forget: bool) -> list[list[tuple[str, str | None, Any]]]:
    """Every model input of the session; ``forget``: no job survives to the next model call."""
    script = session_script(40, seed=7)
    inputs: list[list[tuple[str, str | None, Any]]] = []

    def respond(messages: list[BaseMessage]) -> Any:
        assert background.wait_idle(30), "a background summary did not finish"
        if forget:
            background.clear()  # the next call is served by a process that never ran the job
        inputs.append([(m.type, m.id, m.content) for m in messages])
        return script.responses[len(inputs) - 1]

    model = ScriptedChatModel(responses=[respond], cycle=True)
    options: dict[str, Any] = {} if archive == "state" else {"archive": archive}
    middleware = LangctxMiddleware(
        max_tokens=3000, summarizer=summarize, summary_wait=None, **options
    )
    graph = create_agent(  # fixed tool result ids: the two sessions are compared by id
        model,
        tools=session_tools(script.outputs),
        system_prompt=SYSTEM_PROMPT,
        middleware=[middleware, ToolMessageIds()],
        checkpointer=InMemorySaver(),
    )
    cfg = config()
    graph.invoke(first_input(with_system=False), cfg)
    turn = 1
    while len(inputs) < len(script.responses):
        text = "/compact keep the parser notes" if turn == COMPACT_AT else f"Go on ({turn})."
        graph.invoke({"messages": [HumanMessage(text, id=f"user-{turn}")]}, cfg)
        turn += 1
    return inputs


@pytest.mark.parametrize("archive", ["state", None])
def test_a_process_without_the_job_sends_what_the_one_with_it_sends(archive: str | None) -> None:
    held = _session(archive, forget=False)
    background.clear()
    other = _session(archive, forget=True)
    blocks = {m[1] for call in held for m in call if str(m[1]).startswith("langctx-summary-")}
    assert len(blocks) >= 5  # folds happened, and the summary block changed with them
    models = [m[2] for call in held for m in call if "earlier summaries" in str(m[2])]
    assert models, "no model summary reached the model"
    differ = [n for n, (a, b) in enumerate(zip(other, held, strict=True)) if a != b]
    assert not differ, f"model calls {differ[:5]} differ"
