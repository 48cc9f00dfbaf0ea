"""Every langctx projection is a request Anthropic and OpenAI accept (issue 9, item 1).

The projections go through langchain-anthropic's and langchain-openai's own payload builders
(offline, fake keys) and the checks of :mod:`tests.providers.validator`. Sections:

1. the validator itself: each rule is planted and must be named (so the checks can fail);
2. generated histories are valid as they are (the validator passes on the raw log);
3. property test: each generated history is added message by message to a ``LayeredChatMemory``
   with a small budget, and every request (after a human message or a step's last tool result)
   is validated for the providers the history targets. ``LANGCTX_PROPERTY_EXAMPLES`` sets the
   number of histories (default 100, under a minute); a run by hand can take 10,000;
4. the 60-step non-interleaved-thinking tool loop, through 15+ compactions;
5. the recorded sessions at 8k, for OpenAI chat completions and Anthropic (thinking off).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from langctx import LayeredChatMemory
from langctx.blocks import starts_with_thinking
from langctx.budgets import smallest_budget
from langctx.config import MemoryConfig
from tests._trajectories import DATA_DIR, iter_sessions, require_data_dir
from tests.providers.strategies import History, histories, request_points, text
from tests.providers.validator import (
    RULES,
    AnthropicSession,
    Violation,
    check_all,
    check_anthropic,
    check_openai_chat,
    check_pairs,
    check_responses,
    check_verbatim,
)

EXAMPLES = int(os.environ.get("LANGCTX_PROPERTY_EXAMPLES", "100"))
BUDGETS = (smallest_budget(MemoryConfig()), 1000, 1800, 4000)
"""From the smallest budget the default config accepts (600 was refused once the summary block's
preamble and tags counted against the budget)."""

# ---------------------------------------------------------------------------- message builders


def call(cid: str, name: str = "read_file", **args: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "args": args or {"path": "src/a.py"}, "type": "tool_call"}


def think(sig: str, body: str = "I should read the parser first.") -> dict[str, Any]:
    return {"type": "thinking", "thinking": body, "signature": sig}


def anth_ai(mid: str, *blocks: dict[str, Any], calls: tuple[str, ...] = ()) -> AIMessage:
    tcs = [call(c) for c in calls]
    content: list[Any] = list(blocks) + [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in tcs
    ]
    return AIMessage(
        content, tool_calls=tcs, id=mid, response_metadata={"model_provider": "anthropic"}
    )


def tool(cid: str, body: str = "ok", mid: str | None = None) -> ToolMessage:
    return ToolMessage(body, tool_call_id=cid, id=mid or f"t-{cid}")


def rs_ai(mid: str, rs: str, enc: str = "ENC", calls: tuple[str, ...] = ()) -> AIMessage:
    """A Responses API AIMessage (``responses/v1`` content): reasoning, text, function calls."""
    tcs = [call(c) for c in calls]
    content: list[Any] = [
        {
            "type": "reasoning",
            "id": rs,
            "summary": [{"type": "summary_text", "text": "plan"}],
            "encrypted_content": enc,
        },
        {"type": "text", "text": "Reading.", "annotations": [], "id": "msg_" + mid},
    ] + [
        {
            "type": "function_call",
            "id": "fc_" + c["id"],
            "call_id": c["id"],
            "name": c["name"],
            "arguments": "{}",
        }
        for c in tcs
    ]
    return AIMessage(
        content, tool_calls=tcs, id=mid, response_metadata={"model_provider": "openai"}
    )


H = HumanMessage("Fix the parser bug.", id="h0")
SYS = SystemMessage("You are a coding agent.", id="s0")


def _thinking_loop() -> list[BaseMessage]:
    """Non-interleaved thinking: only the turn's first AI message thinks."""
    return [
        SYS,
        H,
        anth_ai("a1", think("SIG-1"), {"type": "text", "text": "Reading."}, calls=("toolu_1",)),
        tool("toolu_1", "x" * 50),
        anth_ai("a2", {"type": "text", "text": "Now the tests."}, calls=("toolu_2",)),
        tool("toolu_2", "y" * 50),
    ]


def _names(vs: list[Violation]) -> set[str]:
    return {v.rule for v in vs}


# ---------------------------------------------------------------------------- 1. planted violations


def _session_prefix_changed() -> list[Violation]:
    s = AnthropicSession(thinking=True)
    loop = _thinking_loop()
    assert s.request(loop[:2]) == []
    s.produced(loop[2])  # type: ignore[arg-type]
    assert s.request(loop[:4]) == []
    edited = [SYS, HumanMessage("Fix the parser bug (edited).", id="h0"), *loop[2:4]]
    return s.request(edited)


def _cut_thinking_turn() -> list[Violation]:
    log = _thinking_loop()
    summary = HumanMessage("<summary>read src/a.py</summary>", id="sum")
    return check_anthropic([SYS, H, summary, log[4], log[5]], thinking=True, original=log)


def _signature_changed() -> list[Violation]:
    log = _thinking_loop()
    forged = anth_ai(
        "a1", think("SIG-FORGED"), {"type": "text", "text": "Reading."}, calls=("toolu_1",)
    )
    proj = [SYS, H, forged, *log[3:]]
    return check_anthropic(proj, thinking=True, original=log) + check_verbatim(proj, log)


def _thinking_modified() -> list[Violation]:
    log = _thinking_loop()
    edited = anth_ai(
        "a1", think("SIG-1", "shortened"), {"type": "text", "text": "Reading."}, calls=("toolu_1",)
    )
    return check_verbatim([SYS, H, edited, *log[3:]], log)


def _item_without_reasoning() -> list[Violation]:
    log = [H, rs_ai("r1", "rs_1", calls=("call_1",)), tool("call_1")]
    stripped = AIMessage(
        [b for b in log[1].content if isinstance(b, dict) and b["type"] != "reasoning"],
        tool_calls=log[1].tool_calls,  # type: ignore[attr-defined]
        id="r1",
        response_metadata={"model_provider": "openai"},
    )
    return check_responses([H, stripped, log[2]], original=log)


def _reasoning_changed_payload() -> list[Violation]:
    log = [H, rs_ai("r1", "rs_1", "ENC-A", calls=("call_1",)), tool("call_1")]
    return check_responses(
        [H, rs_ai("r1", "rs_1", "ENC-B", calls=("call_1",)), log[2]], original=log
    )


def _reasoning_changed_kwargs() -> list[Violation]:
    def v0(enc: str) -> AIMessage:
        return AIMessage(
            "Reading.",
            id="m1",
            additional_kwargs={
                "reasoning": {
                    "id": "rs_1",
                    "type": "reasoning",
                    "summary": [],
                    "encrypted_content": enc,
                }
            },
        )

    return check_verbatim([H, v0("B")], [H, v0("A")])


def _compaction_responses() -> list[Violation]:
    def ai(enc: str) -> AIMessage:
        return AIMessage([{"type": "compaction", "id": "cmp_1", "encrypted_content": enc}], id="c1")

    return check_responses([H, ai("B"), HumanMessage("go on", id="h1")], original=[H, ai("A")])


def _compaction_log() -> list[BaseMessage]:
    return [
        SYS,
        H,
        AIMessage("Looked at it.", id="a1"),
        HumanMessage("Continue.", id="h1"),
        AIMessage(
            [
                {"type": "compaction", "content": "Summary of the work so far."},
                {"type": "text", "text": "Resuming."},
            ],
            id="a2",
        ),
        HumanMessage("Now the tests.", id="h2"),
    ]


def _compaction_changed() -> list[Violation]:
    log = _compaction_log()
    edited = AIMessage(
        [
            {"type": "compaction", "content": "Summary (trimmed)."},
            {"type": "text", "text": "Resuming."},
        ],
        id="a2",
    )
    return check_verbatim([SYS, H, edited, log[5]], log)


def _compaction_prefix_resent() -> list[Violation]:
    log = [*_compaction_log(), HumanMessage("later", id="h9")]
    return check_verbatim([*log[:5], log[6]], log)  # a1, h1 before the compaction at a2


def _unknown_block_changed() -> list[Violation]:
    orig = AIMessage(
        [{"type": "text", "text": "hi"}, {"type": "x_future_block", "payload": 1}], id="u1"
    )
    return check_verbatim([H, AIMessage([{"type": "text", "text": "hi"}], id="u1")], [H, orig])


def _unanswered_invalid() -> list[BaseMessage]:
    """An invalid tool call (id and name) that no tool message answers."""
    bad = {
        "id": "call_bad",
        "name": "edit",
        "args": "{",
        "error": "json",
        "type": "invalid_tool_call",
    }
    return [H, AIMessage("", invalid_tool_calls=[bad]), HumanMessage("next")]


def _image_dropped_and_flattened() -> list[Violation]:
    orig = HumanMessage(
        [{"type": "text", "text": "see"}, {"type": "image", "url": "https://e.com/x.png"}], id="h0"
    )
    return check_verbatim([HumanMessage("see [image]", id="h0")], [orig])


CASES: dict[str, Callable[[], list[Violation]]] = {
    "builder_error": lambda: check_anthropic([SYS, H, SystemMessage("again"), HumanMessage("x")]),
    "anthropic.no_messages": lambda: check_anthropic([SYS]),
    "anthropic.first_message_user": lambda: check_anthropic([AIMessage("hello"), H]),
    "anthropic.roles_alternate": lambda: check_anthropic(
        [H, AIMessage("a"), AIMessage("b"), HumanMessage("c")]
    ),
    "anthropic.empty_content": lambda: check_anthropic([HumanMessage(""), AIMessage("a"), H]),
    "anthropic.duplicate_tool_use_id": lambda: check_anthropic(
        [
            H,
            anth_ai("a1", calls=("toolu_1",)),
            tool("toolu_1"),
            anth_ai("a2", calls=("toolu_1",)),
            tool("toolu_1", mid="t2"),
        ]
    ),
    "anthropic.tool_use_without_result": lambda: check_anthropic(
        [H, anth_ai("a1", calls=("toolu_1",)), HumanMessage("next")]
    ),
    "anthropic.tool_result_without_tool_use": lambda: check_anthropic(
        [H, AIMessage("thinking aloud"), tool("toolu_9")]
    ),
    "anthropic.tool_result_first": lambda: check_anthropic(
        [H, anth_ai("a1", calls=("toolu_1",)), HumanMessage("note"), tool("toolu_1")]
    ),
    "anthropic.thinking_first_in_message": lambda: check_anthropic(
        [
            H,
            anth_ai("a1", {"type": "text", "text": "x"}, think("S"), calls=("toolu_1",)),
            tool("toolu_1"),
        ]
    ),
    "anthropic.thinking_first_block": _cut_thinking_turn,
    "anthropic.thinking_in_final_assistant": lambda: check_anthropic(
        [H, anth_ai("a1", think("S"), {"type": "text", "text": "x"})]
    ),
    "anthropic.thinking_prefix_changed": _session_prefix_changed,
    "anthropic.thinking_modified": _thinking_modified,
    "signature_changed": _signature_changed,
    "openai.tool_message_without_call": lambda: check_openai_chat(
        [H, AIMessage("x"), tool("call_1")]
    ),
    "openai.tool_call_without_answer": lambda: check_openai_chat(_unanswered_invalid()),
    "openai.duplicate_tool_answer": lambda: check_openai_chat(
        [H, AIMessage("", tool_calls=[call("call_1")]), tool("call_1"), tool("call_1", mid="t2")]
    ),
    "openai.assistant_without_content": lambda: check_openai_chat(
        [H, AIMessage(""), HumanMessage("next")]
    ),
    "openai.unsupported_content_block": lambda: check_openai_chat(_compaction_log()),
    "responses.function_call_output_without_call": lambda: check_responses([H, tool("call_1")]),
    "responses.function_call_without_output": lambda: check_responses(
        [H, AIMessage("", tool_calls=[call("call_1")]), HumanMessage("next")]
    ),
    "responses.duplicate_call_id": lambda: check_responses(
        [H, AIMessage("", tool_calls=[call("call_1")]), tool("call_1"), tool("call_1", mid="t2")]
    ),
    "responses.reasoning_without_following_item": lambda: check_responses(
        [
            H,
            AIMessage(
                [{"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "E"}],
                id="r1",
            ),
            HumanMessage("next"),
        ]
    ),
    "responses.item_without_reasoning": _item_without_reasoning,
    "responses.reasoning_changed": _reasoning_changed_payload,
    "responses.compaction_changed": _compaction_responses,
    "pairs.orphan_tool_result": lambda: check_pairs([H, tool("call_1")]),
    "pairs.unanswered_call": lambda: check_pairs(_unanswered_invalid()),
    "pairs.duplicate_result": lambda: check_pairs(
        [H, AIMessage("", tool_calls=[call("c1")]), tool("c1"), tool("c1", mid="t2")]
    ),
    "pairs.langctx_pair_errors": lambda: check_pairs([H, tool("call_1")]),
    "reasoning_changed": _reasoning_changed_kwargs,
    "compaction_changed": _compaction_changed,
    "compaction_dropped": lambda: check_verbatim([SYS, H, _compaction_log()[5]], _compaction_log()),
    "compaction_prefix_resent": _compaction_prefix_resent,
    "unknown_block_changed": _unknown_block_changed,
    "image_dropped": _image_dropped_and_flattened,
    "content_flattened": _image_dropped_and_flattened,
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_planted_violation_is_named(rule: str) -> None:
    found = CASES[rule]()
    assert rule in _names(found), [str(v) for v in found]
    assert all(v.rule in RULES for v in found)


def test_every_rule_has_a_planted_case() -> None:
    assert set(CASES) == set(RULES)


def test_valid_requests_pass() -> None:
    loop = _thinking_loop()
    assert check_all(loop, original=loop, targets=("anthropic_thinking", "anthropic")) == []
    log = [SYS, H, rs_ai("r1", "rs_1", calls=("call_1", "call_2")), tool("call_2"), tool("call_1")]
    assert check_all(log, original=log, targets=("openai_chat", "responses", "responses_v1")) == []
    s = AnthropicSession(thinking=True)
    assert s.request(loop[:2]) == []
    s.produced(loop[2])  # type: ignore[arg-type]
    assert s.request(loop[:4]) == []
    s.produced(loop[4])  # type: ignore[arg-type]
    assert s.request(loop) == []


def test_unanswered_invalid_tool_call_is_sent_by_both_builders() -> None:
    """langchain-openai and langchain-anthropic both send an invalid call: it needs its answer."""
    bad = {
        "id": "call_bad",
        "name": "edit",
        "args": "{",
        "error": "json",
        "type": "invalid_tool_call",
    }
    msgs = [H, AIMessage("", invalid_tool_calls=[bad], id="a1"), HumanMessage("next")]
    assert "anthropic.tool_use_without_result" in _names(check_anthropic(msgs))
    assert "openai.tool_call_without_answer" in _names(check_openai_chat(msgs))
    assert "responses.function_call_without_output" in _names(check_responses(msgs))


# ---------------------------------------------------------------------------- 2. raw histories


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


@_settings(max(10, EXAMPLES // 5))
@given(histories())
def test_generated_histories_are_valid_as_logged(h: History) -> None:
    for i in request_points(h.messages):
        log = h.messages[: i + 1]
        found = check_all(log, original=log, targets=h.targets)
        assert not found, "\n".join(map(str, found))


# ---------------------------------------------------------------------------- 3. property test


def replay(h: History, budget: int) -> tuple[list[tuple[int, Violation]], int]:
    """Add ``h`` message by message; validate every request. Returns (violations, compactions)."""
    mem = LayeredChatMemory(max_tokens=budget)
    anthropic = [t for t in h.targets if t.startswith("anthropic")]
    session = AnthropicSession(thinking=anthropic[0] == "anthropic_thinking") if anthropic else None
    # responses_v1 builds the same input as responses (the model's output_version does not enter
    # the input builder); the message forms are generated instead (strategies: v0, v1, responses/v1).
    others = tuple(t for t in h.targets if not t.startswith("anthropic") and t != "responses_v1")
    points = set(request_points(h.messages))
    found: list[tuple[int, Violation]] = []
    log: list[BaseMessage] = []
    for i, m in enumerate(h.messages):
        if h.thinking and isinstance(m, AIMessage):
            m = _as_model_answers(m, mem.build_context())
        if session is not None and isinstance(m, AIMessage):
            session.produced(m)
        mem.add_message(m)
        log.append(m)
        if i not in points:
            continue
        ctx = mem.build_context()
        vs = check_all(ctx, original=log, targets=others)
        if session is not None:
            vs += session.request(ctx, original=log)
        found += [(i, v) for v in vs]
    return found, len(mem.compactions)


def _as_model_answers(m: AIMessage, request: list[BaseMessage]) -> AIMessage:
    """The AI message as a thinking model would write it for ``request``.

    A generated history is a script: after langctx folds a tool loop whole, the request ends
    with the summary (a user message), and Claude opens a new assistant turn with a thinking
    block, where the script's message (a later step of the old turn) has none. The replay gives
    that message the thinking block the model would have written, so the check asks what a
    live run would send.
    """
    if not request or isinstance(request[-1], ToolMessage) or starts_with_thinking(m):
        return m
    block = {"type": "thinking", "thinking": "New turn: plan.", "signature": f"live-{m.id}"}
    content = m.content if isinstance(m.content, list) else [{"type": "text", "text": m.content}]
    return m.model_copy(update={"content": [block, *content]})


def _report(h: History, budget: int, found: list[tuple[int, Violation]]) -> str:
    head = f"{h.notes} budget={budget}, {len(h.messages)} messages, {len(found)} violations"
    return "\n".join([head, *(f"after message {i}: {v}" for i, v in found[:12])])


@_settings(EXAMPLES)
@given(histories(), st.sampled_from(BUDGETS))
def test_every_projection_is_provider_valid(h: History, budget: int) -> None:
    found, _ = replay(h, budget)
    assert not found, _report(h, budget, found)


def test_a_thinking_run_past_the_budget_keeps_its_prefix() -> None:
    """A run whose first AI message thinks grows past the smallest budget with the whole run
    kept: it is folded whole, where a summary block shrinking to make room would change the
    prefix Anthropic checks (found by the test above)."""
    words = "the parser flattens nested lists when the bracket depth changes".split()

    def said(n: int) -> str:
        return " ".join(words[i % len(words)] for i in range(n))

    def step(k: int, blocks: list[dict[str, Any]], calls: tuple[str, ...] = ()) -> AIMessage:
        return anth_ai(f"a{k}", *blocks, {"type": "text", "text": said(25)}, calls=calls)

    messages: list[BaseMessage] = [SystemMessage("You are a careful coding agent. " + said(40))]
    messages += [HumanMessage("Fix the parser bug: nested lists are flattened.", id="task")]
    for turn in range(3):
        messages += [
            step(10 * turn, [think(f"SIG-{turn}")], calls=(f"toolu_{turn}",)),
            tool(f"toolu_{turn}", said(20)),
            AIMessage("ok", id=f"end{turn}", response_metadata={"model_provider": "anthropic"}),
            HumanMessage("Follow-up: " + said(30), id=f"h{turn}"),
        ]
    messages.append(step(100, [think("SIG-live")], calls=("toolu_100",)))
    messages.append(tool("toolu_100", said(20)))
    for k in range(101, 115):
        messages += [step(k, [], calls=(f"toolu_{k}",)), tool(f"toolu_{k}", said(40))]
    h = History(messages, flavor="anthropic", thinking=True)
    found, _ = replay(h, smallest_budget(MemoryConfig()))
    assert not found, _report(h, smallest_budget(MemoryConfig()), found)


# ---------------------------------------------------------------------------- 4. the 60-step loop


def thinking_loop_script(steps: int = 60, *, per_turn: int = 5) -> list[BaseMessage]:
    """Human turns, each opening an AI tool loop; only the first AI message of a turn thinks."""
    msgs: list[BaseMessage] = [
        SYS,
        HumanMessage("Fix the parser: nested lists are flattened.", id="task"),
    ]
    for step in range(steps):
        k = step % per_turn
        if step and k == 0:
            msgs.append(AIMessage(f"Turn done at step {step}.", id=f"end{step}"))
            msgs.append(HumanMessage(f"Next: check module {step // per_turn}.", id=f"h{step}"))
        cid = f"toolu_{step:03d}"
        blocks: list[Any] = []
        if k == 0:
            blocks.append(think(f"EqQBsig{step:03d}==", text(400, step)))
        blocks.append({"type": "text", "text": f"Step {step}: reading src/mod{step}.py"})
        msgs.append(anth_ai(f"a{step}", *blocks, calls=(cid,)))
        msgs[-1].tool_calls[0]["args"] = {"path": f"src/mod{step}.py"}  # type: ignore[attr-defined]
        msgs.append(tool(cid, text(2_400, step * 7), mid=f"t{step}"))
    return msgs


def test_sixty_step_non_interleaved_thinking_loop() -> None:
    log = thinking_loop_script()
    h = History(messages=log, flavor="anthropic", thinking=True)
    found, compactions = replay(h, 3000)
    assert compactions >= 15, f"only {compactions} compactions: pick a smaller budget"
    assert not found, _report(h, 3000, found)


# ---------------------------------------------------------------------------- 5. recorded sessions


def _recorded() -> list[Any]:
    """The recorded sessions' names; the two long pi sessions (0.6 and 1.6 MB) are ``slow``."""
    data = DATA_DIR
    if not data.is_dir():
        return []
    names = sorted(
        f"{p.parent.name}/{p.name.removesuffix('.messages.jsonl')}"
        for p in data.glob("*/*.messages.jsonl")
    )
    return [
        pytest.param(n, marks=pytest.mark.slow) if n.startswith("pi-mono/") else n for n in names
    ]


@pytest.mark.trajectories
@pytest.mark.parametrize("budget", [8_000, 32_000])
@pytest.mark.parametrize("name", _recorded())
def test_recorded_session_projections(name: str, budget: int) -> None:
    """Every projection of every recorded session at 8k and 32k is valid for Anthropic, OpenAI
    chat completions and the Responses API (beyond what the recording itself breaks)."""
    data = require_data_dir()
    path = data / f"{name}.messages.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    session = next(s for s in iter_sessions(data) if s.messages_path == path)
    log = session.messages()
    mem = LayeredChatMemory(max_tokens=budget)
    points = set(request_points(log))
    bad: list[str] = []
    for i, m in enumerate(log):
        mem.add_message(m)
        if i in points:
            ctx = mem.build_context()
            targets = ("openai_chat", "anthropic", "responses")
            vs = check_all(ctx, original=log[: i + 1], targets=targets)
            if vs:  # a shape the recording itself has (pi: two AI messages in a row) is not ours
                raw = {v.rule for v in check_all(log[: i + 1], original=log, targets=targets)}
                vs = [v for v in vs if v.rule not in raw]
            bad += [f"after message {i}: {v}" for v in vs]
    assert len(points) > 1
    assert not bad, f"{len(bad)} violations in {session}:\n" + "\n".join(bad[:20])


def test_thinking_may_be_left_out_of_completed_turns_only_before_all_sent_thinking() -> None:
    """Anthropic's advice after summarizing older turns: remove the kept turns' thinking. Left out
    of a completed turn that no sent thinking precedes, it passes; between sent blocks, or in
    the live turn, it is a violation."""
    a1 = anth_ai("a1", think("S1"), {"type": "text", "text": "one"}, calls=("toolu_1",))
    a2 = anth_ai("a2", think("S2"), {"type": "text", "text": "two"}, calls=("toolu_2",))
    a3 = anth_ai("a3", think("S3"), {"type": "text", "text": "three"}, calls=("toolu_3",))
    f1, f2 = AIMessage("Done one.", id="f1"), AIMessage("Done two.", id="f2")
    h2 = HumanMessage("next", id="h2")
    h3 = HumanMessage("and next", id="h3")
    log = [SYS, H, a1, tool("toolu_1"), f1, h2, a2, tool("toolu_2"), f2, h3, a3, tool("toolu_3")]

    def bare(m: AIMessage) -> AIMessage:
        return m.model_copy(update={"content": [b for b in m.content if b["type"] != "thinking"]})

    ok = [SYS, H, bare(a1), *log[3:6], bare(a2), *log[7:]]
    assert check_verbatim(ok, log) == []
    assert check_anthropic(ok, thinking=True, original=log) == []
    between = [SYS, H, a1, *log[3:6], bare(a2), *log[7:]]
    assert "signature_changed" in {v.rule for v in check_verbatim(between, log)}
    live = [*log[:10], bare(a3), log[11]]
    assert {v.rule for v in check_all(live, original=log, targets=("anthropic_thinking",))}
