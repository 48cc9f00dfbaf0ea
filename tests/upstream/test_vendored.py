"""Guards for the vendored langchain-core tests: right version, testing our adapter, not empty."""

from __future__ import annotations

from pathlib import Path

import langchain_core

from langctx.history import LangctxChatMessageHistory
from tests.upstream import chat_history_shim
from tests.upstream.chat_history import test_chat_history
from tests.upstream.runnables import test_history

HERE = Path(__file__).resolve().parent


def test_vendored_version_matches_installed_langchain_core() -> None:
    vendored = (HERE / "VERSION").read_text(encoding="utf-8").strip()
    assert vendored == langchain_core.__version__, (
        f"tests/upstream holds langchain-core {vendored}'s tests but {langchain_core.__version__} "
        "is installed; run tests/upstream/refresh.sh"
    )


def test_vendored_modules_use_the_adapter() -> None:
    for module in (test_chat_history, test_history):
        cls = module.InMemoryChatMessageHistory
        assert cls is chat_history_shim.LangctxUpstreamHistory
        assert issubclass(cls, LangctxChatMessageHistory)


def test_vendored_files_are_unchanged_but_for_the_import_lines() -> None:
    for path in (
        HERE / "chat_history" / "test_chat_history.py",
        HERE / "runnables" / "test_history.py",
    ):
        text = path.read_text(encoding="utf-8")
        assert "from tests.upstream.chat_history_shim import" in text
        body = [ln for ln in text.splitlines() if not ln.startswith("#")]
        assert not any("langchain_core.chat_history" in ln for ln in body)


def test_vendored_modules_hold_tests() -> None:
    # they run in the ordinary pytest run (tests/upstream/conftest.py fails any skip); an empty
    # refresh must not pass silently
    for module in (test_chat_history, test_history):
        assert [name for name in vars(module) if name.startswith("test_")], module.__name__
