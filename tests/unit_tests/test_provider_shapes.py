"""The memory on provider shapes: thinking turns, invalid tool calls, block-preserving truncation,
provider compaction items, encrypted blobs, rate limits."""

from __future__ import annotations

import anthropic
import httpx
import openai
import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory
from langctx.blocks import has_thinking, starts_with_thinking
from langctx.overflow import is_context_overflow, is_rate_limit
from langctx.tokens import ApproximateCounter
from langctx.turns import group_units, pair_errors


def _think(sig: str) -> dict:
    return {"type": "thinking", "thinking": "Let me plan this. " * 20, "signature": sig}


def _call(i: int, *, thinking: bool, name: str = "read_file") -> AIMessage:
    content: list = [{"type": "text", "text": f"step {i}"}]
    if thinking:
        content.insert(0, _think(f"sig-{i}"))
    return AIMessage(
        content,
        id=f"a{i}",
        tool_calls=[{"id": f"c{i}", "name": name, "args": {"path": f"f{i}.py"}}],
    )


def _run_loop(
    mem: LayeredChatMemory, n_turns: int, steps: int, *, interleaved: bool
) -> tuple[list[list[BaseMessage]], dict[str, BaseMessage]]:
    """A scripted Anthropic agent: each human turn opens a tool loop. Like the real model, it
    thinks when the request ends with a user message (and, interleaved, before every call).
    Returns every request sent and the log by id."""
    requests: list[list[BaseMessage]] = []
    log: dict[str, BaseMessage] = {}

    def add(batch: list[BaseMessage]) -> None:
        mem.add_messages(batch)
        log.update({str(m.id): m for m in batch})

    add([SystemMessage("sys", id="s"), HumanMessage("Fix p.py", id="h0")])
    i = 0
    for t in range(n_turns):
        if t:
            add([HumanMessage(f"Now part {t}", id=f"h{t}")])
        for _ in range(steps):
            request = mem.build_context()
            requests.append(request)
            i += 1
            opens_turn = not isinstance(request[-1], ToolMessage)
            add([_call(i, thinking=interleaved or opens_turn)])
            add([ToolMessage("x = 1\n" * 150, tool_call_id=f"c{i}", id=f"t{i}")])
    requests.append(mem.build_context())
    return requests, log


def _assistant_turns_valid(ctx: list[BaseMessage], log: dict[str, BaseMessage]) -> list[str]:
    """Anthropic's rule, restated independently: the live turn (after the last user message), when
    its first AI message had thinking, starts with a thinking block; thinking that is sent is
    the logged block, unchanged."""
    errors = []
    turn_thinks: dict[str, bool] = {}
    thinks = False
    for m in log.values():  # which AI messages belong to a thinking turn (by the log)
        if isinstance(m, HumanMessage):
            thinks = False
        elif isinstance(m, AIMessage):
            thinks = thinks or has_thinking(m)
            turn_thinks[str(m.id)] = thinks
    live = max((j for j, m in enumerate(ctx) if isinstance(m, HumanMessage)), default=-1) + 1
    for j, m in enumerate(ctx):
        if not isinstance(m, AIMessage) or m.id not in log:
            continue
        if j == live and turn_thinks.get(str(m.id)):  # the live turn's first assistant message
            if not starts_with_thinking(m):
                errors.append(f"{m.id} starts a kept thinking turn without thinking")
        if has_thinking(m) and m.content != log[str(m.id)].content:
            errors.append(f"{m.id}: thinking message changed")
    return errors


@pytest.mark.parametrize("interleaved", [False, True])
def test_thinking_tool_loop_stays_valid_through_compactions(interleaved: bool) -> None:
    mem = LayeredChatMemory(max_tokens=3000)
    requests, log = _run_loop(mem, 6, 10, interleaved=interleaved)
    for request in requests:
        assert _assistant_turns_valid(request, log) == []
        assert pair_errors(request) == (0, 0)
        assert mem.counter.count_messages(request) <= 3000
    assert len(mem.compactions) >= 5


def test_non_interleaved_turn_is_one_unit_interleaved_is_not() -> None:
    msgs = [HumanMessage("go", id="h")]
    for i in range(3):
        msgs += [_call(i, thinking=i == 0), ToolMessage("ok", tool_call_id=f"c{i}", id=f"t{i}")]
    assert [(u.start, u.end) for u in group_units(msgs).units] == [(0, 1), (1, 7)]
    msgs = [HumanMessage("go", id="h")]
    for i in range(3):
        msgs += [_call(i, thinking=True), ToolMessage("ok", tool_call_id=f"c{i}", id=f"t{i}")]
    assert [u.start for u in group_units(msgs).units] == [0, 1, 3, 5]


def test_no_placeholder_before_a_live_thinking_block() -> None:
    mem = LayeredChatMemory(max_tokens=4000, placeholder_min_tokens=100)
    mem.add_messages([SystemMessage("sys"), HumanMessage("Fix p.py")])
    for i in range(12):
        mem.add_messages(
            [_call(i, thinking=True), ToolMessage("y = 2\n" * 200, tool_call_id=f"c{i}")]
        )
    last_thinking = max(
        j for j, m in enumerate(mem.messages) if isinstance(m, AIMessage) and has_thinking(m)
    )
    pos = {m.id: j for j, m in enumerate(mem.messages)}
    kept = {m.id for m in mem.build_context()}
    for edit in mem.edits:
        assert pos[edit["message_id"]] > last_thinking or edit["message_id"] not in kept


def test_truncation_keeps_blocks_of_the_pinned_task_and_of_tool_calls() -> None:
    image = {
        "type": "image",
        "source_type": "base64",
        "data": "iVBORw0KGgo=",
        "mime_type": "image/png",
    }
    task = HumanMessage([{"type": "text", "text": "Fix the layout. " + "detail " * 3000}, image])
    mem = LayeredChatMemory(max_tokens=2000)
    mem.add_messages([SystemMessage("sys"), task])
    head = mem.build_context()[1]
    assert isinstance(head.content, list) and image in head.content
    assert len(head.content) == 2 and "characters cut here" in head.content[0]["text"]

    big = "line\n" * 8000
    call = AIMessage(
        [{"type": "text", "text": "Writing the file."}],
        tool_calls=[
            {"id": "w1", "name": "write_file", "args": {"path": "big.txt", "content": big}}
        ],
    )
    mem.add_messages([call, ToolMessage("written", tool_call_id="w1")])
    ctx = mem.build_context()
    assert mem.context_tokens() <= 2000
    cut = next(m for m in ctx if isinstance(m, AIMessage))
    assert cut.content == [{"type": "text", "text": "Writing the file."}]
    assert len(cut.tool_calls[0]["args"]["content"]) < len(big)


def test_reasoning_message_is_never_cut() -> None:
    reasoning = {
        "type": "reasoning",
        "id": "rs_1",
        "encrypted_content": "gAAA" * 4000,
        "summary": [],
    }
    ai = AIMessage(
        [reasoning, {"type": "text", "text": "done " * 3000}], id="r1", response_metadata={}
    )
    mem = LayeredChatMemory(max_tokens=3000)
    mem.add_messages([SystemMessage("sys"), HumanMessage("task"), ai])
    assert next(m for m in mem.build_context() if m.id == "r1").content == ai.content


def test_invalid_tool_call_pairs_like_a_call() -> None:
    bad = AIMessage(
        "",
        id="a",
        invalid_tool_calls=[
            {"id": "x1", "name": "read_file", "args": "{oops", "error": "bad json"}
        ],
    )
    answer = ToolMessage("Error: invalid arguments", tool_call_id="x1", status="error", id="t")
    mem = LayeredChatMemory(max_tokens=2000)
    mem.add_messages([HumanMessage("task"), bad, answer, AIMessage("retrying", id="b")])
    ctx = mem.build_context()
    assert [m.id for m in ctx][-3:] == ["a", "t", "b"]
    assert not [r for r in mem.eviction_log if r["action"] == "drop_orphan"]
    # unanswered: repaired like any call, so the payload holds no unanswered call
    mem2 = LayeredChatMemory(max_tokens=2000)
    mem2.add_messages([HumanMessage("task"), bad, HumanMessage("go on")])
    repaired = [m for m in mem2.build_context() if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in repaired] == ["x1"]


def _compaction_history(blob_chars: int = 20_000) -> list[BaseMessage]:
    msgs: list[BaseMessage] = [SystemMessage("sys", id="s"), HumanMessage("Fix p.py", id="h")]
    for i in range(20):
        msgs += [
            _call(i, thinking=False),
            ToolMessage("z = 3\n" * 100, tool_call_id=f"c{i}", id=f"t{i}"),
        ]
    msgs.append(
        AIMessage(
            [{"type": "compaction", "id": "cmp_1", "encrypted_content": "e" * blob_chars}],
            id="pc",
            usage_metadata={"input_tokens": 30_000, "output_tokens": 400, "total_tokens": 30_400},
        )
    )
    return msgs


def test_provider_compaction_item_is_where_the_projection_starts() -> None:
    mem = LayeredChatMemory(max_tokens=50_000)
    mem.add_messages(_compaction_history())
    ctx = mem.build_context()
    assert [m.id for m in ctx] == ["s", "pc"]
    # the 20 KB blob is not ~5,000 tokens
    assert ApproximateCounter().count_message(ctx[1]) < 1_000
    for i in range(40, 80):
        mem.add_messages(
            [_call(i, thinking=False), ToolMessage("q = 4\n" * 300, tool_call_id=f"c{i}")]
        )
    # langctx compacts after the item, never what lies before it
    assert mem.compactions
    before = {m.id for m in _compaction_history()} - {"s", "pc"}
    for entry in mem.compactions:
        assert not before & set(entry["covered_ids"])
    ctx = mem.build_context()
    assert [m.id for m in ctx][:2] == ["s", "pc"]
    assert pair_errors(ctx) == (0, 0)
    again = LayeredChatMemory.from_state(mem.to_state(), max_tokens=50_000)
    assert [m.id for m in again.build_context()] == [m.id for m in ctx]


def test_provider_compaction_tokens_follow_usage() -> None:
    mem = LayeredChatMemory(max_tokens=100_000)
    mem.add_messages(_compaction_history())
    mem.add_messages([HumanMessage("and the tests?", id="q")])
    estimated = mem.context_tokens()
    reply = AIMessage(
        "Looking.",
        id="r",
        usage_metadata={"input_tokens": 4_000, "output_tokens": 10, "total_tokens": 4_010},
    )
    mem.add_messages([reply])
    assert abs(mem.calibrated_tokens() - 4_010) <= 20, (estimated, mem.calibrated_tokens())


def _http(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1/x"))


def test_rate_limits_are_never_overflows() -> None:
    tpm = openai.RateLimitError(
        "Request too large for gpt-4o in organization org-x on tokens per min (TPM): "
        "Limit 30000, Requested 41000.",
        response=_http(429),
        body={"code": "rate_limit_exceeded"},
    )
    assert is_rate_limit(tpm) and not is_context_overflow(tpm)
    overloaded = anthropic.APIStatusError("Overloaded", response=_http(529), body=None)
    assert not is_context_overflow(overloaded)
    too_long = anthropic.BadRequestError(
        "prompt is too long: 210000 tokens > 200000 maximum", response=_http(400), body=None
    )
    assert is_context_overflow(too_long) and not is_rate_limit(too_long)
    ctx = openai.BadRequestError(
        "This model's maximum context length is 128000 tokens.",
        response=_http(400),
        body={"code": "context_length_exceeded"},
    )
    assert is_context_overflow(ctx)


def test_langchain_cores_typed_overflow_is_an_overflow_before_any_wording() -> None:
    from langchain_core.exceptions import ContextOverflowError as CoreOverflow

    from langctx.overflow import OverflowMatcher

    typed = CoreOverflow("request exceeds limit")  # no wording the patterns know
    assert is_context_overflow(typed) and OverflowMatcher(patterns=())(typed)
    wrapped = RuntimeError("the gateway failed")
    wrapped.__cause__ = typed
    assert is_context_overflow(wrapped)
    assert not is_context_overflow(RuntimeError("request exceeds limit"))


def test_unknown_block_types_travel_verbatim_with_their_message() -> None:
    odd = {"type": "server_tool_use_v9", "payload": {"k": [1, 2]}}
    mem = LayeredChatMemory(max_tokens=3000)
    mem.add_messages([SystemMessage("sys"), HumanMessage("task")])
    for i in range(30):
        ai = AIMessage(
            [odd, {"type": "text", "text": f"step {i} " * 40}],
            id=f"o{i}",
            tool_calls=[{"id": f"k{i}", "name": "read_file", "args": {"path": "a.py"}}],
        )
        mem.add_messages([ai, ToolMessage("w\n" * 300, tool_call_id=f"k{i}")])
        for m in mem.build_context():
            if isinstance(m, AIMessage) and str(m.id).startswith("o"):
                assert m.content[0] == odd
