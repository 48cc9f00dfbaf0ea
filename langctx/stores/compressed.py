"""``CompressedSerializer``: a checkpoint serializer that compresses what another one writes
(the standard library's ``zlib``), for the smallest checkpoint files (docs/persistence.md).

Example:
    >>> from langgraph.checkpoint.memory import InMemorySaver
    >>> serde = CompressedSerializer()
    >>> typ, data = serde.dumps_typed({"text": "def parse(src):\\n    ...\\n" * 100})
    >>> typ, len(data) < 100
    ('msgpack~zlib', True)
    >>> serde.loads_typed((typ, data))["text"][:15]
    'def parse(src):'
    >>> saver = InMemorySaver(serde=CompressedSerializer())
"""

from __future__ import annotations

import zlib
from typing import Any

from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from langctx.errors import ConfigError, StateVersionError

__all__ = ["CompressedSerializer"]

SUFFIX = "~zlib"
"""Appended to the inner serializer's type name. Not ``+``: LangGraph's ``EncryptedSerializer``
splits its type at the first ``+``, so ``EncryptedSerializer(cipher, CompressedSerializer())``
(compress, then encrypt) reads back."""

MIN_BYTES = 256
"""Values shorter than this are stored as the inner serializer wrote them."""


class CompressedSerializer(SerializerProtocol):
    """``serde``'s bytes compressed with ``zlib`` at ``level``; reads uncompressed values too,
    so a saver can switch to it on an existing database. Stateless: safe across threads.

    Args:
        serde: the serializer whose output is compressed (default LangGraph's
            ``JsonPlusSerializer``, what the savers use).
        level: ``zlib`` level, 1 (fastest) .. 9 (smallest); default 6.

    Raises:
        ConfigError: ``level`` is not an int from 1 to 9.
    """

    def __init__(self, serde: SerializerProtocol | None = None, *, level: int = 6) -> None:
        if isinstance(level, bool) or not isinstance(level, int) or not 1 <= level <= 9:
            msg = f"level must be an int from 1 to 9, got {level!r}."
            raise ConfigError(msg)
        self.serde = serde if serde is not None else JsonPlusSerializer()
        self.level = level

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """The inner serializer's ``(type, bytes)``, the bytes compressed when that pays."""
        typ, data = self.serde.dumps_typed(obj)
        if len(data) < MIN_BYTES:
            return typ, data
        packed = zlib.compress(data, self.level)
        return (f"{typ}{SUFFIX}", packed) if len(packed) < len(data) else (typ, data)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """The value of ``data``, decompressed first when its type says so.

        Raises:
            StateVersionError: the type says compressed and the bytes are not ``zlib`` data.
        """
        typ, payload = data
        if not typ.endswith(SUFFIX):
            return self.serde.loads_typed(data)
        try:
            raw = zlib.decompress(payload)
        except zlib.error as exc:
            msg = f"a checkpoint value of type {typ!r} is not zlib data ({exc})."
            raise StateVersionError(msg) from None
        return self.serde.loads_typed((typ.removesuffix(SUFFIX), raw))
