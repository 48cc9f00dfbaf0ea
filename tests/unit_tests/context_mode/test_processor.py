"""ContextModeProcessor: thresholds, the model summary and its fallbacks, messages, the twins."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage, ToolMessage

from langctx.context_mode.config import ContextModeConfig
from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.references import InMemoryReferenceStore
from langctx.context_mode.summary import summary_request, tool_kind
from langctx.errors import ConfigError
from langctx.markers import CONTEXT_MODE_STAMP
from langctx.summarize.model import TOOL_OUTPUT_TAGS, ModelSummarizer
from langctx.testing import ScriptedChatModel

LOG = "\n".join(f"[{i:05d}] compiling unit {i}" for i in range(6000)) + (
    '\nTraceback (most recent call last):\n  File "build.py", line 88, in main\n'
    "ImportError: cannot import name 'x'\nexit code 2"
)
MEDIUM = "\n".join(f"row {i}: value {i * 3}" for i in range(300))  # between the two thresholds


def test_small_outputs_pass_through_unchanged() -> None:
    out = ContextModeProcessor().process("hello\nworld")
    assert (out.action, out.text, out.ref_id) == ("inline", "hello\nworld", None)


def test_medium_outputs_are_reduced_not_referenced() -> None:
    p = ContextModeProcessor()
    tokens = p.count_tokens(MEDIUM)
    assert 1500 < tokens <= 4000
    out = p.process(MEDIUM, tool_name="query")
    assert out.action == "reduced" and out.ref_id is None and out.tokens <= 1500


def test_a_reduction_that_drops_facts_is_referenced() -> None:
    lines = [f"src/mod{i}.py:{i + 1}: E501 line too long (KeyError{i}Error)" for i in range(150)]
    text = "\n".join(lines)
    p = ContextModeProcessor()
    assert 1500 < p.count_tokens(text) <= 4000
    assert p.process(text, tool_name="bash").action == "referenced"
    assert (
        ContextModeProcessor(reference_lost_facts=False).process(text, tool_name="bash").action
        == "reduced"
    )


def test_large_outputs_are_referenced_with_exit_code_and_error() -> None:
    out = ContextModeProcessor().process(
        LOG, tool_name="bash", args={"command": "make"}, thread_id="t"
    )
    assert out.action == "referenced" and out.tokens <= 1500 and out.exit_code == 2
    assert "ImportError" in out.text and "build.py" in out.text
    assert out.text.startswith(f"[langctx ref={out.ref_id} ·")


def test_references_can_be_turned_off() -> None:
    store = InMemoryReferenceStore()
    out = ContextModeProcessor(store=store, references=False).process(LOG, tool_name="bash")
    assert out.action == "reduced" and store._data == {}


def test_config_is_validated() -> None:
    with pytest.raises(ConfigError, match="reference_min_tokens"):
        ContextModeConfig(max_inline_tokens=2000, reference_min_tokens=1000)
    with pytest.raises(ConfigError, match="max_inline_tokens"):
        ContextModeConfig(max_inline_tokens=True)
    with pytest.raises(ConfigError, match="unknown ContextModeProcessor option"):
        ContextModeProcessor(max_inline=5)
    with pytest.raises(ConfigError, match="either config"):
        ContextModeProcessor(ContextModeConfig(), ttl_seconds=5)
    with pytest.raises(ConfigError, match="summarizer"):
        ContextModeProcessor(summarizer=42)
    with pytest.raises(TypeError, match="str or bytes"):
        ContextModeProcessor().process(123)  # type: ignore[arg-type]


class _FailingStore(InMemoryReferenceStore):
    def put(self, *args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")


def test_a_store_failure_keeps_the_reduction() -> None:
    out = ContextModeProcessor(store=_FailingStore()).process(LOG, tool_name="bash")
    assert out.action == "reduced" and out.ref_id is None and "ImportError" in out.text


# ------------------------------------------------------------------------------ summary


class _Tags(BaseCallbackHandler):
    def __init__(self) -> None:
        self.tags: list[list[str]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        self.tags.append(list(kwargs.get("tags") or []))


def test_the_model_summary_replaces_the_reduction_and_keeps_facts() -> None:
    model = ScriptedChatModel(responses=["The build failed while compiling."])
    p = ContextModeProcessor(summarizer=model)
    out = p.process(LOG, tool_name="bash", args={"command": "make"}, thread_id="t")
    assert out.action == "referenced"
    assert "The build failed while compiling." in out.text
    assert "exit code 2" in out.text and "ImportError" in out.text and "build.py:88" in out.text
    system, human = model.calls[0]
    assert "running a command" in system.text and "Tool: bash" in human.text
    assert "exit code 2" in human.text  # mechanical facts are given to the model


def test_summary_calls_are_tagged_nostream() -> None:
    handler = _Tags()
    model = ScriptedChatModel(responses=["ok"], callbacks=[handler])
    ContextModeProcessor(summarizer=model).process(LOG, tool_name="bash")
    assert handler.tags and set(TOOL_OUTPUT_TAGS) <= set(handler.tags[0])


@pytest.mark.parametrize(
    "response", [RuntimeError("rate limited"), "", "   "], ids=["raises", "empty", "blank"]
)
def test_summary_failures_fall_back_to_the_reduction(response: Any) -> None:
    p = ContextModeProcessor(summarizer=ScriptedChatModel(responses=[response]))
    out = p.process(LOG, tool_name="bash", thread_id="t")
    assert out.action == "referenced" and "[langctx context-mode: bash output reduced" in out.text


def test_summary_timeout_falls_back() -> None:
    def slow(_: list[BaseMessage]) -> str:
        time.sleep(2)
        return "late"

    p = ContextModeProcessor(summarizer=ScriptedChatModel(responses=[slow]), summary_timeout=0.05)
    started = time.monotonic()
    out = p.process(LOG, tool_name="bash")
    assert time.monotonic() - started < 1.5 and "late" not in out.text


async def test_async_summary_and_timeout() -> None:
    p = ContextModeProcessor(summarizer=ScriptedChatModel(responses=["Async summary."]))
    out = await p.aprocess(LOG, tool_name="bash", thread_id="t")
    assert "Async summary." in out.text
    assert (await p.afetch(out.ref_id or "", thread_id="t", grep="ImportError")).matches == 1

    def slow(_: list[BaseMessage]) -> str:
        time.sleep(1)
        return "late"

    p2 = ContextModeProcessor(summarizer=ScriptedChatModel(responses=[slow]), summary_timeout=0.05)
    assert "late" not in (await p2.aprocess(LOG, tool_name="bash")).text


def test_tables_keep_the_structural_reduction_even_with_a_model() -> None:
    model = ScriptedChatModel(responses=["should not be called"])
    table = "id,name\n" + "".join(f"{i},name{i}\n" for i in range(5000))
    out = ContextModeProcessor(summarizer=model).process(table, tool_name="run_sql")
    assert model.calls == [] and "should not" not in out.text


@pytest.mark.parametrize(
    ("tool", "args", "kind", "expected"),
    [
        ("read_file", {"path": "a.py"}, "source", "read_file"),
        ("bash", {"command": "pytest"}, "log", "run_command"),
        ("postgres_query", {"sql": "select"}, "table", "query_db"),
        ("browser_snapshot", {}, "html", "browse_page"),
        ("weather", {"city": "Oslo"}, "text", "default"),
    ],
)
def test_tool_kind_picks_the_prompt(
    tool: str, args: dict[str, Any], kind: Any, expected: str
) -> None:
    assert tool_kind(tool, args, kind) == expected
    request = summary_request("x", tool_name=tool, args=args, kind=kind)
    system = ModelSummarizer(ScriptedChatModel()).build_messages(request)[0]
    assert "At most 1000 tokens" in system.text


# ------------------------------------------------------------------------------ messages


def test_process_message_stamps_and_is_idempotent() -> None:
    p = ContextModeProcessor()
    msg = ToolMessage(LOG, tool_call_id="c1", name="bash")
    once = p.process_message(msg, thread_id="t", args={"command": "make"})
    assert once.response_metadata[CONTEXT_MODE_STAMP]["action"] == "referenced"
    assert once.id == f"langctx-ref-{once.response_metadata[CONTEXT_MODE_STAMP]['ref_id']}"
    assert p.process_message(once, thread_id="t") is once
    small = ToolMessage("ok", tool_call_id="c2")
    assert p.process_message(small) is small
    keep_id = p.process_message(ToolMessage(LOG, tool_call_id="c3", id="m3"), thread_id="t")
    assert (
        keep_id.id == "m3"
        and p.reference_meta(
            keep_id.response_metadata[CONTEXT_MODE_STAMP]["ref_id"], thread_id="t"
        )["message_id"]
        == "m3"
    )


def test_non_text_content_is_left_alone_and_text_blocks_are_joined() -> None:
    p = ContextModeProcessor()
    image = ToolMessage([{"type": "image", "url": "https://x/y.png"}], tool_call_id="c1")
    assert p.process_message(image) is image
    blocks = ToolMessage(
        [{"type": "text", "text": LOG[:40_000]}, {"type": "text", "text": LOG[40_000:]}],
        tool_call_id="c2",
    )
    out = p.process_message(blocks, thread_id="t")
    assert isinstance(out.content, str) and out.content.startswith("[langctx ref=")


async def test_async_process_message_matches_sync() -> None:
    msg = ToolMessage(LOG, tool_call_id="c1", name="bash")
    a = ContextModeProcessor().process_message(msg, thread_id="t")
    b = await ContextModeProcessor().aprocess_message(msg, thread_id="t")
    assert a.content == b.content and a.id == b.id
