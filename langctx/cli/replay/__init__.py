"""Replay recorded agent sessions through the memory and measure what it saves and keeps.

``langctx replay SESSION`` is its command-line face. :func:`read_session` / :func:`parse_session`
read five session formats (:mod:`langctx.cli.replay.formats`); :func:`replay_session` feeds one to a
:class:`~langctx.LayeredChatMemory` call by call and returns a :class:`ReplayReport`;
``langctx.cli.replay.render`` prints it, ``langctx.cli.replay.plot`` draws it and
``langctx.cli.report_html`` writes it as a web page (imported only when used).

Example:
    >>> from langctx.cli.replay import parse_session, replay_session
    >>> text = "\\n".join([
    ...     '{"type": "human", "content": "List the files."}',
    ...     '{"type": "ai", "content": "", "tool_calls": [{"id": "c1", "name": "bash", "args": {"command": "ls"}}]}',
    ...     '{"type": "tool", "content": "a.py b.py", "tool_call_id": "c1"}',
    ...     '{"type": "ai", "content": "Two files."}',
    ... ])
    >>> report = replay_session(parse_session(text, name="ls"), max_tokens=8000)
    >>> [c.context_tokens == c.full_tokens for c in report.calls]
    [True, True]
"""

from langctx.cli.replay.engine import (
    PROBES,
    REPORT_VERSION,
    CallRecord,
    CompactionRecord,
    ProbeLoss,
    ReplayReport,
    parse_token_count,
    replay_session,
)
from langctx.cli.replay.formats import (
    SESSION_FORMATS,
    EmptySessionError,
    ParsedSession,
    SessionFormat,
    SessionFormatError,
    detect_format,
    parse_session,
    read_session,
)

__all__ = [
    "PROBES",
    "REPORT_VERSION",
    "SESSION_FORMATS",
    "CallRecord",
    "CompactionRecord",
    "EmptySessionError",
    "ParsedSession",
    "ProbeLoss",
    "ReplayReport",
    "SessionFormat",
    "SessionFormatError",
    "detect_format",
    "parse_session",
    "parse_token_count",
    "read_session",
    "replay_session",
]
