"""Reduce one tool output to fit the context: the pure, deterministic core of Context-mode."""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from types import MappingProxyType
from typing import Any

from langctx.context_mode.detect import detect_kind, output_path
from langctx.context_mode.outputs import OutputMeta, Reduction
from langctx.context_mode.reducers import REDUCERS
from langctx.context_mode.reducers.binary import looks_binary, reduce_binary
from langctx.context_mode.reducers.text import reduce_text
from langctx.errors import ConfigError
from langctx.facts import DEFAULT_COMMAND_TOOLS, find_duration, find_exit_code
from langctx.tokens import TextCounter, TokenCounter, text_counter

logger = logging.getLogger(__name__)

DEFAULT_MAX_INLINE_TOKENS = 1_500
"""Outputs up to this many tokens pass through unchanged; larger ones are reduced to fit it."""

MIN_INLINE_TOKENS = 100
"""The smallest ``max_inline_tokens`` accepted: room for the header, the footer and some content."""


def build_meta(
    text: str,
    *,
    tool_name: str | None = None,
    args: Mapping[str, Any] | None = None,
    original_tokens: int | None = None,
    count_tokens: TokenCounter | TextCounter | None = None,
) -> OutputMeta:
    """Collect what is known about an output: tool, path, sizes, exit code, duration.

    Example:
        >>> m = build_meta("...\\nexit code 2 (took 1.5s)", tool_name="bash")
        >>> m.exit_code, m.duration
        (2, '1.5s')
    """
    count = text_counter(count_tokens)
    return OutputMeta(
        tool_name=tool_name,
        args=MappingProxyType(dict(args)) if args else MappingProxyType({}),
        path=output_path(tool_name, args),
        original_chars=len(text),
        original_tokens=count(text) if original_tokens is None else original_tokens,
        exit_code=find_exit_code(text),
        duration=find_duration(text),
        count_tokens=count,
    )


def _as_text(output: object) -> tuple[str, bytes | None]:
    """A tool output as text, and the bytes it was decoded from (``None`` for a ``str``)."""
    if isinstance(output, bytes | bytearray | memoryview):
        raw = bytes(output)
        return raw.decode("utf-8", errors="replace"), raw
    if isinstance(output, str):
        return output, None
    msg = (
        f"reduce_output takes str or bytes, got {type(output).__name__}; "
        "join content blocks into text first."
    )
    raise TypeError(msg)


def reduce_output(
    text: str | bytes,
    *,
    tool_name: str | None = None,
    args: Mapping[str, Any] | None = None,
    max_inline_tokens: int = DEFAULT_MAX_INLINE_TOKENS,
    count_tokens: TokenCounter | TextCounter | None = None,
    command_tools: Collection[str] = DEFAULT_COMMAND_TOOLS,
) -> Reduction | None:
    """Reduce a tool output to at most ``max_inline_tokens`` tokens, or pass it through.

    Never raises on ``str`` or ``bytes``: a reducer that fails falls back to head and tail.

    Args:
        text: ``bytes`` are decoded as UTF-8 (invalid sequences replaced); binary data is described.
        tool_name: a hint for the content kind, as are ``args`` (a path or command).

    Returns:
        ``None`` when a ``str`` output fits ``max_inline_tokens`` (use it unchanged); ``bytes``
        always give a :class:`~langctx.context_mode.Reduction`.

    Raises:
        ConfigError: ``max_inline_tokens`` is below :data:`MIN_INLINE_TOKENS`.
        TypeError: ``text`` is neither ``str`` nor ``bytes``.

    Example:
        >>> out = "PASSED t.py::ok\\n" * 600 + "FAILED t.py::io - OSError: disk full\\nexit code 1"
        >>> r = reduce_output(out, tool_name="bash", args={"command": "pytest"})
        >>> r.kind, "OSError: disk full" in r.text, "exit code 1" in r.text
        ('log', True, True)
        >>> reduce_output(b"\\x00\\x01\\x02" * 1000).text.splitlines()[1]
        'binary output, 3,000 bytes (sha256 ...…)'
    """
    if isinstance(max_inline_tokens, bool) or not isinstance(max_inline_tokens, int):
        msg = f"max_inline_tokens must be an int, got {max_inline_tokens!r}; pass e.g. 1500."
        raise ConfigError(msg)
    if max_inline_tokens < MIN_INLINE_TOKENS:
        msg = (
            f"max_inline_tokens={max_inline_tokens} leaves no room for the reduced output; "
            f"use at least {MIN_INLINE_TOKENS}."
        )
        raise ConfigError(msg)
    text, raw = _as_text(text)
    count = text_counter(count_tokens)
    tokens = count(text)
    if raw is None and tokens <= max_inline_tokens:
        return None
    meta = build_meta(
        text, tool_name=tool_name, args=args, original_tokens=tokens, count_tokens=count
    )
    if looks_binary(text):
        return reduce_binary(text, meta=meta, budget_tokens=max_inline_tokens, raw=raw)
    if tokens <= max_inline_tokens:  # small bytes output: decoded, otherwise unchanged
        return Reduction(
            text=text,
            kind="text",
            original_chars=meta.original_chars,
            original_tokens=tokens,
            reduced_tokens=tokens,
            removed="nothing (decoded from bytes)",
        )
    kind = detect_kind(text, tool_name=tool_name, args=args, command_tools=command_tools)
    try:
        return REDUCERS[kind](text, meta=meta, budget_tokens=max_inline_tokens)
    except Exception:  # a reducer bug must never lose a tool output: fall back to head + tail
        logger.exception("context-mode: the %s reducer failed; falling back to head and tail", kind)
        return reduce_text(text, meta=meta, budget_tokens=max_inline_tokens)
