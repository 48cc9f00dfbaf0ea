"""Agent loop benchmark: langctx against trim_messages, LangMem and LangChain's middleware.

Run by hand from the repository root (needs the ``bench`` dependency group for LangMem)::

    uv run --group bench python bench/agent_loop.py            # 100 / 500 / 2,000 turns
    uv run --group bench python bench/agent_loop.py --turns 100  # a quick look
    uv run --group bench python bench/agent_loop.py --paired langctx-local middleware --turns 2000
    uv run --group bench python bench/agent_loop.py --encoded langctx-local middleware --turns 2000

An agent loop, as a coding agent runs it: append what arrived since the last model call (one AI
message and its tool results, from the deterministic coding session in ``langctx.cli.demo.session``),
build the context the model would see, repeat. Every approach gets the same turns, the same
8,000-token budget and exact ``o200k_base`` counting (its own ``TiktokenCounter``, with the same
per-message cache langctx uses: a generous choice for the anchors, which recount their history on
every call). Summarizers are scripted chat models (``langctx.testing.ScriptedChatModel``) that
answer with a fixed ~120-token summary, so no network is used and model time is zero for all.

Timed per turn: appending the turn and building the context. Checked (untimed) on every
projection with a separate exact counter: orphan tool results and unanswered tool calls, tokens over
the budget, whether the original task (the first human message) is still there verbatim, and how
many system messages lead it. Writes ``bench/results/agent_loop.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import _common
from langchain_core.messages import (
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    trim_messages,
)

from langctx import LayeredChatMemory, MemorySettings, TiktokenCounter, merge_langctx, view_state
from langctx._tiktoken_offline import seed_tiktoken_cache
from langctx.cli.demo.session import TASK, coding_session, iter_turns
from langctx.count_cache import shared_blocks, shared_cache
from langctx.engine import background
from langctx.engine.restoring import active_positions
from langctx.testing import ScriptedChatModel
from langctx.turns import pair_errors

ROOT = Path(__file__).resolve().parents[1]
RESULTS_MD = ROOT / "bench" / "results" / "agent_loop.md"
RESULTS_JSON = ROOT / "bench" / "results" / "agent_loop.json"

BUDGET = 8_000
"""Tokens of context every approach may show the model (exact o200k_base count)."""
SUMMARY_THRESHOLD = 2_000
"""The unit of issue 2's summarizer-call target (at most one call per 2,000 evicted tokens)."""
TURN_COUNTS = (100, 500, 2_000)
SEED = 7

SUMMARY = (
    "Goal: make tests/test_parser.py::test_nested_lists pass by fixing src/calc/parser.py; do "
    "not edit the tests; keep calc.parse's public API; Python 3.11.\n"
    "Current status: parse_list flattens nested lists (items.extend(sub)); edited to "
    "items.append(sub) in several modules; the parser tests still fail with AssertionError: "
    "assert [1, 2, 3] == [1, [2, 3]] (tests/test_parser.py:42).\n"
    "Files observed: src/calc/parser.py, src/calc/lexer.py, tests/test_parser.py.\n"
    "Next step: check how the module returns positions, then rerun pytest."
)


def scripted_summarizer() -> ScriptedChatModel:
    """A summarizer model that always answers with ``SUMMARY`` (each approach gets its own)."""
    return ScriptedChatModel(responses=[SUMMARY], cycle=True)


# ---------------------------------------------------------------------------- approaches


class Approach(Protocol):
    """One way to decide what the model sees."""

    name: str
    config: str

    def start(self, messages: list[BaseMessage]) -> None:
        """Take the system prompt and the task."""

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        """Append one turn and return the context for the next model call (timed)."""

    def summarizer_calls(self) -> int:
        """Model calls made to write summaries so far."""

    def extra(self) -> dict[str, Any]:
        """Approach-specific figures for the results."""


class Langctx:
    """langctx ``LayeredChatMemory``: add the turn, build the context."""

    def __init__(self, *, model: bool) -> None:
        self.model = scripted_summarizer() if model else None
        self.name = "langctx (scripted model summarizer)" if model else "langctx (local summarizer)"
        self.config = (
            f"LayeredChatMemory(max_tokens={BUDGET}, token_counter=TiktokenCounter(), "
            f"summarizer={'ScriptedChatModel' if model else 'None (local)'}); defaults otherwise"
        )
        self.mem = LayeredChatMemory(
            max_tokens=BUDGET, token_counter=TiktokenCounter(), summarizer=self.model
        )

    def start(self, messages: list[BaseMessage]) -> None:
        self.mem.add_messages(messages)

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        self.mem.add_messages(turn)
        return self.mem.build_context()

    def summarizer_calls(self) -> int:
        return len(self.model.calls) if self.model is not None else 0

    def extra(self) -> dict[str, Any]:
        entries = self.mem.compactions
        log = self.mem.eviction_log
        return {
            "compactions": sum(1 for e in entries if e["trigger"] != "merge"),
            "merges": sum(1 for e in entries if e["trigger"] == "merge"),
            "evicted_tokens": sum(r["tokens"] for r in log if r["action"] == "compact"),
            "placeholder_tokens_saved": sum(
                r["tokens"] for r in log if r["action"] == "placeholder"
            ),
            "summaries_projected": len(self.mem.summaries),
        }


class LangctxStateless:
    """What ``LangctxMiddleware`` does on each model call: the memory computed from the state.

    The state is the whole message list plus the ``langctx`` channel; each call runs
    ``view_state`` over it, compacts when due and merges the update into the channel, keeping
    nothing else between calls (message token counts come from the process-wide cache).
    """

    def __init__(self, *, model: bool) -> None:
        self.model = scripted_summarizer() if model else None
        kind = "scripted model summarizer" if model else "local summarizer"
        self.name = f"langctx stateless (middleware's path, {kind})"
        self.config = (
            f"view_state(state, MemorySettings.of(max_tokens={BUDGET}, "
            f"token_counter=TiktokenCounter(), summarizer="
            f"{'ScriptedChatModel' if model else 'None (local)'})) per call"
        )
        self.settings = MemorySettings.of(
            max_tokens=BUDGET, token_counter=TiktokenCounter(), summarizer=self.model
        )
        self.messages: list[BaseMessage] = []
        self.channel: dict[str, Any] = {}
        self.calls = 0

    def start(self, messages: list[BaseMessage]) -> None:
        self.messages.extend(messages)

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        self.messages.extend(turn)
        view = view_state({"messages": self.messages, "langctx": self.channel}, self.settings)
        view.compact_if_due()
        update = view.update()
        if update is not None:
            self.channel = dict(merge_langctx(self.channel, update))
        return view.projection()

    def summarizer_calls(self) -> int:
        return len(self.model.calls) if self.model is not None else 0

    def extra(self) -> dict[str, Any]:
        entries = self.channel.get("compactions") or []
        by_id = {m.id: m for m in self.messages}
        folded = [i for e in entries if e["trigger"] != "merge" for i in e["covered_ids"]]
        count = TiktokenCounter().count_message  # not the counter langctx budgets with
        edits = self.channel.get("edits") or []
        return {
            "compactions": sum(1 for e in entries if e["trigger"] != "merge"),
            "merges": sum(1 for e in entries if e["trigger"] == "merge"),
            "evicted_tokens": sum(count(by_id[i]) for i in folded if i in by_id),
            "placeholder_tokens_saved": sum(
                e["tokens_before"] - e["tokens_after"]
                for e in edits
                if e["reason"] == "placeholder"
            ),
            "summaries_projected": len(active_positions(entries)),
        }


class Trim:
    """``trim_messages(strategy="last")`` over the whole, ever-growing history."""

    def __init__(self, *, start_on_human: bool) -> None:
        self.counter = TiktokenCounter()
        self.history: list[BaseMessage] = []
        self.start_on_human = start_on_human
        self.name = 'trim_messages (start_on="human")' if start_on_human else "trim_messages"
        self.config = (
            f'trim_messages(history, max_tokens={BUDGET}, strategy="last", include_system=True, '
            f"token_counter=TiktokenCounter().count_messages"
            + (', start_on="human")' if start_on_human else ")")
        )

    def start(self, messages: list[BaseMessage]) -> None:
        self.history.extend(messages)

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        self.history.extend(turn)
        kwargs: dict[str, Any] = {"start_on": "human"} if self.start_on_human else {}
        return trim_messages(
            self.history,
            max_tokens=BUDGET,
            token_counter=self.counter.count_messages,
            strategy="last",
            include_system=True,
            **kwargs,
        )

    def summarizer_calls(self) -> int:
        return 0

    def extra(self) -> dict[str, Any]:
        return {}


class SummarizingAnchor:
    """What the summarizing anchors share: a budget, a summarizer model, an exact counter."""

    def __init__(
        self,
        *,
        budget: int = BUDGET,
        model: ScriptedChatModel | None = None,
        counter: TiktokenCounter | None = None,
    ) -> None:
        self.budget = budget
        self.model = model if model is not None else scripted_summarizer()
        self.counter = counter if counter is not None else TiktokenCounter()


class LangMemNode(SummarizingAnchor):
    """LangMem ``SummarizationNode``: full history in, ``summarized_messages`` out."""

    def __init__(self, **anchor: Any) -> None:
        from langmem.short_term import SummarizationNode

        super().__init__(**anchor)
        self.node = SummarizationNode(
            model=self.model,
            max_tokens=self.budget,
            max_summary_tokens=256,
            token_counter=self.counter.count_messages,
        )
        self.state: dict[str, Any] = {"messages": [], "context": {}}
        self.name = "LangMem SummarizationNode"
        self.config = (
            f"SummarizationNode(model=ScriptedChatModel, max_tokens={self.budget}, "
            "max_tokens_before_summary=None (= max_tokens), max_summary_tokens=256, "
            "token_counter=TiktokenCounter().count_messages); state keeps the full history, "
            "the node's output is the context"
        )

    def start(self, messages: list[BaseMessage]) -> None:
        self.state["messages"].extend(messages)

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        self.state["messages"].extend(turn)
        out = self.node.invoke(self.state)
        if "context" in out:
            self.state["context"] = out["context"]
        return list(out["summarized_messages"])

    def summarizer_calls(self) -> int:
        return len(self.model.calls)

    def extra(self) -> dict[str, Any]:
        return {}


class Middleware(SummarizingAnchor):
    """LangChain ``SummarizationMiddleware`` driven through its ``before_model`` hook."""

    def __init__(self, **anchor: Any) -> None:
        from langchain.agents.middleware import SummarizationMiddleware

        super().__init__(**anchor)
        # compact at langctx's high mark (80%), keep langctx's reserve (30%) verbatim
        trigger, keep = int(0.8 * self.budget), int(0.3 * self.budget)
        self.mw = SummarizationMiddleware(
            model=self.model,
            trigger=("tokens", trigger),
            keep=("tokens", keep),
            token_counter=self.counter.count_messages,  # type: ignore[arg-type]
        )
        self.messages: list[BaseMessage] = []
        self.folds = 0
        self.uncalled: dict[str, int] = {}
        """The texts that replaced the history in a fold without a summarizer call, and how often."""
        self.name = "LangChain SummarizationMiddleware"
        self.config = (
            f"SummarizationMiddleware(model=ScriptedChatModel, trigger=('tokens', {trigger}), "
            f"keep=('tokens', {keep}), token_counter=TiktokenCounter().count_messages); "
            "before_model(state, runtime=None) each turn, its RemoveMessage(REMOVE_ALL) update "
            "applied to the state, which is the context"
        )

    def start(self, messages: list[BaseMessage]) -> None:
        self.messages.extend(messages)

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        self.messages.extend(turn)
        state: Any = {"messages": self.messages}
        calls = len(self.model.calls)
        update = self.mw.before_model(state, cast(Any, None))  # the hook does not use runtime
        if update is not None:
            new = update["messages"]
            assert isinstance(new[0], RemoveMessage)
            self.messages = list(new[1:])
            self.folds += 1
            if len(self.model.calls) == calls:  # the history replaced by a fixed text
                text = str(new[1].content).split("\n\n", 1)[-1]  # after its summary prefix
                self.uncalled[text] = self.uncalled.get(text, 0) + 1
        return list(self.messages)

    def summarizer_calls(self) -> int:
        return len(self.model.calls)

    def extra(self) -> dict[str, Any]:
        return {
            "folds": self.folds,
            "folds_without_summarizer_call": dict(self.uncalled),
            "trim_tokens_to_summarize": self.mw.trim_tokens_to_summarize,
        }


APPROACHES: dict[str, Callable[[], Approach]] = {
    "langctx-local": lambda: Langctx(model=False),
    "langctx-model": lambda: Langctx(model=True),
    "langctx-stateless-local": lambda: LangctxStateless(model=False),
    "langctx-stateless-model": lambda: LangctxStateless(model=True),
    "trim": lambda: Trim(start_on_human=False),
    "trim-start-on-human": lambda: Trim(start_on_human=True),
    "langmem": LangMemNode,
    "middleware": Middleware,
}


# ---------------------------------------------------------------------------- checks


def leading_systems(ctx: Sequence[BaseMessage]) -> int:
    n = 0
    for m in ctx:
        if not isinstance(m, SystemMessage):
            break
        n += 1
    return n


@dataclass
class Run:
    """One approach over one loop length."""

    key: str
    name: str
    turns: int
    config: str = ""
    error: str | None = None
    repeats: int = 1
    times_ms: list[float] = field(default_factory=list)
    """CPU time of the process per turn (``time.process_time``): robust to other jobs."""
    wall_ms: list[float] = field(default_factory=list)
    """Wall time per turn (``time.perf_counter``), for reference."""
    summarizer_calls: int = 0
    orphan_tool_messages: int = 0
    unanswered_calls: int = 0
    projections_with_orphans: int = 0
    budget_violations: int = 0
    max_tokens: int = 0
    lost_task: int = 0
    system_only: int = 0
    two_leading_systems: int = 0
    final_tokens: int = 0
    final_messages: int = 0
    history_tokens: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def stats(self) -> dict[str, float]:
        t = self.times_ms
        if not t:
            return {}
        window = min(100, len(t))
        first, last = t[:window], t[-window:]
        return {
            "median_ms": statistics.median(t),
            "p95_ms": sorted(t)[max(0, int(0.95 * len(t)) - 1)],
            "mean_ms": statistics.fmean(t),
            "total_s": sum(t) / 1000,
            "wall_median_ms": statistics.median(self.wall_ms),
            "wall_total_s": sum(self.wall_ms) / 1000,
            "last_first_mean": statistics.fmean(last) / statistics.fmean(first),
            "last_first_median": statistics.median(last) / statistics.median(first),
        }


def run(key: str, turns: int, repeats: int = 1) -> Run:
    """One agent loop, ``repeats`` times; never raises (a failure is recorded on the run).

    Every projection of the first repetition is checked; the others are only timed. Per-turn
    times are the minimum over the repetitions (the least disturbed by other jobs).
    """
    return run_all([key], turns, repeats)[0]


def run_all(keys: Sequence[str], turns: int, repeats: int = 1) -> list[Run]:
    """:func:`run` for each of ``keys``, the repetitions interleaved (every approach's first
    loop, then every approach's second, ...): a slow spell of the machine falls on several
    approaches' repetitions instead of on both of one."""
    out: dict[str, Run] = {}
    for key in keys:
        try:
            APPROACHES[key]()
        except Exception as exc:  # an anchor that cannot even be built (missing package, ...)
            out[key] = Run(key, key, turns, error=f"{type(exc).__name__}: {exc}")
    for rep in range(repeats):
        for key in keys:
            kept = out.get(key)
            if kept is not None and kept.error:
                continue
            r = _isolated(key, turns, check=rep == 0)
            if kept is None:
                out[key] = r
            elif r.times_ms and len(r.times_ms) == len(kept.times_ms):
                kept.times_ms = [min(a, b) for a, b in zip(kept.times_ms, r.times_ms, strict=True)]
                kept.wall_ms = [min(a, b) for a, b in zip(kept.wall_ms, r.wall_ms, strict=True)]
    for r in out.values():
        r.repeats = repeats
    return [out[key] for key in keys]


def _isolated(key: str, turns: int, *, check: bool) -> Run:
    """One loop in a fresh interpreter: no approach finds a cache (langctx's, tiktoken's, a
    ``functools`` one) that another approach or an earlier repetition warmed."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_child_loop, key, turns, check).result()


def _child_loop(key: str, turns: int, check: bool) -> Run:
    seed_tiktoken_cache()
    return _loop(key, turns, TiktokenCounter(), check=check)


def _loop(key: str, turns: int, judge: TiktokenCounter, *, check: bool) -> Run:
    shared_cache().clear()  # every loop starts cold (it runs in a process of its own, too)
    shared_blocks().clear()
    approach = APPROACHES[key]()
    out = Run(key, approach.name, turns, config=approach.config)
    start = coding_session(0, seed=SEED)
    approach.start(start)
    out.history_tokens = judge.count_messages(start)
    gc.collect()
    try:
        for turn in iter_turns(turns, seed=SEED):
            w0, c0 = time.perf_counter(), time.process_time()
            ctx = approach.step(turn)
            c1, w1 = time.process_time(), time.perf_counter()
            out.times_ms.append((c1 - c0) * 1000)
            out.wall_ms.append((w1 - w0) * 1000)
            if not check:
                continue
            out.history_tokens += judge.count_messages(turn)
            orphans, unanswered = pair_errors(ctx)
            out.orphan_tool_messages += orphans
            out.unanswered_calls += unanswered
            out.projections_with_orphans += bool(orphans or unanswered)
            tokens = judge.count_messages(ctx)
            out.max_tokens = max(out.max_tokens, tokens)
            out.budget_violations += tokens > BUDGET
            out.lost_task += not any(isinstance(m, HumanMessage) and m.content == TASK for m in ctx)
            out.system_only += all(isinstance(m, SystemMessage) for m in ctx)
            out.two_leading_systems += leading_systems(ctx) > 1
            out.final_tokens, out.final_messages = tokens, len(ctx)
    except Exception as exc:
        out.error = f"failed at turn {len(out.times_ms) + 1}: {type(exc).__name__}: {exc}"
    out.summarizer_calls = approach.summarizer_calls()
    out.extra = approach.extra()
    return out


# ---------------------------------------------------------------------------- report


def fmt(x: float, digits: int = 2) -> str:
    return f"{x:,.{digits}f}"


def table(runs: list[Run]) -> list[str]:
    lines = [
        "| approach | turns | median ms | p95 ms | mean ms | last-100 / first-100 (mean; median) "
        "| summarizer calls | orphan tool msgs / unanswered calls | budget violations (max tokens) "
        "| lost task | system-only | 2+ leading system msgs |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in runs:
        if r.error and not r.times_ms:
            lines.append(f"| {r.name} | {r.turns} | could not run: {r.error} |" + " |" * 9)
            continue
        s = r.stats()
        name = r.name + (f" (**stopped: {r.error}**)" if r.error else "")
        lines.append(
            f"| {name} | {len(r.times_ms)} | {fmt(s['median_ms'], 3)} | {fmt(s['p95_ms'], 3)} "
            f"| {fmt(s['mean_ms'], 3)} | {fmt(s['last_first_mean'])}; {fmt(s['last_first_median'])} "
            f"| {r.summarizer_calls} | {r.orphan_tool_messages} / {r.unanswered_calls} "
            f"| {r.budget_violations} ({r.max_tokens:,}) | {r.lost_task} | {r.system_only} "
            f"| {r.two_leading_systems} |"
        )
    return lines


def targets(runs: list[Run]) -> list[str]:
    """The issue's targets, checked for each langctx run."""
    lines: list[str] = []
    by = {(r.key, r.turns): r for r in runs}
    longest = max(r.turns for r in runs)
    for r in runs:
        if not r.key.startswith("langctx") or not r.times_ms:
            continue
        s = r.stats()
        flat = s["last_first_mean"] <= 1.5
        clean = not (
            r.orphan_tool_messages or r.unanswered_calls or r.budget_violations or r.lost_task
        )
        evicted = r.extra.get("evicted_tokens", 0)
        allowed = evicted / SUMMARY_THRESHOLD
        calls_ok = r.summarizer_calls <= allowed
        line = (
            f"- {r.name}, {r.turns} turns: per-turn cost flat "
            f"(last-100/first-100 mean {fmt(s['last_first_mean'])} <= 1.5): "
            f"**{'yes' if flat else 'NO'}**; zero orphans / violations / lost tasks: "
            f"**{'yes' if clean else 'NO'}**; summarizer calls {r.summarizer_calls} <= evicted "
            f"{evicted:,} / {SUMMARY_THRESHOLD:,} = {fmt(allowed, 1)}: "
            f"**{'yes' if calls_ok else 'NO'}**"
        )
        if r.turns == longest:
            anchors = [
                a
                for (k, t), a in by.items()
                if t == longest and not k.startswith("langctx") and a.times_ms
            ]
            verdicts = []
            for stat in ("median_ms", "mean_ms"):
                not_faster = [a.name for a in anchors if a.stats()[stat] <= s[stat]]
                verdicts.append(
                    f"by {stat.removesuffix('_ms')} **"
                    + ("yes" if not not_faster else "NO: not faster than " + ", ".join(not_faster))
                    + "**"
                )
            line += f"; faster per turn than every anchor at {longest} turns: " + "; ".join(
                verdicts
            )
        lines.append(line)
    return lines


def observations(runs: list[Run]) -> list[str]:
    """What each anchor's numbers mean, at the longest loop (figures from this run)."""
    longest = max(r.turns for r in runs)
    by = {r.key: r for r in runs if r.turns == longest}
    lines = []
    for key, r in by.items():
        n = len(r.times_ms)
        if r.error and not n:
            lines.append(f"- **{r.name}** could not run: {r.error}.")
            continue
        if key == "trim":
            lines.append(
                f"- **{r.name}** never summarizes, so the task is gone once the history passes "
                f"the budget ({r.lost_task} of {n} projections). It re-counts the whole, "
                "ever-growing history on every call (a binary search over prefixes), so its "
                f"cost grows with the session; {r.orphan_tool_messages} orphan tool results "
                "(projections starting inside a turn) and "
                f"{r.system_only} projections with nothing but the system prompt (the newest "
                "turn alone did not fit)."
            )
        elif key == "trim-start-on-human":
            lines.append(
                f"- **{r.name}**: the known pitfall. The only human message is the task, which "
                "no longer fits after the first few turns, so the window starts on no human "
                f"message and only the system prompt is kept: {r.system_only} of {n} "
                "projections are the system prompt alone."
            )
        elif key == "langmem":
            lines.append(
                f"- **{r.name}** writes its running summary as a second system message "
                f"(`DEFAULT_FINAL_SUMMARY_PROMPT`): {r.two_leading_systems} of {n} projections "
                "lead with two system messages, which Anthropic and Gemini reject. The task is "
                f"summarized away ({r.lost_task} projections without it); "
                f"{r.orphan_tool_messages} orphan tool results, {r.budget_violations} "
                f"projections over the budget (max {r.max_tokens:,}), {r.system_only} "
                f"projections of system messages only; {r.summarizer_calls} summarizer calls."
            )
        elif key == "middleware":
            lines.append(
                f"- **{r.name}** replaces the history with its summary + the kept messages, so "
                "its per-turn cost stays flat, but it cannot shrink a single message: when the "
                "newest turn holds a giant output, the kept messages alone exceed the budget "
                f"({r.budget_violations} of {n} projections over {BUDGET:,}, max "
                f"{r.max_tokens:,} tokens). The task is summarized away ({r.lost_task} "
                f"projections without it; its summarizer only sees the last 4,000 tokens of "
                f"what it evicts); {r.summarizer_calls} summarizer calls." + _uncalled_folds(r)
            )
    return lines


def _uncalled_folds(r: Run) -> str:
    """The middleware's folds that replaced the history without calling its summarizer."""
    folds, uncalled = r.extra.get("folds"), r.extra.get("folds_without_summarizer_call") or {}
    if folds is None:
        return ""
    n, trim = sum(uncalled.values()), r.extra.get("trim_tokens_to_summarize") or 0
    texts = "; ".join(
        f'{k:,} times "{t}"' for t, k in sorted(uncalled.items(), key=lambda x: -x[1])
    )
    return (
        f" It folded {folds:,} times, {n:,} of them without calling its summarizer: the evicted "
        f"messages were replaced by a fixed text ({texts or 'none'}). Its summarizer input is "
        f'`trim_messages(..., max_tokens={trim}, strategy="last", start_on="human")` of '
        f"the evicted messages, empty when no human message is among their last {trim:,} tokens."
    )


def environment() -> dict[str, Any]:
    return _common.environment(("langchain-core", "langchain", "langmem", "langgraph", "tiktoken"))


def report(runs: list[Run], env: dict[str, Any], wall_s: float) -> str:
    configs: dict[str, str] = {}
    for r in runs:
        configs.setdefault(r.name, r.config)
    lines = [
        "# Agent loop: langctx vs trim_messages, LangMem and LangChain's middleware",
        "",
        "Generated by `uv run --group bench python bench/agent_loop.py` "
        f"({fmt(wall_s / 60, 1)} min wall). Machine: {env['machine']}; load average at start "
        f"{env['load_average_at_start']} (other jobs shared the machine, so absolute times are "
        "noisy: compare ratios). Versions: "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + ".",
        "",
        f"Each loop appends one turn of the deterministic coding session "
        f"(`langctx.cli.demo.session.iter_turns(turns, seed={SEED})`: file reads, test runs with "
        "tracebacks, edits, a parallel two-file read every 12 turns, now and then a 4k-9k "
        "token output) and builds the context for the next model call. Same for everyone: "
        f"a **{BUDGET:,}-token budget**, exact o200k_base counting (each approach its own "
        "`TiktokenCounter`, cached per message; every loop and repetition runs in a fresh "
        "process, so none finds a cache another one warmed), scripted summarizer models "
        "(model time is "
        f"zero). Per-turn time = CPU time of the process (`time.process_time`, so other jobs "
        f"on the machine disturb it less than wall time) spent appending the turn and building "
        f"the context, the minimum per turn over {runs[0].repeats if runs else 1} repetitions "
        "(interleaved: every approach's first loop, then every approach's second; wall times "
        "are in the JSON). 'last-100 / first-100' divides the mean (and the median) "
        "per-turn time of the last 100 turns by that of the first 100; it is 1.00 by "
        "construction for the 100-turn loops. Checks, on every projection of the first "
        "repetition, by a separate exact counter: "
        "orphan tool messages (a result whose call is not before it) and unanswered tool "
        "calls; budget violations (projection > budget); lost task (the first human message "
        "is not in the projection verbatim); system-only (the projection is nothing but the "
        "system prompt); two or more leading system messages (rejected by some providers).",
        "",
        *table(runs),
        "",
        "## Targets (issue 2)",
        "",
        *targets(runs),
        "",
        "## What the anchors did",
        "",
        *observations(runs),
        "",
        "## Configurations",
        "",
        *[f"- **{name}**: `{cfg}`" for name, cfg in configs.items()],
        "",
        "## langctx details",
        "",
        "| run | turns | compactions | merges | evicted tokens "
        "| placeholder tokens saved | summaries projected | final context tokens |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
        *[
            f"| {r.name} | {r.turns} | {r.extra.get('compactions')} | {r.extra.get('merges')} "
            f"| {r.extra.get('evicted_tokens', 0):,} "
            f"| {r.extra.get('placeholder_tokens_saved', 0):,} "
            f"| {r.extra.get('summaries_projected')} | {r.final_tokens:,} |"
            for r in runs
            if r.key.startswith("langctx") and r.times_ms
        ],
        "",
    ]
    return "\n".join(lines)


def paired(a: str, b: str, *, turns: int, memoized: bool = False) -> int:
    """Per-turn CPU time of two approaches interleaved turn by turn (each has its own counter and
    caches; the process-wide ones hold what langctx counted, never what the anchor did). Which
    one steps first alternates: the second to count a turn's texts finds them in the CPU's
    caches (measured: either order favours the second by about 10%).

    ``memoized``: token counting taken out. A first, untimed loop of each approach counts every
    text once into a memo that ``TiktokenCounter.count_text`` then answers from (langctx's caches
    are cleared after it), so the timed loops make the same decisions as with exact counting but
    the encoding every approach does for each new message costs a dict lookup: what is compared
    is each approach's own work."""
    start = coding_session(0, seed=SEED)
    if memoized:
        _memoize_counting()
        for key in (a, b):
            warm = APPROACHES[key]()
            warm.start(list(start))
            for turn in iter_turns(turns, seed=SEED):
                warm.step(list(turn))
        _forget()
    first, second = APPROACHES[a](), APPROACHES[b]()
    first.start(list(start))
    second.start(list(start))
    gc.collect()
    times: tuple[list[float], list[float]] = ([], [])
    for k, turn in enumerate(iter_turns(turns, seed=SEED)):
        order = ((first, times[0]), (second, times[1]))
        for approach, out in order if k % 2 == 0 else order[::-1]:
            t0 = time.process_time()
            approach.step(list(turn))
            out.append(time.process_time() - t0)
    ta, tb = times
    med = statistics.median(ta) / statistics.median(tb)
    mean = statistics.fmean(ta) / statistics.fmean(tb)
    what = " (counting memoized)" if memoized else ""
    print(
        f"{first.name} / {second.name}, {turns} turns{what}: median "
        f"{statistics.median(ta) * 1e3:.3f} / "
        f"{statistics.median(tb) * 1e3:.3f} ms = {med:.2f}x; mean {statistics.fmean(ta) * 1e3:.3f}"
        f" / {statistics.fmean(tb) * 1e3:.3f} ms = {mean:.2f}x"
    )
    return 0


def encoded(keys: Sequence[str], *, turns: int) -> int:
    """Characters each approach hands to ``TiktokenCounter.count_text`` over a loop (untimed), on
    the turns it folds and on the others: what its counting costs, apart from how fast it runs."""
    print(f"{turns} turns; message text in the session: {_session_chars(turns):,} characters")
    count = TiktokenCounter.count_text
    seen = [0]

    def counting(self: TiktokenCounter, text: str) -> int:
        seen[0] += len(text)
        return count(self, text)

    TiktokenCounter.count_text = counting  # type: ignore[method-assign]
    try:
        for key in keys:
            _forget()  # so that no approach finds what another one counted
            approach = APPROACHES[key]()
            approach.start(list(coding_session(0, seed=SEED)))
            folding: list[int] = []
            other: list[int] = []
            for turn in iter_turns(turns, seed=SEED):
                folds, seen[0] = _folds(approach), 0
                approach.step(list(turn))
                (folding if _folds(approach) > folds else other).append(seen[0])
            print(
                f"{approach.name}: {sum(folding) + sum(other):,} characters encoded; "
                f"{len(folding)} turns fold, median {_median(folding):,.0f} characters each; "
                f"the other {len(other)}, median {_median(other):,.0f}"
            )
    finally:
        TiktokenCounter.count_text = count  # type: ignore[method-assign]
    return 0


def _forget() -> None:
    """Clear langctx's process-wide caches and background summaries."""
    background.clear()
    shared_cache().clear()
    shared_blocks().clear()


def _folds(approach: Approach) -> int:
    """Folds so far (merges of summaries not counted); summarizer calls for an approach that
    reports nothing else."""
    if isinstance(approach, Langctx):
        return sum(1 for e in approach.mem.compactions if e["trigger"] != "merge")
    if isinstance(approach, LangctxStateless):
        entries = approach.channel.get("compactions") or []
        return sum(1 for e in entries if e["trigger"] != "merge")
    if isinstance(approach, Middleware):
        return approach.folds
    return approach.summarizer_calls()


def _median(values: Sequence[int]) -> float:
    return statistics.median(values) if values else 0.0


def _session_chars(turns: int) -> int:
    """Characters of message content and tool-call names and arguments in the loop's turns."""
    total = 0
    for turn in iter_turns(turns, seed=SEED):
        for m in turn:
            total += len(m.content) if isinstance(m.content, str) else len(repr(m.content))
            for call in getattr(m, "tool_calls", None) or []:
                total += len(call["name"]) + len(json.dumps(call["args"]))
    return total


def _memoize_counting() -> None:
    """Make ``TiktokenCounter.count_text`` answer a text it counted before from a memo."""
    memo: dict[str, int] = {}
    count = TiktokenCounter.count_text

    def memoized(self: TiktokenCounter, text: str) -> int:
        found = memo.get(text)
        if found is None:
            found = memo[text] = count(self, text)
        return found

    TiktokenCounter.count_text = memoized  # type: ignore[method-assign]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="+", default=list(TURN_COUNTS))
    parser.add_argument("--only", nargs="+", choices=sorted(APPROACHES), default=None)
    parser.add_argument("--repeats", type=int, default=2, help="timed repetitions per loop")
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    parser.add_argument(
        "--paired",
        nargs=2,
        metavar=("A", "B"),
        choices=sorted(APPROACHES),
        help="time A and B turn by turn in one process (each turn A then B), so that the machine's "
        "drift over a run falls on both; prints the ratios of the per-turn median and mean",
    )
    parser.add_argument(
        "--memoized-counting",
        action="store_true",
        help="with --paired: take token counting out (see paired), to compare what each "
        "approach does besides the encoding they all share",
    )
    parser.add_argument(
        "--encoded",
        nargs="+",
        metavar="APPROACH",
        choices=sorted(APPROACHES),
        help="count the characters each approach encodes, on folding turns and on the others",
    )
    args = parser.parse_args(argv)
    if args.encoded:
        seed_tiktoken_cache()
        return encoded(args.encoded, turns=max(args.turns))
    if args.paired:
        seed_tiktoken_cache()
        return paired(*args.paired, turns=max(args.turns), memoized=args.memoized_counting)

    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(ROOT / ".tiktoken_cache"))
    seed_tiktoken_cache()
    judge = TiktokenCounter()
    if not judge.exact:
        print("exact o200k_base counting is unavailable; install the test group", file=sys.stderr)
        return 1
    env = environment()
    started = time.perf_counter()
    runs: list[Run] = []
    for turns in args.turns:
        for r in run_all(list(args.only or APPROACHES), turns, args.repeats):
            s = r.stats()
            print(
                f"{r.name:40s} {turns:5d} turns  median {s.get('median_ms', 0):8.3f} ms  "
                f"ratio {s.get('last_first_mean', 0):5.2f}  calls {r.summarizer_calls:4d}  "
                f"orphans {r.orphan_tool_messages}/{r.unanswered_calls}  "
                f"over {r.budget_violations}  lost {r.lost_task}"
                + (f"  ERROR {r.error}" if r.error else ""),
                flush=True,
            )
            runs.append(r)
    wall = time.perf_counter() - started
    text = report(runs, env, wall)
    print(text)
    if not args.no_write:
        RESULTS_MD.parent.mkdir(parents=True, exist_ok=True)
        RESULTS_MD.write_text(text, encoding="utf-8")
        payload = {
            "budget": BUDGET,
            "seed": SEED,
            "environment": env,
            "wall_s": wall,
            "runs": [
                {**{k: v for k, v in asdict(r).items() if k not in ("times_ms", "wall_ms")}}
                | r.stats()
                | {"cpu_ms": [round(t, 4) for t in r.times_ms]}
                for r in runs
            ],
        }
        _common.write_json(RESULTS_JSON, payload)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
