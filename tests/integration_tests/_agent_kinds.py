"""Scripted agents that are not coding agents: research, data and operations.

Each kind is an :class:`AgentKind`: its tools (returning realistic outputs by call id), its scripted
turns (a user message, then AI steps: tool calls with their outputs, and the agent's own words),
and what a summary must keep of it: its conclusions and each call's tool name with its key argument
(:attr:`Call.key`).

Example:
    >>> kind = research_agent()
    >>> kind.name, [t.name for t in kind.tools], len(kind.calls) > 5
    ('research', ['web_search', 'fetch_url'], True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, tool

from langctx.testing import ai_tool_call


@dataclass(frozen=True)
class Call:
    """One scripted tool call: its tool, arguments, what it is about (for a reader), its output
    (a string, or an error ToolMessage when ``error``) and the agent's words beside it."""

    call_id: str
    name: str
    args: dict[str, Any]
    about: str
    output: str
    error: bool = False
    lead_in: str = ""

    @property
    def key(self) -> str:
        """The name of its key argument (what a summary must name)."""
        return next(k for k in ("query", "url", "pattern", "metric") if k in self.args)


@dataclass
class Turn:
    """A user message and the agent's steps until it answers (its last step is text)."""

    user: str
    steps: list[Call | str] = field(default_factory=list)


@dataclass
class AgentKind:
    """A scripted agent of one kind."""

    name: str
    system_prompt: str
    turns: list[Turn]
    tools: list[BaseTool]

    @property
    def calls(self) -> list[Call]:
        return [s for t in self.turns for s in t.steps if isinstance(s, Call)]

    @property
    def conclusions(self) -> list[str]:
        """The agent's answers (text steps), in order."""
        return [s for t in self.turns for s in t.steps if isinstance(s, str)]

    def responses(self) -> list[AIMessage]:
        """The scripted model's responses, in order."""
        out: list[AIMessage] = []
        for turn in self.turns:
            for step in turn.steps:
                if isinstance(step, str):
                    out.append(AIMessage(step))
                else:
                    out.append(
                        ai_tool_call(
                            step.name, step.args, content=step.lead_in, call_id=step.call_id
                        )
                    )
        return out


def _tools(calls: list[Call], specs: dict[str, Callable[..., Any]]) -> list[BaseTool]:
    """Tools named as ``specs`` says, each returning the scripted output of its call id (an id
    may carry a ``-suffix``: the same call in a repeated round)."""
    by_id = {c.call_id: c for c in calls}

    def answer(tool_call_id: str) -> Any:
        call = by_id[tool_call_id.split("-", 1)[0]]
        if call.error:
            return ToolMessage(call.output, tool_call_id=tool_call_id, status="error")
        return call.output

    return [make(answer) for make in specs.values()]


# --- research ---------------------------------------------------------------------------------

_SEARCH_1 = """Search results for "postgres 16 logical replication conflicts":
1. PostgreSQL 16 release notes: logical replication from standby servers - https://www.postgresql.org/docs/16/release-16.html
   Logical replication can now be performed from standby servers; subscribers can apply large transactions in parallel.
2. Handling conflicts in logical replication - https://www.postgresql.org/docs/16/logical-replication-conflicts.html
   A conflict stops replication; the subscriber log shows the error and the LSN of the failing transaction.
3. Blog: Upgrading to PG16 logical replication (2023) - https://example-db-blog.com/pg16-replication
   Notes on origin filtering and the new run_as_owner subscription option.
"""
_ARTICLE_1 = """

Handling conflicts in logical replication
=========================================

Logical replication behaves similarly to normal DML operations in that the data will be updated even
if it was changed locally on the subscriber node. If incoming data violates any constraints the
replication will stop. This is referred to as a conflict. When replicating UPDATE or DELETE
operations, missing data will not produce a conflict and such operations will simply be skipped.

A conflict will produce an error and will stop the replication; it must be resolved manually by the
user. Details about the conflict can be found in the subscriber's server log.

The resolution can be done either by changing data or permissions on the subscriber so that it does
not conflict with the incoming change or by skipping the transaction that conflicts with the
existing data. When a conflict produces an error, the replication won't proceed, and the logical
replication worker will emit the following kind of message to the subscriber's server log:

ERROR:  duplicate key value violates unique constraint "test_pkey"
DETAIL:  Key (c)=(1) already exists.
CONTEXT:  processing remote data for replication origin "pg_16395" during "INSERT" for replication
target relation "public.test" in transaction 725 finished at 0/14C0378

The LSN of the transaction that contains the change violating the constraint and the replication
origin name can be found from the server log (LSN 0/14C0378 and replication origin pg_16395 in the
above case). The transaction that produced the conflict can be skipped by using ALTER SUBSCRIPTION
... SKIP with the finish LSN (i.e., LSN 0/14C0378).
""" + "\n".join(
    f"Paragraph {i}: further detail on origin filtering, two-phase commit and disable_on_error, "
    "which disables the subscription on error so an operator can resolve it without a retry loop."
    for i in range(1, 90)
)
_SEARCH_2 = """Search results for "ALTER SUBSCRIPTION SKIP lsn example":
1. ALTER SUBSCRIPTION - PostgreSQL 16 documentation - https://www.postgresql.org/docs/16/sql-altersubscription.html
   SKIP ( skip_option = value ): skips applying all changes of the remote transaction.
2. Stack Overflow: logical replication stuck on duplicate key - https://stackoverflow.com/q/7712345
   Use ALTER SUBSCRIPTION mysub SKIP (lsn = '0/14C0378'); then check pg_stat_subscription.
"""
_ARTICLE_2 = """ALTER SUBSCRIPTION

ALTER SUBSCRIPTION — change the definition of a subscription
Synopsis: ALTER SUBSCRIPTION name SKIP ( skip_option = value )
SKIP ( skip_option = value ): Skips applying all changes of the remote transaction. If incoming data
violates any constraints, logical replication will stop until it is resolved. The skipped LSN is
cleared once the transaction is skipped. The only supported option is lsn.
""" + "\n".join(
    f"Example {i}: ALTER SUBSCRIPTION sub{i} SKIP (lsn = '0/{i}4C0378');" for i in range(120)
)
_SEARCH_3 = """Search results for "pg_stat_subscription_stats apply_error_count":
1. Monitoring logical replication - https://www.postgresql.org/docs/16/monitoring-stats.html
   pg_stat_subscription_stats has apply_error_count and sync_error_count per subscription.
"""


def research_agent() -> AgentKind:
    """A research agent: ``web_search`` and ``fetch_url`` over Postgres replication docs."""
    calls = [
        Call("r1", "web_search", {"query": "postgres 16 logical replication conflicts", "max_results": 5},
             "postgres 16 logical replication conflicts", _SEARCH_1, lead_in="Let me search."),
        Call("r2", "fetch_url", {"url": "https://www.postgresql.org/docs/16/logical-replication-conflicts.html"},
             "logical-replication-conflicts.html", _ARTICLE_1),
        Call("r3", "web_search", {"query": "ALTER SUBSCRIPTION SKIP lsn example"},
             "ALTER SUBSCRIPTION SKIP lsn example", _SEARCH_2, lead_in="Checking the SKIP syntax."),
        Call("r4", "fetch_url", {"url": "https://www.postgresql.org/docs/16/sql-altersubscription.html"},
             "sql-altersubscription.html", _ARTICLE_2),
        Call("r5", "fetch_url", {"url": "https://example-db-blog.com/pg16-replication"},
             "example-db-blog.com/pg16-replication",
             "Error: HTTP 404 Not Found for https://example-db-blog.com/pg16-replication", error=True),
        Call("r6", "web_search", {"query": "pg_stat_subscription_stats apply_error_count"},
             "pg_stat_subscription_stats apply_error_count", _SEARCH_3),
    ]  # fmt: skip
    c = {x.call_id: x for x in calls}
    turns = [
        Turn(
            "Our PG16 subscriber stopped replicating after a duplicate key error. Find out how "
            "conflicts are handled and how to resume.",
            [c["r1"], c["r2"],
             "A conflict stops the apply worker until it is resolved by hand; the subscriber log "
             "names the finish LSN of the failing transaction (e.g. 0/14C0378)."],
        ),
        Turn(
            "How exactly do we skip that transaction?",
            [c["r3"], c["r4"], c["r5"],
             "Run ALTER SUBSCRIPTION mysub SKIP (lsn = '0/14C0378'); the skip LSN clears itself "
             "once the transaction is skipped. The blog post is gone (404)."],
        ),
        Turn(
            "And how do we notice the next conflict early?",
            [c["r6"],
             "Watch apply_error_count in pg_stat_subscription_stats and set disable_on_error so a "
             "conflict disables the subscription instead of looping. Should I draft the alert rule?"],
        ),
        Turn("Yes, draft it as a Prometheus rule.", ["Here is the rule: alert when "
             "increase(pg_stat_subscription_stats_apply_error_count[5m]) > 0 for 1m."]),
    ]  # fmt: skip
    tools = _tools(calls, {"web_search": _web_search, "fetch_url": _fetch_url})
    return AgentKind("research", "You are a research assistant. Cite sources.", turns, tools)


def _web_search(answer: Callable[[str], Any]) -> BaseTool:
    @tool
    def web_search(
        query: str, tool_call_id: Annotated[str, InjectedToolCallId], max_results: int = 5
    ) -> Any:
        """Search the web."""
        return answer(tool_call_id)

    return web_search


def _fetch_url(answer: Callable[[str], Any]) -> BaseTool:
    @tool
    def fetch_url(url: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Fetch a web page as text."""
        return answer(tool_call_id)

    return fetch_url


# --- data -------------------------------------------------------------------------------------


def _table(header: list[str], rows: list[list[Any]]) -> str:
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows, strict=True)]
    line = lambda r: " | ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True))  # noqa: E731
    sep = "-+-".join("-" * w for w in widths)
    return "\n".join([line(header), sep, *map(line, rows), f"({len(rows)} rows)"])


def data_agent() -> AgentKind:
    """A data agent: ``run_sql`` over an orders warehouse, one query failing."""
    regions = ["EMEA", "APAC", "NA", "LATAM"]
    top = _table(
        ["customer_id", "name", "region", "orders", "revenue_eur"],
        [[10_000 + k, f"Customer {k:03d} GmbH", regions[k % 4], 400 - k, f"{90_000 - 311 * k:.2f}"]
         for k in range(160)],
    )  # fmt: skip
    monthly = _table(
        ["month", "region", "orders", "revenue_eur"],
        [[f"2024-{m:02d}", r, 1000 + 37 * m + 11 * i, f"{(120_000 + 917 * m * (i + 1)):.2f}"]
         for m in range(1, 13) for i, r in enumerate(regions)] * 3,
    )  # fmt: skip
    calls = [
        Call("d1", "run_sql", {"query": "SELECT table_name FROM information_schema.tables WHERE table_schema = 'sales'"},
             "information_schema.tables",
             _table(["table_name"], [["orders"], ["order_items"], ["customers"], ["refunds"]])),
        Call("d2", "run_sql", {"query": "SELECT region, SUM(revenue) FROM sales.orders GROUP BY region"},
             "SUM(revenue)",
             'ERROR:  column "revenue" does not exist\nLINE 1: SELECT region, SUM(revenue) FROM sales.orders GROUP BY region\n'
             '                              ^\nHINT:  Perhaps you meant to reference the column "orders.revenue_eur".'),
        Call("d3", "run_sql", {"query": "SELECT region, SUM(revenue_eur) AS revenue FROM sales.orders GROUP BY region ORDER BY 2 DESC"},
             "SUM(revenue_eur)",
             _table(["region", "revenue"], [["EMEA", "4812330.55"], ["NA", "3990121.10"], ["APAC", "2871400.00"], ["LATAM", "901233.75"]])),
        Call("d4", "run_sql", {"query": "SELECT date_trunc('month', created_at) AS month, region, COUNT(*) AS orders, SUM(revenue_eur) FROM sales.orders GROUP BY 1, 2 ORDER BY 1, 2"},
             "date_trunc('month', created_at)", monthly),
        Call("d6", "run_sql", {"query": "SELECT c.customer_id, c.name, c.region, COUNT(*) AS orders, SUM(o.revenue_eur) FROM sales.orders o JOIN sales.customers c USING (customer_id) GROUP BY 1, 2, 3 ORDER BY 5 DESC LIMIT 160"},
             "sales.customers", top),
        Call("d5", "run_sql", {"query": "SELECT COUNT(*) AS refunds, SUM(amount_eur) FROM sales.refunds WHERE created_at >= '2024-10-01'"},
             "sales.refunds", _table(["refunds", "sum"], [["312", "48211.40"]])),
    ]  # fmt: skip
    c = {x.call_id: x for x in calls}
    turns = [
        Turn(
            "Which region brought the most revenue in 2024? Use the sales schema.",
            [c["d1"], c["d2"], c["d3"],
             "EMEA brought the most revenue in 2024: 4.81M EUR, ahead of NA (3.99M). The column "
             "is revenue_eur, not revenue."],
        ),
        Turn(
            "Show me the monthly trend per region.",
            [c["d4"], c["d6"],
             "Monthly orders grow in every region; EMEA leads every month and LATAM stays under "
             "a quarter of it. The top 160 customers bring a third of the revenue."],
        ),
        Turn(
            "Did refunds eat into Q4?",
            [c["d5"],
             "Q4 refunds total 48.2k EUR over 312 orders, under 1% of revenue. Do you want "
             "refunds netted out of the regional totals?"],
        ),
        Turn("No, that's fine. Summarize for the board.", [
            "Board summary: EMEA leads 2024 revenue at 4.81M EUR; all regions grew month over "
            "month; Q4 refunds were under 1% of revenue."]),
    ]  # fmt: skip
    tools = _tools(calls, {"run_sql": _run_sql})
    return AgentKind(
        "data", "You are a data analyst with read access to the warehouse.", turns, tools
    )


def _run_sql(answer: Callable[[str], Any]) -> BaseTool:
    @tool
    def run_sql(query: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Run a read-only SQL query on the warehouse."""
        return answer(tool_call_id)

    return run_sql


# --- operations -------------------------------------------------------------------------------


def _log(service: str, lines: list[tuple[str, str, str]], noise: int) -> str:
    out = [
        f"2024-05-01T10:{i // 60:02d}:{i % 60:02d}Z {service} INFO GET /health 200 3ms"
        for i in range(noise)
    ]
    out += [f"2024-05-01T{t}Z {service} {level} {msg}" for t, level, msg in lines]
    return "\n".join(out)


def _series(metric: str, values: list[float]) -> str:
    rows = [f"{10 + i // 60:02d}:{i % 60:02d}  {v:.1f}" for i, v in enumerate(values)]
    return f"metric {metric} (1m step)\n" + "\n".join(rows)


def ops_agent() -> AgentKind:
    """An operations agent: ``grep_logs`` and ``get_metrics`` on a checkout incident."""
    p99 = [212, 215, 230, 1890, 2440, 2510, 2380, 240, 220, 218, 214, 213] * 5
    calls = [
        Call("o1", "grep_logs", {"pattern": "timeout", "service": "checkout", "since": "10:00"}, "timeout",
             _log("checkout", [("10:15:02", "ERROR", "upstream timeout calling payments (5003ms) order=88123"),
                               ("10:15:09", "ERROR", "upstream timeout calling payments (5001ms) order=88130")], 400)),
        Call("o2", "get_metrics", {"metric": "checkout.p99_latency_ms", "window": "1h"},
             "checkout.p99_latency_ms", _series("checkout.p99_latency_ms", p99)),
        Call("o3", "grep_logs", {"pattern": "pool exhausted", "service": "payments", "since": "10:00"},
             "pool exhausted",
             _log("payments", [("10:14:58", "WARN", "db connection pool exhausted (max=20, waiting=143)"),
                               ("10:15:30", "ERROR", "HikariPool-1 - Connection is not available, request timed out after 5000ms")], 300)),
        Call("o4", "get_metrics", {"metric": "payments.db_pool_active", "window": "1h"},
             "payments.db_pool_active", _series("payments.db_pool_active", [8, 9, 9, 20, 20, 20, 20, 11, 9, 8, 8, 8] * 5)),
        Call("o5", "grep_logs", {"pattern": "deploy", "service": "payments", "since": "09:30"}, "deploy",
             "grep_logs: invalid time range: since=09:30 is before the log retention window (10:00)",
             error=True),
        Call("o6", "get_metrics", {"metric": "payments.deploys", "window": "3h"},
             "payments.deploys", _series("payments.deploys", [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0] * 15)),
    ]  # fmt: skip
    c = {x.call_id: x for x in calls}
    turns = [
        Turn(
            "Checkout is slow since about 10:15. Find out why.",
            [c["o1"], c["o2"],
             "Checkout p99 jumped from ~230ms to 2.4s between 10:15 and 10:35; every slow request "
             "timed out waiting on payments."],
        ),
        Turn(
            "Is payments itself the cause?",
            [c["o3"], c["o4"],
             "Yes: the payments DB pool hit its max of 20 at 10:15 and requests queued for 5s; "
             "checkout only waits on it."],
        ),
        Turn(
            "What changed in payments before that?",
            [c["o5"], c["o6"],
             "One payments deploy landed at 10:10, five minutes before the pool saturated; the "
             "logs before 10:00 are out of retention. Should I open a rollback ticket?"],
        ),
        Turn("Not yet. Write the incident summary.", [
            "Incident: the 10:10 payments deploy saturated its DB pool (20/20) at 10:15, so "
            "checkout p99 rose to 2.4s until 10:35."]),
    ]  # fmt: skip
    tools = _tools(calls, {"grep_logs": _grep_logs, "get_metrics": _get_metrics})
    return AgentKind("ops", "You are an SRE on call.", turns, tools)


def _grep_logs(answer: Callable[[str], Any]) -> BaseTool:
    @tool
    def grep_logs(
        pattern: str, service: str, since: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Any:
        """Search a service's logs."""
        return answer(tool_call_id)

    return grep_logs


def _get_metrics(answer: Callable[[str], Any]) -> BaseTool:
    @tool
    def get_metrics(
        metric: str, window: str, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> Any:
        """A metric's time series."""
        return answer(tool_call_id)

    return get_metrics


AGENT_KINDS: dict[str, Callable[[], AgentKind]] = {
    "research": research_agent,
    "data": data_agent,
    "ops": ops_agent,
}
"""Each kind's builder, by name."""
