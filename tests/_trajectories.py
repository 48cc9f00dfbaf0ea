"""Test helper: load the recorded agent sessions in ``../shared/data/trajectories``.

Each ``<id>.messages.jsonl`` holds one message per line (``type`` is system/human/ai/tool);
each ``<id>.truth.json`` holds facts derived from the original recording. Tests that use this
data must skip, with a visible reason, when the directory is absent (:func:`require_data_dir`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

__all__ = [
    "DATA_DIR",
    "Session",
    "iter_sessions",
    "load_jsonl_messages",
    "message_from_record",
    "require_data_dir",
]

DATA_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trajectories"
"""``/work/shared/data/trajectories`` when the repository is ``/work/main``."""


def message_from_record(record: dict[str, Any], message_id: str) -> BaseMessage:
    """One JSONL record -> a langchain-core message with the given id.

    Keeps ``tool_calls``, ``tool_call_id``, ``name``, ``status`` and ``additional_kwargs``.
    """
    kind = record.get("type")
    content = record.get("content") or ""
    extra = record.get("additional_kwargs") or {}
    if kind == "system":
        return SystemMessage(content=content, id=message_id, additional_kwargs=extra)
    if kind == "human":
        return HumanMessage(content=content, id=message_id, additional_kwargs=extra)
    if kind == "ai":
        calls = [
            {"id": call.get("id"), "name": call["name"], "args": call.get("args") or {}}
            for call in record.get("tool_calls") or []
        ]
        return AIMessage(content=content, id=message_id, tool_calls=calls, additional_kwargs=extra)
    if kind == "tool":
        return ToolMessage(
            content=content,
            id=message_id,
            tool_call_id=record["tool_call_id"],
            name=record.get("name"),
            status=record.get("status") or "success",
            additional_kwargs=extra,
        )
    msg = f"unknown message type {kind!r} in record {message_id}"
    raise ValueError(msg)


def load_jsonl_messages(path: Path | str, *, session: str | None = None) -> list[BaseMessage]:
    """Load a ``*.messages.jsonl`` file; message ``i`` gets the id ``f"{session}-{i}"``.

    ``session`` defaults to the file name without ``.messages.jsonl``.
    """
    path = Path(path)
    name = session or path.name.removesuffix(".messages.jsonl")
    with path.open(encoding="utf-8") as handle:
        return [
            message_from_record(json.loads(line), f"{name}-{i}")
            for i, line in enumerate(line for line in handle if line.strip())
        ]


class Session:
    """One recorded session: its source folder, id, file paths and (lazily) messages/truth."""

    def __init__(self, messages_path: Path) -> None:
        self.messages_path = messages_path
        self.source = messages_path.parent.name
        self.id = messages_path.name.removesuffix(".messages.jsonl")
        self.truth_path = messages_path.with_name(f"{self.id}.truth.json")

    def __repr__(self) -> str:
        return f"Session({self.source}/{self.id})"

    def messages(self) -> list[BaseMessage]:
        """The session's messages (freshly loaded)."""
        return load_jsonl_messages(self.messages_path, session=self.id)

    def truth(self) -> dict[str, Any]:
        """The session's ``truth.json``."""
        with self.truth_path.open(encoding="utf-8") as handle:
            data: dict[str, Any] = json.load(handle)
        return data


def require_data_dir() -> Path:
    """The trajectories directory, or skip the calling test with the reason.

    With ``LANGCTX_REQUIRE_DATA`` set (CI), a missing directory fails instead of skipping.
    """
    if not DATA_DIR.is_dir():
        if os.environ.get("LANGCTX_REQUIRE_DATA"):
            pytest.fail(f"LANGCTX_REQUIRE_DATA is set but {DATA_DIR} is missing")
        pytest.skip(f"recorded trajectories not found at {DATA_DIR} (../shared is absent)")
    return DATA_DIR


def iter_sessions(data_dir: Path = DATA_DIR) -> Iterator[Session]:
    """Every session under ``data_dir``, sorted by source then id; nothing if it is absent."""
    if not data_dir.is_dir():
        return
    for path in sorted(data_dir.glob("*/*.messages.jsonl")):
        yield Session(path)
