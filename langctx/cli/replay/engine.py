"""Replay a recorded session through a :class:`~langctx.LayeredChatMemory`, call by call.

The session is fed as an agent loop would feed it: what arrives between two model calls is added in
one ``add_messages`` call, then the next request is built; the history before each AI message is
the full-history baseline. The report holds, per call (:class:`CallRecord`), the context tokens
with and without langctx, the unchanged-prefix share, the integrity checks and the amnesia probes
of :mod:`langctx.cli.replay.truth`; per compaction, its trigger, tokens, level, quality, summary,
facts, what it dropped and the probes right after it (:meth:`ReplayReport.probe_shares`, :meth:`ReplayReport.losses`). The two probes on
the user's own messages take their truth from the session file itself when the replay has one
(:mod:`langctx.cli.replay.users`), else from the human messages by the truth module's rule.

Example:
    >>> from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    >>> msgs = [HumanMessage("Fix the parser. Do not edit tests.", id="h")]
    >>> for i in range(30):
    ...     msgs += [AIMessage("", id=f"a{i}", tool_calls=[
    ...                  {"id": f"c{i}", "name": "read", "args": {"path": f"f{i}.py"}}]),
    ...              ToolMessage("x = 1\\n" * 80, tool_call_id=f"c{i}", id=f"t{i}")]
    >>> report = replay_session(msgs, max_tokens=2_000)
    >>> len(report.calls), report.reduction > 0.5, report.projection_orphans
    (30, True, 0)
    >>> report.probe_shares()["task"]
    1.0
"""

from __future__ import annotations

import re
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langctx.cli.replay.formats import EmptySessionError, ParsedSession
from langctx.cli.replay.request_status import STATUS_COUNTS
from langctx.cli.replay.rereads import Rereads
from langctx.cli.replay.truth import (
    PROBES,
    Truth,
    UserMessage,
    position_of,
    probe_request,
    request_status,
    session_roots,
)
from langctx.cli.replay.users import read_user_messages
from langctx.engine.background import in_background, wait_idle
from langctx.entries import EditEntry, covered_count, entry_facts
from langctx.errors import ConfigError, LangctxWarning
from langctx.files_in_hand import files_text
from langctx.memory import CompactionEvent, LayeredChatMemory
from langctx.pricing import SUMMARIZER_LATENCY, Latency, PriceSheet, Usage, price_sheet
from langctx.summarize import (
    LocalSummarizer,
    ModelSummarizer,
    SummaryRequest,
    resolve_summarizer,
)
from langctx.tokens import TokenCounter, counting_label
from langctx.turns import pair_errors

__all__ = [
    "PROBES",
    "REPORT_VERSION",
    "CallRecord",
    "CompactionRecord",
    "ProbeLoss",
    "ReplayReport",
    "parse_token_count",
    "replay_session",
]

REPORT_VERSION = 2
"""Version of :meth:`ReplayReport.to_dict`'s layout (2: independent probes on every request)."""

_PREVIEW = 120
"""Characters of a message shown in :attr:`CompactionRecord.dropped`."""

_TOKENS_RE = re.compile(r"(?i)^\s*(\d+(?:\.\d+)?)\s*([km]?)\s*$")

CompactionKind = Literal["fold", "placeholder", "merge", "truncate", "noop"]


def parse_token_count(text: str | int) -> int:
    """A token count written as ``32000``, ``32_000``, ``32,000``, ``32k`` or ``1.5M``.

    Raises:
        ConfigError: not a positive count.

    Example:
        >>> parse_token_count("32k"), parse_token_count("32000"), parse_token_count("1.5M")
        (32000, 32000, 1500000)
    """
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        m = _TOKENS_RE.match(str(text).replace("_", "").replace(",", ""))
        if not m:
            msg = f"{text!r} is not a token count; write e.g. 32000 or 32k."
            raise ConfigError(msg)
        scale = {"": 1, "k": 1_000, "m": 1_000_000}[m.group(2).lower()]
        value = round(float(m.group(1)) * scale)
    if value <= 0:
        msg = f"a token count must be positive, got {text!r}."
        raise ConfigError(msg)
    return value


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One model call of the replay: the request langctx builds and the full-history baseline.

    Example:
        >>> CallRecord(index=2, message_index=5, context_tokens=400, full_tokens=400,
        ...            context_messages=6, prefix_tokens=300, task_present=True).prefix_share
        0.75
    """

    index: int
    """1-based number of the model call."""
    message_index: int
    """Index in the session of the AI message this call produced."""
    context_tokens: int
    """Tokens of the request langctx builds (a recount of the projected messages)."""
    full_tokens: int
    """Tokens of the full history before this call (what an agent without langctx sends)."""
    context_messages: int
    """Messages in the request."""
    prefix_tokens: int
    """Tokens of the longest run of leading messages unchanged since the previous request."""
    task_present: bool | None
    """The pinned task is in the request, unaltered (None before the task arrived)."""
    orphans: int = 0
    """Tool results in the request whose call is not before them (must be 0)."""
    unanswered: int = 0
    """Tool calls in the request without their result (must be 0)."""
    compactions: int = 0
    """Compaction records written while the turn before this call was added."""
    probes: Mapping[str, bool | None] = field(default_factory=dict)
    """The amnesia probes on this request (None: nothing to check yet)."""
    missing: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Per failed probe, the facts it did not find in this request."""
    output_tokens: int = 0
    """Tokens of the AI message this call produced (the same with and without langctx)."""
    rereads: int = 0
    """After a fold: the reads this call makes of files whose latest content the agent had seen."""
    rereads_in_request: int = 0
    """Of ``rereads``, those whose content was already in the request (not needed)."""
    files_tokens: int = 0
    """Tokens of the files in hand in the request's summary block."""
    request_status: Mapping[str, int] = field(default_factory=dict)
    """The ``request_status`` probe's counts on this request (:data:`STATUS_COUNTS`); empty
    when the request has no ``<langctx:requests>`` section."""

    @property
    def prefix_share(self) -> float:
        """``prefix_tokens / context_tokens`` (0.0 for an empty request)."""
        return self.prefix_tokens / self.context_tokens if self.context_tokens else 0.0


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """One compaction (or merge, placeholder pass, truncation) seen during the replay.

    Example:
        >>> r = CompactionRecord(before_call=9, kind="fold", trigger="proactive", level=1,
        ...                      quality="local", tokens_before=28_845, tokens_after=10_852)
        >>> r.tokens_before - r.tokens_after
        17993
    """

    before_call: int | None
    """The first call whose request reflects it; None when the session ended before another call."""
    kind: CompactionKind
    """``fold`` (turns folded into a summary), ``placeholder`` (large tool outputs replaced in place,
    nothing folded), ``merge`` (summaries merged into a higher level), ``truncate`` (the newest turn
    alone was too large and was cut, marked), ``noop`` (triggered, nothing could be done)."""
    trigger: str
    level: int | None
    quality: str
    """``local``, ``model``, ``mechanical``, ``fallback``, ``merged`` or ``none``."""
    tokens_before: int
    tokens_after: int
    messages_covered: int = 0
    edits: int = 0
    probes: Mapping[str, bool | None] = field(default_factory=dict)
    """The amnesia probes on the request right after it (see the module docstring)."""
    coverage: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    """``(found, total)`` for the list probes (constraints, files_modified,
    earlier_user_messages)."""
    summary: str = ""
    """The summary it wrote ('' for placeholder passes, truncations and no-ops)."""
    facts: Mapping[str, Any] = field(default_factory=dict)
    """The mechanical facts its entry kept (:func:`~langctx.entries.entry_facts`: commands,
    errors, constraints, user messages, next step, files read and modified)."""
    dropped: tuple[tuple[str, str], ...] = ()
    """What left the request, one ``(action, preview)`` per message: ``folded`` into the summary,
    replaced by a ``placeholder`` or ``truncated`` in place (with its tokens before -> after)."""
    merged: int = 0
    """Summaries a merge absorbed."""


@dataclass(frozen=True, slots=True)
class ProbeLoss:
    """One fact a probe did not find: from which request on, and after which compaction.

    Example:
        >>> str(ProbeLoss("files_modified", "src/a.py", first_call=57, calls=3, compaction=3))
        "files_modified: 'src/a.py' missing from request 57 (first lost after compaction 3; 3 requests)"
    """

    probe: str
    fact: str
    first_call: int
    """The first request (1-based call index) that lacks it."""
    calls: int
    """Requests that lack it."""
    compaction: int
    """Compactions before :attr:`first_call` (0: lost before any compaction)."""

    def __str__(self) -> str:
        after = (
            f"after compaction {self.compaction}" if self.compaction else "before any compaction"
        )
        shown = self.fact if len(self.fact) <= 100 else self.fact[:97] + "..."
        n = f"{self.calls} request{'s' if self.calls != 1 else ''}"
        return f"{self.probe}: {shown!r} missing from request {self.first_call} (first lost {after}; {n})"


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """Everything a replay measured; :meth:`to_dict` is the JSON form.

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> r = replay_session([HumanMessage("Fix it.", id="h"), AIMessage("Fixed.", id="a")])
        >>> r.input_tokens == r.input_tokens_full, r.reduction, r.probe_shares()["task"]
        (True, 0.0, None)
    """

    session: str
    format: str | None
    settings: Mapping[str, Any]
    messages: int
    calls: tuple[CallRecord, ...]
    compactions: tuple[CompactionRecord, ...]
    orphans_in_input: int
    """Tool results of the session without their call: repaired (kept in the log, never projected)."""
    unanswered_in_input: int
    """Tool calls of the session without a result: answered in the projection with a placeholder."""
    summarizer_calls: int
    """Summaries written by the summarizer (a model call each, or a local render with "local")."""
    summarizer_input_tokens: int
    """Tokens sent to a model summarizer (0 with the local summarizer)."""
    fallbacks: int
    """Summarizer calls that failed and fell back to the local summary."""
    task: str | None
    """The pinned task's text (first 300 characters)."""
    seconds: float
    notes: tuple[str, ...] = ()
    """What was skipped while reading the session."""
    warnings: tuple[str, ...] = ()
    """What was repaired (orphans, unanswered calls)."""
    summarizer_output_tokens: int = 0
    """Tokens a model summarizer answered with."""
    summarizer_blocking: tuple[tuple[int, int], ...] = ()
    """``(input, output)`` tokens of each model summarizer call made on the agent's path (the
    others ran in the background, beside the main model)."""

    # ---------------------------------------------------------------- totals

    @property
    def input_tokens(self) -> int:
        """Input tokens sent over all calls with langctx."""
        return sum(c.context_tokens for c in self.calls)

    @property
    def input_tokens_full(self) -> int:
        """Input tokens sent over all calls with the full history."""
        return sum(c.full_tokens for c in self.calls)

    @property
    def reduction(self) -> float:
        """``1 - input_tokens / input_tokens_full`` (0.0 when the baseline is empty)."""
        full = self.input_tokens_full
        return 1 - self.input_tokens / full if full else 0.0

    @property
    def max_context_tokens(self) -> int:
        """The largest request with langctx."""
        return max((c.context_tokens for c in self.calls), default=0)

    @property
    def max_full_tokens(self) -> int:
        """The largest request with the full history."""
        return max((c.full_tokens for c in self.calls), default=0)

    @property
    def cacheable_tokens(self) -> int:
        """Sum over calls of the unchanged prefix: what provider prompt caching could reuse."""
        return sum(c.prefix_tokens for c in self.calls)

    @property
    def cacheable_tokens_full(self) -> int:
        """The same for the full history (each request extends the previous one)."""
        return sum(prev.full_tokens for prev in self.calls[:-1])

    @property
    def cached_share(self) -> float:
        """Share of all input tokens that is an unchanged prefix of the previous request (what a
        provider's prompt cache reads, weighted by tokens; 0.0 without input)."""
        return self.cacheable_tokens / self.input_tokens if self.input_tokens else 0.0

    @property
    def mean_prefix_share(self) -> float:
        """Mean of :attr:`CallRecord.prefix_share` over calls 2..n."""
        rest = self.calls[1:]
        return sum(c.prefix_share for c in rest) / len(rest) if rest else 0.0

    @property
    def projection_orphans(self) -> int:
        """Orphan tool results plus unanswered calls over every projection (must be 0)."""
        return sum(c.orphans + c.unanswered for c in self.calls)

    @property
    def task_missing_calls(self) -> int:
        """Calls after the task arrived whose request lacks it, unaltered (must be 0)."""
        return sum(1 for c in self.calls if c.task_present is False)

    @property
    def over_budget_calls(self) -> int:
        """Calls whose request exceeds the budget."""
        budget = int(self.settings.get("max_tokens") or 0)
        return sum(1 for c in self.calls if budget and c.context_tokens > budget)

    def cost(
        self, prices: str | PriceSheet = "anthropic", latency: Latency = SUMMARIZER_LATENCY
    ) -> dict[str, Any]:
        """The session's modeled cost with and without langctx under a price sheet.

        With langctx: each request's unchanged prefix is a cache read, the rest a cache write;
        the summarizer's calls are uncached input and output. Without: each request is the
        previous one plus what is new (all of the previous request a cache read). The main
        model's outputs are the session's AI messages in both. ``compaction_s``: the modeled
        time of the summarizer calls made on the agent's path (background ones add none).

        Example:
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> r = replay_session([HumanMessage("Fix it.", id="h"), AIMessage("Fixed.", id="a")])
            >>> c = r.cost("anthropic"); c["with_langctx"] == c["without_langctx"], c["compaction_s"]
            (True, 0.0)
        """
        sheet = price_sheet(prices)
        out = sum(c.output_tokens for c in self.calls)
        ours = Usage(self.cacheable_tokens, self.input_tokens - self.cacheable_tokens, out)
        full = Usage(
            self.cacheable_tokens_full, self.input_tokens_full - self.cacheable_tokens_full, out
        )
        summarizer = Usage(0, self.summarizer_input_tokens, self.summarizer_output_tokens)
        with_langctx = sheet.cost(ours, summarizer)
        without = sheet.main.cost(full)
        return {
            "prices": sheet.name,
            "with_langctx": round(with_langctx, 6),
            "without_langctx": round(without, 6),
            "saved": round(1 - with_langctx / without, 6) if without else 0.0,
            "main": {"cached": ours.cached_input, "uncached": ours.uncached_input, "output": out},
            "main_without": {"cached": full.cached_input, "uncached": full.uncached_input},
            "summarizer": {"input": summarizer.input, "output": summarizer.output},
            "cached_share": round(ours.cached_share, 6),
            "cached_share_without": round(full.cached_share, 6),
            "compaction_s": round(
                sum((latency.seconds(i, o) for i, o in self.summarizer_blocking), 0.0), 3
            ),
            "blocking_summarizer_calls": len(self.summarizer_blocking),
        }

    def count(self, kind: CompactionKind) -> int:
        """How many compaction records of ``kind``."""
        return sum(1 for c in self.compactions if c.kind == kind)

    def calls_after_compaction(self) -> tuple[CallRecord, ...]:
        """The requests from the first one built after a compaction on."""
        for i, c in enumerate(self.calls):
            if c.compactions:
                return self.calls[i:]
        return ()

    def probe_shares(self, *, after_compaction: bool = True) -> dict[str, float | None]:
        """Per probe, the share of requests in which it held (None: nothing to check).

        Args:
            after_compaction: count only the requests from the first compaction on (the amnesia
                test); False counts every request.
        """
        calls = self.calls_after_compaction() if after_compaction else self.calls
        out: dict[str, float | None] = {}
        for name in PROBES:
            checked = [v for c in calls if (v := c.probes.get(name)) is not None]
            out[name] = sum(checked) / len(checked) if checked else None
        return out

    def request_status(self, *, after_compaction: bool = True) -> dict[str, int]:
        """The ``request_status`` counts summed over requests (:data:`STATUS_COUNTS`), and
        ``requests``: how many had a ``<langctx:requests>`` section.

        Args:
            after_compaction: as in :meth:`probe_shares`.
        """
        calls = self.calls_after_compaction() if after_compaction else self.calls
        shown = [c.request_status for c in calls if c.request_status]
        out = {k: sum(c.get(k, 0) for c in shown) for k in STATUS_COUNTS}
        out["requests"] = len(shown)
        return out

    def losses(self) -> list[ProbeLoss]:
        """Every fact some request lacked, in the order they were first lost."""
        first: dict[tuple[str, str], list[int]] = {}
        compactions = 0
        before: dict[int, int] = {}
        for c in self.calls:
            compactions += c.compactions
            before[c.index] = compactions
            for probe, facts in c.missing.items():
                for fact in facts:
                    first.setdefault((probe, fact), []).append(c.index)
        out = [
            ProbeLoss(probe, fact, calls[0], len(calls), before[calls[0]])
            for (probe, fact), calls in first.items()
        ]
        return sorted(out, key=lambda x: (x.first_call, PROBES.index(x.probe)))

    def reread_totals(self) -> dict[str, int]:
        """The re-read tax (:mod:`~langctx.cli.replay.rereads`) and the tokens spent on files."""
        after = self.calls_after_compaction()
        return {
            "rereads_after_fold": sum(c.rereads for c in self.calls),
            "rereads_in_request": sum(c.rereads_in_request for c in self.calls),
            "files_tokens": sum(c.files_tokens for c in self.calls),
            "calls_after_fold": len(after),
            "input_tokens_after_fold": sum(c.context_tokens for c in after),
        }

    def totals(self) -> dict[str, Any]:
        """The headline figures, JSON-safe."""
        return {
            **self.reread_totals(),
            "calls": len(self.calls),
            "input_tokens": self.input_tokens,
            "input_tokens_full": self.input_tokens_full,
            "reduction": round(self.reduction, 6),
            "max_context_tokens": self.max_context_tokens,
            "max_full_tokens": self.max_full_tokens,
            "compactions": self.count("fold"),
            "placeholder_passes": self.count("placeholder"),
            "merges": self.count("merge"),
            "truncations": self.count("truncate"),
            "noop_compactions": self.count("noop"),
            "summarizer_calls": self.summarizer_calls,
            "summarizer_input_tokens": self.summarizer_input_tokens,
            "summarizer_fallbacks": self.fallbacks,
            "mean_prefix_share": round(self.mean_prefix_share, 6),
            "cacheable_tokens": self.cacheable_tokens,
            "cacheable_tokens_full": self.cacheable_tokens_full,
            "cached_share": round(self.cached_share, 6),
            "orphans_in_input": self.orphans_in_input,
            "unanswered_in_input": self.unanswered_in_input,
            "projection_orphans": self.projection_orphans,
            "task_missing_calls": self.task_missing_calls,
            "over_budget_calls": self.over_budget_calls,
        }

    def to_dict(self, prices: str | PriceSheet | None = None) -> dict[str, Any]:
        """The whole report as plain JSON values (``"v"`` is :data:`REPORT_VERSION`); with
        ``prices``, also ``"cost"`` (:meth:`cost`).

        Example:
            >>> from langchain_core.messages import AIMessage, HumanMessage
            >>> r = replay_session([HumanMessage("hi", id="h"), AIMessage("hello", id="a")])
            >>> d = r.to_dict()
            >>> d["v"], d["totals"]["calls"], d["calls"][0]["context_tokens"] > 0
            (2, 1, True)
        """
        return {
            "v": REPORT_VERSION,
            "session": self.session,
            "format": self.format,
            "settings": dict(self.settings),
            "messages": self.messages,
            "task": self.task,
            "totals": self.totals(),
            "probes": self.probe_shares(),
            "probes_all_requests": self.probe_shares(after_compaction=False),
            "request_status": self.request_status(),
            "losses": [
                {
                    "probe": x.probe,
                    "fact": x.fact,
                    "first_call": x.first_call,
                    "calls": x.calls,
                    "compaction": x.compaction,
                }
                for x in self.losses()
            ],
            "calls": [
                {
                    "index": c.index,
                    "message_index": c.message_index,
                    "context_tokens": c.context_tokens,
                    "full_tokens": c.full_tokens,
                    "context_messages": c.context_messages,
                    "prefix_tokens": c.prefix_tokens,
                    "prefix_share": round(c.prefix_share, 6),
                    "task_present": c.task_present,
                    "orphans": c.orphans,
                    "unanswered": c.unanswered,
                    "compactions": c.compactions,
                    "output_tokens": c.output_tokens,
                    "probes": dict(c.probes),
                }
                for c in self.calls
            ],
            "compactions": [
                {
                    "before_call": c.before_call,
                    "kind": c.kind,
                    "trigger": c.trigger,
                    "level": c.level,
                    "quality": c.quality,
                    "tokens_before": c.tokens_before,
                    "tokens_after": c.tokens_after,
                    "messages_covered": c.messages_covered,
                    "edits": c.edits,
                    "probes": dict(c.probes),
                    "coverage": {k: list(v) for k, v in c.coverage.items()},
                    "summary": c.summary,
                    "facts": dict(c.facts),
                    "dropped": [list(d) for d in c.dropped],
                    "merged": c.merged,
                }
                for c in self.compactions
            ],
            "summarizer_calls": self.summarizer_calls,
            "summarizer_output_tokens": self.summarizer_output_tokens,
            **({"cost": self.cost(prices)} if prices is not None else {}),
            "notes": list(self.notes),
            "warnings": list(self.warnings),
            "seconds": round(self.seconds, 3),
        }

    def _repr_html_(self) -> str:
        """The HTML report, so a notebook cell shows it (:func:`~langctx.cli.report_html.replay_fragment`)."""
        from langctx.cli.report_html import replay_fragment

        return replay_fragment(self)


# --------------------------------------------------------------------------------------------
# The replay


class _CountingSummarizer:
    """Wraps a model summarizer to count its calls and the tokens sent to it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.count_tokens: Callable[[Sequence[BaseMessage]], int] = lambda messages: 0
        self.count_text: Callable[[str], int] = lambda text: 0
        self.calls = 0
        self.input_tokens = 0
        self.output_tokens = 0
        self.blocking: list[tuple[int, int]] = []
        self._lock = threading.Lock()

    def _note(self, request: SummaryRequest, answer: str) -> str:
        n_in = 0
        if isinstance(self.inner, ModelSummarizer):
            n_in = self.count_tokens(self.inner.build_messages(request))
        n_out = self.count_text(answer)
        with self._lock:
            self.calls += 1
            self.input_tokens += n_in
            self.output_tokens += n_out
            if not in_background():
                self.blocking.append((n_in, n_out))
        return answer

    def summarize(self, request: SummaryRequest) -> str:
        """Delegate, then count."""
        return self._note(request, str(self.inner.summarize(request)))

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async version of `summarize`."""
        return self._note(request, str(await self.inner.asummarize(request)))


def _same(a: BaseMessage, b: BaseMessage) -> bool:
    if a is b:
        return True
    return (
        a.id == b.id
        and a.type == b.type
        and a.content == b.content
        and getattr(a, "tool_calls", None) == getattr(b, "tool_calls", None)
    )


def unchanged_prefix_tokens(
    previous: Sequence[BaseMessage], request: Sequence[BaseMessage], sizes: Sequence[int]
) -> int:
    """Tokens of the leading messages of ``request`` unchanged since ``previous`` (``sizes``:
    the tokens of each message of ``request``): what a provider's prefix cache reuses.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> a, b, c = (HumanMessage(t, id=t) for t in "abc")
        >>> unchanged_prefix_tokens([a, b], [a, b, c], [5, 7, 9]), unchanged_prefix_tokens([a, c], [a, b], [5, 7])
        (12, 5)
    """
    prefix = 0
    for j, (x, y) in enumerate(zip(previous, request, strict=False)):
        if not _same(x, y):
            break
        prefix += sizes[j]
    return prefix


def _unanswered_calls(messages: Sequence[BaseMessage]) -> int:
    """Tool calls of the session that no later tool result answers."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    return sum(
        1
        for m in messages
        if isinstance(m, AIMessage)
        for tc in m.tool_calls
        if tc.get("id") not in answered
    )


class _Replay:
    """State of one replay; :func:`replay_session` drives it."""

    def __init__(
        self,
        messages: Sequence[BaseMessage],
        memory: LayeredChatMemory,
        processor: Any = None,
        cwd: str | None = None,
        users: Sequence[UserMessage] | None = None,
    ) -> None:
        self.log = list(messages)
        self.mem = memory
        self.processor = processor
        self.call_args: dict[str, Any] = {}
        self.counter: TokenCounter = memory.counter
        self.events: list[CompactionEvent] = []
        self.calls: list[CallRecord] = []
        self.records: list[CompactionRecord] = []
        self.added = 0
        self.full = 0
        self.prev: list[BaseMessage] = []
        self.last_coverage: dict[str, tuple[int, int]] = {}
        self.truth = Truth(session_roots(self.log, cwd), users=users)
        self.by_id = {str(m.id): m for m in self.log}
        self.rereads = Rereads(self.log)

    def add(self, batch: list[BaseMessage]) -> list[CompactionRecord]:
        """Add one turn; return the compaction records it caused (not yet tied to a call)."""
        entries = len(self.mem.compactions)
        evictions = len(self.mem.eviction_log)
        edits = len(self.mem.edits)
        self.events.clear()
        given = self._through_context_mode(batch)
        self.mem.add_messages(given)
        self.rereads.add(given)
        self.added += len(batch)
        self.full += sum(self.counter.count_message(m) for m in batch)
        for m in batch:
            self.truth.add(m)
        return self._records(entries, evictions, edits)

    def _through_context_mode(self, batch: list[BaseMessage]) -> list[BaseMessage]:
        """Tool results as Context-mode would hand them to the memory (when enabled)."""
        if self.processor is None:
            return batch
        out: list[BaseMessage] = []
        for m in batch:
            if isinstance(m, AIMessage):
                self.call_args.update({str(tc.get("id")): tc.get("args") for tc in m.tool_calls})
            if isinstance(m, ToolMessage):
                m = self.processor.process_message(
                    m, thread_id="replay", args=self.call_args.get(m.tool_call_id)
                )
            out.append(m)
        return out

    def _records(
        self, entries_before: int, evictions_before: int, edits_before: int
    ) -> list[CompactionRecord]:
        new_entries = self.mem.compactions[entries_before:]
        truncated = any(r["action"] == "truncate" for r in self.mem.eviction_log[evictions_before:])
        new_edits = self.mem.edits[edits_before:]
        placeholders = [e for e in new_edits if e["reason"] == "placeholder"]
        others = [e for e in new_edits if e["reason"] != "placeholder"]
        ends = [ev for ev in self.events if ev.phase == "end"]
        out: list[CompactionRecord] = []
        for n, ev in enumerate(ends):
            e = ev.entry
            kind: CompactionKind
            if e is not None:
                kind = "fold"
            elif ev.edits:
                kind = "placeholder"
            else:
                kind = "truncate" if truncated else "noop"
            # a pass's placeholders in order; the truncations go with the add's last pass
            mine, placeholders = placeholders[: ev.edits], placeholders[ev.edits :]
            if n == len(ends) - 1:
                mine, others = mine + others, []
            dropped = [("folded", self.preview(mid)) for mid in (e["covered_ids"] if e else ())]
            dropped += [self.edit_preview(x) for x in mine]
            out.append(
                CompactionRecord(
                    before_call=None,
                    kind=kind,
                    trigger=ev.trigger,
                    level=e["level"] if e is not None else None,
                    quality=e["quality"] if e is not None else "none",
                    tokens_before=ev.tokens_before,
                    tokens_after=int(ev.tokens_after or 0),
                    messages_covered=covered_count(e) if e is not None else 0,
                    edits=ev.edits,
                    summary=e["summary"] if e is not None else "",
                    facts=entry_facts(e) if e is not None else {},
                    dropped=tuple(dropped),
                )
            )
        for e in new_entries:
            if e["trigger"] == "merge":
                out.append(
                    CompactionRecord(
                        before_call=None,
                        kind="merge",
                        trigger="merge",
                        level=e["level"],
                        quality=e["quality"],
                        tokens_before=e["tokens_before"],
                        tokens_after=e["tokens_after"],
                        messages_covered=covered_count(e),
                        summary=e["summary"],
                        facts=entry_facts(e),
                        merged=len(e["merged_from"]),
                    )
                )
        return out

    def preview(self, message_id: str) -> str:
        """One line naming a message of the session: its type (and tool) and its text's start."""
        m = self.by_id.get(message_id)
        if m is None:
            return message_id
        text = " ".join(m.text.split())
        calls = getattr(m, "tool_calls", None) or []
        if not text and calls:
            text = "calls " + ", ".join(str(tc.get("name")) for tc in calls)
        who = f"{m.type} {m.name}" if isinstance(m, ToolMessage) and m.name else m.type
        return f"{who}: {text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + '…'}"

    def edit_preview(self, edit: EditEntry) -> tuple[str, str]:
        """``(action, preview)`` of an in-place edit, with its tokens before -> after."""
        action = "placeholder" if edit["reason"] == "placeholder" else "truncated"
        tokens = f" ({edit['tokens_before']:,} → {edit['tokens_after']:,} tokens)"
        return action, self.preview(edit["message_id"]) + tokens

    def task(self) -> BaseMessage | None:
        for mid in self.mem.pinned_ids:
            m = self.by_id.get(mid)
            if isinstance(m, HumanMessage):
                return m
        return None

    def probes(
        self, ctx: Sequence[BaseMessage]
    ) -> tuple[dict[str, bool | None], dict[str, tuple[str, ...]], dict[str, tuple[int, int]]]:
        """The probes on one request: held per probe, missing facts, ``(found, total)``."""
        results = probe_request(self.truth, ctx)
        held = {name: results[name].held for name in PROBES}
        missing = {n: r.missing for n, r in results.items() if r.missing}
        coverage = {
            n: (r.total - len(r.missing), r.total)
            for n, r in results.items()
            if n in ("constraints", "files_modified", "earlier_user_messages")
        }
        return held, missing, coverage

    @staticmethod
    def task_present(ctx: Sequence[BaseMessage], task: BaseMessage | None) -> bool | None:
        if task is None:
            return None
        return any(m.id == task.id and m.content == task.content for m in ctx)

    def call(self, message_index: int, n_records: int) -> tuple[CallRecord, list[BaseMessage]]:
        at = position_of(self.log[message_index].id)
        if at is not None:
            self.truth.reach(at)  # the user messages said before this model call
        ctx = self.mem.build_context()
        sizes = [self.counter.count_message(m) for m in ctx]
        prefix = unchanged_prefix_tokens(self.prev, ctx, sizes)
        orphans, unanswered = pair_errors(ctx)
        held, missing, coverage = self.probes(ctx)
        self.last_coverage = coverage
        rereads, in_request = (0, 0)
        if self.mem.compactions:
            rereads, in_request = self.rereads.check(self.log[message_index], ctx)
        files = files_text(ctx)
        status = request_status(self.truth, ctx)
        record = CallRecord(
            index=len(self.calls) + 1,
            message_index=message_index,
            context_tokens=sum(sizes),
            full_tokens=self.full,
            context_messages=len(ctx),
            prefix_tokens=prefix,
            task_present=self.task_present(ctx, self.task()),
            orphans=orphans,
            unanswered=unanswered,
            compactions=n_records,
            probes=held,
            missing=missing,
            output_tokens=self.counter.count_message(self.log[message_index]),
            rereads=rereads,
            rereads_in_request=in_request,
            files_tokens=self.counter.count_text(files) if files else 0,
            request_status=status.counts() if status is not None else {},
        )
        self.calls.append(record)
        self.prev = ctx
        return record, ctx

    def turn(self, batch: list[BaseMessage], next_ai: int | None) -> None:
        """Add ``batch``; then, if a model call follows (``next_ai``), record it."""
        records = self.add(batch) if batch else []
        if next_ai is not None:
            record, _ = self.call(next_ai, len(records))
            probes, coverage = dict(record.probes), self.last_coverage
        if not records:
            return
        if next_ai is None:
            self.truth.reach(None)
            probes, _, coverage = self.probes(self.mem.build_context())
        before = len(self.calls) if next_ai is not None else None
        self.records += [
            replace(r, before_call=before, probes=probes, coverage=coverage) for r in records
        ]


def _describe(counting: _CountingSummarizer | None) -> str:
    if counting is None:
        return "local"
    inner = counting.inner
    if isinstance(inner, ModelSummarizer):
        model = inner.model
        return str(
            getattr(model, "model_name", None)
            or getattr(model, "model", None)
            or type(model).__name__
        )
    return str(getattr(inner, "name", type(inner).__name__))


def replay_session(
    session: ParsedSession | Sequence[BaseMessage],
    *,
    max_tokens: int | None = None,
    context_window: int | None = None,
    summarizer: object = None,
    token_counter: object = "approximate",
    name: str | None = None,
    on_progress: Callable[[int, int], None] | None = None,
    context_mode: bool = False,
    **memory_options: Any,
) -> ReplayReport:
    """Replay a session through a fresh :class:`~langctx.LayeredChatMemory` and measure it.

    Args:
        session: a :class:`ParsedSession` (from :func:`read_session`) or a list of messages.
        max_tokens: the memory's budget (default: the memory's own, 8,000, or 55% of the window capped at 32,000).
        context_window: the model's window (compaction also triggers above window - reserve).
        summarizer: ``None``/"local" or anything :class:`~langctx.LayeredChatMemory` accepts; a
            model summarizer's calls and input tokens are counted.
        token_counter: any spec :func:`~langctx.resolve_token_counter` accepts.
        name: the session's name in the report (default: the parsed session's name).
        on_progress: called with ``(calls done, total calls)`` after each model call.
        context_mode: pass tool results through Context-mode first (the full langctx pipeline:
            large outputs reduced or stored behind a reference); the baseline stays the raw history.
        **memory_options: any other :class:`~langctx.MemoryConfig` field (``is_task``, ...).

    Returns:
        The :class:`ReplayReport`.

    Raises:
        EmptySessionError: no messages, or no AI message (no model call to replay).
        ConfigError: an invalid budget or option.

    Warns:
        LangctxWarning: the session has orphan tool results or unanswered tool calls (repaired,
            and counted in the report).

    Example:
        >>> from langchain_core.messages import AIMessage, HumanMessage
        >>> r = replay_session([HumanMessage("hi", id="h"), AIMessage("hello", id="a")], max_tokens=4000)
        >>> r.calls[0].context_tokens == r.calls[0].full_tokens, r.compactions
        (True, ())
    """
    started = time.perf_counter()
    fmt: str | None = None
    notes: tuple[str, ...] = ()
    cwd: str | None = None
    users: tuple[UserMessage, ...] | None = None
    if isinstance(session, ParsedSession):
        cwd = session.cwd
        messages: list[BaseMessage] = list(session.messages)
        name = name or session.name
        fmt = session.format
        notes = session.notes
        if session.path is not None:  # the user-message probes' truth: the raw file itself
            users = read_user_messages(session.path, session.format)
    else:
        messages = list(session)
    name = name or "session"
    messages = [
        m if m.id is not None else m.model_copy(update={"id": f"{name}:{i}"})
        for i, m in enumerate(messages)
    ]  # stable ids, so the pinned task can be found again
    if not messages:
        msg = f"session {name!r} holds no messages; nothing to replay."
        raise EmptySessionError(msg)
    ai_positions = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    if not ai_positions:
        msg = (
            f"session {name!r} holds {len(messages)} messages but no AI message, so there is no "
            "model call to replay."
        )
        raise EmptySessionError(msg)
    counting: _CountingSummarizer | None = None
    spec = summarizer
    if summarizer is not None and summarizer != "local":
        resolved = resolve_summarizer(summarizer)
        if not isinstance(resolved, LocalSummarizer):
            counting = _CountingSummarizer(resolved)
            spec = counting
    replay: _Replay | None = None

    def listen(ev: CompactionEvent) -> None:
        if replay is not None:
            replay.events.append(ev)

    if context_window is not None:
        memory_options["context_window"] = context_window
    if max_tokens is not None:
        memory_options["max_tokens"] = max_tokens
    mem = LayeredChatMemory(
        summarizer=spec,
        token_counter=token_counter,
        on_compaction=listen,
        **memory_options,
    )
    if counting is not None:
        counting.count_tokens = mem.counter.count_messages
        counting.count_text = mem.counter.count_text
    processor = None
    if context_mode:
        from langctx.context_mode.processor import ContextModeProcessor

        processor = ContextModeProcessor(
            count_tokens=mem.counter.count_text, context_budget=mem.config.max_tokens_resolved
        )
    replay = _Replay(messages, mem, processor, cwd, users)
    total = len(ai_positions)
    batch: list[BaseMessage] = []
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            replay.turn(batch, i)
            batch = []
            if on_progress is not None:
                on_progress(len(replay.calls), total)
        batch.append(m)
    replay.turn(batch, None)
    wait_idle(mem.config.summary_timeout)  # a summary still running is counted once it returns

    drops = [r for r in mem.eviction_log if r["action"] == "drop_orphan"]
    unanswered = _unanswered_calls(messages)
    found: list[str] = []
    if drops:
        found.append(
            f"{len(drops)} orphan tool result(s) in the session (no matching tool call before "
            f"them), e.g. {drops[0]['ids'][0]!r}: repaired -- kept in the log, left out of every "
            "projection"
        )
    if unanswered:
        found.append(
            f"{unanswered} tool call(s) in the session without a result: answered in the "
            "projection with a placeholder result"
        )
    for text in found:
        warnings.warn(f"langctx replay of {name!r}: {text}.", LangctxWarning, stacklevel=2)

    summaries = [
        r for r in replay.records if r.kind in ("fold", "merge") and r.quality != "mechanical"
    ]
    task = replay.task()
    cfg = mem.config
    settings = {
        "max_tokens": cfg.max_tokens_resolved,
        "context_window": cfg.context_window,
        "high_mark": cfg.high_mark,
        "cache_prices": getattr(cfg.cache_prices, "name", None),
        "keep_recent_tokens": cfg.keep_recent_tokens_resolved,
        "token_counter": counting_label(mem.counter),
        "summarizer": _describe(counting),
    }
    return ReplayReport(
        session=name,
        format=fmt,
        settings=settings,
        messages=len(messages),
        calls=tuple(replay.calls),
        compactions=tuple(replay.records),
        orphans_in_input=len(drops),
        unanswered_in_input=unanswered,
        summarizer_calls=counting.calls if counting is not None else len(summaries),
        summarizer_input_tokens=counting.input_tokens if counting is not None else 0,
        summarizer_output_tokens=counting.output_tokens if counting is not None else 0,
        summarizer_blocking=tuple(counting.blocking) if counting is not None else (),
        fallbacks=sum(1 for r in mem.eviction_log if r["action"] == "summarizer_fallback"),
        task=task.text[:300] if task is not None else None,
        seconds=time.perf_counter() - started,
        notes=notes,
        warnings=tuple(found),
    )
