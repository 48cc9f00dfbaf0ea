"""Exceptions raised by langctx: every one derives from :class:`LangctxError` (and a builtin, in
parentheses, where the meaning matches); those defined elsewhere name their module::

    LangctxError
    ├── ConfigError (ValueError)                       invalid configuration or arguments
    ├── InvalidMessageError (TypeError)                something that is not a chat message
    ├── InvalidHistoryError (ValueError)               orphan tool result, conflicting duplicate id
    ├── BudgetError (ValueError)                       pinned messages exceed the budget
    ├── SummarizerError                                the summarizer failed, no fallback allowed
    ├── StateVersionError (ValueError)                 persisted state of an unknown version
    ├── ContextOverflowError                           still too long after retries (langchain-core's too)
    ├── ReferenceNotFoundError (KeyError)              unknown, expired or foreign reference
    ├── GuardTimeoutError (TimeoutError)               timeouts: a summarizer or tool call timed out
    ├── ScriptExhaustedError (RuntimeError)            testing: the scripted model ran out
    ├── CheckpointerConnectionError (ConnectionError)  stores.checkpoints: cannot connect
    ├── ArchiveMissingError (LookupError)              stores.archive: a batch is gone
    ├── SessionFormatError (ValueError)                cli.replay.formats: unreadable session
    │   └── EmptySessionError                          cli.replay.formats: nothing to replay
    └── InspectError                                   cli.inspect.errors: cannot read it
        ├── DatabaseNotFoundError (FileNotFoundError)  cli.inspect.errors: --db names no file
        ├── NotACheckpointDatabaseError (ValueError)   cli.inspect.errors: no checkpoint tables
        ├── ThreadNotFoundError (LookupError)          cli.inspect.errors: no such thread
        ├── CheckpointNotFoundError (LookupError)      cli.inspect.errors: no such checkpoint
        └── CorruptCheckpointError (ValueError)        cli.inspect.errors: cannot be decoded

    LangctxWarning (UserWarning)                       something degraded gracefully

Messages end with what to do about it. ``tests/unit_tests/test_errors.py`` keeps this tree complete.
"""

from __future__ import annotations

try:
    from langchain_core.exceptions import ContextOverflowError as ProviderContextOverflowError
except ImportError:  # a langchain-core older than its typed overflow error: nothing raises this

    class ProviderContextOverflowError(Exception):  # type: ignore[no-redef]
        """Stands in for ``langchain_core.exceptions.ContextOverflowError``."""


class LangctxError(Exception):
    """Root of every error langctx raises."""


class ConfigError(LangctxError, ValueError):
    """A configuration value is invalid."""


class InvalidMessageError(LangctxError, TypeError):
    """An object that cannot be turned into a chat message was given."""


class InvalidHistoryError(LangctxError, ValueError):
    """The message history breaks an invariant (orphan tool result, conflicting duplicate id)."""


class BudgetError(LangctxError, ValueError):
    """The messages that may never be evicted do not fit the token budget."""


class SummarizerError(LangctxError):
    """The summarizer failed and no fallback was configured."""


class StateVersionError(LangctxError, ValueError):
    """Persisted state was written by an unknown version of langctx."""


class ContextOverflowError(LangctxError, ProviderContextOverflowError):
    """The provider rejected the request as too long, even after compacting and retrying
    (``tokens_before`` / ``tokens_after`` the last attempt, ``attempts`` rounds); also a
    ``langchain_core.exceptions.ContextOverflowError``, so handlers of that type catch it."""

    def __init__(
        self, message: str, *, tokens_before: int = 0, tokens_after: int = 0, attempts: int = 0
    ) -> None:
        super().__init__(message)
        self.tokens_before = tokens_before
        self.tokens_after = tokens_after
        self.attempts = attempts


class ReferenceNotFoundError(LangctxError, KeyError):
    """A context reference id is unknown, expired, or belongs to another thread."""

    def __str__(self) -> str:  # KeyError quotes its argument; keep the message readable
        return str(self.args[0]) if self.args else ""


class LangctxWarning(UserWarning):
    """Something degraded gracefully (e.g. exact token counting fell back to estimates)."""
