"""Which user requests the agent answered, read from the log's structure (never by a model).

The rule: a request (a real user message, :func:`~langctx.user_messages.user_text`) is
*answered* when the agent ended its turn after it, before the next request: an AI message with
text and no tool call (what ends a LangChain agent's run). Otherwise it is *open*; an open request
a newer one follows was *interrupted* (the user spoke again before the agent finished), and only
the newest open request is the one to act on. A request is never closed because the user seemed to
withdraw it ("forget the flag"): that message is a request of its own, answered or open by the
same rule, and it is the newer one. A slash command the user ran (``/run pytest``) is no request:
what follows it is its output.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage
    >>> log = [HumanMessage("Fix the test.", id="u1"), AIMessage("Done: it passes.\\nDetails…"),
    ...        HumanMessage("Now the flag.", id="u2"), AIMessage("", tool_calls=[
    ...            {"id": "c1", "name": "edit", "args": {}}])]
    >>> track_answers(log, None)
    ({'u1': 'Done: it passes.'}, 'u2')
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

from langctx.user_messages import ANSWER_CHARS, is_command, opening, user_text


def final_answer(message: BaseMessage) -> str | None:
    """The first line of an AI message that ends the agent's turn (text, no tool call), or None.

    Example:
        >>> final_answer(AIMessage("\\n  Renamed: 14 call sites updated.\\n\\nThe diff: ..."))
        'Renamed: 14 call sites updated.'
        >>> final_answer(AIMessage("Let me look.", tool_calls=[{"id": "1", "name": "ls", "args": {}}]))
    """
    if not isinstance(message, AIMessage) or message.tool_calls or message.invalid_tool_calls:
        return None
    line = next((ln.strip() for ln in message.text.splitlines() if ln.strip()), "")
    return opening(line, ANSWER_CHARS) if line else None


def track_answers(
    messages: Iterable[BaseMessage], current: str | None
) -> tuple[dict[str, str], str | None]:
    """The requests the turns in ``messages`` answered (request id -> the answer's first line)
    and the latest request at their end; ``current``: the latest request before them."""
    answered: dict[str, str] = {}
    for message in messages:
        if text := user_text(message):
            if not is_command(text):  # not a request: the one before it stays current
                current = str(message.id)
        elif current is not None and current not in answered:
            answer = final_answer(message)
            if answer is not None:
                answered[current] = answer
    return answered, current


def newest_request(items: Iterable[Mapping[str, Any]]) -> str | None:
    """The id of the newest ledger item that is a request (not a slash command)."""
    found = [str(i["id"]) for i in items if not is_command(str(i.get("text", "")))]
    return found[-1] if found else None
