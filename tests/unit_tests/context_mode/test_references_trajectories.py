"""Issue 4 acceptance on the recorded sessions, with references.

Every tool output over 1,500 tokens in ``../shared/data/trajectories``: processed by Context-mode,
each exit code, error type name and file:line of the original is in the text the model sees or one
``fetch_context`` call away (the output is referenced); and for the referenced ones, fetching every
slice and reassembling gives back the original bytes exactly.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.slices import from_raw, reassemble
from langctx.facts import extract_output_facts, missing_output_facts
from tests._helpers import load_session, require_data, session_files

pytestmark = pytest.mark.trajectories


def large_outputs(processor: ContextModeProcessor) -> Iterator[tuple[str, ToolMessage, dict]]:
    for path in session_files():
        calls: dict[str, dict] = {}
        for m in load_session(path):
            if isinstance(m, AIMessage):
                calls.update({tc["id"]: tc for tc in m.tool_calls})
            elif isinstance(m, ToolMessage) and isinstance(m.content, str):
                if processor.count_tokens(m.content) > 1500:
                    yield path.name, m, calls.get(m.tool_call_id, {})


def test_every_large_output_round_trips_and_keeps_its_facts() -> None:
    require_data()
    processor = ContextModeProcessor()
    seen = referenced = 0
    for name, message, call in large_outputs(processor):
        seen += 1
        out = processor.process(
            message.content,
            tool_name=message.name or call.get("name"),
            args=call.get("args"),
            thread_id=name,
            tool_call_id=message.tool_call_id,
        )
        assert out.tokens <= 1500, name
        if out.ref_id is None:
            lost = missing_output_facts(extract_output_facts(message.content), out.text)
            assert not lost, f"{name}: {lost} lost and not referenced"
            continue
        referenced += 1
        texts, offset = [], 0
        while offset is not None:
            page = processor.fetch(out.ref_id, thread_id=name, offset=offset)
            assert processor.count_tokens(page.text) <= 1500
            texts.append(page.text)
            offset = page.next_offset
        assert from_raw(reassemble(texts), "str") == message.content, name
    assert seen >= 50, f"expected the 52 large outputs of the recorded sessions, found {seen}"
    assert referenced > 0
