"""``open_checkpointer``: SQLite paths, ``:memory:``, PostgreSQL, and clear connection errors."""

from __future__ import annotations

import socket
import sys
import uuid
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage

from langctx import LangctxError
from langctx.langgraph import LangctxNode
from langctx.stores.checkpoints import (
    CheckpointerConnectionError,
    aopen_checkpointer,
    open_checkpointer,
)
from langctx.testing import ScriptedChatModel
from tests.integration_tests._agents import config, node_agent, require_postgres


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


def test_postgres_unavailable_names_the_connection_string_and_writes_nothing() -> None:
    port = _closed_port()
    uri = f"postgresql://agent:s3cret@127.0.0.1:{port}/langctx"
    ran = False
    with pytest.raises(CheckpointerConnectionError) as info:
        with open_checkpointer(uri, connect_timeout=2):
            ran = True  # never reached: the failure comes before any graph step
    assert not ran
    message = str(info.value)
    assert f"postgresql://agent:***@127.0.0.1:{port}/langctx" in message
    assert "s3cret" not in message
    assert "Check that the server is running" in message
    assert isinstance(info.value, LangctxError) and isinstance(info.value, ConnectionError)


async def test_async_postgres_unavailable_is_the_same_error() -> None:
    uri = f"postgresql://postgres@127.0.0.1:{_closed_port()}/test"
    with pytest.raises(CheckpointerConnectionError, match=r"127\.0\.0\.1"):
        async with aopen_checkpointer(uri, connect_timeout=2):
            pass


def test_sqlite_in_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CheckpointerConnectionError, match="does not exist"):
        with open_checkpointer(str(tmp_path / "nope" / "cp.sqlite")):
            pass


@pytest.mark.parametrize("form", ["plain", "sqlite-url", "memory"])
def test_sqlite_forms_persist_a_thread(tmp_path: Path, form: str) -> None:
    path = tmp_path / "cp.sqlite"
    uri = {"plain": str(path), "sqlite-url": f"sqlite:///{path}", "memory": ":memory:"}[form]
    cfg = config()
    with open_checkpointer(uri) as saver:
        graph = node_agent(ScriptedChatModel(responses=["Hi."]), [], LangctxNode(), saver)
        graph.invoke({"messages": [HumanMessage("Hello")]}, cfg)
        assert graph.get_state(cfg).values["messages"][-1].content == "Hi."
    if form != "memory":
        with open_checkpointer(uri) as saver:
            graph = node_agent(ScriptedChatModel(responses=[]), [], LangctxNode(), saver)
            assert graph.get_state(cfg).values["messages"][-1].content == "Hi."


async def test_async_sqlite_persists_a_thread(tmp_path: Path) -> None:
    cfg = config()
    async with aopen_checkpointer(str(tmp_path / "a.sqlite")) as saver:
        graph = node_agent(ScriptedChatModel(responses=["Hi."]), [], LangctxNode(), saver)
        out = await graph.ainvoke({"messages": [HumanMessage("Hello")]}, cfg)
    assert out["messages"][-1].content == "Hi."


@pytest.mark.postgres
def test_postgres_checkpointer_persists_a_thread() -> None:
    uri = require_postgres()
    cfg = config(f"pg-{uuid.uuid4().hex}")
    with open_checkpointer(uri) as saver:
        graph = node_agent(ScriptedChatModel(responses=["Hi."]), [], LangctxNode(), saver)
        graph.invoke({"messages": [HumanMessage("Hello")]}, cfg)
    with open_checkpointer(uri) as saver:
        graph = node_agent(ScriptedChatModel(responses=[]), [], LangctxNode(), saver)
        assert graph.get_state(cfg).values["messages"][-1].content == "Hi."


@pytest.mark.postgres
async def test_async_postgres_checkpointer_persists_a_thread() -> None:
    uri = require_postgres()
    cfg = config(f"pg-{uuid.uuid4().hex}")
    async with aopen_checkpointer(uri) as saver:
        graph = node_agent(ScriptedChatModel(responses=["Hi."]), [], LangctxNode(), saver)
        await graph.ainvoke({"messages": [HumanMessage("Hello")]}, cfg)
    async with aopen_checkpointer(uri) as saver:
        graph = node_agent(ScriptedChatModel(responses=[]), [], LangctxNode(), saver)
        state = await graph.aget_state(cfg)
        assert state.values["messages"][-1].content == "Hi."


async def test_a_missing_postgres_extra_is_the_same_error_sync_and_async(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg now raises ImportError
    uri = "postgresql://agent:s3cret@127.0.0.1:5432/langctx"
    with pytest.raises(CheckpointerConnectionError, match=r"langctx\[postgres\]") as sync:
        with open_checkpointer(uri):
            pass
    with pytest.raises(CheckpointerConnectionError, match=r"langctx\[postgres\]") as aio:
        async with aopen_checkpointer(uri):
            pass
    assert sync.value.uri == aio.value.uri == "postgresql://agent:***@127.0.0.1:5432/langctx"


def test_an_unopenable_sqlite_file_is_a_clear_error(tmp_path: Path) -> None:
    uri = str(tmp_path)  # a folder: its parent exists, but sqlite cannot open it as a database
    with pytest.raises(CheckpointerConnectionError, match="Check the path") as info:
        with open_checkpointer(uri):
            pass
    assert info.value.uri == uri
