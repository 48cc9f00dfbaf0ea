"""One thread, served turn by turn by whichever process gets the turn (the multi-worker tests).

A scripted ``create_agent`` coding agent (``LangctxMiddleware``, optionally ``ContextModeMiddleware``
and archive mode) over a checkpointer and a store that several processes share. :func:`user_turns`
is the script: the demo session's tool turns with a progress note (the end of a user turn) every
few tool turns, one ``/compact`` and, with Context-mode, one ``fetch_context`` of a reference.
Every message has a fixed id, so two runs of the script can be compared message by message.

:class:`TurnWorker` keeps its agent (and so its process state) across the turns it serves. Run as
``python -m tests.integration_tests._turn_worker``, it reads JSON requests on stdin, one a line
(``{"op": "open", "case": {...}}``, ``{"op": "turn", "key": ..., "turn": n}``,
``{"op": "final", "key": ...}``, ``{"op": "exit"}``) and answers each with one stdout line that
starts with :data:`REPLY`.
"""

from __future__ import annotations

import json
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ToolCallRequest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.types import Command

from langctx.cli.demo.session import SYSTEM_PROMPT, TASK
from langctx.context_mode.middleware import ContextModeMiddleware
from langctx.context_mode.references import find_reference_ids
from langctx.middleware import LangctxMiddleware
from langctx.stores.archive import full_log
from langctx.stores.checkpoints import open_checkpointer
from langctx.summarize import SummaryRequest
from langctx.testing import ScriptedChatModel
from tests.integration_tests._archive_agents import open_store, script, tools

REPLY = "@@turn-worker "
BUDGET = 3500
SEED = 31
DEMO_TURNS = 44
"""Demo-session turns played (41 of them call tools)."""
NOTE_EVERY = 4
"""Tool turns between two progress notes (each ends a user turn)."""
COMPACT_AT = 5
"""The user turn that is ``/compact``."""
NOTICE_ID = "langctx-notice-"
"""How the ids of langctx's notices start (persisted in the state)."""
FETCH_AFTER_CHARS = 20_000
"""With Context-mode, the first tool output longer than this is fetched back (grep)."""


@dataclass(frozen=True)
class UserTurn:
    """A user message and the model responses of the run it starts."""

    message: HumanMessage
    responses: list[Any]


def model_summary(request: SummaryRequest) -> str:
    """A model summary that depends on its whole input and takes a while (so a kill or the other
    worker's turn can land while it runs in the background)."""
    time.sleep(0.05)
    last = request.messages[-1].text[:60] if request.messages else ""
    return (
        "Goal:\n- fix the parser\nCurrent status:\n"
        f"- {len(request.messages)} messages, {len(request.summaries)} earlier summaries\n"
        f"- last: {last}"
    )


def _fetch(messages: list[BaseMessage]) -> AIMessage:
    """Grep the reference the last tool result names."""
    last = messages[-1]
    assert isinstance(last, ToolMessage), last
    (ref_id,) = find_reference_ids(last.text)
    call = {
        "id": "call_fetch",
        "name": "fetch_context",
        "args": {"ref_id": ref_id, "grep": "Error"},
        "type": "tool_call",
    }
    return AIMessage("Let me look for the error lines.", tool_calls=[call], id="ai-fetch")


def user_turns(context_mode: bool) -> tuple[list[UserTurn], dict[str, str]]:
    """The script of a case and the tool outputs by call id."""
    responses, outputs = script(DEMO_TURNS, seed=SEED)
    steps: list[Any] = []
    tool_turns = 0
    fetch = context_mode
    for r in responses:
        steps.append(r)
        if not r.tool_calls:
            continue
        tool_turns += 1
        if fetch and max(len(outputs[tc["id"]]) for tc in r.tool_calls) > FETCH_AFTER_CHARS:
            steps.append(_fetch)
            fetch = False
        if tool_turns % NOTE_EVERY == 0:
            n = tool_turns // NOTE_EVERY
            steps.append(AIMessage(f"Progress note {n}: still on the parser.", id=f"note-{n}"))
    assert not fetch, "no tool output was large enough to be referenced"
    turns: list[UserTurn] = []
    current: list[Any] = []
    for step in steps:
        current.append(step)
        if isinstance(step, AIMessage) and not step.tool_calls:
            n = len(turns)
            text = TASK if n == 0 else f"Go on ({n})."
            turns.append(
                UserTurn(HumanMessage(text, id="task" if n == 0 else f"user-{n}"), current)
            )
            current = []
    assert not current
    compact = HumanMessage("/compact keep the parser notes", id="user-compact")
    turns.insert(COMPACT_AT, UserTurn(compact, []))
    return turns, outputs


class ToolMessageIds(AgentMiddleware[Any, Any, Any]):
    """Give a tool result without an id a fixed one (``tool-<call id>``), as the scripted tools do
    (``fetch_context`` returns none, and ``add_messages`` would pick a random one)."""

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        result = handler(request)
        if isinstance(result, ToolMessage):
            return _with_id(result)
        if isinstance(result, Command) and isinstance(result.update, dict):
            msgs = [
                _with_id(m) if isinstance(m, ToolMessage) else m
                for m in result.update.get("messages", [])
            ]
            return Command(update={**result.update, "messages": msgs})
        return result


def _with_id(message: ToolMessage) -> ToolMessage:
    if message.id is not None:
        return message
    return message.model_copy(update={"id": f"tool-{message.tool_call_id}"})


def plain(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """What is compared of each message: type, id, content, tool calls (and the call answered)."""
    out = []
    for m in messages:
        d: dict[str, Any] = {"type": m.type, "id": m.id, "content": m.content}
        if isinstance(m, AIMessage):
            d["tool_calls"] = [
                {"id": tc["id"], "name": tc["name"], "args": tc["args"]} for tc in m.tool_calls
            ]
        if isinstance(m, ToolMessage):
            d["tool_call_id"] = m.tool_call_id
        out.append(d)
    return out


def _notices_named(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``/compact`` notice's id is random (made once, then kept in the state): name it."""
    return [{**m, "id": NOTICE_ID} if str(m["id"]).startswith(NOTICE_ID) else m for m in messages]


class TurnWorker:
    """One case's agent in this process: a checkpointer, a store, the middleware, a model.

    ``case``: ``thread_id``, ``uri`` (checkpointer), ``store_uri``, ``context_mode``, ``archive``.
    """

    def __init__(self, case: dict[str, Any]) -> None:
        self.case = case
        self.turns, outputs = user_turns(case["context_mode"])
        self.queue: deque[Any] = deque()
        self.model = ScriptedChatModel(responses=[self._play], cycle=True)
        self.cfg: RunnableConfig = {
            "configurable": {"thread_id": case["thread_id"]},
            "recursion_limit": 500,
        }
        self._stack = ExitStack()
        saver = self._stack.enter_context(open_checkpointer(case["uri"]))
        self.store = self._stack.enter_context(open_store(case["store_uri"]))
        middleware: list[AgentMiddleware[Any, Any, Any]] = [
            LangctxMiddleware(
                max_tokens=BUDGET,
                archive=True if case["archive"] else None,
                # live cases: a model summarizer, background summaries on (the default)
                summarizer=None if case["archive"] else model_summary,
                summary_threshold_tokens=None if case["archive"] else 0,
            )
        ]
        if case["context_mode"]:
            middleware.append(ContextModeMiddleware(store=self.store))
        middleware.append(ToolMessageIds())
        self.agent = create_agent(
            self.model,
            tools=tools(outputs),
            system_prompt=SYSTEM_PROMPT,
            middleware=middleware,
            checkpointer=saver,
            store=self.store,
        )

    def _play(self, messages: list[BaseMessage]) -> AIMessage | str:
        step = self.queue.popleft()  # IndexError: the model was called more often than scripted
        return step(messages) if callable(step) and not isinstance(step, AIMessage) else step

    def turn(self, n: int) -> dict[str, Any]:
        """Run user turn ``n``: the model inputs it made and the compactions in the channel."""
        user = self.turns[n]
        self.queue.extend(user.responses)
        first = len(self.model.calls)
        out = self.agent.invoke({"messages": [user.message]}, self.cfg)
        assert not self.queue, f"turn {n} ended with {len(self.queue)} responses left"
        return {
            "calls": [plain(c) for c in self.model.calls[first:]],
            "compactions": len(out["langctx"]["compactions"]),
        }

    def final(self) -> dict[str, Any]:
        """The thread at the end: live messages, entries (without their clock) and the full log."""
        state = self.agent.get_state(self.cfg).values
        channel = state["langctx"]
        entries = [
            {k: v for k, v in e.items() if k != "created_at"} for e in channel["compactions"]
        ]
        return {
            "messages": _notices_named(plain(state["messages"])),
            "entries": entries,
            "full_log": _notices_named(plain(full_log(self.store, self.case["thread_id"], state))),
        }

    def close(self) -> None:
        self._stack.close()


def serve() -> None:
    """Answer requests on stdin until ``exit``."""
    workers: dict[str, TurnWorker] = {}
    for line in sys.stdin:
        req = json.loads(line)
        op = req["op"]
        if op == "exit":
            break
        try:
            if op == "open":
                workers[req["case"]["key"]] = TurnWorker(req["case"])
                reply: Any = "ok"
            elif op == "turn":
                reply = workers[req["key"]].turn(req["turn"])
            else:
                reply = workers[req["key"]].final()
        except Exception:  # reported to the test, which fails with it
            reply = {"error": traceback.format_exc()}
        print(REPLY + json.dumps(reply), flush=True)
    for worker in workers.values():
        worker.close()


if __name__ == "__main__":
    serve()
