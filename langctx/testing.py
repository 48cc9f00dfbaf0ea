"""Fakes for testing agents offline: a chat model that plays a script and supports ``bind_tools``.

Example:
    >>> model = ScriptedChatModel(responses=[ai_tool_call("read_file", {"path": "a.py"}), "Done."])
    >>> model.bind_tools([]).invoke("go").tool_calls[0]["name"], model.invoke("go").content
    ('read_file', 'Done.')
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from pydantic import ConfigDict, Field, PrivateAttr

from langctx.errors import LangctxError

Response = str | AIMessage | BaseException | Callable[[list[BaseMessage]], "str | AIMessage"]
"""A scripted step: text, an AIMessage, an exception to raise, or a function of the input."""


class ScriptExhaustedError(LangctxError, RuntimeError):
    """The scripted model was called more times than it has responses (and ``cycle`` is off)."""


def ai_tool_call(
    name: str, args: dict[str, Any], *, content: str = "", call_id: str | None = None
) -> AIMessage:
    """An AIMessage asking for one tool call.

    Example:
        >>> ai_tool_call("run_command", {"command": "pytest"}).tool_calls[0]["args"]
        {'command': 'pytest'}
    """
    cid = call_id or f"call_{uuid.uuid4().hex[:10]}"
    return AIMessage(
        content=content, tool_calls=[{"id": cid, "name": name, "args": args, "type": "tool_call"}]
    )


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers each call with the next response of its script; ``calls``
    keeps every call's input."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: list[Any] = Field(default_factory=list)
    """The script, a list of :data:`Response`."""
    cycle: bool = False
    """Start the script again when it runs out, instead of raising ScriptExhaustedError."""
    usage: bool = False
    """Attach usage_metadata (chars/4 estimates) to responses that have none."""
    latency: Callable[[list[BaseMessage], AIMessage], float] | float | None = None
    """Seconds each call sleeps before answering, or a function of the input and the answer."""

    _index: int = PrivateAttr(default=0)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)
    _tools: list[Any] = PrivateAttr(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "langctx-scripted"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The input messages of every call so far."""
        return self._calls

    @property
    def bound_tools(self) -> list[Any]:
        """The tools last given to ``bind_tools``."""
        return self._tools

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            self._calls.append(list(messages))
            if self._index >= len(self.responses):
                if not self.cycle or not self.responses:
                    msg = (
                        f"ScriptedChatModel has {len(self.responses)} responses and was called "
                        f"{self._index + 1} times; add responses or set cycle=True."
                    )
                    raise ScriptExhaustedError(msg)
                self._index = 0
            step = self.responses[self._index]
            self._index += 1
        if isinstance(step, BaseException):
            raise step
        if callable(step) and not isinstance(step, AIMessage):
            step = step(list(messages))
        message = AIMessage(content=step) if isinstance(step, str) else step.model_copy()
        if message.id is None:  # derived from what it answers, so a replayed script is the same
            seen = f"{len(messages)}|{messages[-1].id if messages else ''}|{message.content!r}"
            message.id = f"scripted-{hashlib.sha1(seen.encode()).hexdigest()[:16]}"
        if self.usage and message.usage_metadata is None:
            n_in = sum(len(m.text) for m in messages) // 4 + 3 * len(messages)
            n_out = max(1, len(message.text) // 4)
            message.usage_metadata = {
                "input_tokens": n_in,
                "output_tokens": n_out,
                "total_tokens": n_in + n_out,
            }
        return message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._next(messages)
        if delay := self._delay(messages, message):
            time.sleep(delay)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = self._next(messages)
        if delay := self._delay(messages, message):
            await asyncio.sleep(delay)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _delay(self, messages: list[BaseMessage], message: AIMessage) -> float:
        if self.latency is None:
            return 0.0
        if callable(self.latency):
            return float(self.latency(list(messages), message))
        return float(self.latency)

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tools and return the model itself (the script decides the calls)."""
        self._tools = list(tools)
        return self
