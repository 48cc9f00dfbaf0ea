"""Every marker langctx writes into messages or state (delimiters, stamps, id prefixes), once.

Untrusted text goes through :func:`escape_delimiters`, so it can never forge one.

Example:
    >>> summary_open(level=1, covers=12, entry_id="cmp-0a1b")
    '<langctx:summary level="1" covers="12 messages" id="cmp-0a1b">'
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from langctx.errors import ConfigError

# ---------------------------------------------------------------------------- in message text

NOTICE_MARK = "[langctx]"
"""Opens every note langctx writes as a message (summary preamble, notices, stand-in results)."""
SUMMARY_CLOSE = "</langctx:summary>"
"""Closes one summary in the summary block (opened by :func:`summary_open`)."""
FACTS_OPEN = "<langctx:facts>"
"""Opens the mechanical facts ledger under the summaries."""
FACTS_CLOSE = "</langctx:facts>"
"""Closes the facts ledger."""
FILES_OPEN = "<langctx:files>"
"""Opens the files in hand under the facts ledger (each file opened by :func:`file_open`)."""
FILES_CLOSE = "</langctx:files>"
"""Closes the files in hand."""
FILE_CLOSE = "</langctx:file>"
"""Closes one file in hand."""
REPORTS_OPEN = "<langctx:subagent-reports>"
"""Opens the sub-agent reports of the summary block (:mod:`langctx.subagent_reports`)."""
REPORTS_CLOSE = "</langctx:subagent-reports>"
"""Closes the sub-agent reports."""
REF_MARKER = "[langctx ref="
"""Opens every line Context-mode writes about a stored output (reference, slice, grep)."""
CONTEXT_MODE_MARK = "[langctx context-mode"
"""Opens the header and footer lines of a Context-mode reduction."""
PLACEHOLDER_MARK = "[langctx: tool output elided"
"""Opens the placeholder that stands in for a large tool output shed in place."""
ARGS_PLACEHOLDER_MARK = "[langctx: argument elided to save context, the tool had it whole:"
"""Opens the note that stands in for the middle of a long tool-call argument (a file written)."""
TRUNCATION_MARK = (
    "[langctx: {cut} characters cut here to fit the budget; the full text is message "
    "{message_id} in the log]"
)
"""Put where a pinned or oversized message was cut (``str.format`` with ``cut``, ``message_id``)."""


def summary_open(*, level: int, covers: int, entry_id: str) -> str:
    """The opening delimiter of one summary, with its attributes (see :data:`SUMMARY_CLOSE`)."""
    return f'<langctx:summary level="{level}" covers="{covers} messages" id="{entry_id}">'


def file_open(*, path: str, seen: str) -> str:
    """The opening delimiter of one file in hand (see :data:`FILE_CLOSE`); ``path`` is escaped."""
    shown = escape_delimiters(path).replace('"', "%22")
    return f'<langctx:file path="{shown}" seen="{seen}">'


_QUOTE_RUN_RE = re.compile(r'"+')
QUOTED_OUTPUT_RE = re.compile(r'output: (?P<fence>"+)(?P<text>.*?)(?P=fence)(?!")', re.S)
"""One :func:`quote_output` span; its ``text`` group is the output (one padding space at each
end when it starts or ends with a quote)."""


def quote_output(text: str) -> str:
    """Tool output inside a summary, labelled and quoted (never read as the user's words).

    The output stays verbatim: when it holds quotes, the fence is a longer run of them
    (``\"\"\"``, at least three), padded with a space where the output starts or ends with one.
    """
    longest = max((len(m.group()) for m in _QUOTE_RUN_RE.finditer(text)), default=0)
    fence = '"' if not longest else '"' * max(3, longest + 1)
    pad = " " if longest and (text.startswith('"') or text.endswith('"')) else ""
    return f"output: {fence}{pad}{text}{pad}{fence}"


# ---------------------------------------------------------------------------- stamps and keys

CONTEXT_MODE_STAMP = "langctx_context_mode"
"""``response_metadata`` key of the stamp Context-mode leaves on a tool message it processed."""


def stamp_digest(content: str | list[Any]) -> str:
    """The digest a Context-mode stamp carries of the content it was put on."""
    return hashlib.sha256(_text_of(content).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def context_mode_stamp(message: Any) -> dict[str, Any] | None:
    """The Context-mode stamp of a tool message when its digest matches the content."""
    stamp = (getattr(message, "response_metadata", None) or {}).get(CONTEXT_MODE_STAMP)
    if not isinstance(stamp, dict) or stamp.get("digest") != stamp_digest(message.content):
        return None
    return stamp


def _text_of(content: str | list[Any]) -> str:
    if isinstance(content, str):
        return content
    return "".join(
        b if isinstance(b, str) else str(b.get("text", "")) if isinstance(b, dict) else ""
        for b in content
    )


NO_THREAD = "__langctx_no_thread__"
"""Thread id (and store namespace) used when a run's config has no ``thread_id``; it and every
name it starts (a thread-less run's ``__langctx_no_thread__:run:<uuid>``) are reserved: no
``thread_id`` may name them (:func:`checked_thread_id`)."""


def checked_thread_id(value: object) -> str:
    """A run's ``thread_id`` as a string, refused when it names a reserved namespace.

    Example:
        >>> checked_thread_id(7)
        '7'
        >>> checked_thread_id("__langctx_no_thread__:1")
        Traceback (most recent call last):
        langctx.errors.ConfigError: thread_id '__langctx_no_thread__:1' is reserved ...
    """
    tid = str(value)
    if tid.startswith(NO_THREAD):
        msg = (
            f"thread_id {tid[:80]!r} is reserved by langctx (it names the stored outputs of runs "
            f"without a thread); use a thread_id that does not start with {NO_THREAD!r}."
        )
        raise ConfigError(msg)
    return tid


def thread_less_namespace(run: str) -> str:
    """The namespace of a run without a thread, named by its random run id (a thread id cannot
    name it: :func:`checked_thread_id`)."""
    return f"{NO_THREAD}:run:{run}"


# ---------------------------------------------------------------------------- id prefixes

MESSAGE_ID_PREFIX = "langctx-msg-"
"""Id the memory gives a logged message that has none (then a random hex)."""
ANON_ID_PREFIX = "langctx-anon-"
"""Ids a view gives state messages that have none (position and content digest)."""
HISTORY_ID_PREFIX = "langctx-hist-"
"""The chat-history adapter's id of ``full_messages[i]`` is this and ``i``."""
LEGACY_HISTORY_ID_PREFIX = "lcx-hist-"
"""What :data:`HISTORY_ID_PREFIX` was; stored entries that use it are read as the new one."""
SUMMARY_ID_PREFIX = "langctx-summary-"
"""The summary block's id (then a digest of the summaries' ids)."""
NOTICE_METADATA_KEY = "langctx"
"""Key of ``response_metadata`` whose value ``"notice"`` marks a langctx notice."""
NOTICE_ID_PREFIX = "langctx-notice-"
"""A ``/compact`` notice shown to the user (never to the model)."""
REPAIR_ID_PREFIX = "langctx-repair-"
"""The stand-in result of a tool call whose result was never recorded (then the call id)."""
ACK_ID_PREFIX = "langctx-ack-"
"""The request that closes a projection ending with the summary block."""
REFERENCE_MESSAGE_ID_PREFIX = "langctx-ref-"
"""Id given to a referenced tool message that has none (then the reference id)."""
REFERENCE_ID_PREFIX = "ctx_"
"""A reference id is this and eight hex digits."""
COMPACTION_ID_PREFIX = "cmp"
"""Compaction entry ids: this, ``-`` and a digest of what the entry covers."""
EDIT_ID_PREFIX = "edt"
"""Edit entry ids: this, ``-`` and a digest of the edit."""

# ---------------------------------------------------------------------------- escaping

ZERO_WIDTH_SPACE = "\u200b"
"""Put between an opening bracket and ``langctx`` to break a delimiter in untrusted text."""

# An opener (``<``, ``</`` or ``[``) right before "langctx" in any case, and the zero-width spaces
# already there (none for a live marker): the one rule behind every escape below.
_OPENER = r"(<\/?|\[)"
_DELIMITER = re.compile(_OPENER + r"(?=langctx)", re.IGNORECASE)
_ESCAPED = re.compile(_OPENER + r"(?=\u200b*langctx)", re.IGNORECASE)
_UNESCAPE = re.compile(_OPENER + r"\u200b(?=\u200b*langctx)", re.IGNORECASE)


def needs_escape(text: str) -> bool:
    """True when ``text`` holds something that reads as a langctx delimiter, in any case."""
    return "langctx" in text.lower() and _DELIMITER.search(text) is not None


def escape_delimiters(text: str) -> str:
    """Break every ``<langctx``, ``</langctx`` or ``[langctx`` in untrusted ``text`` (any case,
    idempotent); the text reads the same to a person.

    Example:
        >>> escape_delimiters("ok </LANGCTX:facts>") == "ok </\\u200bLANGCTX:facts>"
        True
    """
    return _sub(_DELIMITER, r"\1" + ZERO_WIDTH_SPACE, text)


def escape_markers(text: str) -> str:
    """Break every langctx delimiter with one more zero-width space (:func:`unescape_markers`
    reverses it).
    """
    return _sub(_ESCAPED, r"\1" + ZERO_WIDTH_SPACE, text)


def unescape_markers(text: str) -> str:
    """Inverse of :func:`escape_markers`."""
    return _sub(_UNESCAPE, r"\1", text)


def _sub(pattern: re.Pattern[str], repl: str, text: str) -> str:
    return pattern.sub(repl, text) if "langctx" in text.lower() else text
