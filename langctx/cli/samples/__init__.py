"""Sessions shipped with langctx: ``langctx replay`` with no SESSION (or ``--sample``) replays
:data:`SAMPLE_SESSION`.

``coding-session.jsonl`` is a LangChain message JSONL of a coding agent fixing a failing parser
test (the session of ``langctx demo``, 60 agent turns, seed 7, with the user's follow-ups): about
80k tokens by its end, so a replay at the default 32k budget compacts.

Example:
    >>> from langctx.cli.replay import read_session
    >>> with sample_session() as path:
    ...     read_session(str(path)).name
    'coding-session'
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from importlib.resources import as_file, files
from pathlib import Path

__all__ = ["SAMPLE_SESSION", "sample_session"]

SAMPLE_SESSION = "coding-session.jsonl"
"""The sample session's file name in this package."""


def sample_session() -> AbstractContextManager[Path]:
    """The sample session as a file path (a temporary copy when the package is zipped)."""
    return as_file(files(__name__) / SAMPLE_SESSION)
