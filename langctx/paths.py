"""Lossless text forms of file-path lists for the facts ledger: whole paths, in order.

Each path is written whole, as it was logged (the model calls its tools with it), never relative
to a prefix said once.

Example:
    >>> text = join_paths(["/w/app/src/a.py", "odd, name.py", "/w/app/src/a.py"])
    >>> text
    '/w/app/src/a.py, "odd, name.py"'
    >>> split_paths(text)
    ['/w/app/src/a.py', 'odd, name.py']
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import lru_cache

from langctx.errors import ConfigError

_AMBIGUOUS = re.compile(r'[,;:] |[\x00-\x1f\x7f]|^[\s"]|\s$|/$')  # paths that need quoting
_DECODER = json.JSONDecoder()
_SEP = ", "


@lru_cache(maxsize=1 << 16)  # the same paths are rendered at every compaction
def _needs_quote(path: str) -> bool:
    return not path or _AMBIGUOUS.search(path) is not None


def join_paths(paths: Sequence[str]) -> str:
    """The paths, each whole and once, in order, separated by ``", "``; a path that could be
    misread (a separator inside, a leading quote, control characters) is a JSON string.
    :func:`split_paths` reads it back."""
    unique = dict.fromkeys(paths)
    return _SEP.join(json.dumps(p, ensure_ascii=False) if _needs_quote(p) else p for p in unique)


def split_paths(text: str) -> list[str]:
    """The paths written by :func:`join_paths`; ConfigError on a broken quote."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':  # a quoted path
            try:
                path, i = _DECODER.raw_decode(text, i)
            except json.JSONDecodeError as exc:
                msg = f"broken quoted path at character {i} of the path list: {exc}"
                raise ConfigError(msg) from exc
            out.append(path)
            i += len(_SEP)
            continue
        end = text.find(_SEP, i)
        end = n if end < 0 else end
        out.append(text[i:end])
        i = end + len(_SEP)
    return out
