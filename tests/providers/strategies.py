"""Hypothesis strategies: realistic agent histories, each valid for the providers it targets.

A history is a system prompt, the task (sometimes with images), then turns: each turn opens with a
human message (the task, or a follow-up) and runs an AI tool loop -- steps with one or several
parallel tool calls answered in any order, invalid tool calls answered by an error result -- that
ends with a text answer (the last turn may stop mid-loop). Three flavors:

* ``anthropic``: content lists as langchain-anthropic returns them (``tool_use`` blocks beside
  ``tool_calls``), thinking with signatures or ``redacted_thinking`` -- none, on the first AI
  message of each turn only (non-interleaved), or before every step (interleaved) -- server-side
  ``compaction`` blocks, and unknown block types;
* ``openai``: Responses API output in one of langchain-openai 1.7's three forms (``responses/v1``
  content blocks, ``v0`` with ``additional_kwargs["reasoning"]``, ``v1`` standard blocks) with
  reasoning items carrying ``encrypted_content``, ``function_call`` items, compaction items;
* ``plain``: strings and text blocks, valid for every provider.

Tool outputs are small, medium or large (larger than a small budget, so compaction happens).

Example:
    >>> h = History(messages=[], flavor="plain", thinking=False)
    >>> h.targets
    ('anthropic', 'openai_chat', 'responses', 'responses_v1')
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

__all__ = ["History", "histories", "request_points"]

_WORDS = (
    "the parser flattens nested lists when the bracket depth changes so we keep a stack of open "
    "lists and push each new one before reading its items then pop at the closing bracket test "
    "fails with AssertionError in tests/test_parser.py line 42 while src/parser.py handles tokens"
).split()
_RNG = random.Random(7)
_POOL = " ".join(_RNG.choice(_WORDS) for _ in range(12_000))
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
SIZES = {"small": (20, 300), "medium": (800, 3_000), "large": (6_000, 16_000)}


def text(size: int, seed: int) -> str:
    """About ``size`` characters of English-like text (cheap: a slice of a fixed pool)."""
    start = seed % (len(_POOL) - size - 1)
    return _POOL[start : start + size].strip() or "ok"


@dataclass
class History:
    """A generated history and what it may be sent to."""

    messages: list[BaseMessage]
    flavor: str
    thinking: bool
    """Anthropic: every turn's first AI message has thinking, so thinking may be enabled."""
    interleaved: bool = False
    responses_only: bool = False
    """OpenAI histories with compaction items are for the Responses API only."""
    notes: list[str] = field(default_factory=list)

    @property
    def targets(self) -> tuple[str, ...]:
        """Validator targets this history is valid for."""
        if self.flavor == "anthropic":
            return ("anthropic_thinking",) if self.thinking else ("anthropic",)
        if self.flavor == "openai":
            if self.responses_only:
                return ("responses", "responses_v1")
            return ("openai_chat", "responses", "responses_v1")
        return ("anthropic", "openai_chat", "responses", "responses_v1")


def request_points(messages: list[BaseMessage]) -> list[int]:
    """Indices after which a model call is made: a human message, or the last result of a step."""
    points: list[int] = []
    open_ids: set[str] = set()
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            open_ids = {str(c["id"]) for c in m.tool_calls if c.get("id")}
            open_ids |= {str(c["id"]) for c in m.invalid_tool_calls if c.get("id")}
        elif isinstance(m, ToolMessage):
            open_ids.discard(m.tool_call_id)
            if not open_ids:
                points.append(i)
        elif isinstance(m, HumanMessage):
            points.append(i)
    return points


class _Ids:
    def __init__(self) -> None:
        self.n = 0

    def __call__(self, prefix: str) -> str:
        self.n += 1
        return f"{prefix}{self.n:04d}"


def _human(draw: Any, ids: _Ids, body: str, images: bool) -> HumanMessage:
    if not images or not draw(st.booleans()):
        return HumanMessage(body, id=ids("h"))
    blocks: list[Any] = [{"type": "text", "text": body}]
    if draw(st.booleans()):
        blocks.append({"type": "image", "base64": PNG, "mime_type": "image/png"})
    else:
        blocks.append({"type": "image", "url": "https://example.com/screenshot.png"})
    return HumanMessage(blocks, id=ids("h"))


def _step_ai(
    draw: Any,
    ids: _Ids,
    flavor: str,
    form: str,
    *,
    think: bool,
    calls: list[dict[str, Any]],
    invalid: list[dict[str, Any]],
    final: bool,
    compaction: bool,
    unknown: bool,
) -> AIMessage:
    say = text(draw(st.integers(0, 400)), draw(st.integers(0, 10**6)))
    if final and not say.strip():
        say = "Done: the parser keeps nested lists."
    if flavor == "plain":
        return AIMessage(
            say if draw(st.booleans()) else ([{"type": "text", "text": say}] if say else ""),
            tool_calls=calls,
            invalid_tool_calls=invalid,
            id=ids("a"),
        )
    if flavor == "anthropic":
        blocks: list[Any] = []
        if compaction:
            blocks.append({"type": "compaction", "content": "Summary: " + text(300, ids.n)})
        if think:
            if draw(st.integers(0, 4)) == 0:
                blocks.append({"type": "redacted_thinking", "data": f"REDACTED{ids.n}=="})
            else:
                blocks.append(
                    {
                        "type": "thinking",
                        "thinking": text(draw(st.integers(20, 600)), ids.n),
                        "signature": f"EqQBCkYIBRgC{ids.n:06d}sig==",
                    }
                )
        if say:
            blocks.append({"type": "text", "text": say})
        if unknown:
            blocks.append({"type": "x_future_block", "payload": {"k": ids.n}})
        for c in calls:
            blocks.append(
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]}
            )
        if not blocks:
            blocks.append({"type": "text", "text": "Continuing."})
        return AIMessage(
            blocks,
            tool_calls=calls,
            invalid_tool_calls=invalid,
            id=ids("msg_anth"),
            response_metadata={"model_provider": "anthropic"},
        )
    # OpenAI Responses, in one of three forms.
    rs_id, msg_id = ids("rs_"), ids("msg_")
    summary = [{"type": "summary_text", "text": text(draw(st.integers(20, 300)), ids.n)}]
    enc = f"gAAAAB{ids.n:06d}enc=="
    meta: dict[str, Any] = {"model_provider": "openai"}
    kwargs: dict[str, Any] = {}
    out: list[Any] = []
    if compaction:
        out.append({"type": "compaction", "id": ids("cmp_"), "encrypted_content": f"CMP{ids.n}=="})
    if form == "v0":
        if think:
            kwargs["reasoning"] = {
                "id": rs_id,
                "type": "reasoning",
                "summary": summary,
                "encrypted_content": enc,
            }
        out.append({"type": "text", "text": say or "Continuing.", "annotations": []})
        return AIMessage(
            out,
            tool_calls=calls,
            invalid_tool_calls=invalid,
            id=msg_id,
            additional_kwargs=kwargs,
            response_metadata=meta,
        )
    if form == "v1":
        meta["output_version"] = "v1"
        if think:
            out.append(
                {
                    "type": "reasoning",
                    "id": rs_id,
                    "reasoning": summary[0]["text"],
                    "extras": {"encrypted_content": enc},
                }
            )
        out.append({"type": "text", "text": say or "Continuing.", "id": msg_id})
        for c in calls:
            out.append({"type": "tool_call", "id": c["id"], "name": c["name"], "args": c["args"]})
        return AIMessage(
            out,
            tool_calls=calls,
            invalid_tool_calls=invalid,
            id=ids("resp_"),
            response_metadata=meta,
        )
    if think:
        out.append({"type": "reasoning", "id": rs_id, "summary": summary, "encrypted_content": enc})
    out.append({"type": "text", "text": say or "Continuing.", "annotations": [], "id": msg_id})
    for c in calls:
        out.append(
            {
                "type": "function_call",
                "id": "fc_" + c["id"],
                "call_id": c["id"],
                "name": c["name"],
                "arguments": json.dumps(c["args"]),
            }
        )
    for c in invalid:
        out.append(
            {
                "type": "function_call",
                "id": "fc_" + c["id"],
                "call_id": c["id"],
                "name": c["name"],
                "arguments": c["args"],
            }
        )
    return AIMessage(
        out, tool_calls=calls, invalid_tool_calls=invalid, id=ids("resp_"), response_metadata=meta
    )


_TOOLS = ("read_file", "run_command", "write_file", "edit_file", "grep")


@st.composite
def histories(draw: Any, flavor: str | None = None, max_turns: int = 5) -> History:
    """One valid history; ``flavor`` ``anthropic``/``openai``/``plain`` or drawn."""
    ids = _Ids()
    flavor = flavor or draw(st.sampled_from(["anthropic", "openai", "plain"]))
    thinking_mode = "none"
    form = "responses/v1"
    if flavor == "anthropic":
        thinking_mode = draw(st.sampled_from(["none", "first", "interleaved"]))
    elif flavor == "openai":
        form = draw(st.sampled_from(["responses/v1", "v0", "v1"]))
        thinking_mode = draw(st.sampled_from(["none", "first", "interleaved"]))
    h = History(messages=[], flavor=flavor, thinking=thinking_mode != "none")
    h.interleaved = thinking_mode == "interleaved"
    h.notes.append(f"{flavor} thinking={thinking_mode} form={form}")
    call_prefix = "toolu_" if flavor == "anthropic" else "call_"
    msgs = h.messages
    msgs.append(SystemMessage("You are a careful coding agent. " + text(200, 1), id=ids("s")))
    msgs.append(_human(draw, ids, "Fix the parser bug: nested lists are flattened.", True))
    n_turns = draw(st.integers(1, max_turns))
    for turn in range(n_turns):
        if turn:
            msgs.append(
                _human(draw, ids, "Follow-up: " + text(draw(st.integers(10, 300)), turn), True)
            )
        steps = draw(st.integers(1, 6))
        last_turn = turn == n_turns - 1
        stop_mid_loop = last_turn and draw(st.booleans())
        for step in range(steps):
            final = step == steps - 1 and not stop_mid_loop
            think = thinking_mode == "interleaved" or (thinking_mode == "first" and step == 0)
            calls: list[dict[str, Any]] = []
            invalid: list[dict[str, Any]] = []
            if not final:
                for _ in range(draw(st.sampled_from([1, 1, 1, 2, 3]))):
                    name = draw(st.sampled_from(_TOOLS))
                    args: dict[str, Any] = {"path": f"src/mod{ids.n % 7}.py"}
                    if name == "write_file" and draw(st.integers(0, 4)) == 0:
                        args["content"] = text(draw(st.integers(2_000, 12_000)), ids.n)
                    calls.append(
                        {"id": ids(call_prefix), "name": name, "args": args, "type": "tool_call"}
                    )
                if draw(st.integers(0, 7)) == 0:
                    invalid.append(
                        {
                            "id": ids(call_prefix),
                            "name": "edit_file",
                            "args": '{"path": "src/x.py", "old": ',
                            "error": "Unterminated string",
                            "type": "invalid_tool_call",
                        }
                    )
            compaction = (
                flavor in ("anthropic", "openai")
                and thinking_mode == "none"
                and form != "v0"
                and draw(st.integers(0, 9)) == 0
            )
            if compaction and flavor == "openai":
                h.responses_only = True
            unknown = flavor == "anthropic" and draw(st.integers(0, 9)) == 0
            msgs.append(
                _step_ai(
                    draw,
                    ids,
                    flavor,
                    form,
                    think=think,
                    calls=calls,
                    invalid=invalid,
                    final=final,
                    compaction=compaction,
                    unknown=unknown,
                )
            )
            answers = calls + invalid
            order = (
                draw(st.permutations(range(len(answers))))
                if len(answers) > 1
                else range(len(answers))
            )
            for k in order:
                c = answers[k]
                lo, hi = SIZES[draw(st.sampled_from(["small", "small", "medium", "large"]))]
                if c in invalid:
                    msgs.append(
                        ToolMessage(
                            "Error: invalid JSON arguments for edit_file.",
                            tool_call_id=c["id"],
                            status="error",
                            id=ids("t"),
                        )
                    )
                else:
                    body = text(draw(st.integers(lo, hi)), draw(st.integers(0, 10**6)))
                    msgs.append(
                        ToolMessage(body, tool_call_id=c["id"], name=c["name"], id=ids("t"))
                    )
    return h
