"""Provider validator: build the real request payloads offline and check the providers' rules.

Each projection (a list of langchain-core messages) goes through the installed packages' own
payload builders with fake keys -- langchain-anthropic's ``ChatAnthropic._get_request_payload``,
langchain-openai's ``ChatOpenAI._get_request_payload`` for chat completions and for the
Responses API -- and the payload is checked against the documented rules. Every check returns
a list of :class:`Violation`; an empty list means the provider would accept the request's shape.
The rules do not use langctx code, except :func:`check_pairs`, which also runs
``langctx.turns.pair_errors`` as one extra rule (``pairs.langctx_pair_errors``).

Sources of the rules (Anthropic's "Building with extended thinking", "Thinking in tool and
multi-turn workflows" and "Preserved thinking" pages; the errors quoted in :data:`RULES`):

* a tool-use loop is one assistant turn; when thinking is on, the assistant message that opens
  the turn in progress must start with ``thinking``/``redacted_thinking``;
* a user message holding tool results continues the assistant turn, text beside them included:
  langchain-anthropic merges a human message right after tool results into their user message
  (a user steering the agent mid-loop), so only a user message without tool results opens a turn;
* thinking blocks go back complete and unmodified, signatures included; the sequence may not be
  rearranged; if an assistant message holds thinking, its first block is thinking;
* newer models check the prefix (system, tools, messages) of a returned thinking block against
  the request that produced it (:class:`AnthropicSession`).

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> call = AIMessage("", tool_calls=[{"id": "c1", "name": "read", "args": {}}], id="a")
    >>> [v.rule for v in check_openai_chat([HumanMessage("go"), call])]
    ['openai.tool_call_without_answer']
    >>> check_anthropic([HumanMessage("go"), call, ToolMessage("x", tool_call_id="c1")])
    []
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

__all__ = [
    "RULES",
    "AnthropicSession",
    "Violation",
    "anthropic_payload",
    "check_all",
    "check_anthropic",
    "check_openai_chat",
    "check_pairs",
    "check_responses",
    "check_verbatim",
    "openai_chat_payload",
    "responses_payload",
]

RULES: dict[str, str] = {
    "builder_error": "the provider package's payload builder raised on the messages",
    # Anthropic Messages API
    "anthropic.no_messages": "the request holds no user/assistant message",
    "anthropic.first_message_user": (
        "the first non-system message is a user message (or the assistant message holding a "
        "server-side compaction block, which the compaction docs put at the front)"
    ),
    "anthropic.roles_alternate": "user and assistant messages alternate after the builder merges",
    "anthropic.empty_content": "every message (but an optional final assistant) has content",
    "anthropic.duplicate_tool_use_id": "tool_use ids are unique in the request",
    "anthropic.tool_use_without_result": (
        "every tool_use id has a tool_result in the immediately following user message"
    ),
    "anthropic.tool_result_without_tool_use": (
        "every tool_result answers a tool_use of the immediately preceding assistant message"
    ),
    "anthropic.tool_result_first": "tool_result blocks come first in a user message",
    "anthropic.thinking_first_in_message": (
        "an assistant message holding thinking blocks starts with one ('If an assistant message "
        "contains any thinking blocks, the first block must be thinking or redacted_thinking')"
    ),
    "anthropic.thinking_first_block": (
        "with thinking on, the assistant message opening the turn in progress (before the "
        "lastmost tool_use/tool_result) starts with thinking ('Expected `thinking` or "
        "`redacted_thinking`, but found `text`')"
    ),
    "anthropic.thinking_in_final_assistant": (
        "with thinking off, a final assistant message cannot contain thinking"
    ),
    "anthropic.thinking_prefix_changed": (
        "preserved thinking: the system prompt and messages before a live thinking block are "
        "those of the request that produced it"
    ),
    "anthropic.thinking_modified": (
        "thinking blocks, and all content up to the last one, are byte-identical to the original"
    ),
    "signature_changed": (
        "thinking/redacted_thinking blocks and their signature/data are byte-identical to the "
        "original message with the same id, in the same order, none dropped"
    ),
    # OpenAI chat completions
    "openai.tool_message_without_call": (
        "a tool message follows, contiguously, an assistant message whose tool_calls hold its id"
    ),
    "openai.tool_call_without_answer": (
        "every assistant tool_call id is answered before the next non-tool message"
    ),
    "openai.duplicate_tool_answer": "a tool_call id is answered once",
    "openai.assistant_without_content": "an assistant message has content or tool_calls",
    "openai.unsupported_content_block": "content blocks are of a type the role accepts",
    # OpenAI Responses API
    "responses.function_call_output_without_call": (
        "every function_call_output has an earlier function_call with the same call_id"
    ),
    "responses.function_call_without_output": (
        "every function_call has a later function_call_output with the same call_id"
    ),
    "responses.duplicate_call_id": "a call_id is used by one function_call and one output",
    "responses.reasoning_without_following_item": (
        "a reasoning item is followed by an output item of the same response"
    ),
    "responses.item_without_reasoning": (
        "an output item (msg_/fc_ id) of a reasoning response comes with its reasoning items"
    ),
    "responses.reasoning_changed": "reasoning items equal the original's (id, encrypted_content)",
    "responses.compaction_changed": "compaction items equal the original's",
    # Provider-neutral, over the langchain messages and the original log
    "pairs.orphan_tool_result": "no tool result without its call earlier in the same turn",
    "pairs.unanswered_call": "no tool call (valid or invalid) without its result",
    "pairs.duplicate_result": "a tool call is answered once",
    "pairs.langctx_pair_errors": "langctx.turns.pair_errors reports (0, 0)",
    "reasoning_changed": "reasoning blocks / additional_kwargs['reasoning'] equal the original",
    "compaction_changed": "provider compaction blocks/items travel verbatim with their message",
    "compaction_dropped": "a provider compaction block/item is not dropped while later messages stay",
    "compaction_prefix_resent": (
        "nothing before the latest provider compaction is sent again (system and task aside)"
    ),
    "unknown_block_changed": "unknown block types travel verbatim with their message",
    "image_dropped": "image blocks are not dropped from a message",
    "content_flattened": "list content with non-text blocks is not flattened to a string",
}
"""Every rule a :class:`Violation` can name, with what it requires."""

THINKING_TYPES = frozenset({"thinking", "redacted_thinking"})
IMAGE_TYPES = frozenset({"image", "image_url", "input_image"})
KNOWN_TYPES = frozenset(
    {
        "text",
        "tool_use",
        "tool_call",
        "tool_result",
        "function_call",
        "function_call_output",
        "reasoning",
        "compaction",
        "input_text",
        "output_text",
        "refusal",
        "file",
        "audio",
        "input_audio",
        "non_standard",
    }
    | THINKING_TYPES
    | IMAGE_TYPES
)
"""Block types the validator knows; others are "unknown" and must travel verbatim."""


def _speed_up_block_type_lookup() -> None:
    """Cache langchain-core's data-block type list (it re-reads type hints on every block).

    The function has no arguments and returns constants, so caching changes no result; it makes
    the payload builders several times faster in the property tests.
    """
    from langchain_core.messages import content

    fn = content._get_data_content_block_types
    if not hasattr(fn, "cache_info"):
        content._get_data_content_block_types = lru_cache(maxsize=1)(fn)


_speed_up_block_type_lookup()

ANTHROPIC_MODEL = "claude-sonnet-4-5"
OPENAI_MODEL = "gpt-5"
THINKING = {"type": "enabled", "budget_tokens": 2048}


@dataclass(frozen=True, slots=True)
class Violation:
    """One broken rule: which (a key of :data:`RULES`), where, why."""

    rule: str
    index: int | None
    """Index of the offending item: in the payload's message/input list for payload rules, in the
    projection for message-level rules; ``None`` for the request as a whole."""
    detail: str
    target: str = ""
    """Which check found it: anthropic, anthropic+thinking, openai_chat, responses, messages."""

    def __str__(self) -> str:
        where = "request" if self.index is None else f"[{self.index}]"
        return f"{self.target}: {self.rule} at {where}: {self.detail}"


# ---------------------------------------------------------------------------- payload builders


@lru_cache(maxsize=4)
def _anthropic_model(thinking: bool) -> Any:
    from langchain_anthropic import ChatAnthropic
    from pydantic import SecretStr

    return ChatAnthropic(  # type: ignore[call-arg]
        model=ANTHROPIC_MODEL,
        api_key=SecretStr("fake"),
        max_tokens=8192,
        thinking=THINKING if thinking else None,
    )


@lru_cache(maxsize=4)
def _openai_model(responses: bool, output_version: str | None) -> Any:
    from langchain_openai import ChatOpenAI

    kwargs: dict[str, Any] = {"model": OPENAI_MODEL, "api_key": "fake"}
    if responses:
        kwargs["use_responses_api"] = True
    if output_version is not None:
        kwargs["output_version"] = output_version
    return ChatOpenAI(**kwargs)


def _build(model: Any, messages: Sequence[BaseMessage]) -> dict[str, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        payload: dict[str, Any] = model._get_request_payload(list(messages))
    return payload


def anthropic_payload(messages: Sequence[BaseMessage], *, thinking: bool = False) -> dict[str, Any]:
    """The Messages API request langchain-anthropic would send (``thinking`` on or off)."""
    return _build(_anthropic_model(thinking), messages)


def openai_chat_payload(messages: Sequence[BaseMessage]) -> dict[str, Any]:
    """The chat completions request langchain-openai would send."""
    return _build(_openai_model(False, None), messages)


def responses_payload(
    messages: Sequence[BaseMessage], *, output_version: str | None = None
) -> dict[str, Any]:
    """The Responses API request langchain-openai would send (default or ``"v1"`` output)."""
    return _build(_openai_model(True, output_version), messages)


# ---------------------------------------------------------------------------- helpers


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    out: list[dict[str, Any]] = []
    for b in content or []:
        if isinstance(b, str):
            out.append({"type": "text", "text": b})
        elif isinstance(b, dict):
            out.append(b)
    return out


def _types(content: Any) -> list[str]:
    return [str(b.get("type")) for b in _blocks(content)]


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _builder_error(target: str, exc: Exception) -> list[Violation]:
    return [Violation("builder_error", None, f"{type(exc).__name__}: {exc}", target)]


def _call_ids(message: AIMessage) -> list[str]:
    ids = [str(tc["id"]) for tc in message.tool_calls if tc.get("id")]
    ids += [str(tc["id"]) for tc in message.invalid_tool_calls if tc.get("id")]
    return ids


def _continues_turn(message: dict[str, Any]) -> bool:
    """A payload user message holding tool results (text beside them too) continues the turn."""
    return any(b.get("type") == "tool_result" for b in _blocks(message.get("content")))


def _turn_start(msgs: Sequence[dict[str, Any]]) -> int:
    """Index after the last user message that opens a turn (0: none)."""
    for k in range(len(msgs) - 1, -1, -1):
        if msgs[k].get("role") == "user" and not _continues_turn(msgs[k]):
            return k + 1
    return 0


def _opens_turn(messages: Sequence[BaseMessage], j: int) -> bool:
    """Message ``j`` is a human message the builder does not merge into tool results."""
    if not isinstance(messages[j], HumanMessage):
        return False
    k = j - 1
    while k >= 0 and isinstance(messages[k], HumanMessage | SystemMessage):
        k -= 1
    return k < 0 or not isinstance(messages[k], ToolMessage)


# ---------------------------------------------------------------------------- Anthropic


def _anthropic_rules(
    payload: dict[str, Any], *, thinking: bool, turn_needs_thinking: bool, target: str
) -> list[Violation]:
    out: list[Violation] = []

    def add(rule: str, i: int | None, detail: str) -> None:
        out.append(Violation(rule, i, detail, target))

    msgs: list[dict[str, Any]] = payload.get("messages") or []
    conv = [(i, m) for i, m in enumerate(msgs) if m.get("role") != "system"]
    if not conv:
        add("anthropic.no_messages", None, "no user or assistant message")
        return out
    # After a server-side compaction the history may start at the returned assistant message
    # ("drop the messages you sent from the front and put the returned message in their place").
    opens_with_compaction = _types(conv[0][1].get("content"))[:1] == ["compaction"]
    if conv[0][1]["role"] != "user" and not opens_with_compaction:
        add("anthropic.first_message_user", conv[0][0], f"first role is {conv[0][1]['role']!r}")
    seen_ids: set[str] = set()
    for k, (i, m) in enumerate(conv):
        role = m["role"]
        blocks = _blocks(m.get("content"))
        if k and conv[k - 1][1]["role"] == role:
            add("anthropic.roles_alternate", i, f"two {role} messages in a row")
        last = k == len(conv) - 1
        empty_text = [b for b in blocks if b.get("type") == "text" and not str(b.get("text", ""))]
        if (not blocks and not (role == "assistant" and last)) or empty_text:
            add("anthropic.empty_content", i, f"{role} message with empty content or text block")
        if role == "assistant":
            types = [str(b.get("type")) for b in blocks]
            if THINKING_TYPES & set(types) and types[0] not in THINKING_TYPES:
                add(
                    "anthropic.thinking_first_in_message",
                    i,
                    f"holds thinking but starts with {types[0]!r}",
                )
            ids = [str(b.get("id")) for b in blocks if b.get("type") == "tool_use"]
            for tid in ids:
                if tid in seen_ids:
                    add("anthropic.duplicate_tool_use_id", i, f"tool_use id {tid!r} repeated")
                seen_ids.add(tid)
            nxt = conv[k + 1][1] if k + 1 < len(conv) else None
            answered = (
                {str(b.get("tool_use_id")) for b in _blocks(nxt.get("content"))}
                if nxt is not None and nxt["role"] == "user"
                else set()
            )
            missing = [tid for tid in ids if tid not in answered]
            if missing:
                add(
                    "anthropic.tool_use_without_result",
                    i,
                    f"tool_use ids {missing} have no tool_result in the next user message",
                )
            if last and not thinking and THINKING_TYPES & set(types):
                add("anthropic.thinking_in_final_assistant", i, "final assistant holds thinking")
        else:
            results = [b for b in blocks if b.get("type") == "tool_result"]
            prev = conv[k - 1][1] if k else None
            prev_ids = (
                {
                    str(b.get("id"))
                    for b in _blocks(prev.get("content"))
                    if b.get("type") == "tool_use"
                }
                if prev is not None and prev["role"] == "assistant"
                else set()
            )
            for b in results:
                if str(b.get("tool_use_id")) not in prev_ids:
                    add(
                        "anthropic.tool_result_without_tool_use",
                        i,
                        f"tool_result {b.get('tool_use_id')!r} answers no tool_use of the "
                        "preceding assistant message",
                    )
            types = [str(b.get("type")) for b in blocks]
            if results and types[: len(results)] != ["tool_result"] * len(results):
                add("anthropic.tool_result_first", i, f"block order {types}")
    last_m = conv[-1][1]
    if thinking and turn_needs_thinking and last_m["role"] == "user" and _continues_turn(last_m):
        # The turn in progress: from the last user message that holds no tool result.
        start = _turn_start([m for _, m in conv])
        opener = next(((i, m) for i, m in conv[start:] if m["role"] == "assistant"), None)
        if opener is not None:
            types = _types(opener[1].get("content"))
            if not types or types[0] not in THINKING_TYPES:
                add(
                    "anthropic.thinking_first_block",
                    opener[0],
                    "Expected `thinking` or `redacted_thinking`, but found "
                    f"`{types[0] if types else 'nothing'}`: the assistant message opening the "
                    "tool-use loop in progress has no leading thinking block",
                )
    return out


def _turn_opener_had_thinking(
    projected: Sequence[BaseMessage], original: Sequence[BaseMessage] | None
) -> bool:
    """Did the original first AI message of the turn in progress carry thinking?"""
    if original is None:
        return True
    pos = {m.id: i for i, m in enumerate(original) if m.id}
    last_ai = next((m for m in reversed(projected) if isinstance(m, AIMessage)), None)
    if last_ai is None or last_ai.id not in pos:
        return True
    j = pos[last_ai.id]
    while j > 0 and not _opens_turn(original, j - 1):
        j -= 1
    opener = next((m for m in original[j:] if isinstance(m, AIMessage)), None)
    return opener is None or bool(THINKING_TYPES & set(_types(opener.content)))


def _thinking_seq(payload: dict[str, Any]) -> list[dict[str, Any]]:
    seq: list[dict[str, Any]] = []
    for m in payload.get("messages") or []:
        if m.get("role") == "assistant":
            seq += [b for b in _blocks(m.get("content")) if b.get("type") in THINKING_TYPES]
    return seq


def check_anthropic(
    messages: Sequence[BaseMessage],
    *,
    thinking: bool = False,
    original: Sequence[BaseMessage] | None = None,
) -> list[Violation]:
    """Anthropic rules on langchain-anthropic's payload for ``messages``.

    With ``original`` (the full log), thinking blocks in the payload must be exactly those the
    builder makes from the original messages of the same ids (``signature_changed``), and the
    thinking-first rule applies when the original turn's first AI message had thinking.
    """
    return _check_anthropic(messages, thinking=thinking, original=original)[0]


def _check_anthropic(
    messages: Sequence[BaseMessage],
    *,
    thinking: bool,
    original: Sequence[BaseMessage] | None,
) -> tuple[list[Violation], dict[str, Any] | None]:
    target = "anthropic+thinking" if thinking else "anthropic"
    try:
        payload = anthropic_payload(messages, thinking=thinking)
    except Exception as exc:
        return _builder_error(target, exc), None
    out = _anthropic_rules(
        payload,
        thinking=thinking,
        turn_needs_thinking=_turn_opener_had_thinking(messages, original),
        target=target,
    )
    if original is not None:
        by_id = {m.id: m for m in original if m.id}
        omitted = _omitted_thinking(messages, by_id)
        restored = [
            (m if i in omitted else by_id.get(m.id, m)) if isinstance(m, AIMessage) and m.id else m
            for i, m in enumerate(messages)
        ]
        if restored != list(messages):
            try:
                expected = _thinking_seq(anthropic_payload(restored, thinking=thinking))
            except Exception:
                expected = None
            actual = _thinking_seq(payload)
            if expected is not None and _dump(expected) != _dump(actual):
                k = next(
                    (
                        n
                        for n, (a, b) in enumerate(zip(expected, actual, strict=False))
                        if _dump(a) != _dump(b)
                    ),
                    min(len(expected), len(actual)),
                )
                out.append(
                    Violation(
                        "signature_changed",
                        None,
                        f"payload thinking block {k} differs from the original log's "
                        f"({len(actual)} sent, {len(expected)} expected)",
                        target,
                    )
                )
    return out, payload


class AnthropicSession:
    """Preserved thinking across requests: a live thinking block keeps the prefix it was made with.

    Call :meth:`request` with each projection sent, and :meth:`produced` with each AI message the
    model answered it with. A thinking block of the turn in progress whose system prompt or
    earlier messages differ from the request that produced it is ``anthropic.thinking_prefix_changed``.
    """

    def __init__(self, *, thinking: bool = True) -> None:
        self.thinking = thinking
        self._last: dict[str, Any] | None = None
        self._prefix: dict[str, tuple[str, list[str]]] = {}

    def request(
        self, messages: Sequence[BaseMessage], *, original: Sequence[BaseMessage] | None = None
    ) -> list[Violation]:
        """Validate one request (all of :func:`check_anthropic` plus the prefix rule)."""
        out, payload = _check_anthropic(messages, thinking=self.thinking, original=original)
        self._last = payload
        if payload is None:
            return out
        msgs = payload.get("messages") or []
        start = _turn_start(msgs)
        system = _dump(payload.get("system"))
        for k in range(start, len(msgs)):
            if msgs[k].get("role") != "assistant":
                continue
            for b in _blocks(msgs[k].get("content")):
                key = str(b.get("signature") or b.get("data") or "")
                if b.get("type") not in THINKING_TYPES or key not in self._prefix:
                    continue
                sys0, before0 = self._prefix[key]
                before = [_dump(m) for m in msgs[:k]]
                if sys0 != system or before0 != before:
                    diff = next(
                        (
                            n
                            for n, (a, c) in enumerate(zip(before0, before, strict=False))
                            if a != c
                        ),
                        min(len(before0), len(before)),
                    )
                    what = "system prompt" if sys0 != system else f"message {diff}"
                    out.append(
                        Violation(
                            "anthropic.thinking_prefix_changed",
                            k,
                            f"{what} before this live thinking block differs from the request "
                            f"that produced it ({len(before0)} messages then, {len(before)} now)",
                            "anthropic+thinking" if self.thinking else "anthropic",
                        )
                    )
        return out

    def produced(self, message: AIMessage) -> None:
        """Record the AI message answering the last request (its thinking keeps that prefix)."""
        if self._last is None:
            return
        msgs = self._last.get("messages") or []
        for b in _blocks(message.content):
            if b.get("type") in THINKING_TYPES:
                key = str(b.get("signature") or b.get("data") or "")
                self._prefix[key] = (_dump(self._last.get("system")), [_dump(m) for m in msgs])


# ---------------------------------------------------------------------------- OpenAI chat completions

_CHAT_TYPES = {
    "user": {"text", "image_url", "input_audio", "file"},
    "system": {"text"},
    "developer": {"text"},
    "assistant": {"text", "refusal"},
    "tool": {"text"},
}


def check_openai_chat(messages: Sequence[BaseMessage]) -> list[Violation]:
    """OpenAI chat completions rules on langchain-openai's payload for ``messages``."""
    target = "openai_chat"
    try:
        payload = openai_chat_payload(messages)
    except Exception as exc:
        return _builder_error(target, exc)
    out: list[Violation] = []

    def add(rule: str, i: int | None, detail: str) -> None:
        out.append(Violation(rule, i, detail, target))

    msgs: list[dict[str, Any]] = payload.get("messages") or []
    open_ids: list[str] = []
    open_at: int | None = None
    answered: set[str] = set()

    def close(i: int) -> None:
        nonlocal open_ids, open_at
        missing = [c for c in open_ids if c not in answered]
        if missing and open_at is not None:
            add(
                "openai.tool_call_without_answer",
                open_at,
                f"tool_call ids {missing} have no tool message before message {i}",
            )
        open_ids, open_at = [], None

    for i, m in enumerate(msgs):
        role = m.get("role")
        content = m.get("content")
        if isinstance(content, list):
            allowed = _CHAT_TYPES.get(str(role), set())
            bad = [
                b.get("type")
                for b in content
                if isinstance(b, dict) and b.get("type") not in allowed
            ]
            if bad:
                add("openai.unsupported_content_block", i, f"{role} content blocks of types {bad}")
        if role == "tool":
            cid = str(m.get("tool_call_id"))
            if cid not in open_ids:
                add("openai.tool_message_without_call", i, f"tool_call_id {cid!r} answers no call")
            elif cid in answered:
                add("openai.duplicate_tool_answer", i, f"tool_call_id {cid!r} answered twice")
            answered.add(cid)
            continue
        close(i)
        answered = set()
        if role == "assistant":
            calls = [str(tc.get("id")) for tc in m.get("tool_calls") or []]
            if not calls and not content and not m.get("function_call") and not m.get("audio"):
                add(
                    "openai.assistant_without_content",
                    i,
                    "assistant with no content, no tool_calls",
                )
            if calls:
                open_ids, open_at = calls, i
    close(len(msgs))
    return out


# ---------------------------------------------------------------------------- OpenAI Responses API


@lru_cache(maxsize=20_000)
def _items_of(message_json: str, output_version: str | None) -> tuple[str, ...]:
    message = AIMessage.model_validate_json(message_json)
    items = responses_payload([message], output_version=output_version).get("input") or []
    return tuple(_dump(item) for item in items)


def _response_items(message: AIMessage, output_version: str | None) -> list[dict[str, Any]]:
    return [json.loads(s) for s in _items_of(message.model_dump_json(), output_version)]


_OUTPUT_ITEM_TYPES = frozenset(
    {
        "function_call",
        "custom_tool_call",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "code_interpreter_call",
        "mcp_call",
        "mcp_list_tools",
        "mcp_approval_request",
        "image_generation_call",
        "tool_search_call",
        "apply_patch_call",
    }
)


def check_responses(
    messages: Sequence[BaseMessage],
    *,
    output_version: str | None = None,
    original: Sequence[BaseMessage] | None = None,
) -> list[Violation]:
    """Responses API rules on langchain-openai's payload (``output_version`` None or ``"v1"``)."""
    target = f"responses[{output_version or 'default'}]"
    try:
        payload = responses_payload(messages, output_version=output_version)
    except Exception as exc:
        return _builder_error(target, exc)
    out: list[Violation] = []

    def add(rule: str, i: int | None, detail: str) -> None:
        out.append(Violation(rule, i, detail, target))

    items: list[dict[str, Any]] = payload.get("input") or []
    calls: dict[str, int] = {}
    outputs: dict[str, int] = {}
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind == "function_call":
            cid = str(item.get("call_id"))
            if cid in calls:
                add("responses.duplicate_call_id", i, f"function_call {cid!r} repeated")
            calls[cid] = i
        elif kind == "function_call_output":
            cid = str(item.get("call_id"))
            if cid not in calls:
                add(
                    "responses.function_call_output_without_call",
                    i,
                    f"no earlier function_call with call_id {cid!r}",
                )
            if cid in outputs:
                add("responses.duplicate_call_id", i, f"function_call_output {cid!r} repeated")
            outputs[cid] = i
        elif kind == "reasoning":
            nxt = items[i + 1] if i + 1 < len(items) else None
            ok = nxt is not None and (
                (nxt.get("type") == "message" and nxt.get("role") == "assistant")
                or nxt.get("type") in _OUTPUT_ITEM_TYPES
                or nxt.get("type") == "reasoning"
            )
            if not ok:
                what = "end of input" if nxt is None else f"{nxt.get('type')}/{nxt.get('role')}"
                add(
                    "responses.reasoning_without_following_item",
                    i,
                    f"reasoning {item.get('id')!r} is followed by {what}",
                )
    for cid, i in calls.items():
        if cid not in outputs:
            add("responses.function_call_without_output", i, f"call_id {cid!r} never answered")
    if original is not None:
        out += _responses_verbatim(messages, items, original, output_version, add)
    return out


def _responses_verbatim(
    messages: Sequence[BaseMessage],
    items: list[dict[str, Any]],
    original: Sequence[BaseMessage],
    output_version: str | None,
    add: Any,
) -> list[Violation]:
    sent = {str(it["id"]): (i, it) for i, it in enumerate(items) if it.get("id")}
    owner_ids = {m.id for m in messages if isinstance(m, AIMessage)}
    for m in original:
        if not isinstance(m, AIMessage) or m.id not in owner_ids:
            continue
        own = _response_items(m, output_version)
        for it in own:
            if it.get("type") == "compaction" and it.get("id") and str(it["id"]) in sent:
                got = sent[str(it["id"])]
                if _dump(got[1]) != _dump(it):
                    add("responses.compaction_changed", got[0], f"compaction {it['id']!r} differs")
        reasoning = [it for it in own if it.get("type") == "reasoning" and it.get("id")]
        for it in reasoning:
            hit = sent.get(str(it["id"]))
            if hit is not None and _dump(hit[1]) != _dump(it):
                add("responses.reasoning_changed", hit[0], f"reasoning {it['id']!r} differs")
        for it in own:
            if it.get("type") == "reasoning" or not it.get("id") or str(it["id"]) not in sent:
                continue
            missing = [r["id"] for r in reasoning if str(r["id"]) not in sent]
            if missing:
                add(
                    "responses.item_without_reasoning",
                    sent[str(it["id"])][0],
                    f"item {it['id']!r} sent without its reasoning items {missing}",
                )
    return []


# ---------------------------------------------------------------------------- message-level rules


def check_pairs(messages: Sequence[BaseMessage], *, complete: bool = True) -> list[Violation]:
    """Tool pairing over the langchain messages (``invalid_tool_calls`` pair like tool calls).

    With ``complete=False`` the last AI message's calls may still be waiting for results.
    """
    from langctx.turns import pair_errors

    out: list[Violation] = []
    target = "messages"
    open_ids: dict[str, int] = {}
    answered: set[str] = set()

    def close() -> None:
        for cid, at in open_ids.items():
            if cid not in answered:
                out.append(
                    Violation("pairs.unanswered_call", at, f"call {cid!r} has no result", target)
                )

    for i, m in enumerate(messages):
        if isinstance(m, ToolMessage):
            cid = m.tool_call_id
            if cid not in open_ids:
                out.append(
                    Violation(
                        "pairs.orphan_tool_result",
                        i,
                        f"result {cid!r} answers no open call",
                        target,
                    )
                )
            elif cid in answered:
                out.append(
                    Violation("pairs.duplicate_result", i, f"{cid!r} answered twice", target)
                )
            answered.add(cid)
            continue
        close()
        open_ids, answered = {}, set()
        if isinstance(m, AIMessage):
            open_ids = {cid: i for cid in _call_ids(m)}
    if complete:
        close()
    if complete:
        orphans, unanswered = pair_errors(messages)
        if orphans or unanswered:
            out.append(
                Violation(
                    "pairs.langctx_pair_errors",
                    None,
                    f"pair_errors = ({orphans}, {unanswered})",
                    target,
                )
            )
    return out


def _opaque(message: BaseMessage) -> dict[str, list[str]]:
    blocks = _blocks(message.content)
    return {
        "thinking": [_dump(b) for b in blocks if b.get("type") in THINKING_TYPES],
        "reasoning": [_dump(b) for b in blocks if b.get("type") == "reasoning"]
        + [_dump(message.additional_kwargs.get("reasoning"))]
        * ("reasoning" in message.additional_kwargs),
        "compaction": [_dump(b) for b in blocks if b.get("type") == "compaction"],
        "unknown": [_dump(b) for b in blocks if b.get("type") not in KNOWN_TYPES],
    }


def _has_compaction(message: BaseMessage) -> bool:
    return isinstance(message, AIMessage) and "compaction" in _types(message.content)


def _omitted_thinking(
    messages: Sequence[BaseMessage], by_id: Mapping[str | None, BaseMessage]
) -> set[int]:
    """Indices of messages that left out all their thinking the way Anthropic allows.

    Anthropic's prefix-check guide: after trimming or summarizing older turns, remove the
    thinking of the kept turns. Allowed for a completed turn (a user message opening a turn
    follows it in the request) when every thinking block of the message is left out, everything
    else is sent byte-identical, and no earlier message of the request sends thinking (a block
    left out between others fails the check).
    """
    last_user = max((i for i in range(len(messages)) if _opens_turn(messages, i)), default=-1)
    out: set[int] = set()
    for i, m in enumerate(messages):
        if not isinstance(m, AIMessage):
            continue
        sends = any(b.get("type") in THINKING_TYPES for b in _blocks(m.content))
        if sends:
            break  # thinking sent from here on: nothing after may be left out
        o = by_id.get(m.id) if m.id else None
        if o is None or i > last_user:
            continue
        ob = _blocks(o.content)
        if not any(b.get("type") in THINKING_TYPES for b in ob):
            continue
        rest = [_dump(b) for b in ob if b.get("type") not in THINKING_TYPES]
        mb = [_dump(b) for b in _blocks(m.content)]
        if mb == rest or (not rest and len(mb) == 1):
            out.add(i)
    return out


def check_verbatim(
    messages: Sequence[BaseMessage], original: Sequence[BaseMessage]
) -> list[Violation]:
    """What must travel byte-identical with its message (compared by message id to ``original``)."""
    out: list[Violation] = []
    target = "messages"
    by_id = {m.id: m for m in original if m.id}
    rule_of = {
        "thinking": "signature_changed",
        "reasoning": "reasoning_changed",
        "compaction": "compaction_changed",
        "unknown": "unknown_block_changed",
    }
    omitted = _omitted_thinking(messages, by_id)
    for i, m in enumerate(messages):
        o = by_id.get(m.id) if m.id else None
        if o is None or o is m or i in omitted:
            continue
        if o.content == m.content and o.additional_kwargs == m.additional_kwargs:
            continue
        po, pm = _opaque(o), _opaque(m)
        for kind, rule in rule_of.items():
            if po[kind] != pm[kind]:
                out.append(
                    Violation(
                        rule,
                        i,
                        f"{kind} blocks of message {m.id!r} changed "
                        f"({len(po[kind])} in the log, {len(pm[kind])} sent)",
                        target,
                    )
                )
        ob, mb = _blocks(o.content), _blocks(m.content)
        last = max((n for n, b in enumerate(ob) if b.get("type") in THINKING_TYPES), default=-1)
        if last >= 0 and [_dump(b) for b in ob[: last + 1]] != [_dump(b) for b in mb[: last + 1]]:
            out.append(
                Violation(
                    "anthropic.thinking_modified",
                    i,
                    f"content up to the last thinking block of {m.id!r} changed",
                    target,
                )
            )
        n_img = sum(b.get("type") in IMAGE_TYPES for b in ob)
        if sum(b.get("type") in IMAGE_TYPES for b in mb) < n_img:
            out.append(Violation("image_dropped", i, f"{m.id!r} lost image blocks", target))
        if isinstance(m.content, str) and any(b.get("type") != "text" for b in ob):
            out.append(
                Violation(
                    "content_flattened",
                    i,
                    f"{m.id!r}: list content with {sorted({str(b.get('type')) for b in ob})} "
                    "sent as a string",
                    target,
                )
            )
    # Provider compaction: the latest one stays, nothing before it is sent again.
    pos = {m.id: i for i, m in enumerate(original) if m.id}
    latest = max((i for i, m in enumerate(original) if _has_compaction(m)), default=None)
    if latest is not None:
        sent = [pos[m.id] for m in messages if m.id in pos]
        if any(j > latest for j in sent) and latest not in sent:
            out.append(
                Violation(
                    "compaction_dropped",
                    None,
                    f"provider compaction message {original[latest].id!r} is missing while "
                    "later messages are sent",
                    target,
                )
            )
        task = next((i for i, m in enumerate(original) if isinstance(m, HumanMessage)), None)
        resent = [
            j
            for j in sent
            if j < latest and j != task and not isinstance(original[j], SystemMessage)
        ]
        verbatim_log = [m.id for m in messages] == [m.id for m in original[: len(messages)]]
        if resent and latest in sent and not verbatim_log:
            out.append(
                Violation(
                    "compaction_prefix_resent",
                    None,
                    f"log messages {resent[:5]} before the provider compaction at {latest} are sent",
                    target,
                )
            )
    return out


# ---------------------------------------------------------------------------- all at once


def check_all(
    messages: Sequence[BaseMessage],
    *,
    original: Sequence[BaseMessage] | None = None,
    targets: Iterable[str] = ("anthropic", "openai_chat", "responses", "responses_v1"),
    complete: bool = True,
) -> list[Violation]:
    """Every check for the given targets (``anthropic``, ``anthropic_thinking``, ``openai_chat``,
    ``responses``, ``responses_v1``), plus the message-level rules."""
    out = check_pairs(messages, complete=complete)
    if original is not None:
        out += check_verbatim(messages, original)
    for t in targets:
        if t == "anthropic":
            out += check_anthropic(messages, original=original)
        elif t == "anthropic_thinking":
            out += check_anthropic(messages, thinking=True, original=original)
        elif t == "openai_chat":
            out += check_openai_chat(messages)
        elif t == "responses":
            out += check_responses(messages, original=original)
        elif t == "responses_v1":
            out += check_responses(messages, output_version="v1", original=original)
        else:
            msg = f"unknown target {t!r}"
            raise ValueError(msg)
    return out
