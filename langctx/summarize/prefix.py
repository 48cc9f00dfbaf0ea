"""The prefix summarizer: the main model gets the request it was sent last (in the provider's
prompt cache) plus one instruction naming the span to summarize.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> from langctx.testing import ScriptedChatModel
    >>> model = ScriptedChatModel(responses=["Goal:\\n- fix the parser"])
    >>> context = [HumanMessage("Fix the parser", id="t"), AIMessage("Reading it.", id="a")]
    >>> req = SummaryRequest(kind="turns", messages=context[1:], context=context)
    >>> PrefixSummarizer(model).summarize(req)
    'Goal:\\n- fix the parser'
    >>> [m.id for m in model.calls[0][:2]]  # the request the model read, then the instruction
    ['t', 'a']
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable

from langctx.summarize.model import ModelSummarizer, format_transcript, request_parts
from langctx.summarize.prompts import SUMMARY_PROMPT
from langctx.summarize.request import SummaryRequest

_EXCERPT_CHARS = 160


@dataclass(frozen=True, slots=True)
class MainRequest:
    """How the main model is called on this step: ``bind()`` gives the model bound as the agent
    binds it, ``system`` the system prompt (None: the messages hold it)."""

    bind: Callable[[], Runnable[Any, Any]]
    system: BaseMessage | None = None


_MAIN: contextvars.ContextVar[MainRequest | None] = contextvars.ContextVar(
    "langctx_main_request", default=None
)


@contextmanager
def main_request(request: MainRequest) -> Iterator[None]:
    """Within this block (and its background summaries), a PrefixSummarizer uses ``request``."""
    token = _MAIN.set(request)
    try:
        yield
    finally:
        _MAIN.reset(token)


class PrefixSummarizer(ModelSummarizer):
    """Summarize evicted turns with the main model, after the request it just read.

    Inside :class:`~langctx.middleware.LangctxMiddleware` the call is bound like the agent's own
    (list it after the middleware that change the request); ``model`` then serves only merges and
    fallbacks. Other options as :class:`~langctx.summarize.ModelSummarizer` (``prompt`` goes in the
    instruction).
    """

    name = "prefix"
    wants_context = True
    """Ask the memory for the projection the model was last sent (``SummaryRequest.context``)."""

    def _prefixed(self, request: SummaryRequest) -> bool:
        if request.kind != "turns" or not request.context or not request.messages:
            return False
        ids = {m.id for m in request.context}
        return all(m.id is not None and m.id in ids for m in request.messages)

    def build_messages(self, request: SummaryRequest) -> list[BaseMessage]:
        """The step's request then the instruction (else what ``ModelSummarizer`` sends)."""
        if not self._prefixed(request):
            return super().build_messages(request)
        main = _MAIN.get()
        head = [main.system] if main is not None and main.system is not None else []
        return [*head, *request.context, HumanMessage(instruction(request, self.prompt))]

    def _model(self, request: SummaryRequest) -> Runnable[Any, Any]:
        main = _MAIN.get()
        return self.model if main is None or not self._prefixed(request) else main.bind()


def instruction(request: SummaryRequest, prompt: str = SUMMARY_PROMPT) -> str:
    """The message appended after the request: which span to summarize, and how."""
    span = request.messages
    first, last = _excerpt(span[0]), _excerpt(span[-1])
    where = (
        f"the message that begins {first}"
        if len(span) == 1
        else f"the {len(span)} messages from the one that begins {first} through the one that "
        f"begins {last}"
    )
    parts = [
        "Pause the task and call no tool: the conversation above is about to be compacted.",
        f"Summarize {where}; your summary replaces them, and everything after them stays as it is.",
        prompt.format(max_tokens=request.max_tokens),
        *request_parts(request, user_messages=False),
    ]
    if request.instructions:
        parts.append(f"Focus on: {request.instructions}")
    return "\n\n".join(parts)


def _excerpt(message: BaseMessage) -> str:
    text = " ".join(format_transcript([message]).split())
    return repr(text[:_EXCERPT_CHARS] + ("…" if len(text) > _EXCERPT_CHARS else ""))
