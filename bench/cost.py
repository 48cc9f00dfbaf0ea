"""Cost and latency benchmark: what users pay and wait for, langctx beside LangMem and LangChain.

Run by hand from the repository root (needs the ``bench`` dependency group for LangMem)::

    uv run --group bench python bench/cost.py                # everything (~10 min)
    uv run --group bench python bench/cost.py --quick        # 100 / 500 turns at 8k, no sessions
    uv run --group bench python bench/cost.py --quick --turns 400 --seeds 1 2 3 --no-wall --no-write

Three parts, every approach side by side in one run:

1. **The agent loop** of ``bench/agent_loop.py`` (the deterministic coding session of
   ``langctx.cli.demo.session``) at 100 / 500 / 2,000 turns and 8k / 32k budgets. Per approach:
   summarizer calls and tokens, main-model input split into the prefix a provider cache reuses
   (the leading messages unchanged since the previous request) and the rest, the cost under each
   price sheet of ``langctx.pricing`` (Anthropic: cache writes at 1.25x, reads at 0.1x; OpenAI:
   cached input at 0.1x), the modeled summarizer time on the critical path (0.4 s + input at 8k
   tokens/s + output at 80 tokens/s per blocking call), and the integrity checks (requests over
   the budget, orphan tool results, requests without the task, the amnesia probes of
   ``langctx replay``).
2. **The recorded sessions** in ``../shared/data`` at 32k: the same figures summed over all of them.
3. **Wall time of a real ``create_agent`` run** whose scripted main model sleeps 200 ms + input
   at 50k tokens/s + output at 500 tokens/s and whose summarizer sleeps 100 ms + the same
   per-token rates: each approach once with that summarizer and once with one that answers at
   once; the difference is the time compaction adds on the critical path.

The summarizer is the same scripted model for everyone: it answers with a fixed-structure summary
naming the files and the latest error of what it was given (so summaries differ as the session
moves on, ~120 tokens). Writes ``bench/results/cost.md`` and ``.json``.
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import _common
import agent_loop
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langctx import LayeredChatMemory, PrefixSummarizer, TiktokenCounter
from langctx._tiktoken_offline import seed_tiktoken_cache
from langctx.cli.demo.session import TASK, coding_session, iter_turns
from langctx.cli.replay.engine import unchanged_prefix_tokens
from langctx.cli.replay.truth import PROBES, Truth, probe_request, session_roots
from langctx.count_cache import shared_blocks, shared_cache
from langctx.engine import background
from langctx.pricing import PRICE_SHEETS, SUMMARIZER_LATENCY, Latency, Usage
from langctx.testing import ScriptedChatModel
from langctx.turns import pair_errors

ROOT = Path(__file__).resolve().parents[1]
RESULTS_MD = ROOT / "bench" / "results" / "cost.md"
RESULTS_JSON = ROOT / "bench" / "results" / "cost.json"
SEED = 7
BUDGETS = (8_000, 32_000)
TURN_COUNTS = (100, 500, 2_000)
PROBE_EVERY = 5
"""The amnesia probes run on every 5th request (they re-read the whole request)."""

MAIN_LATENCY = Latency(fixed_s=0.2, input_per_s=50_000, output_per_s=500)
WALL_SUMMARIZER_LATENCY = Latency(fixed_s=0.1, input_per_s=50_000, output_per_s=500)
WALL_TURNS = 60

_PATH = re.compile(r"\b(?:src|tests)/[\w/]+\.py\b")
_ERROR = re.compile(r"\b\w+Error: [^\n\"]{0,60}")


def summary_for(messages: Sequence[BaseMessage]) -> str:
    """The scripted summarizer's answer: fixed sections, the files and latest error it was shown."""
    text = "\n".join(str(m.content) for m in messages[1:])  # not the prompt
    files = list(dict.fromkeys(_PATH.findall(text)))[-4:] or ["src/calc/parser.py"]
    errors = _ERROR.findall(text)
    return (
        "Goal:\n- make tests/test_parser.py::test_nested_lists pass by fixing src/calc/parser.py; "
        "do not edit the tests; keep calc.parse's public API; Python 3.11.\n"
        "Current status:\n- parse_list flattened nested lists; edits in progress; latest error: "
        f"{errors[-1] if errors else 'none'}\n"
        f"Files observed:\n- {', '.join(files)}\n"
        "Next step:\n- rerun pytest tests/test_parser.py after the next edit."
    )


class Summarizer:
    """A scripted summarizer model that records its calls' input and output tokens."""

    def __init__(
        self, count: Callable[[Sequence[BaseMessage]], int], count_text: Callable[[str], int]
    ) -> None:
        self.calls: list[tuple[int, int]] = []

        def answer(messages: list[BaseMessage]) -> str:
            text = summary_for(messages)
            self.calls.append((count(messages), count_text(text)))
            return text

        self.model = ScriptedChatModel(responses=[answer], cycle=True)

    def usage(self) -> Usage:
        return Usage(
            uncached_input=sum(i for i, _ in self.calls), output=sum(o for _, o in self.calls)
        )


class PrefixCalls(Summarizer):
    """The main model answering the summary instruction after the request it read last: each
    call's input is priced as the main model's, its cached part the longest unchanged prefix of
    a request sent before (the one before the fold: a background call may run a few requests
    later in this loop, while a real one starts at once and finds it in the provider's cache)."""

    def __init__(self, counter: TiktokenCounter, sent: list[list[BaseMessage]]) -> None:
        self.calls = []
        self.cached = 0

        def answer(messages: list[BaseMessage]) -> str:
            text = summary_for(messages)
            sizes = [counter.count_message(m) for m in messages]
            hit = max((unchanged_prefix_tokens(c, messages, sizes) for c in sent), default=0)
            self.cached += hit
            self.calls.append((sum(sizes), counter.count_text(text)))
            return text

        self.model = ScriptedChatModel(responses=[answer], cycle=True)

    def usage(self) -> Usage:
        return Usage(
            cached_input=self.cached,
            uncached_input=sum(i for i, _ in self.calls) - self.cached,
            output=sum(o for _, o in self.calls),
        )


# ---------------------------------------------------------------------------- approaches


class Approach:
    name = ""
    summarizer: Summarizer | None = None

    def start(self, messages: list[BaseMessage]) -> None:
        raise NotImplementedError

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        raise NotImplementedError

    def blocking_calls(self) -> int:
        """Summarizer calls made on the agent's critical path."""
        return len(self.summarizer.calls) if self.summarizer else 0


class Langctx(Approach):
    def __init__(
        self,
        budget: int,
        counter: TiktokenCounter,
        *,
        model: bool,
        background: bool = True,
        context_mode: bool = False,
        prefix: bool = False,
        cache_prices: str | None = None,
    ) -> None:
        self.sent: list[list[BaseMessage]] = []
        self.summarizer = Summarizer(counter.count_messages, counter.count_text) if model else None
        spec: Any = self.summarizer.model if self.summarizer else None
        self.name = (
            "langctx (model summarizer" + (", background)" if background else ", blocking)")
            if model
            else "langctx (local summarizer)"
        )
        options: dict[str, Any] = {}
        if prefix:  # the main model summarizes each fold after the request it read
            self.summarizer = PrefixCalls(counter, self.sent)
            spec = PrefixSummarizer(self.summarizer.model)
            options["summary_threshold_tokens"] = 0
            self.name = "langctx (main model summarizing from its cached prefix, background)"
        if context_mode:
            self.name = self.name.replace("langctx (", "langctx + Context-mode (")
        if cache_prices:  # compaction at the cheapest mark under the sheet being priced
            options["cache_prices"] = cache_prices
            self.name = self.name[:-1] + f", cache_prices={cache_prices!r})"
        self.mem = LayeredChatMemory(
            max_tokens=budget,
            token_counter=counter,
            summarizer=spec,
            background_summaries=background,
            **options,
        )
        self.processor = None
        self.args: dict[str, Any] = {}
        if context_mode:  # what ContextModeMiddleware does to each tool result
            from langctx.context_mode.processor import ContextModeProcessor

            self.processor = ContextModeProcessor(
                count_tokens=counter.count_text, context_budget=budget
            )

    def start(self, messages: list[BaseMessage]) -> None:
        self.mem.add_messages(messages)

    def step(self, turn: list[BaseMessage]) -> list[BaseMessage]:
        if self.processor is not None:
            out: list[BaseMessage] = []
            for m in turn:
                if isinstance(m, AIMessage):
                    self.args.update({str(tc["id"]): tc["args"] for tc in m.tool_calls})
                if isinstance(m, ToolMessage):
                    args = self.args.get(m.tool_call_id)
                    m = self.processor.process_message(m, thread_id="bench", args=args)
                out.append(m)
            turn = out
        self.mem.add_messages(turn)
        ctx = self.mem.build_context()
        self.sent.append(ctx)
        return ctx

    def blocking_calls(self) -> int:
        return int(self.mem.stats()["blocking_summarizer_calls"])


class LangMem(agent_loop.LangMemNode, Approach):
    """The agent-loop benchmark's LangMem anchor, with the recording summarizer."""

    def __init__(self, budget: int, counter: TiktokenCounter) -> None:
        self.summarizer = Summarizer(counter.count_messages, counter.count_text)
        super().__init__(budget=budget, model=self.summarizer.model, counter=counter)


class Middleware(agent_loop.Middleware, Approach):
    """The agent-loop benchmark's middleware anchor, with the recording summarizer."""

    def __init__(self, budget: int, counter: TiktokenCounter) -> None:
        self.summarizer = Summarizer(counter.count_messages, counter.count_text)
        super().__init__(budget=budget, model=self.summarizer.model, counter=counter)


FACTORIES: dict[str, Callable[[int, TiktokenCounter], Approach]] = {
    "langctx-cm": lambda b, c: Langctx(b, c, model=True, context_mode=True),
    "langctx-cm-cost": lambda b, c: Langctx(
        b, c, model=True, context_mode=True, cache_prices="anthropic"
    ),
    "langctx-cm-prefix": lambda b, c: Langctx(b, c, model=True, context_mode=True, prefix=True),
    "langctx-model": lambda b, c: Langctx(b, c, model=True),
    "langctx-blocking": lambda b, c: Langctx(b, c, model=True, background=False),
    "langctx-local": lambda b, c: Langctx(b, c, model=False),
    "langmem": LangMem,
    "middleware": Middleware,
}
SUMMARIZING_ANCHORS = ("langmem", "middleware")


# ---------------------------------------------------------------------------- one run


@dataclass
class Row:
    key: str
    name: str
    workload: str
    budget: int
    turns: int = 0
    requests: int = 0
    main: Usage = field(default_factory=Usage)
    summarizer: Usage = field(default_factory=Usage)
    summarizer_calls: int = 0
    blocking_calls: int = 0
    critical_s: float = 0.0
    """Modeled summarizer time on the critical path (blocking calls only)."""
    over_budget: int = 0
    max_tokens: int = 0
    orphans: int = 0
    lost_task: int = 0
    probes: dict[str, list[int]] = field(default_factory=dict)
    """Per probe: [held, checked] over the probed requests after the first compaction."""
    error: str | None = None
    summarizer_is_main: bool = False
    """The summarizer is the main model (its calls priced as the main model's, with the cache)."""
    evicted: int = 0
    """Tokens of the messages that were sent verbatim and are not in the last request (what the
    approach evicted, whatever it then did with them)."""

    def summarizer_per_evicted(self) -> float | None:
        """Summarizer input tokens over the evicted ones."""
        return self.summarizer.input / self.evicted if self.evicted else None

    def cost(self, sheet: str) -> float:
        prices = PRICE_SHEETS[sheet]
        if self.summarizer_is_main:
            return prices.main.cost(self.main) + prices.main.cost(self.summarizer)
        return prices.cost(self.main, self.summarizer)

    def input_cost(self, sheet: str) -> float:
        """The cost without the main model's output (the session's AI turns: the same for every
        approach, so nothing a memory can change)."""
        return self.cost(sheet) - self.main.output * PRICE_SHEETS[sheet].main.output / 1_000_000

    def probe_share(self, name: str) -> float | None:
        held, checked = self.probes.get(name, [0, 0])
        return held / checked if checked else None


class Meter:
    """Measures one approach's requests: cache prefix, budget, pairs, task, probes."""

    def __init__(
        self, row: Row, judge: TiktokenCounter, task: BaseMessage | None, truth: Truth
    ) -> None:
        self.row, self.judge, self.task, self.truth = row, judge, task, truth
        self.prev: list[BaseMessage] = []
        self.compacted = False
        self.sent: dict[str, int] = {}  # id -> tokens, of every message sent verbatim

    def evicted(self) -> int:
        """Tokens of the messages sent verbatim that the last request no longer holds."""
        last = {str(m.id) for m in self.prev}
        return sum(n for mid, n in self.sent.items() if mid not in last)

    def request(self, ctx: list[BaseMessage], output: int) -> None:
        sizes = [self.judge.count_message(m) for m in ctx]
        prefix = unchanged_prefix_tokens(self.prev, ctx, sizes)
        total = sum(sizes)
        r = self.row
        self.compacted = self.compacted or (
            bool(self.prev) and prefix < sum(self.judge.count_message(m) for m in self.prev)
        )
        self.prev = ctx
        for m, n in zip(ctx, sizes, strict=True):
            if m.id is not None and not str(m.id).startswith("langctx-"):  # not its own blocks
                self.sent.setdefault(str(m.id), n)
        r.requests += 1
        r.main = r.main + Usage(cached_input=prefix, uncached_input=total - prefix, output=output)
        r.max_tokens = max(r.max_tokens, total)
        r.over_budget += total > r.budget
        orphans, unanswered = pair_errors(ctx)
        r.orphans += orphans + unanswered
        if self.task is not None:
            r.lost_task += not any(
                m.id == self.task.id and m.content == self.task.content for m in ctx
            )
        if self.compacted and r.requests % PROBE_EVERY == 0:
            for name, result in probe_request(self.truth, ctx).items():
                if result.held is None:
                    continue
                slot = r.probes.setdefault(name, [0, 0])
                slot[0] += bool(result.held)
                slot[1] += 1


def _clear_caches() -> None:
    shared_cache().clear()
    shared_blocks().clear()
    background.clear()


def run_loop(key: str, budget: int, turns: int, seed: int = SEED) -> Row:
    _clear_caches()
    judge = TiktokenCounter()
    approach = FACTORIES[key](budget, TiktokenCounter())
    workload = f"agent loop, {turns} turns" + (f", seed {seed}" if seed != SEED else "")
    row = Row(key, approach.name, workload, budget, turns=turns)
    start = coding_session(0, seed=seed)
    truth = Truth(session_roots(start))
    for m in start:
        truth.add(m)
    task = next(m for m in start if isinstance(m, HumanMessage) and m.content == TASK)
    meter = Meter(row, judge, task, truth)
    try:
        approach.start(start)
        pending: list[BaseMessage] | None = None
        for turn in iter_turns(turns, seed=seed):
            if pending is not None:
                meter.request(pending, judge.count_message(turn[0]))  # this AI turn answers it
            for m in turn:
                truth.add(m)
            pending = approach.step(turn)
    except Exception as exc:  # an anchor failing is a result, not a crash of the benchmark
        row.error = f"{type(exc).__name__}: {exc}"
    row.evicted = meter.evicted()
    _finish(row, approach)
    return row


def _finish(row: Row, approach: Approach) -> None:
    s = approach.summarizer
    if s is not None:
        time.sleep(0.05)  # let a last background summary finish (it is counted, not waited for)
        row.summarizer = s.usage()
        row.summarizer_is_main = isinstance(s, PrefixCalls)
        row.summarizer_calls = len(s.calls)
        row.blocking_calls = approach.blocking_calls()
        # the blocking calls are the first ones of a fold; model them at the mean call's size
        if s.calls:
            mean_in = row.summarizer.uncached_input / len(s.calls)
            mean_out = row.summarizer.output / len(s.calls)
            row.critical_s = row.blocking_calls * SUMMARIZER_LATENCY.seconds(
                int(mean_in), int(mean_out)
            )


def run_sessions(key: str, budget: int, paths: list[Path]) -> Row:
    from langctx.cli.replay import read_session

    _clear_caches()
    judge = TiktokenCounter()
    row = Row(key, "", f"{len(paths)} recorded sessions", budget)
    for path in paths:
        approach = FACTORIES[key](budget, TiktokenCounter())
        row.name = approach.name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            session = read_session(path)
        messages = [
            m if m.id is not None else m.model_copy(update={"id": f"{path.stem}:{i}"})
            for i, m in enumerate(session.messages)
        ]
        truth = Truth(session_roots(messages, session.cwd))
        part = Row(key, approach.name, row.workload, budget)
        # which message is the task is the sessions' own question (agent preambles come first):
        # the T probe checks the ground truth's task instead of a "lost task" count
        meter = Meter(part, judge, None, truth)
        try:
            for batch, ai in _turns(messages):
                if ai is not None and batch:
                    ctx = approach.step(batch)
                    part.turns += 1
                    meter.request(ctx, judge.count_message(ai))
                elif batch:
                    approach.step(batch)
                for m in batch:
                    truth.add(m)
        except Exception as exc:
            row.error = f"{path.stem}: {type(exc).__name__}: {exc}"
        part.evicted = meter.evicted()
        _finish(part, approach)
        _add(row, part)
    return row


def _turns(messages: list[BaseMessage]) -> Iterator[tuple[list[BaseMessage], AIMessage | None]]:
    """(messages up to a model call, the AI message it produced) pairs, then the tail."""
    batch: list[BaseMessage] = []
    for m in messages:
        if isinstance(m, AIMessage):
            yield batch, m
            batch = []
        batch.append(m)
    yield batch, None


def _add(total: Row, part: Row) -> None:
    total.turns += part.turns
    total.requests += part.requests
    total.main = total.main + part.main
    total.summarizer = total.summarizer + part.summarizer
    total.summarizer_calls += part.summarizer_calls
    total.blocking_calls += part.blocking_calls
    total.critical_s += part.critical_s
    total.over_budget += part.over_budget
    total.max_tokens = max(total.max_tokens, part.max_tokens)
    total.orphans += part.orphans
    total.lost_task += part.lost_task
    total.evicted += part.evicted
    for name, (held, checked) in part.probes.items():
        slot = total.probes.setdefault(name, [0, 0])
        slot[0] += held
        slot[1] += checked
    total.error = total.error or part.error
    total.summarizer_is_main = part.summarizer_is_main


# ---------------------------------------------------------------------------- wall time


def run_wall(key: str, turns: int, *, summarizer_latency: bool) -> dict[str, Any]:
    """A real ``create_agent`` run with sleeping scripted models; wall time and model calls."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    from langctx import LangctxMiddleware

    _clear_caches()
    counter = TiktokenCounter()
    outputs: dict[str, str] = {}
    responses: list[Any] = []
    for turn in iter_turns(turns, seed=SEED):
        responses.append(turn[0])
        for m in turn[1:]:
            assert isinstance(m, ToolMessage)
            outputs[m.tool_call_id] = str(m.content)
    responses.append(AIMessage("All tests pass now."))

    def main_latency(messages: list[BaseMessage], answer: AIMessage) -> float:
        return MAIN_LATENCY.seconds(counter.count_messages(messages), counter.count_message(answer))

    def summary_latency(messages: list[BaseMessage], answer: AIMessage) -> float:
        if not summarizer_latency:
            return 0.0
        return WALL_SUMMARIZER_LATENCY.seconds(
            counter.count_messages(messages), counter.count_message(answer)
        )

    model = ScriptedChatModel(responses=responses, latency=main_latency)
    summarizer = ScriptedChatModel(
        responses=[lambda ms: summary_for(ms)], cycle=True, latency=summary_latency
    )

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return ""

    @tool
    def run_command(command: str) -> str:
        """Run a command."""
        return ""

    @tool
    def edit_file(path: str, old: str, new: str) -> str:
        """Edit a file."""
        return ""

    from langchain.agents.middleware import wrap_tool_call

    @wrap_tool_call
    def scripted_outputs(request: Any, handler: Any) -> ToolMessage:
        call = request.tool_call
        return ToolMessage(outputs[call["id"]], tool_call_id=call["id"], name=call["name"])

    if key == "none":
        middleware: list[Any] = []
    elif key == "langctx":
        middleware = [
            LangctxMiddleware(max_tokens=8_000, token_counter=counter, summarizer=summarizer)
        ]
    else:
        middleware = [
            SummarizationMiddleware(
                model=summarizer,
                trigger=("tokens", 6_400),
                keep=("tokens", 2_400),
                token_counter=counter.count_messages,  # type: ignore[arg-type]
            )
        ]
    agent = create_agent(
        model,
        [read_file, run_command, edit_file],
        system_prompt="You are a coding agent.",
        middleware=[*middleware, scripted_outputs],
        checkpointer=InMemorySaver(),
    )
    cfg: Any = {"configurable": {"thread_id": f"wall-{key}"}, "recursion_limit": 10 * turns + 10}
    gc.collect()
    t0 = time.perf_counter()
    agent.invoke({"messages": [HumanMessage(TASK)]}, cfg)
    n = 0
    while model._index < len(model.responses):  # the agent stops at a turn without tool calls
        n += 1
        agent.invoke({"messages": [HumanMessage(f"Go on ({n}).")]}, cfg)
    wall = time.perf_counter() - t0
    return {
        "approach": key,
        "summarizer_latency": summarizer_latency,
        "wall_s": round(wall, 3),
        "main_calls": len(model.calls),
        "summarizer_calls": len(summarizer.calls),
    }


# ---------------------------------------------------------------------------- report


def _k(n: float) -> str:
    return f"{n / 1000:,.0f}k" if n >= 10_000 else f"{n:,.0f}"


def _ratio(x: float | None) -> str:
    return "–" if x is None else f"{x:.2f}x"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def table(rows: list[Row]) -> list[str]:
    out = [
        "| workload | budget | approach | summarizer calls (blocking) | summarizer in / out | summarizer in / evicted | main input | cached share | cost, Anthropic | cost, OpenAI | modeled summarizer time on the path | over budget (max) | orphans | lost task | probes T/C/F/L/N/U/E |",
        "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for r in rows:
        probes = "/".join(_pct(r.probe_share(p)) for p in PROBES)
        err = f" **failed: {r.error}**" if r.error else ""
        out.append(
            f"| {r.workload} | {r.budget // 1000}k | {r.name}{err} | {r.summarizer_calls} ({r.blocking_calls}) | "
            f"{_k(r.summarizer.input)} / {_k(r.summarizer.output)} | {_ratio(r.summarizer_per_evicted())} | {_k(r.main.input)} | "
            f"{_pct(r.main.cached_share)} | ${r.cost('anthropic'):.3f} | ${r.cost('openai'):.3f} | "
            f"{r.critical_s:.0f} s | {r.over_budget} ({r.max_tokens:,}) | {r.orphans} | "
            f"{r.lost_task if r.turns and 'loop' in r.workload else '–'} | {probes} |"
        )
    return out


def verdicts(rows: list[Row]) -> list[str]:
    out: list[str] = []
    groups: dict[tuple[str, int], list[Row]] = {}
    for r in rows:
        groups.setdefault((r.workload, r.budget), []).append(r)
    for (workload, budget), group in groups.items():
        by = {r.key: r for r in group}
        anchors = [by[k] for k in SUMMARIZING_ANCHORS if k in by and not by[k].error]
        for key in ("langctx-cm", "langctx-cm-cost", "langctx-cm-prefix", "langctx-model"):
            if key in by and anchors:
                out.append(_verdict(by[key], anchors, by.get("middleware"), workload, budget))
    return out + _pooled_verdicts(rows)


def _pooled_verdicts(rows: list[Row]) -> list[str]:
    """The same over the agent loops of several seeds (each approach's rows summed)."""
    pools: dict[tuple[int, int], dict[str, Row]] = {}
    seeds: dict[tuple[int, int], set[str]] = {}
    for r in rows:
        if not r.workload.startswith("agent loop"):
            continue
        where = (r.turns, r.budget)
        seeds.setdefault(where, set()).add(r.workload)
        total = pools.setdefault(where, {}).setdefault(
            r.key, Row(r.key, r.name, "", r.budget, summarizer_is_main=r.summarizer_is_main)
        )
        _add(total, r)
    out = []
    for (turns, budget), by in pools.items():
        if len(seeds[(turns, budget)]) < 2:
            continue
        workload = f"agent loop, {turns} turns, {len(seeds[(turns, budget)])} seeds summed"
        out += verdicts([replace(r, workload=workload) for r in by.values()])
    return out


def _verdict(ours: Row, anchors: list[Row], mw: Row | None, workload: str, budget: int) -> str:
    cheapest = min(anchors, key=lambda r: r.cost("anthropic"))
    ratio = ours.cost("anthropic") / cheapest.cost("anthropic")
    openai = ours.cost("openai") / min(a.cost("openai") for a in anchors)
    inputs = ours.input_cost("anthropic") / cheapest.input_cost("anthropic")
    line = (
        f"- {workload}, {budget // 1000}k: {ours.name} costs {ratio:.3f}x the cheapest "
        f"summarizing anchor ({cheapest.name}) under the Anthropic sheet ({openai:.3f}x under "
        f"OpenAI's; {inputs:.3f}x without the main model's output, the same for all); cached "
        f"share {_pct(ours.main.cached_share)}"
    )
    if mw is not None:
        line += (
            f"; summarizer calls {ours.summarizer_calls} vs the middleware's {mw.summarizer_calls}"
        )
    per = ours.summarizer_per_evicted()
    if per is not None:
        line += f"; summarizer input {per:.2f}x the tokens it evicted"
    return line + "."


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="100 / 500 turns at 8k, no sessions")
    parser.add_argument(
        "--no-wall", action="store_true", help="skip the create_agent wall-time runs"
    )
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    parser.add_argument("--only", nargs="*", default=None, help="approach keys to run")
    parser.add_argument(
        "--turns", nargs="*", type=int, default=None, help="agent-loop lengths (default by mode)"
    )
    parser.add_argument(
        "--seeds", nargs="*", type=int, default=[SEED], help=f"agent-loop seeds (default {SEED})"
    )
    parser.add_argument("--wall-only", action="store_true", help="only the create_agent runs")
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite the report from the last run's JSON"
    )
    args = parser.parse_args(argv)
    if args.report_only:
        saved = __import__("json").loads(RESULTS_JSON.read_text(encoding="utf-8"))
        kept = [_row(r) for r in saved["rows"]]
        RESULTS_MD.write_text(report(kept, saved["wall"], saved.get("seconds", 0.0)), "utf-8")
        return 0
    seed_tiktoken_cache()
    keys = args.only or list(FACTORIES)
    started = time.perf_counter()
    rows: list[Row] = []
    turn_counts = args.turns or ((100, 500) if args.quick else TURN_COUNTS)
    budgets = (8_000,) if args.quick else BUDGETS
    for budget in () if args.wall_only else budgets:
        for turns in turn_counts:
            for seed in args.seeds:
                for key in keys:
                    rows.append(run_loop(key, budget, turns, seed))
                    print(table(rows[-1:])[-1], flush=True)
    if not args.quick and not args.wall_only:
        paths = sorted(p for p in _common.DATA.rglob("*") if p.is_file() and _session_file(p))
        for key in keys:
            rows.append(run_sessions(key, 32_000, paths))
            print(table(rows[-1:])[-1], flush=True)
    wall: list[dict[str, Any]] = []
    if not args.no_wall:
        for key in ("none", "langctx", "middleware"):
            for latency in (False,) if key == "none" else (True, False):
                wall.append(run_wall(key, WALL_TURNS, summarizer_latency=latency))
                print(wall[-1], flush=True)
    text = report(rows, wall, time.perf_counter() - started)
    print(text)
    if not args.no_write:
        RESULTS_MD.write_text(text, encoding="utf-8")
        _common.write_json(
            RESULTS_JSON,
            {
                "rows": [{**asdict(r), "cost": {s: r.cost(s) for s in PRICE_SHEETS}} for r in rows],
                "wall": wall,
                "seconds": time.perf_counter() - started,
                "environment": _common.environment(
                    ["langchain-core", "langchain", "langmem", "langgraph"]
                ),
            },
        )
    return 0


def _row(saved: dict[str, Any]) -> Row:
    """A row of the results JSON back as a :class:`Row`."""
    fields = {k: v for k, v in saved.items() if k != "cost"}
    fields["main"], fields["summarizer"] = Usage(**fields["main"]), Usage(**fields["summarizer"])
    return Row(**fields)


def _session_file(p: Path) -> bool:
    return p.suffix in (".jsonl", ".json") and "subagents" not in p.parts and "truth" not in p.name


def wall_lines(wall: list[dict[str, Any]]) -> list[str]:
    if not wall:
        return []
    by = {(w["approach"], w["summarizer_latency"]): w for w in wall}
    out = [
        "| approach | wall, summarizer sleeping | wall, summarizer instant | added by compaction | main calls | summarizer calls |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    added: dict[str, float] = {}
    for key in ("langctx", "middleware"):
        on, off = by.get((key, True)), by.get((key, False))
        if on is None or off is None:
            continue
        added[key] = on["wall_s"] - off["wall_s"]
        out.append(
            f"| {key} | {on['wall_s']:.2f} s | {off['wall_s']:.2f} s | {added[key]:+.2f} s | "
            f"{on['main_calls']} | {on['summarizer_calls']} |"
        )
    none = by.get(("none", False))
    if none is not None:
        out.append(
            f"| no memory (reference) | – | {none['wall_s']:.2f} s | – | {none['main_calls']} | 0 |"
        )
    if "langctx" in added and added.get("middleware", 0) > 0:
        out.append("")
        out.append(
            f"langctx's compaction adds {added['langctx']:+.2f} s, "
            f"{added['langctx'] / added['middleware']:.1%} of the {added['middleware']:.2f} s the middleware's adds."
        )
    return out


def report(rows: list[Row], wall: list[dict[str, Any]], seconds: float) -> str:
    env = _common.environment(["langchain-core", "langchain", "langmem", "langgraph"])
    lines = [
        "# Cost and latency: langctx beside LangMem and LangChain's SummarizationMiddleware",
        "",
        f"Generated by `uv run --group bench python bench/cost.py` ({seconds / 60:.1f} min). "
        f"Versions: {', '.join(f'{k} {v}' for k, v in env.get('versions', {}).items())}.",
        "",
        (__doc__ or "").split("\n\n", 2)[2].split("The summarizer is")[0].strip(),
        "",
        "The summarizer is the same scripted model for everyone (a fixed-structure answer naming "
        "the files and latest error it was shown, ~120 tokens). Cached share: the share of "
        "main-model input that is an unchanged leading run of messages of the previous request "
        "(what a provider's prefix cache reuses; a changed message breaks it). Cost: main-model "
        "requests with cache reads and writes priced by the sheet, summarizer calls uncached, "
        "outputs of both; the main model's outputs are the session's AI turns (the same for every "
        "approach). Summarizer in / evicted: the summarizer's input tokens over the tokens of the "
        "messages sent verbatim that the last request no longer holds. Probes: share of probed "
        "requests after the first compaction in which the task, the user's constraints, the "
        "modified files, the latest failure, the next step, the latest user message and the "
        "earlier user messages are still there (`langctx replay`'s independent parser; every 5th "
        "request; – when the workload has none).",
        "",
        "Price sheets (dollars per million tokens):",
        "",
    ]
    for sheet in PRICE_SHEETS.values():
        lines.append(
            f"- **{sheet.name}**: main input {sheet.main.input}, cache read {sheet.main.cached_input}, "
            f"cache write {sheet.main.cache_write}, output {sheet.main.output}; summarizer input "
            f"{sheet.summarizer.input}, output {sheet.summarizer.output} ({sheet.source})."
        )
    lines += ["", "## Results", "", *table(rows), "", "## Against the targets", "", *verdicts(rows)]
    if wall:
        lines += [
            "",
            f"## Wall time of a real create_agent run ({WALL_TURNS} turns, 8k budget)",
            "",
            "Main model: 200 ms + input at 50k tokens/s + output at 500 tokens/s; summarizer: "
            "100 ms + the same rates. 'Added by compaction' = wall time with the sleeping "
            "summarizer minus wall time with one that answers at once (everything else equal).",
            "",
            *wall_lines(wall),
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
