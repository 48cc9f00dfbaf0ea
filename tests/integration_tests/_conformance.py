"""The conformance matrix's cells: the paths users run, each checked for the same invariants.

A cell is one face (how langctx is wired into the agent) × archive × summarizer × checkpointer ×
sync/async × stream mode (LangChain's and LangGraph's documented loops, unchanged) × agent kind.
:func:`run_cell` plays a scripted 40-tool-call session of three user requests through the cell
and returns what every main-model request looked like; :func:`check` asserts the invariants.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, tool
from langgraph.channels import EphemeralValue
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.store.memory import InMemoryStore

from langctx import LangctxChannel, LangctxMiddleware, full_log, merge_langctx
from langctx import create_agent as langctx_create_agent
from langctx.delta_state import ArchivedBatches
from langctx.langgraph import (
    LangctxAgentState,
    LangctxNode,
    LangctxState,
    make_pre_model_hook,
    route_after_memory,
)
from langctx.recovery import with_overflow_recovery
from langctx.stores.archive import read_batches, thread_entries
from langctx.summarize import PrefixSummarizer
from langctx.testing import ScriptedChatModel, ai_tool_call
from langctx.tokens import TokenCounter
from tests.integration_tests._agents import every_compaction, require_postgres

SYSTEM = "You are a careful agent. Use the tools; answer briefly."
FACES = ("entry", "middleware", "node", "own_schema", "pre_model_hook")
ARCHIVES = ("state", "store", "none")
SUMMARIZERS = ("local", "model", "model_blocking", "prefix", "failing", "timeout")
SAVERS = ("memory", "sqlite", "postgres")
STREAMS = ("invoke", "values", "updates", "messages", "custom", "events")
KINDS = ("coding", "research", "data", "ops", "subagents")


@dataclass(frozen=True)
class Cell:
    """One path through langctx (see the module docstring)."""

    face: str = "middleware"
    archive: str = "state"
    summarizer: str = "local"
    saver: str = "memory"
    sync: bool = True
    stream: str = "invoke"
    kind: str = "coding"
    budget: int = 3000

    @property
    def id(self) -> str:
        mode = "sync" if self.sync else "async"
        return "-".join(
            [
                self.face,
                self.archive,
                self.summarizer,
                self.saver,
                mode,
                self.stream,
                self.kind,
                str(self.budget),
            ]
        )


# --- agent kinds: tools that return realistic outputs, and the scripted AI turns ---------------


def _lines(prefix: str, n: int, width: int = 9) -> str:
    return "\n".join(f"{prefix} {i:04d} " + "lorem ipsum dolor sit amet " * width for i in range(n))


def _kind_tools() -> dict[str, list[BaseTool]]:
    @tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        body = "\n".join(f"def f{i}(x):\n    return x + {i}" for i in range(60))
        return f"# {path}\n{body}"

    @tool
    def run_command(command: str) -> str:
        """Run a shell command."""
        if "pytest" in command:
            return (
                "FAILED tests/test_parser.py::test_nested - AssertionError: [1] != [[1]]\n"
                + _lines("collected", 30)
            )
        return _lines("out", 40)

    @tool
    def web_search(query: str) -> str:
        """Search the web."""
        hits = [
            f"{i + 1}. {query} result {i}: https://example.org/{i} — " + "summary " * 25
            for i in range(10)
        ]
        return "\n".join(hits)

    @tool
    def fetch_url(url: str) -> str:
        """Fetch a web page as text."""
        return f"Title: page at {url}\n" + _lines("para", 35)

    @tool
    def run_sql(query: str) -> str:
        """Run a read-only SQL query."""
        if "missing" in query:
            return 'ERROR: relation "missing" does not exist (SQLSTATE 42P01)'
        rows = "\n".join(f"| {i} | customer-{i} | {i * 17 % 997}.50 |" for i in range(60))
        return "| id | name | total |\n|---|---|---|\n" + rows

    @tool
    def grep_logs(pattern: str, service: str) -> str:
        """Search a service's logs."""
        return "\n".join(
            f"2026-12-01T10:{i % 60:02d}:00Z {service} INFO request id={i} path=/api/v1/items latency=12ms"
            for i in range(70)
        )

    @tool
    def get_metrics(metric: str) -> str:
        """A metric's series over the last hour."""
        return "\n".join(f"{metric} t={i} value={(i * 37) % 100}" for i in range(80))

    @tool
    def task(description: str, subagent_type: str) -> str:
        """Run a sub-agent on a task; returns its report."""
        return (
            f"REPORT ({subagent_type}): {description}\n"
            "FINDING: the flake comes from a shared tmp dir in tests/conftest.py\n"
            "RECOMMENDATION: use the tmp_path fixture per test\n" + _lines("trace", 30)
        )

    return {
        "coding": [read_file, run_command],
        "research": [web_search, fetch_url],
        "data": [run_sql],
        "ops": [grep_logs, get_metrics],
        "subagents": [task, read_file],
    }


def _calls(kind: str, k: int) -> AIMessage:
    """The ``k``-th tool call of an agent of ``kind`` (its id fixed, so runs compare)."""
    message = _call(kind, k)
    message.tool_calls[0]["id"] = f"call-{kind}-{k}"
    return message


def _call(kind: str, k: int) -> AIMessage:
    if kind == "coding":
        if k % 3 == 2:
            return ai_tool_call(
                "run_command", {"command": f"pytest tests/test_parser.py -k case{k}"}
            )
        return ai_tool_call("read_file", {"path": f"src/mod{k}.py"})
    if kind == "research":
        if k % 2:
            return ai_tool_call("fetch_url", {"url": f"https://example.org/{k}"})
        return ai_tool_call("web_search", {"query": f"context window compaction {k}"})
    if kind == "data":
        table = "missing" if k == 4 else f"orders_{k}"
        return ai_tool_call("run_sql", {"query": f"SELECT * FROM {table} LIMIT 60"})
    if kind == "ops":
        if k % 2:
            return ai_tool_call("get_metrics", {"metric": f"p99_latency_{k}"})
        return ai_tool_call("grep_logs", {"pattern": "ERROR", "service": f"svc-{k}"})
    if k % 3 == 0:
        return ai_tool_call(
            "task", {"description": f"investigate flake {k}", "subagent_type": "general"}
        )
    return ai_tool_call("read_file", {"path": f"tests/test_{k}.py"})


REQUESTS = (
    "First task: find the cause of the problem and tell me.",
    "Thanks. Now check the second area and report.",
    "Finally, summarise what you found in one paragraph.",
)
CALLS_PER_REQUEST = (13, 13, 14)


def requests_of(cell: Cell) -> tuple[str, ...]:
    """The user's requests, the task naming the cell: a process shares a background summary
    between memories whose folds are byte-identical, and each cell must pay for its own."""
    return (f"{REQUESTS[0]} (case {cell.id})", *REQUESTS[1:])


def _script(kind: str) -> list[Any]:
    out: list[Any] = []
    k = 0
    for r, n in enumerate(CALLS_PER_REQUEST):
        for _ in range(n):
            msg = _calls(kind, k)
            if k % 4 == 1:  # the agent thinks aloud sometimes
                msg.content = f"Conclusion {k}: step {k} of request {r + 1} looks fine."
            out.append(msg)
            k += 1
        out.append(f"Answer {r + 1}: done with request {r + 1}.")
    return out


# --- summarizers -----------------------------------------------------------------------------


@dataclass
class SummaryLog:
    """What a model summarizer returned, in order (each text carries a unique tag)."""

    texts: list[str] = field(default_factory=list)

    def respond(self, messages: list[BaseMessage]) -> str:
        tag = f"SUMMARY-TAG-{len(self.texts):03d}"
        text = f"Goal:\n- the user's requests\nCurrent status:\n- {tag}: work summarised"
        self.texts.append(tag)
        return text


def _summarizer(cell: Cell, log: SummaryLog) -> tuple[Any, dict[str, Any]]:
    """The ``summarizer=`` value and extra options for ``cell``."""
    if cell.summarizer == "local":
        return None, {}
    if cell.summarizer == "failing":
        return ScriptedChatModel(responses=[RuntimeError("summarizer down")], cycle=True), {}
    if cell.summarizer == "timeout":  # answers after its deadline: every fold keeps the stand-in
        slow = ScriptedChatModel(responses=[log.respond], cycle=True, latency=0.5)
        return slow, {"summary_timeout": 0.1}
    model = ScriptedChatModel(responses=[log.respond], cycle=True)
    if cell.summarizer == "prefix":  # the main model summarizes; ``model`` serves merges
        return PrefixSummarizer(model), {}
    if cell.summarizer == "model_blocking":
        return model, {"background_summaries": False}
    return model, {}


PREFIX_INSTRUCTION = "Pause the task and call no tool"


def _is_prefix_summary(messages: list[BaseMessage]) -> bool:
    return bool(messages) and _text(messages[-1]).startswith(PREFIX_INSTRUCTION)


def _main_model(script: list[Any], log: SummaryLog) -> ScriptedChatModel:
    """The agent's model: plays ``script``; a PrefixSummarizer's request to it gets a summary."""
    steps = iter(script)

    def respond(messages: list[BaseMessage]) -> Any:
        if _is_prefix_summary(messages):
            return log.respond(messages)
        return next(steps)

    return ScriptedChatModel(responses=[respond], cycle=True)


# --- faces -----------------------------------------------------------------------------------


@dataclass
class Built:
    graph: Any
    model: ScriptedChatModel
    summaries: SummaryLog
    system_in_request: bool
    counter: TokenCounter


def _saver(cell: Cell, stack: list[Callable[[], None]]) -> BaseCheckpointSaver[Any]:
    if cell.saver == "memory":
        return InMemorySaver()
    if cell.saver == "sqlite":
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        stack.append(conn.close)
        return SqliteSaver(conn)
    from langgraph.checkpoint.postgres import PostgresSaver
    from psycopg import Connection
    from psycopg.rows import dict_row

    conn_pg = Connection.connect(
        require_postgres(), autocommit=True, prepare_threshold=0, row_factory=dict_row
    )
    stack.append(conn_pg.close)
    saver = PostgresSaver(conn_pg)
    saver.setup()
    return saver


def _async_saver(cell: Cell, saver: BaseCheckpointSaver[Any]) -> BaseCheckpointSaver[Any]:
    """An async-capable saver for ``ainvoke`` (SqliteSaver and PostgresSaver are sync only)."""
    if cell.sync or cell.saver == "memory":
        return saver
    return _SyncAsAsync(saver)


class _SyncAsAsync(BaseCheckpointSaver[Any]):
    """A sync checkpointer served to an async graph in a worker thread (aiosqlite and psycopg's
    async pool would do the same with their own event loops; this keeps one connection)."""

    def __init__(self, inner: BaseCheckpointSaver[Any]) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner

    def get_tuple(self, config: Any) -> Any:
        return self.inner.get_tuple(config)

    def list(self, config: Any, **kw: Any) -> Iterator[Any]:
        return self.inner.list(config, **kw)

    def put(self, *a: Any, **kw: Any) -> Any:
        return self.inner.put(*a, **kw)

    def put_writes(self, *a: Any, **kw: Any) -> None:
        self.inner.put_writes(*a, **kw)

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.inner.get_next_version(current, channel)

    async def aget_tuple(self, config: Any) -> Any:
        return await asyncio.to_thread(self.inner.get_tuple, config)

    async def alist(self, config: Any, **kw: Any) -> Any:
        for item in await asyncio.to_thread(lambda: list(self.inner.list(config, **kw))):
            yield item

    async def aput(self, *a: Any, **kw: Any) -> Any:
        return await asyncio.to_thread(self.inner.put, *a, **kw)

    async def aput_writes(self, *a: Any, **kw: Any) -> None:
        await asyncio.to_thread(self.inner.put_writes, *a, **kw)


class OwnState(MessagesState, total=False):
    """A user's own schema, as docs/persistence.md declares it ("A state schema of your own")."""

    langctx: Annotated[LangctxChannel, merge_langctx]
    langctx_archive: ArchivedBatches
    llm_input_messages: Annotated[list[AnyMessage], EphemeralValue]
    project: str


def build(cell: Cell, stack: list[Callable[[], None]]) -> Built:
    """The graph of ``cell``, its main model and its summarizer's log."""
    tools = _kind_tools()[cell.kind]
    log = SummaryLog()
    model = _main_model(_script(cell.kind), log)
    summarizer, extra = _summarizer(cell, log)
    options: dict[str, Any] = {"max_tokens": cell.budget, **extra}
    if summarizer is not None:
        options["summarizer"] = summarizer
    store = InMemoryStore() if cell.archive == "store" else None
    archive: Any = {"state": "state", "store": store, "none": None}[cell.archive]
    saver = _async_saver(cell, _saver(cell, stack))
    if cell.face == "middleware":
        mw = LangctxMiddleware(archive=archive, **options)
        graph = create_agent(
            model,
            tools=tools,
            system_prompt=SYSTEM,
            middleware=[mw],
            checkpointer=saver,
            store=store,
        )
        return Built(graph, model, log, system_in_request=True, counter=mw.settings.counter)
    if cell.face == "entry":
        mw = LangctxMiddleware(archive=archive, **options)
        graph = langctx_create_agent(
            model, tools, system_prompt=SYSTEM, memory=mw, checkpointer=saver, store=store
        )
        return Built(graph, model, log, system_in_request=True, counter=mw.settings.counter)
    if cell.face == "pre_model_hook":
        from langgraph.prebuilt import create_react_agent

        hook = make_pre_model_hook(archive=archive, **options)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            graph = create_react_agent(
                with_overflow_recovery(model, hook.settings),
                tools=tools,
                prompt=SYSTEM,
                pre_model_hook=hook,
                state_schema=LangctxAgentState,
                checkpointer=saver,
                store=store,
            )
        return Built(graph, model, log, system_in_request=True, counter=hook.settings.counter)
    node = LangctxNode(archive=archive, **options)
    llm = with_overflow_recovery(model.bind_tools(tools), node.settings)

    def call_model(state: LangctxState, config: Any) -> dict[str, Any]:
        return {"messages": [llm.invoke(state["llm_input_messages"], config)]}

    async def acall_model(state: LangctxState, config: Any) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["llm_input_messages"], config)]}

    builder = StateGraph(OwnState if cell.face == "own_schema" else LangctxState)
    builder.add_node("memory", node)
    builder.add_node("model", RunnableLambda(call_model, afunc=acall_model))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "memory")
    builder.add_conditional_edges("memory", route_after_memory("model"), ["model", END])
    builder.add_conditional_edges("model", tools_condition, ["tools", END])
    builder.add_edge("tools", "memory")
    graph = builder.compile(checkpointer=saver, store=store)
    return Built(graph, model, log, system_in_request=False, counter=node.settings.counter)


# --- driving: the documented loops, unchanged ------------------------------------------------


def _sync_turn(
    cell: Cell, graph: Any, inp: dict[str, Any], cfg: dict[str, Any], seen: list[Any]
) -> None:
    if cell.stream == "invoke":
        graph.invoke(inp, cfg)
    elif cell.stream == "values":
        for chunk in graph.stream(inp, cfg, stream_mode="values"):
            seen.append(chunk["messages"][-1])
    elif cell.stream == "updates":
        for chunk in graph.stream(inp, cfg, stream_mode="updates"):
            _documented_updates(cell, chunk, seen)
    elif cell.stream == "messages":
        for token, metadata in graph.stream(inp, cfg, stream_mode="messages"):
            seen.append((metadata["langgraph_node"], token.content_blocks))
    elif cell.stream == "custom":
        for chunk in graph.stream(inp, cfg, stream_mode="custom"):
            seen.append(chunk)
    else:
        raise AssertionError("astream_events is async only")


async def _async_turn(
    cell: Cell, graph: Any, inp: dict[str, Any], cfg: dict[str, Any], seen: list[Any]
) -> None:
    if cell.stream == "invoke":
        await graph.ainvoke(inp, cfg)
    elif cell.stream == "values":
        async for chunk in graph.astream(inp, cfg, stream_mode="values"):
            seen.append(chunk["messages"][-1])
    elif cell.stream == "updates":
        async for chunk in graph.astream(inp, cfg, stream_mode="updates"):
            _documented_updates(cell, chunk, seen)
    elif cell.stream == "messages":
        async for token, metadata in graph.astream(inp, cfg, stream_mode="messages"):
            seen.append((metadata["langgraph_node"], token.content_blocks))
    elif cell.stream == "custom":
        async for chunk in graph.astream(inp, cfg, stream_mode="custom"):
            seen.append(chunk)
    else:
        async for event in graph.astream_events(inp, cfg, version="v2"):
            if event["event"] == "on_chat_model_end":
                seen.append(event["data"]["output"])


def _documented_updates(cell: Cell, chunk: dict[str, Any], seen: list[Any]) -> None:
    """LangChain's loop for ``create_agent`` (docs: agents, streaming): every step's update is a
    dict whose ``messages`` ends with the step's message; LangGraph's for a graph: a dict a node."""
    for step, data in chunk.items():
        if cell.face in ("middleware", "entry"):
            seen.append((step, data["messages"][-1].content_blocks))
        else:
            assert data is None or isinstance(data, dict), (step, data)
            seen.append(step)


@dataclass
class Outcome:
    cell: Cell
    requests: list[list[BaseMessage]]
    summaries: list[str]
    summarizer_calls: int
    folds: int
    state: dict[str, Any]
    full: list[BaseMessage]
    seen: list[Any]
    system_in_request: bool
    tokens: list[int]


def run_cell(cell: Cell) -> Outcome:
    """Play the three requests of ``cell``'s session through its graph."""
    stack: list[Callable[[], None]] = []
    try:
        built = build(cell, stack)
        cfg = {"configurable": {"thread_id": f"conf-{cell.id}"}, "recursion_limit": 500}
        seen: list[Any] = []
        inputs = [
            {"messages": [HumanMessage(text, id=f"user-{i}")]}
            for i, text in enumerate(requests_of(cell))
        ]
        if not built.system_in_request:
            inputs[0]["messages"].insert(0, SystemMessage(SYSTEM, id="system"))
        if cell.sync:
            for inp in inputs:
                _sync_turn(cell, built.graph, inp, cfg, seen)
        else:

            async def play() -> None:
                for inp in inputs:
                    await _async_turn(cell, built.graph, inp, cfg, seen)

            asyncio.run(play())
        state = built.graph.get_state(cfg).values
        requests = [list(c) for c in built.model.calls if not _is_prefix_summary(list(c))]
        store = getattr(built.graph, "store", None)
        tid = cfg["configurable"]["thread_id"]
        return Outcome(
            cell=cell,
            requests=requests,
            summaries=list(built.summaries.texts),
            summarizer_calls=len(built.summaries.texts),
            folds=len(every_compaction_any(state, store, tid)),
            state=state,
            full=full_log(store, tid, state) if store is not None else full_log(state),
            seen=seen,
            system_in_request=built.system_in_request,
            tokens=[
                built.counter.count_messages(_budgeted(r, built.system_in_request))
                for r in requests
            ],
        )
    finally:
        for close in reversed(stack):
            close()


def every_compaction_any(state: dict[str, Any], store: Any, thread_id: str) -> list[dict[str, Any]]:
    """Every compaction entry of the thread, archived (in the state or a store) or in the channel."""
    if store is None:
        return every_compaction(state)
    return thread_entries(read_batches(store, thread_id, state), state.get("langctx"))[0]


def _budgeted(request: list[BaseMessage], system_outside: bool) -> list[BaseMessage]:
    """What the budget covers: the request less the system prompt the agent adds outside it."""
    if system_outside and request and isinstance(request[0], SystemMessage):
        return request[1:]
    return request


_RANDOM_ID = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|cmp-[0-9a-f]{12}"
)


def digest(out: Outcome) -> str:
    """A digest of every main-model request of a run (what two processes must agree on). The
    ids ``ToolNode`` gives tool messages are random (uuid4), and so are the entry ids derived from
    them: each is replaced by the order of its first appearance."""
    text = json.dumps([[[m.type, _text(m)] for m in r] for r in out.requests])
    seen: dict[str, str] = {}
    text = _RANDOM_ID.sub(lambda m: seen.setdefault(m.group(), f"<id{len(seen)}>"), text)
    return hashlib.sha256(text.encode()).hexdigest()


# --- the invariants --------------------------------------------------------------------------


def _text(m: BaseMessage) -> str:
    return m.text if isinstance(m.content, list) else str(m.content)


def check(out: Outcome) -> None:
    """Assert every invariant of the matrix on one cell's outcome."""
    cell = out.cell
    assert out.requests, "the main model was never called"
    requests = [_budgeted(r, out.system_in_request) for r in out.requests]
    over = [(n, t) for n, t in enumerate(out.tokens) if t > cell.budget]
    assert not over, f"requests over the {cell.budget}-token budget: {over}"
    for n, req in enumerate(requests):
        body = "\n".join(_text(m) for m in req)
        assert requests_of(cell)[0] in body, f"request {n}: the task is missing"
        asked = [
            t
            for t in requests_of(cell)
            if t in "\n".join(_text(m) for m in itertools.chain(*out.requests[: n + 1]))
        ]
        for text in asked:  # every user message the model has seen stays in sight
            assert text in body, f"request {n}: user message {text!r} is missing"
        assert not any(isinstance(m, RemoveMessage) for m in req)
        _check_pairs(n, req)
    _check_summaries(out, requests)
    full_ids = {m.id for m in out.full}
    for i in range(len(REQUESTS)):
        assert f"user-{i}" in full_ids, "a user message was lost from the full log"
    tool_results = [m for m in out.full if isinstance(m, ToolMessage)]
    assert len(tool_results) == sum(CALLS_PER_REQUEST), "a tool result was lost from the full log"
    if cell.stream != "invoke":
        assert out.seen, "the documented loop saw nothing"


def _check_pairs(n: int, req: list[BaseMessage]) -> None:
    open_ids: set[str] = set()
    answered: set[str] = set()
    for m in req:
        if isinstance(m, AIMessage):
            open_ids.update(str(tc["id"]) for tc in m.tool_calls)
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in open_ids, f"request {n}: orphan tool result {m.tool_call_id}"
            answered.add(m.tool_call_id)
    assert open_ids <= answered, f"request {n}: a tool call without its result"


def _check_summaries(out: Outcome, requests: list[list[BaseMessage]]) -> None:
    """A model summary reaches the model at a fold after it is ready (all but the last two of
    the run), and no summary is paid for more often than the thread folds."""
    cell = out.cell
    if cell.summarizer in ("local", "failing", "timeout"):
        return
    assert out.summarizer_calls <= out.folds, (out.summarizer_calls, out.folds)
    assert out.summaries, "the summarizer was never called"
    shown = "\n".join(_text(m) for req in requests for m in req)
    lost = [tag for tag in out.summaries[:-2] if tag not in shown]
    assert not lost, (
        f"{len(lost)} of {len(out.summaries)} model summaries never reached the model: {lost}"
    )


def fast_cells() -> list[Cell]:
    """Every value of every dimension at least once (the README's test command runs these)."""
    cells = [
        Cell(),
        Cell(face="entry", summarizer="model", stream="updates"),
        Cell(face="entry", archive="store", saver="sqlite", sync=False, stream="values"),
        Cell(summarizer="model"),
        Cell(summarizer="model", sync=False, stream="events"),
        Cell(summarizer="model", archive="store", stream="updates"),
        Cell(summarizer="model_blocking", archive="none", stream="values", kind="research"),
        Cell(summarizer="prefix", stream="messages", kind="data"),
        Cell(summarizer="failing", stream="custom", kind="ops"),
        Cell(summarizer="timeout", sync=False, stream="updates", kind="research"),
        Cell(saver="sqlite", stream="updates", kind="subagents", budget=8000),
        Cell(saver="sqlite", sync=False, stream="updates", summarizer="model", budget=8000),
        Cell(face="node", summarizer="model", stream="updates"),
        Cell(face="node", archive="store", sync=False, stream="values", kind="ops"),
        Cell(face="own_schema", summarizer="model", stream="updates", kind="research"),
        Cell(face="own_schema", archive="none", sync=False, kind="subagents"),
        Cell(face="pre_model_hook", stream="updates", kind="research"),
        Cell(face="pre_model_hook", summarizer="model", sync=False, kind="data"),
        Cell(saver="postgres", summarizer="model", stream="updates"),
    ]
    return cells


def full_cells() -> list[Cell]:
    """The slow set: faces × archives × summarizers × savers, with mode, stream and kind rotating."""
    cells = []
    streams = itertools.cycle(STREAMS)
    kinds = itertools.cycle(KINDS)
    product = itertools.product(FACES, ARCHIVES, SUMMARIZERS, SAVERS)
    for n, (face, archive, summarizer, saver) in enumerate(product):
        stream = next(streams)
        sync = stream != "events" and n % 2 == 0
        cells.append(Cell(face, archive, summarizer, saver, sync, stream, next(kinds)))
    return cells


# --- the chat-history face: RunnableWithMessageHistory, as docs/chat-history.md wires it ---------


@dataclass
class HistoryOutcome:
    requests: list[list[BaseMessage]]
    summaries: list[str]
    folds: int
    full: list[BaseMessage]
    questions: list[str]
    tokens: list[int]


def run_history(summarizer: str, sync: bool, budget: int = 1500, turns: int = 30) -> HistoryOutcome:
    """``RunnableWithMessageHistory`` over ``SQLiteChatHistoryStore``: ``turns`` questions."""
    from langchain_core.prompts import ChatPromptTemplate, MessagesPlaceholder
    from langchain_core.runnables.history import RunnableWithMessageHistory

    from langctx import SQLiteChatHistoryStore

    log = SummaryLog()
    model = ScriptedChatModel(responses=[lambda m: f"reply {len(m)}: " + "ok " * 60], cycle=True)
    summ, extra = _summarizer(Cell(summarizer=summarizer), log)
    options: dict[str, Any] = {"max_tokens": budget, **extra}
    if summ is not None:
        options["summarizer"] = summ
    prompt = ChatPromptTemplate.from_messages(
        [("system", SYSTEM), MessagesPlaceholder("history"), ("human", "{question}")]
    )
    questions = [f"question {i} ({summarizer}, {sync}): " + "details " * 40 for i in range(turns)]
    with SQLiteChatHistoryStore.from_conn_string(":memory:", **options) as store:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            chat = RunnableWithMessageHistory(
                prompt | model,
                store.get_history,
                input_messages_key="question",
                history_messages_key="history",
            )
        cfg = {"configurable": {"session_id": "s"}}
        if sync:
            for q in questions:
                chat.invoke({"question": q}, cfg)
        else:

            async def play() -> None:
                for q in questions:
                    await chat.ainvoke({"question": q}, cfg)

            asyncio.run(play())
        history = store.get_history("s")
        counter = history.memory.counter
        return HistoryOutcome(
            requests=[list(c) for c in model.calls],
            summaries=list(log.texts),
            folds=len(history.memory.compactions),
            full=list(history.full_messages),
            questions=questions,
            tokens=[counter.count_messages(c[1:-1]) for c in model.calls],
        )
