"""Lossless short forms of file-path lists for the facts ledger.

Example:
    >>> paths = ["/w/app/src/a.py", "/w/app/src/b.py", "/w/app/README.md"]
    >>> compress_paths(paths, root="/w/app/", group=True)
    'src/: a.py, b.py; README.md'
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from langctx.errors import ConfigError

_AMBIGUOUS = re.compile(r'[,;:] |[\x00-\x1f\x7f]|^[\s"]|\s$|/$')  # paths that need quoting
_DECODER = json.JSONDecoder()


def common_root(paths: Iterable[str]) -> str:
    """The longest directory (ending in ``/``, not ``/``) of 2+ distinct absolute paths, or ""."""
    unique = list(dict.fromkeys(paths))
    if len(unique) < 2 or not all(p.startswith("/") for p in unique):
        return ""
    prefix = os.path.commonprefix(unique)  # noqa: RUF071 (by character, cut at its last "/")
    root = prefix[: prefix.rfind("/") + 1]
    # a prefix shared with a path that *is* the root directory name must still end at a "/"
    return root if len(root) > 1 else ""


def relative_path(path: str, root: str) -> str:
    """``path`` relative to ``root``; unchanged when it is not under it or would read as absolute."""
    if root and path.startswith(root):
        rest = path[len(root) :]
        if rest and rest[0] != "/":
            return rest
    return path


@lru_cache(maxsize=1 << 16)  # the same paths are rendered at every compaction
def _needs_quote(path: str) -> bool:
    return not path or _AMBIGUOUS.search(path) is not None


def compress_paths(paths: Sequence[str], *, root: str = "", group: bool = False) -> str:
    """The paths as short text, duplicates once, relative to ``root`` (see :func:`expand_paths`).

    Groups are separated by ``"; "``: ``dir/: name, name`` (``group=True``, a directory with
    several paths), plain paths separated by ``", "``, or an ambiguous path as a JSON string.

    Raises:
        ConfigError: ``root`` is given but some path is relative.
    """
    unique = list(dict.fromkeys(paths))
    if root and not all(p.startswith("/") for p in unique):
        msg = "compress_paths(root=...) needs absolute paths only; pass root='' for mixed lists."
        raise ConfigError(msg)
    rels = [relative_path(p, root) for p in unique]
    quoted = [json.dumps(rel, ensure_ascii=False) for rel in rels if _needs_quote(rel)]
    plain = [rel for rel in rels if not _needs_quote(rel)]
    if not group:
        return "; ".join([*quoted, ", ".join(plain)] if plain else quoted)
    by_dir: dict[str, list[str]] = {}
    for p in plain:
        cut = p.rfind("/") + 1
        by_dir.setdefault(p[:cut], []).append(p[cut:])
    groups = quoted
    runs = itertools.groupby(by_dir.items(), key=lambda d: bool(d[0]) and len(d[1]) > 1)
    for is_dir, run in runs:  # a directory with several paths, or a run of loose paths
        if is_dir:
            groups.extend(f"{directory}: " + ", ".join(names) for directory, names in run)
        else:
            groups.append(", ".join(directory + n for directory, names in run for n in names))
    return "; ".join(groups)


def expand_paths(text: str, *, root: str = "") -> list[str]:
    """The paths written by :func:`compress_paths` (same ``root``); ConfigError on a broken quote."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] == '"':  # a quoted path, a group of its own
            try:
                path, i = _DECODER.raw_decode(text, i)
            except json.JSONDecodeError as exc:
                msg = f"broken quoted path at character {i} of the path list: {exc}"
                raise ConfigError(msg) from exc
            out.append(path)
            i += 2  # the "; " after it
            continue
        end = text.find("; ", i)
        end = n if end < 0 else end
        body = text[i:end]
        directory, sep, names = body.partition(": ")
        if not sep:
            directory, names = "", body
        out.extend(directory + name for name in names.split(", "))
        i = end + 2
    return [p if not root or p.startswith("/") else root + p for p in out]
