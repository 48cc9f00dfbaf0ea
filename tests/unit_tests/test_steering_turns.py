"""A user steering the agent mid tool loop keeps every request valid (issue 26, item 2).

A human message right after a tool result does not open a turn for Anthropic: langchain-anthropic
merges it into the tool_result user message, so the assistant turn goes on and its thinking must
stay. Live loops drive :class:`~langctx.LayeredChatMemory` and the stateless
:func:`~langctx.state_memory.view_state` path with a scripted model that answers each request the
way the provider would, and every request goes through the providers' own payload builders and
the checks of :mod:`tests.providers.validator`:

1. Anthropic, extended thinking non-interleaved (the AI message opening a provider turn starts
   with a signed thinking block, later ones in the turn have none) and interleaved (every AI
   message thinks), 120 steps at 6k and 16k, steering every 10 steps, final answers followed by
   new requests, parallel calls, redacted_thinking blocks, ~2KB tool outputs;
2. the OpenAI Responses API: reasoning items with function calls, in langchain-openai's three
   stored forms, large call arguments (placeholders and truncation must leave them whole);
3. Hypothesis properties over these loop shapes;
4. the pieces: the turn predicate, units, the live run, the fold that keeps the steering text.

Before the fix, the 120-step loops sent 27 to 85 invalid requests out of 120 (85 for the
LayeredChatMemory at 6k without interleaving), as the issue measured.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory
from langctx.blocks import has_opaque_blocks, starts_with_thinking, strip_thinking
from langctx.count_cache import CachedCounter, MessageCountCache, describe_edited
from langctx.engine import writing
from langctx.engine.placeholders import placeholder as _placeholder
from langctx.entries import new_edit_entry
from langctx.state_memory import MemorySettings
from langctx.tokens import ApproximateCounter
from langctx.turns import group_units, opens_turn
from tests._helpers import ids_of, stateless_step
from tests.providers.strategies import text
from tests.providers.validator import (
    AnthropicSession,
    Violation,
    anthropic_payload,
    check_anthropic,
    check_pairs,
    check_responses,
    check_verbatim,
)

SYS = SystemMessage("You are a careful coding agent. Use the tools; keep answers short.", id="sys")
TASK = HumanMessage("Fix the parser: nested lists are flattened. Do not edit tests.", id="task")
TOOLS = ("read_file", "grep", "run_command")

# ---------------------------------------------------------------------------- the loop


@dataclass(frozen=True)
class Shape:
    """One live loop: what the model does and what the user adds."""

    steps: int = 120
    interleaved: bool = False
    steer_every: int = 10
    """A steering message right after the tool results of every n-th step (0: never)."""
    final_every: int = 23
    """A final answer and a new user request every n-th step (0: never)."""
    parallel: int = 3
    """Most tool calls in one AI message."""
    redacted: str = "some"
    """Thinking kinds: "none" (signed only), "some" (a third redacted, some both), "all"."""
    output_chars: int = 2_000
    big_args: int = 0
    """Every n-th call writes a file of ~8KB (its arguments are large; 0: never)."""
    seed: int = 0


@dataclass
class Run:
    """What a loop sent and what was wrong with it."""

    requests: int = 0
    bad: list[tuple[int, Violation]] = field(default_factory=list)
    compactions: int = 0
    steered: int = 0
    """Steering messages added right after a tool result."""

    @property
    def invalid(self) -> int:
        """Requests with at least one violation."""
        return len({step for step, _ in self.bad})

    def report(self, what: str) -> str:
        head = f"{what}: {self.invalid}/{self.requests} requests invalid, {self.compactions} folds"
        return "\n".join([head, *(f"  step {s}: {v}" for s, v in self.bad[:10])])


def new_turn_for_anthropic(request: list[BaseMessage]) -> bool:
    """True when the model answering ``request`` opens a turn: the payload's last user message
    holds no tool result (langchain-anthropic's own merge decides)."""
    last = anthropic_payload(request, thinking=True)["messages"][-1]
    content = last["content"] if isinstance(last["content"], list) else []
    return last["role"] == "user" and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _thinking_blocks(shape: Shape, n: int) -> list[dict[str, Any]]:
    signed = {"type": "thinking", "thinking": text(300, n), "signature": f"EqQBsig{n:04d}=="}
    redacted = {"type": "redacted_thinking", "data": f"REDACTED{n:04d}=="}
    if shape.redacted == "all":
        return [redacted]
    if shape.redacted == "some" and n % 3 == 1:
        return [redacted]
    if shape.redacted == "some" and n % 5 == 2:
        return [redacted, signed]
    return [signed]


def _calls(shape: Shape, step: int, rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for k in range(rng.randint(1, shape.parallel)):
        name = TOOLS[(step + k) % len(TOOLS)]
        args: dict[str, Any] = {"path": f"src/mod{(step + k) % 9}.py"}
        if shape.big_args and (step + k) % shape.big_args == 0:
            name, args = "write_file", {**args, "content": text(8_000, step)}
        out.append({"id": f"toolu_{step:03d}_{k}", "name": name, "args": args, "type": "tool_call"})
    return out


def claude(shape: Shape, request: list[BaseMessage], step: int, final: bool) -> AIMessage:
    """The AI message a Claude model writes for ``request`` (blocks as langchain-anthropic
    returns them): thinking first when it opens a turn, or on every message when interleaved."""
    rng = random.Random(shape.seed * 1_000 + step)
    blocks: list[Any] = []
    if shape.interleaved or new_turn_for_anthropic(request):
        blocks += _thinking_blocks(shape, step)
    blocks.append({"type": "text", "text": f"Step {step}: " + text(rng.randint(20, 200), step)})
    calls = [] if final else _calls(shape, step, rng)
    blocks += [
        {"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls
    ]
    return AIMessage(
        blocks,
        tool_calls=calls,
        id=f"msg_{step:03d}",
        response_metadata={"model_provider": "anthropic"},
    )


def gpt(shape: Shape, request: list[BaseMessage], step: int, final: bool, form: str) -> AIMessage:
    """A Responses API AIMessage as langchain-openai stores it (``form``: responses/v1, v0, v1):
    a reasoning item (encrypted), text, function calls."""
    del request
    rng = random.Random(shape.seed * 1_000 + step)
    calls = [] if final else _calls(shape, step, rng)
    for c in calls:
        c["id"] = c["id"].replace("toolu_", "call_")
    say = f"Step {step}: " + text(rng.randint(20, 200), step)
    rs = {
        "id": f"rs_{step:03d}",
        "summary": [{"type": "summary_text", "text": text(200, step)}],
        "encrypted_content": f"gAAAAB{step:04d}enc==",
    }
    think = rng.random() < 0.8  # the model may answer without reasoning
    if form == "v0":
        kwargs = {"reasoning": {**rs, "type": "reasoning"}} if think else {}
        return AIMessage(
            [{"type": "text", "text": say, "annotations": []}],
            tool_calls=calls,
            id=f"msg_{step:03d}",
            additional_kwargs=kwargs,
            response_metadata={"model_provider": "openai"},
        )
    if form == "v1":
        out: list[Any] = []
        if think:
            out.append(
                {
                    "type": "reasoning",
                    "id": rs["id"],
                    "reasoning": rs["summary"][0]["text"],  # type: ignore[index]
                    "extras": {"encrypted_content": rs["encrypted_content"]},
                }
            )
        out.append({"type": "text", "text": say, "id": f"msg_{step:03d}"})
        out += [
            {"type": "tool_call", "id": c["id"], "name": c["name"], "args": c["args"]}
            for c in calls
        ]
        meta = {"model_provider": "openai", "output_version": "v1"}
        return AIMessage(out, tool_calls=calls, id=f"resp_{step:03d}", response_metadata=meta)
    out = [{"type": "reasoning", **rs}] if think else []
    out.append({"type": "text", "text": say, "annotations": [], "id": f"msg_{step:03d}"})
    out += [
        {
            "type": "function_call",
            "id": "fc_" + c["id"],
            "call_id": c["id"],
            "name": c["name"],
            "arguments": json.dumps(c["args"]),
        }
        for c in calls
    ]
    meta = {"model_provider": "openai", "output_version": "responses/v1"}
    return AIMessage(out, tool_calls=calls, id=f"resp_{step:03d}", response_metadata=meta)


class _Memory:
    """The memory under test: a LayeredChatMemory, or the stateless path over a graph state."""

    def __init__(self, budget: int, *, stateless: bool) -> None:
        self.stateless = stateless
        self.mem = LayeredChatMemory(max_tokens=budget)
        self.settings = MemorySettings.of(max_tokens=budget)
        self.state: dict[str, Any] = {"messages": [], "langctx": {}}

    def add(self, messages: list[BaseMessage]) -> None:
        if self.stateless:
            self.state["messages"] = [*self.state["messages"], *messages]
        else:
            self.mem.add_messages(messages)

    def request(self) -> list[BaseMessage]:
        if self.stateless:
            return stateless_step(self.state, self.settings).projection()
        return self.mem.build_context()

    def compactions(self) -> int:
        if self.stateless:
            return sum(
                e["trigger"] != "merge" for e in self.state["langctx"].get("compactions", [])
            )
        return sum(e["trigger"] != "merge" for e in self.mem.compactions)


Model = Callable[[Shape, list[BaseMessage], int, bool], AIMessage]
Check = Callable[[list[BaseMessage], list[BaseMessage]], list[Violation]]


def live_loop(shape: Shape, budget: int, model: Model, check: Check, *, stateless: bool) -> Run:
    """Run ``shape``: each step sends the projection (checked), adds the model's answer, its
    tool results (parallel ones in a shuffled order) and the user's messages."""
    memory = _Memory(budget, stateless=stateless)
    log: list[BaseMessage] = [SYS, TASK]
    memory.add(list(log))
    run = Run()
    rng = random.Random(shape.seed)

    def add(messages: list[BaseMessage]) -> None:
        log.extend(messages)
        memory.add(messages)

    for step in range(shape.steps):
        ctx = memory.request()
        run.requests += 1
        run.bad += [(step, v) for v in check(ctx, log)]
        final = bool(shape.final_every) and step % shape.final_every == shape.final_every - 1
        ai = model(shape, ctx, step, final)
        add([ai])
        results = [
            ToolMessage(
                f"{c['name']} {c['args']['path']}:\n" + text(shape.output_chars, step * 31 + k),
                tool_call_id=c["id"],
                name=c["name"],
                id=f"t{step:03d}_{k}",
            )
            for k, c in enumerate(ai.tool_calls)
        ]
        rng.shuffle(results)
        if results:
            add(list(results))
        if final:
            add([HumanMessage(f"Thanks. Next: check module {step}.", id=f"req{step:03d}")])
        elif results and shape.steer_every and step % shape.steer_every == shape.steer_every - 1:
            add(
                [
                    HumanMessage(
                        f"Also keep the old API working (step {step}).", id=f"steer{step:03d}"
                    )
                ]
            )
            run.steered += 1
    run.compactions = memory.compactions()
    return run


def anthropic_checker() -> Check:
    """Every rule for Anthropic with thinking on, across the loop's requests (prefix rule too)."""
    session = AnthropicSession(thinking=True)
    seen: set[str] = set()

    def check(ctx: list[BaseMessage], log: list[BaseMessage]) -> list[Violation]:
        for m in log:  # the answers since the last request were produced for it
            if isinstance(m, AIMessage) and m.id not in seen:
                seen.add(str(m.id))
                session.produced(m)
        return session.request(ctx, original=log) + check_pairs(ctx) + check_verbatim(ctx, log)

    return check


def responses_check(ctx: list[BaseMessage], log: list[BaseMessage]) -> list[Violation]:
    return check_responses(ctx, original=log) + check_pairs(ctx) + check_verbatim(ctx, log)


# ---------------------------------------------------------------------------- 1. Anthropic loops


@pytest.mark.parametrize("stateless", [False, True], ids=["memory", "view_state"])
@pytest.mark.parametrize("interleaved", [False, True], ids=["non-interleaved", "interleaved"])
@pytest.mark.parametrize("budget", [6_000, 16_000])
def test_anthropic_steering_loop_sends_only_valid_requests(
    budget: int, interleaved: bool, stateless: bool
) -> None:
    shape = Shape(interleaved=interleaved)
    run = live_loop(shape, budget, claude, anthropic_checker(), stateless=stateless)
    assert run.steered >= 10 and run.compactions >= 5, run.report("")
    assert run.invalid == 0, run.report(f"{budget} interleaved={interleaved}")


def test_the_fold_of_a_steered_live_turn_ends_the_request_with_the_steering_message() -> None:
    """A fold during a live thinking turn takes the turn whole, but the user's message after its
    last tool results stays verbatim: the request ends with a real user message, for which the
    model opens a new turn."""
    log = [*_steered_turn(), HumanMessage("And log every change.", id="steer2")]
    log[3] = ToolMessage(text(4_000, 3), tool_call_id="c1", id="t1")
    log[6] = ToolMessage(text(4_000, 6), tool_call_id="c2", id="t2")
    mem = LayeredChatMemory(max_tokens=16_000)
    mem.add_messages(log)
    assert mem.compact(keep_recent_tokens=0) is not None
    ctx = mem.build_context()
    assert ids_of(ctx) == ["sys", "task", None, "steer2"]  # None: the summary block
    assert new_turn_for_anthropic(ctx)
    assert check_anthropic(ctx, thinking=True, original=mem.messages) == []
    answer = claude(Shape(), ctx, 9, final=False)
    assert starts_with_thinking(answer)
    mem.add_message(answer)
    results = [
        ToolMessage("ok", tool_call_id=c["id"], id=f"r{k}") for k, c in enumerate(answer.tool_calls)
    ]
    mem.add_messages(results)
    ctx = mem.build_context()
    assert check_anthropic(ctx, thinking=True, original=mem.messages) == []


# ---------------------------------------------------------------------------- 2. Responses loops


@pytest.mark.parametrize("stateless", [False, True], ids=["memory", "view_state"])
@pytest.mark.parametrize("form", ["responses/v1", "v0", "v1"])
@pytest.mark.parametrize("budget", [6_000, 16_000])
def test_responses_loop_never_sends_a_function_call_without_its_reasoning(
    budget: int, form: str, stateless: bool
) -> None:
    shape = Shape(steps=80, big_args=5)

    def model(s: Shape, r: list[BaseMessage], step: int, final: bool) -> AIMessage:
        return gpt(s, r, step, final, form)

    run = live_loop(shape, budget, model, responses_check, stateless=stateless)
    assert run.compactions >= 2, run.report("")
    assert run.invalid == 0, run.report(f"{budget} {form}")


@pytest.mark.parametrize("form", ["responses/v1", "v0", "v1"])
def test_no_edit_separates_reasoning_from_its_function_calls(form: str) -> None:
    """Placeholders (elided call arguments), truncation and thinking removal leave a message
    with a reasoning item whole; the same message without reasoning is elided."""
    shape = Shape(big_args=1)
    steps = [n for n in range(40) if has_opaque_blocks(gpt(shape, [], n, False, form))]
    plain = [n for n in range(40) if not has_opaque_blocks(gpt(shape, [], n, False, form))]
    for step, elided in ((steps[0], False), (plain[0], True)):
        ai = gpt(shape, [], step, False, form)
        assert strip_thinking(ai) is ai
        mem = LayeredChatMemory(max_tokens=200_000)
        results = [
            ToolMessage("ok", tool_call_id=c["id"], id=f"t{k}") for k, c in enumerate(ai.tool_calls)
        ]
        mem.add_messages([SYS, TASK, ai, *results])
        i = mem._pos[str(ai.id)]
        assert (_placeholder(mem, i) is not None) is elided
        assert (writing._truncation(mem, i, 64) is not None) is elided
        assert responses_check(mem.build_context(), mem.messages) == []


# ---------------------------------------------------------------------------- 3. properties


def _settings(n: int) -> settings:
    return settings(
        max_examples=n,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


shapes = st.builds(
    Shape,
    steps=st.integers(8, 30),
    interleaved=st.booleans(),
    steer_every=st.sampled_from([0, 1, 2, 3, 5]),
    final_every=st.sampled_from([0, 3, 4, 7, 11]),
    parallel=st.integers(1, 3),
    redacted=st.sampled_from(["none", "some", "all"]),
    output_chars=st.sampled_from([300, 1_500, 4_000]),
    big_args=st.sampled_from([0, 3]),
    seed=st.integers(0, 10_000),
)


@_settings(50)
@given(shapes, st.sampled_from([2_500, 4_000, 6_000]), st.booleans())
def test_property_anthropic_loops_are_valid(shape: Shape, budget: int, stateless: bool) -> None:
    run = live_loop(shape, budget, claude, anthropic_checker(), stateless=stateless)
    assert run.invalid == 0, run.report(f"{shape} budget={budget} stateless={stateless}")


@_settings(30)
@given(shapes, st.sampled_from([2_500, 6_000]), st.sampled_from(["responses/v1", "v0", "v1"]))
def test_property_responses_loops_are_valid(shape: Shape, budget: int, form: str) -> None:
    def model(s: Shape, r: list[BaseMessage], step: int, final: bool) -> AIMessage:
        return gpt(s, r, step, final, form)

    run = live_loop(shape, budget, model, responses_check, stateless=False)
    assert run.invalid == 0, run.report(f"{shape} budget={budget} form={form}")


# ---------------------------------------------------------------------------- 4. the pieces


def _think(sig: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": "plan", "signature": sig}


def _ai(mid: str, *blocks: dict[str, Any], calls: tuple[str, ...] = ()) -> AIMessage:
    tcs = [
        {"id": c, "name": "read_file", "args": {"path": "a.py"}, "type": "tool_call"} for c in calls
    ]
    content: list[Any] = [
        *blocks,
        *({"type": "tool_use", "id": c, "name": "read_file", "input": {}} for c in calls),
    ]
    return AIMessage(content, tool_calls=tcs, id=mid)


def _steered_turn() -> list[BaseMessage]:
    return [
        SYS,
        TASK,
        _ai("a1", _think("S1"), {"type": "text", "text": "Reading."}, calls=("c1",)),
        ToolMessage("x", tool_call_id="c1", id="t1"),
        HumanMessage("Also keep the old API.", id="steer"),
        _ai("a2", {"type": "text", "text": "Noted."}, calls=("c2",)),
        ToolMessage("y", tool_call_id="c2", id="t2"),
    ]


def test_the_validator_knows_a_steered_turn_goes_on() -> None:
    """The issue's kept tail: a fold inside a steered turn, the request ending with tool results
    and the steering text. For Anthropic that is one turn, opened by an AI message without
    thinking ("Expected `thinking` or `redacted_thinking`, but found `text`")."""
    log = _steered_turn()
    summary = HumanMessage("[summary] read src/a.py", id="sum")
    tail = [SYS, TASK, summary, log[5], log[6], HumanMessage("Also keep it fast.", id="s2")]
    rules = {v.rule for v in check_anthropic(tail, thinking=True, original=[*log, tail[-1]])}
    assert "anthropic.thinking_first_block" in rules
    bare = strip_thinking(log[2])
    rules = {v.rule for v in check_verbatim([*log[:2], bare, *log[3:]], log)}
    assert "signature_changed" in rules  # the turn is live: its thinking may not be left out
    assert check_anthropic(log, thinking=True, original=log) == []


def test_a_human_message_after_a_tool_result_continues_the_turn() -> None:
    h = HumanMessage("steer")
    assert opens_turn(h, after_tool=False)
    assert not opens_turn(h, after_tool=True)
    assert not opens_turn(AIMessage("x"), after_tool=False)


def test_steering_and_later_ai_messages_join_the_thinking_unit() -> None:
    msgs = _steered_turn()
    assert [u.start for u in group_units(msgs).units] == [0, 1, 2]
    plain = [m if not isinstance(m, AIMessage) else strip_thinking(m) for m in msgs]
    assert [u.start for u in group_units(plain).units] == [0, 1, 2, 4, 5]
    follow_up = [*msgs, AIMessage("done", id="a3"), HumanMessage("Next task.", id="h2")]
    follow_up.append(_ai("a4", {"type": "text", "text": "Reading."}, calls=("c4",)))
    assert [u.start for u in group_units(follow_up).units][-3:] == [2, 8, 9]


def test_a_steering_message_keeps_the_live_run_and_its_thinking() -> None:
    mem = LayeredChatMemory(max_tokens=200_000)
    mem.add_messages(_steered_turn())
    assert mem._live_start() == 2
    assert mem._live_thinking()
    assert starts_with_thinking(mem.build_context()[2])
    mem.add_messages([AIMessage("Done.", id="a3"), HumanMessage("Next task.", id="h2")])
    assert mem._live_start() == 9


def test_a_human_message_after_unanswered_calls_continues_the_turn() -> None:
    """langctx answers the calls with placeholders, so the human message follows tool results."""
    mem = LayeredChatMemory(max_tokens=200_000)
    msgs = _steered_turn()[:3]
    mem.add_messages([*msgs, HumanMessage("Stop, use grep instead.", id="steer")])
    assert mem._live_start() == 2
    ctx = mem.build_context()
    assert isinstance(ctx[-2], ToolMessage) and ctx[-1].id == "steer"
    assert check_anthropic(ctx, thinking=True, original=mem.messages) == []


def test_a_cached_view_of_a_tool_result_keeps_the_call_it_answers() -> None:
    """Two threads with the same message ids and tool output answering other calls (the
    Anthropic and Responses loops above): each cached view pairs with its own call."""
    counter = CachedCounter(ApproximateCounter(), MessageCountCache(maxsize=16))
    edit = new_edit_entry(
        message_id="t1", reason="truncate", content="[cut]", tokens_before=9, tokens_after=2
    )
    for cid, status in (("toolu_1", "success"), ("call_1", "success"), ("call_1", "error")):
        m = ToolMessage("out", tool_call_id=cid, status=status, id="t1")
        view, _ = describe_edited(counter, m, edit)
        assert (view.tool_call_id, view.status) == (cid, status)  # type: ignore[attr-defined]
