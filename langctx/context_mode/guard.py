"""The tool call guard: a tool that hangs, raises or floods must not take the agent down.

Example:
    >>> ToolGuard().run(lambda: 1 / 0, tool_name="calc", tool_call_id=None)
    '[tool calc failed: ZeroDivisionError: division by zero]'
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.messages import ToolMessage

from langctx.config_checks import check_timeout
from langctx.errors import ConfigError
from langctx.markers import escape_delimiters
from langctx.timeouts import GuardTimeoutError, acall_with_timeout, call_with_timeout

DEFAULT_TOOL_TIMEOUT = 30.0
"""Seconds a tool call may take before it becomes a timeout result."""

DEFAULT_MAX_OUTPUT_CHARS = 10_000_000
"""Outputs longer than this many characters keep only their head and tail."""

_MAX_ERROR_CHARS = 2_000
_HEAD_SHARE = 0.6

T = TypeVar("T")


def cap_content(content: Any, max_chars: int | None) -> Any:
    """Cut ``str`` content, or the text blocks of a list (sharing the cap), to head and tail."""
    if max_chars is None or not isinstance(content, str | list):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        total = sum(len(t) for t in texts if isinstance(t, str))
        if total <= max_chars:
            return content

        def cap(block: Any) -> Any:  # blocks share the cap in proportion to their length
            text = block.get("text") if isinstance(block, dict) else block
            if not isinstance(text, str):
                return block
            capped = cap_content(text, max(1, max_chars * len(text) // total))
            return {**block, "text": capped} if isinstance(block, dict) else capped

        return [cap(b) for b in content]
    if len(content) <= max_chars:
        return content
    marker = (
        f"\n[… {len(content) - max_chars:,} chars cut by the tool guard: the output had "
        f"{len(content):,} chars and the cap is {max_chars:,} …]\n"
    )
    head = int(max_chars * _HEAD_SHARE)
    return content[:head] + marker + content[len(content) - (max_chars - head) :]


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolGuard:
    """A timeout and an output cap for tool calls.

    A timeout or an exception becomes an error result (a sync call keeps running in a daemon
    thread, its result dropped; async calls are cancelled); ``GraphBubbleUp`` still propagates.
    """

    timeout: float | None = DEFAULT_TOOL_TIMEOUT
    """Seconds a call may take (None: no timeout)."""
    max_output_chars: int | None = DEFAULT_MAX_OUTPUT_CHARS
    """Characters of output kept (head and tail) before Context-mode sees it (None: no cap)."""

    def __post_init__(self) -> None:
        check_timeout("timeout", self.timeout)
        cap = self.max_output_chars
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            msg = f"max_output_chars must be a positive int or None, got {cap!r}."
            raise ConfigError(msg)

    def run(
        self, fn: Callable[[], T], *, tool_name: str, tool_call_id: str | None
    ) -> T | ToolMessage | str:
        """Call ``fn`` under the guard: its result capped, or :meth:`failure` on timeout or error."""
        try:
            out = call_with_timeout(fn, self.timeout)
        except Exception as exc:
            return self._failed(exc, tool_name=tool_name, tool_call_id=tool_call_id)
        return self.cap(out)

    async def arun(
        self, fn: Callable[[], Awaitable[T]], *, tool_name: str, tool_call_id: str | None
    ) -> T | ToolMessage | str:
        """Async version of `run`."""
        try:
            out = await acall_with_timeout(fn, self.timeout)
        except Exception as exc:
            return self._failed(exc, tool_name=tool_name, tool_call_id=tool_call_id)
        return self.cap(out)

    def _failed(
        self, exc: Exception, *, tool_name: str, tool_call_id: str | None
    ) -> ToolMessage | str:
        """:meth:`failure` for ``exc``; LangGraph's control flow (``GraphBubbleUp``) is re-raised."""
        if any(cls.__name__ == "GraphBubbleUp" for cls in type(exc).__mro__):
            raise exc
        return self.failure(exc, tool_name=tool_name, tool_call_id=tool_call_id)

    def cap(self, out: T) -> T:
        """Cap the text of a result (a ``ToolMessage``, ``str`` or content blocks)."""
        if isinstance(out, ToolMessage):
            capped = cap_content(out.content, self.max_output_chars)
            return out if capped is out.content else out.model_copy(update={"content": capped})
        return cap_content(out, self.max_output_chars)

    def failure(
        self, exc: BaseException, *, tool_name: str, tool_call_id: str | None
    ) -> ToolMessage | str:
        """The error tool result (a string without ``tool_call_id``) for a timeout or an exception."""
        if isinstance(exc, GuardTimeoutError):
            text = (
                f"[tool {tool_name} timed out after {exc.timeout:g} s] It may still be running; "
                "try a smaller request or another approach."
            )
        else:
            detail = str(exc).strip()
            if len(detail) > _MAX_ERROR_CHARS:
                detail = detail[:_MAX_ERROR_CHARS] + "…"
            detail = f": {detail}" if detail else ""
            text = escape_delimiters(f"[tool {tool_name} failed: {type(exc).__name__}{detail}]")
        if tool_call_id is None:
            return text
        return ToolMessage(content=text, tool_call_id=tool_call_id, name=tool_name, status="error")
