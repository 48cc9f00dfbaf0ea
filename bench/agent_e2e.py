"""The whole agent at the defaults users get: CPU per step and checkpoint bytes, side by side.

Run by hand from the repository root::

    uv run --group bench python bench/agent_e2e.py        # CPU at 100 and 600 turns, bytes at 300
    uv run --group bench python bench/agent_e2e.py --turns 2000 --bytes-turns 1000
    uv run --group bench python bench/agent_e2e.py --turns 20 --bytes-turns 20 --no-write  # smoke

With ``LANGCTX_PG_URI`` set (e.g. ``postgresql://postgres@127.0.0.1:5432/test``) the bytes are
also measured on ``PostgresSaver``.

A scripted model and a ``read_file`` tool returning ~3 KB (the session of
``bench/checkpoint_storage.py``: the agent answers and the user says "Go on" every 25 tool turns),
the same script and tool for every approach, each at its own defaults, in one process, one after
the other. Every approach that summarizes with a model gets the same scripted summarizer (the same
text, ``--summary-latency`` seconds per call, 0.2 by default), and the main model carries
``profile={"max_input_tokens": 9412}`` (8,000 is 85% of it):

- ``plain``: ``create_agent``, no middleware (the log kept, nothing projected);
- ``langctx``: ``create_agent`` with ``LangctxMiddleware(max_tokens=8000, summarizer=...)`` (its
  defaults otherwise: archive in the state, summaries in the background);
- ``langctx-local``: the same without ``summarizer=`` (langctx's local summarizer, no model call);
- ``summarization``: ``create_agent`` with LangChain's ``SummarizationMiddleware(model=...,
  trigger=("tokens", 6400), keep=("tokens", 2400))`` and its default token counter;
- ``deepagents``: ``create_deep_agent(model=..., tools=[read_file], system_prompt=...)`` at its
  defaults (its summarization triggers at 85% of the profile's window, keeps 10%, offloads the
  evicted history to its state backend, and summarizes with the agent's own model: the scripted
  model hands that prompt to the shared summarizer; the user's ``read_file`` replaces its own);
- ``langmem``: LangMem's ``SummarizationNode(model=..., max_tokens=8000,
  output_messages_key="llm_input_messages")`` (its other defaults: ``max_summary_tokens=256``,
  ``count_tokens_approximately``) as the ``pre_model_hook`` of LangGraph's ``create_react_agent``
  with a ``context`` key in the state, as LangMem's and LangGraph's docs wire it (the node's
  default output key, ``summarized_messages``, is not read by ``create_react_agent``). Its own
  trim of the summarizer's input (``start_on="human"``) comes out empty here too, so it warns
  ("Failed to trim messages ...") and sends the whole span to summarize;
- ``trim``: ``create_react_agent`` with the ``pre_model_hook`` of LangGraph's docs ("manage
  message history"): ``trim_messages(state["messages"], strategy="last",
  token_counter=count_tokens_approximately, max_tokens=8000, start_on="human", end_on=("human",
  "tool"))`` returned as ``llm_input_messages`` (the model's input only; ``messages`` keeps the
  whole log). LangChain v1's docs trim ``create_agent`` with a ``@before_model`` that deletes
  state instead (``RemoveMessage(REMOVE_ALL_MESSAGES)``), and not with ``trim_messages``. In this
  session the last human message is mostly more than 8,000 tokens back, so ``start_on="human"``
  trims to nothing, and ``create_react_agent`` then gives the model the whole log (it takes
  ``llm_input_messages or messages``): the *model input* column shows it;
- ``langctx-delta`` (only with ``--only ... langctx-delta``): ``langctx`` with one argument more,
  ``create_agent(..., state_schema=LangctxDeltaAgentState)``, which makes ``messages`` a
  ``DeltaChannel`` too (``create_agent`` lets its own ``AgentState`` win a field that a
  middleware's schema declares, so the middleware cannot do it by itself);
- ``react`` (only with ``--only ... react``): ``create_react_agent`` without a hook, the baseline
  of ``langmem`` and ``trim``. Apart from the hook, they pay for the prebuilt agent itself: with a
  ``pre_model_hook`` a third step per turn (one more checkpoint, each holding ``messages`` whole,
  and ``llm_input_messages``), and every tool call sent to the tool node with the whole state
  (kept in the checkpoint writes).

CPU is process time (the model, the tools, the hooks and middleware, the checkpointer, every
thread of the process) on ``InMemorySaver``: in all and per tool step (from one ``"tools"`` update
of ``stream_mode="updates"`` to the next; median of the first and of the last 100 steps).
``langctx`` and ``summarization`` keep every checkpoint, as ``InMemorySaver`` does by default
(theirs hold the window; langctx's archive, a ``DeltaChannel``, is rebuilt from their writes).
The variants whose every checkpoint holds the whole log (``plain``, ``langmem``, ``trim``,
``react``) have the thread's older checkpoints dropped after each run (each user message),
unmeasured: kept, they would take tens of GB at 2,000 turns, and LangGraph reads the latest
only (``--keep-checkpoints`` keeps them too). *Model input*:
``count_tokens_approximately`` of what the model was given at each call, the system prompt
included (median and max over the calls).

Bytes, after ``--bytes-turns`` turns, against the content the thread produced (the UTF-8 bytes of
the user's, the model's and the tool's message contents):

- ``SqliteSaver``: a fresh file per variant (WAL mode, as ``SqliteSaver`` sets it up), measured
  after the connection closed: the file plus its ``-wal`` and ``-shm`` if any are left (SQLite
  checkpoints the WAL into the file and removes it on close);
- ``PostgresSaver`` (with ``LANGCTX_PG_URI``): a fresh schema per variant (only that thread in
  it), measured before it is dropped: ``pg_total_relation_size`` (heap, TOAST, indexes, free
  space and visibility maps) of ``checkpoints``, ``checkpoint_blobs`` and ``checkpoint_writes``.

Results: ``bench/results/agent_e2e.md``.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _common
from checkpoint_storage import CHUNK, read_file_tool, script
from deepagents import create_deep_agent
from langchain.agents import create_agent
from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately, trim_messages
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.prebuilt import create_react_agent
from langgraph.prebuilt.chat_agent_executor import AgentState as ReactAgentState
from langgraph.warnings import LangGraphDeprecatedSinceV10
from langmem.short_term import SummarizationNode

from langctx.agent import create_agent as langctx_create_agent
from langctx.cli.demo.session import SYSTEM_PROMPT, TASK
from langctx.delta_state import LangctxDeltaAgentState
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
RESULTS_MD = ROOT / "bench" / "results" / "agent_e2e.md"
VARIANTS = ("plain", "langctx", "langctx-local", "summarization", "deepagents", "langmem", "trim")
EXTRA = ("langctx-delta", "entry", "react")
"""Run only when named in ``--only``: langctx with delta-stored ``messages``; ``langctx.create_agent``
(the entry point: delta ``messages``, the folded log in a store beside the checkpoints) with the
model summarizer; and ``create_react_agent`` without a hook, the baseline of ``langmem`` and
``trim``."""
WHOLE_LOG = ("plain", "langmem", "trim", "react")
"""Variants whose every checkpoint holds the whole log (pruned on ``InMemorySaver``, see above)."""
EDGE = 100
BUDGET = 8000
SUMMARY = "Goal: fix the parser. Read the modules; nested lists still flatten."
SUMMARY_LATENCY_S = 0.2
"""How long every approach's scripted summarizer takes per call (``--summary-latency``)."""
WINDOW = round(BUDGET / 0.85)
"""The main model's ``profile["max_input_tokens"]``: deepagents summarizes at 85% of it (8,000)."""
PG_TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


@dataclass
class Run:
    variant: str
    turns: int
    saver: str
    cpu_s: float = 0.0
    step_cpu_ms: list[float] = field(default_factory=list)
    input_tokens: list[int] = field(default_factory=list)
    """``count_tokens_approximately`` of the model's input, per model call."""
    db_bytes: int = 0
    content_bytes: int = 0
    load_s: float = 0.0
    """CPU the checkpointer spent rebuilding delta channels at run starts (``InMemorySaver``)."""
    summarizer_calls: int = 0
    orphans: int = 0
    """Tool results sent without the AI message that called them (the provider rejects them)."""
    without_task: int = 0
    """Model calls whose input does not hold the task (the first user message) verbatim."""
    wall_s: float = 0.0
    first_update_ms: list[float] = field(default_factory=list)
    """Wall time from each user message to the model's first response (what a user waits
    for: loading the thread, the hooks before the model, the scripted model's call)."""

    def edge(self, last: bool) -> float:
        steps = self.step_cpu_ms[-EDGE:] if last else self.step_cpu_ms[:EDGE]
        return statistics.median(steps) if steps else 0.0


# ---------------------------------------------------------------------- the agents


class LangMemState(ReactAgentState):
    """``create_react_agent``'s state with the ``context`` key LangMem's node keeps its summary in."""

    context: dict[str, Any]


def _summarizer(latency: float) -> ScriptedChatModel:
    """The scripted summarizer every approach gets: the same text, the same latency."""
    return ScriptedChatModel(responses=[SUMMARY], cycle=True, latency=latency)


def _is_summary_prompt(messages: Sequence[BaseMessage]) -> bool:
    """deepagents summarizes with the agent's own model: its prompt is LangChain's."""
    return bool(messages) and "Context Extraction Assistant" in messages[-1].text


def _main_model(
    responses: list[Any], summarizer: ScriptedChatModel, latency: float = 0.0
) -> ScriptedChatModel:
    """The agent's model: plays ``responses``; a summary prompt goes to ``summarizer``."""
    steps = iter(responses)

    def respond(messages: list[BaseMessage]) -> Any:
        if _is_summary_prompt(messages):
            return summarizer.invoke(messages)
        return next(steps)

    def delay(messages: list[BaseMessage], answer: Any) -> float:
        return 0.0 if _is_summary_prompt(messages) else latency  # the summarizer sleeps its own

    return ScriptedChatModel(
        responses=[respond], cycle=True, latency=delay, profile={"max_input_tokens": WINDOW}
    )


def _trim_hook(state: dict[str, Any]) -> dict[str, Any]:
    """LangGraph's documented trimming ``pre_model_hook``: the model's input only."""
    trimmed = trim_messages(
        state["messages"],
        strategy="last",
        token_counter=count_tokens_approximately,
        max_tokens=BUDGET,
        start_on="human",
        end_on=("human", "tool"),
    )
    return {"llm_input_messages": trimmed}


def _agent(
    variant: str, model: ScriptedChatModel, tools: list[Any], saver: Any, summarizer: Any
) -> Any:
    if variant == "deepagents":
        return create_deep_agent(
            model=model, tools=tools, system_prompt=SYSTEM_PROMPT, checkpointer=saver
        )
    if variant in ("langmem", "trim", "react"):
        hook: Any = _trim_hook if variant == "trim" else None
        if variant == "langmem":
            hook = SummarizationNode(
                model=summarizer, max_tokens=BUDGET, output_messages_key="llm_input_messages"
            )
        with warnings.catch_warnings():  # create_react_agent is deprecated since LangGraph 1.0
            warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
            return create_react_agent(
                model,
                tools,
                prompt=SYSTEM_PROMPT,
                pre_model_hook=hook,
                state_schema=LangMemState if variant == "langmem" else None,
                checkpointer=saver,
            )
    if variant == "entry":
        memory = LangctxMiddleware(max_tokens=BUDGET, summarizer=summarizer)
        return langctx_create_agent(
            model, tools, system_prompt=SYSTEM_PROMPT, memory=memory, checkpointer=saver
        )
    middleware: list[Any] = []
    schema: Any = None
    if variant.startswith("langctx"):
        model_summarizer = {} if variant == "langctx-local" else {"summarizer": summarizer}
        middleware = [LangctxMiddleware(max_tokens=BUDGET, **model_summarizer)]
        schema = LangctxDeltaAgentState if variant == "langctx-delta" else None
    elif variant == "summarization":
        middleware = [
            SummarizationMiddleware(
                model=summarizer, trigger=("tokens", 6400), keep=("tokens", 2400)
            )
        ]
    return create_agent(
        model,
        tools=tools,
        system_prompt=SYSTEM_PROMPT,
        middleware=middleware,
        state_schema=schema,
        checkpointer=saver,
    )


# ---------------------------------------------------------------------- the savers


class _LatestInMemorySaver(InMemorySaver):
    """``InMemorySaver`` that forgets a thread's older checkpoints when told (between runs).

    For :data:`WHOLE_LOG` variants: the whole log held in the state of every checkpoint kept
    would need tens of GB at 2,000 turns; each step does the same work without them (LangGraph
    reads the latest checkpoint only).
    """

    load_s = 0.0
    """Process time spent rebuilding delta channels from the checkpoint history (run starts)."""

    def get_delta_channel_history(self, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return super().get_delta_channel_history(**kwargs)
        finally:
            self.load_s += time.process_time() - started

    def prune(self, thread_id: str) -> None:
        for ns, checkpoints in self.storage[thread_id].items():
            latest = max(checkpoints)
            versions = self.serde.loads_typed(checkpoints[latest][0])["channel_versions"]
            for cid in [c for c in checkpoints if c != latest]:
                del checkpoints[cid]
                self.writes.pop((thread_id, ns, cid), None)
            for key in [k for k in self.blobs if k[:2] == (thread_id, ns)]:
                if versions.get(key[2]) != key[3]:
                    del self.blobs[key]


def _sqlite_files(path: Path) -> list[Path]:
    return [Path(f"{path}{suffix}") for suffix in ("", "-wal", "-shm")]


@contextmanager
def _postgres(uri: str, schema: str) -> Iterator[Any]:
    """A ``PostgresSaver`` in a fresh schema, dropped afterwards."""
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg.rows import dict_row

    with psycopg.connect(uri, autocommit=True) as admin:
        admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        admin.execute(f"CREATE SCHEMA {schema}")
    try:
        with psycopg.connect(
            uri,
            autocommit=True,
            prepare_threshold=0,
            row_factory=dict_row,
            options=f"-c search_path={schema}",
        ) as conn:
            saver = PostgresSaver(conn)  # as PostgresSaver.from_conn_string opens it
            saver.setup()
            yield saver
    finally:
        with psycopg.connect(uri, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def _pg_bytes(saver: Any) -> int:
    """The checkpoint tables' bytes in the saver's schema (the thread is alone in it)."""
    query = " + ".join(f"pg_total_relation_size('{t}')" for t in PG_TABLES)
    return int(saver.conn.execute(f"SELECT {query} AS n").fetchone()["n"])


# ---------------------------------------------------------------------- one measured run


def _orphans(messages: Sequence[BaseMessage]) -> int:
    """Tool results in ``messages`` whose call no earlier AI message of it makes."""
    called: set[str] = set()
    n = 0
    for m in messages:
        if isinstance(m, AIMessage):
            called.update(str(tc["id"]) for tc in m.tool_calls)
        elif isinstance(m, ToolMessage):
            n += m.tool_call_id not in called
    return n


def _input_tokens(calls: Sequence[Sequence[BaseMessage]]) -> list[int]:
    """Approximate tokens of each model call's input (each message object counted once)."""
    seen: dict[int, int] = {}
    out = []
    for messages in calls:
        n = 0
        for m in messages:
            k = seen.get(id(m))
            if k is None:
                k = seen[id(m)] = count_tokens_approximately([m])
            n += k
        out.append(n)
    return out


def run(
    variant: str,
    turns: int,
    saver_kind: str,
    workdir: Path,
    pg_uri: str | None = None,
    keep_checkpoints: bool = False,
    summary_latency: float = SUMMARY_LATENCY_S,
    model_latency: float = 0.0,
) -> Run:
    responses, by_call, runs = script(turns)
    summarizer = _summarizer(summary_latency)
    model = _main_model(responses, summarizer, model_latency)
    result = Run(variant, turns, saver_kind)
    cfg: Any = {"configurable": {"thread_id": variant}, "recursion_limit": 10 * CHUNK + 20}
    db = workdir / f"{variant}-{turns}.sqlite"
    gc.collect()
    with ExitStack() as stack:
        if saver_kind == "sqlite":
            saver: Any = stack.enter_context(SqliteSaver.from_conn_string(str(db)))
        elif saver_kind == "postgres":
            schema = f"langctx_agent_e2e_{os.getpid()}_{variant.replace('-', '_')}"
            saver = stack.enter_context(_postgres(str(pg_uri), schema))
        else:
            saver = _LatestInMemorySaver()
        agent = _agent(variant, model, [read_file_tool(by_call)], saver, summarizer)
        wall_started = time.perf_counter()
        for n in range(runs):
            message = HumanMessage(TASK if n == 0 else f"Go on ({n}).", id=f"user-{n}")
            started = last = time.process_time()
            wall = time.perf_counter()
            for update in agent.stream({"messages": [message]}, cfg, stream_mode="updates"):
                if wall and ("model" in update or "agent" in update):
                    result.first_update_ms.append((time.perf_counter() - wall) * 1000)
                    wall = 0.0
                if "tools" in update:
                    now = time.process_time()
                    result.step_cpu_ms.append((now - last) * 1000)
                    last = now
            result.cpu_s += time.process_time() - started
            if isinstance(saver, _LatestInMemorySaver) and not keep_checkpoints:
                if variant in WHOLE_LOG:  # their checkpoints hold the whole log
                    saver.prune(variant)  # not measured
        result.wall_s = time.perf_counter() - wall_started
        result.summarizer_calls = len(summarizer.calls)
        if saver_kind == "postgres":
            result.db_bytes = _pg_bytes(saver)
        if isinstance(saver, _LatestInMemorySaver):
            result.load_s = saver.load_s
    if saver_kind == "sqlite":  # the connection closed: SQLite moved its WAL into the file
        result.db_bytes = sum(f.stat().st_size for f in _sqlite_files(db) if f.exists())
        for f in _sqlite_files(db):
            f.unlink(missing_ok=True)
    if len(result.step_cpu_ms) != turns:
        msg = f"{variant}: {len(result.step_cpu_ms)} tool steps, not {turns}"
        raise AssertionError(msg)
    if saver_kind == "memory":
        calls = [c for c in model.calls if not _is_summary_prompt(c)]
        result.input_tokens = _input_tokens(calls)
        result.orphans = sum(_orphans(c) for c in calls)
        result.without_task = sum(not any(TASK in m.text for m in c) for c in calls)
    texts = [TASK, *(f"Go on ({n})." for n in range(1, runs))]
    texts += [str(m.content) for m in responses] + list(by_call.values())
    result.content_bytes = sum(len(t.encode()) for t in texts)  # what the thread produced
    return result


# ---------------------------------------------------------------------- report


def _waits(r: Run) -> str:
    """Median wait of the first 5 and of the last 5 user messages (the thread's first left out)."""
    first, last = r.first_update_ms[1:6], r.first_update_ms[-5:]
    return " / ".join(f"{statistics.median(w):.0f}" if w else "-" for w in (first, last))


def _mb(n: float) -> str:
    return f"{n / 1e6:,.1f} MB" if n >= 1e7 else f"{n / 1e6:.2f} MB"


def _ratio(value: float, base: Run | None, attr: str) -> str:
    """``value`` against the same figure of ``base`` (the ``summarization`` run)."""
    if base is None:
        return "-"
    denominator = sum(base.input_tokens) if attr == "input_total" else getattr(base, attr)
    return f"{value / denominator:.2f}x" if denominator else "-"


def _cpu_table(cpu: Sequence[Run], keep_checkpoints: bool) -> list[str]:
    if not cpu:
        return []
    pruned = (
        "every checkpoint kept"
        if keep_checkpoints
        else "every checkpoint kept for langctx and summarization; for "
        + ", ".join(WHOLE_LOG)
        + " (whole-log checkpoints) the older ones dropped after each run (not measured)"
    )
    lines = [
        f"CPU on InMemorySaver, {pruned}.",
        "",
        "| variant | turns | wall s | vs summarization | summarizer calls | CPU s "
        "| vs summarization | of it, delta channels loaded at run starts "
        "| step ms first-100 / last-100 (median) | last / first "
        "| model input ~tokens (median / max) | model input ~tokens in all, vs summarization "
        f"| calls over the window ({WINDOW:,}) | calls without the task | orphan tool results |",
        "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    by_turns = {r.turns: r for r in cpu if r.variant == "summarization"}
    for r in cpu:
        first, last = r.edge(False), r.edge(True)
        base = by_turns.get(r.turns)
        tokens = r.input_tokens or [0]
        lines.append(
            f"| {r.variant} | {r.turns:,} | {r.wall_s:.1f} | {_ratio(r.wall_s, base, 'wall_s')} "
            f"| {r.summarizer_calls} | {r.cpu_s:.1f} | {_ratio(r.cpu_s, base, 'cpu_s')} "
            f"| {r.load_s:.1f} s | {first:.1f} / {last:.1f} "
            f"| {last / first if first else float('nan'):.2f} "
            f"| {statistics.median(tokens):,.0f} / {max(tokens):,} "
            f"| {sum(tokens):,} ({_ratio(sum(tokens), base, 'input_total')}) "
            f"| {sum(t > WINDOW for t in tokens)} | {r.without_task} | {r.orphans} |"
        )
    return [*lines, ""]


def _bytes_table(size: Sequence[Run]) -> list[str]:
    if not size:
        return []
    pg = {(r.variant, r.turns): r for r in size if r.saver == "postgres"}
    lines = [
        "Wait: wall time from a user message to the model's first response (median of the first 5 "
        "/ the last 5 user messages of the thread; the first message left out).",
        "",
        "| variant | turns | content of the thread | SqliteSaver file | file / content "
        "| wait ms first / last |"
        + (" PostgresSaver tables | tables / content | wait ms first / last |" if pg else ""),
        "|---|--:|--:|--:|--:|--:|" + ("--:|--:|--:|" if pg else ""),
    ]
    for r in size:
        if r.saver != "sqlite":
            continue
        row = (
            f"| {r.variant} | {r.turns:,} | {_mb(r.content_bytes)} | {_mb(r.db_bytes)} "
            f"| {r.db_bytes / max(1, r.content_bytes):.1f}x "
            f"| {_waits(r)} |"
        )
        if p := pg.get((r.variant, r.turns)):
            row += (
                f" {_mb(p.db_bytes)} | {p.db_bytes / max(1, p.content_bytes):.1f}x | {_waits(p)} |"
            )
        lines.append(row)
    if not pg:
        lines += ["", "PostgresSaver: not measured (`LANGCTX_PG_URI` unset)."]
    return [*lines, ""]


def report(
    cpu: Sequence[Run],
    size: Sequence[Run],
    env: dict[str, Any],
    argv: str,
    wall: float,
    keep_checkpoints: bool = False,
) -> str:
    lines = [
        "# The whole agent at defaults: CPU per step and checkpoint bytes",
        "",
        f"Generated by `uv run --group bench python bench/agent_e2e.py{argv}` ({wall / 60:.1f} min "
        f"wall; {env['machine']}, load average at start {env['load_average_at_start']}, shared "
        "with other work: compare the ratios of one run, not absolute times). Versions: "
        + ", ".join(f"{k} {v}" for k, v in env["versions"].items())
        + ". Method and what each variant is: the module docstring of `bench/agent_e2e.py`.",
        "",
        *_cpu_table(cpu, keep_checkpoints),
        *_bytes_table(size),
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, nargs="*", default=[100, 600])
    parser.add_argument("--bytes-turns", type=int, nargs="*", default=[300])
    parser.add_argument("--only", nargs="+", choices=VARIANTS + EXTRA, default=list(VARIANTS))
    parser.add_argument(
        "--keep-checkpoints",
        action="store_true",
        help="InMemorySaver keeps every checkpoint (its default; tens of GB at 2,000 turns)",
    )
    parser.add_argument(
        "--summary-latency",
        type=float,
        default=SUMMARY_LATENCY_S,
        help="seconds each scripted summarizer call takes (the same for every approach)",
    )
    parser.add_argument(
        "--model-latency",
        type=float,
        default=0.0,
        help="seconds each call of the agent's own model takes (the same for every approach)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS_MD, help="the results file")
    parser.add_argument("--no-write", action="store_true", help="print, do not write results")
    args = parser.parse_args(argv)
    pg_uri = os.environ.get("LANGCTX_PG_URI") or None
    env = _common.environment(
        (
            "langchain",
            "langchain-core",
            "langgraph",
            "langgraph-prebuilt",
            "langgraph-checkpoint",
            "langgraph-checkpoint-sqlite",
            "langgraph-checkpoint-postgres",
            "langmem",
            "deepagents",
        )
    )
    variants = [v for v in VARIANTS + EXTRA if v in args.only]
    started = time.perf_counter()
    cpu, size = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for turns in args.turns:
            for variant in variants:
                cpu.append(
                    run(
                        variant,
                        turns,
                        "memory",
                        Path(tmp),
                        None,
                        args.keep_checkpoints,
                        args.summary_latency,
                        args.model_latency,
                    )
                )
                print(f"{variant} {turns}: {cpu[-1].cpu_s:.1f} s CPU", flush=True)
        for turns in args.bytes_turns:
            for variant in variants:
                for kind in ("sqlite", "postgres") if pg_uri else ("sqlite",):
                    size.append(
                        run(
                            variant,
                            turns,
                            kind,
                            Path(tmp),
                            pg_uri,
                            False,
                            args.summary_latency,
                            args.model_latency,
                        )
                    )
                    print(f"{variant} {turns} {kind}: {_mb(size[-1].db_bytes)}", flush=True)
    given = sys.argv[1:] if argv is None else list(argv)
    shown = "".join(f" {a}" for a in given if a != "--no-write")
    wall = time.perf_counter() - started
    text = report(cpu, size, env, shown, wall, args.keep_checkpoints)
    print(text)
    if not args.no_write:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
