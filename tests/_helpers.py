"""Shared test helpers: invariant checks and the recorded sessions in ../shared/data."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx.channel import merge_langctx
from langctx.state_memory import MemorySettings, ThreadView, view_state

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trajectories"
PG_URI = os.environ.get("LANGCTX_PG_URI", "postgresql://postgres@127.0.0.1:5432/test")
"""The tests' PostgreSQL server (each test process works in a schema of its own: conftest.py)."""


def require_data() -> Path:
    """The trajectories folder, or a visible skip (a failure in CI, where it must exist)."""
    if not DATA.is_dir():
        if os.environ.get("LANGCTX_REQUIRE_DATA"):
            pytest.fail(f"LANGCTX_REQUIRE_DATA is set but {DATA} is missing")
        pytest.skip(f"recorded sessions not found at {DATA} (they live beside the repo, not in it)")
    return DATA


def session_files() -> list[Path]:
    """Every recorded session, sorted; empty when the data is absent."""
    return sorted(DATA.glob("*/*.messages.jsonl")) if DATA.is_dir() else []


_TYPES = {"system": SystemMessage, "human": HumanMessage, "ai": AIMessage, "tool": ToolMessage}


def load_session(path: Path) -> list[BaseMessage]:
    """Load one recorded session as langchain messages with stable ids."""
    out: list[BaseMessage] = []
    stem = path.name.removesuffix(".messages.jsonl")
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        d = json.loads(line)
        cls = _TYPES[d["type"]]
        kw: dict = {"content": d.get("content") or "", "id": f"{path.parent.name}-{stem}-{i}"}
        if d.get("additional_kwargs"):  # the recording's marks (aider's console output, ...)
            kw["additional_kwargs"] = d["additional_kwargs"]
        if d["type"] == "ai" and d.get("tool_calls"):
            kw["tool_calls"] = [
                {
                    "id": tc["id"],
                    "name": tc["name"],
                    "args": tc.get("args") or {},
                    "type": "tool_call",
                }
                for tc in d["tool_calls"]
            ]
        if d["type"] == "tool":
            kw["tool_call_id"] = d["tool_call_id"]
            kw["name"] = d.get("name")
            kw["status"] = d.get("status") or "success"
        out.append(cls(**kw))
    return out


def truth(path: Path) -> dict:
    """The ground-truth facts recorded beside a session."""
    return json.loads(
        path.with_name(path.name.replace(".messages.jsonl", ".truth.json")).read_text()
    )


def assert_pairs_intact(messages: Sequence[BaseMessage]) -> None:
    """No tool result without its call, no call without its result (in this sequence)."""
    calls: dict[str, int] = {}
    answered: set[str] = set()
    for i, m in enumerate(messages):
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                calls[tc["id"]] = i
        if isinstance(m, ToolMessage):
            assert m.tool_call_id in calls, f"orphan tool result {m.id} ({m.tool_call_id}) at {i}"
            assert calls[m.tool_call_id] < i
            answered.add(m.tool_call_id)
    missing = set(calls) - answered
    assert not missing, f"tool calls without results: {sorted(missing)[:5]}"


def iter_turns(messages: Sequence[BaseMessage]) -> Iterator[list[BaseMessage]]:
    """Group a recorded session into what arrives between two model calls."""
    batch: list[BaseMessage] = []
    for m in messages:
        if isinstance(m, AIMessage) and batch:
            yield batch
            batch = []
        batch.append(m)
    if batch:
        yield batch


def exchanges(n: int, start: int = 0) -> list[BaseMessage]:
    """``n`` AI/human exchanges of ~300 tokens each (ids a<i>, h<i>), for budget tests."""
    out: list[BaseMessage] = []
    for i in range(start, start + n):
        out.append(AIMessage(f"step {i} " + "reasoning about the parser " * 60, id=f"a{i}"))
        out.append(HumanMessage(f"continue {i} " + "more detail please " * 60, id=f"h{i}"))
    return out


def ids_of(messages: Sequence[BaseMessage]) -> list[str | None]:
    """Message ids, with the summary block's (content-derived) id as None."""
    from langctx.markers import SUMMARY_ID_PREFIX

    return [None if (m.id or "").startswith(SUMMARY_ID_PREFIX) else m.id for m in messages]


def stateless_step(state: dict[str, Any], settings: MemorySettings) -> ThreadView:
    """One model call of the stateless integrations on ``state``: view it, compact when due and
    merge the update into its ``langctx`` channel (in place); the view is returned."""
    view = view_state(state, settings)
    view.compact_if_due()
    update = view.update()
    if update is not None:
        state["langctx"] = merge_langctx(state["langctx"], update)
    return view
