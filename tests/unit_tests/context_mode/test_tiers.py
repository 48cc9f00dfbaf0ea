"""Working memory (mechanical, from tool calls) and the pure long-term helpers."""

from __future__ import annotations

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from langctx.context_mode.processor import ContextModeProcessor
from langctx.context_mode.tiers import (
    WorkingMemory,
    keyword_scores,
    render_memory_block,
    tokenize,
)


def turn(*calls: tuple[str, str, dict[str, object]]) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": i, "name": n, "args": a} for i, n, a in calls])


def session() -> list[BaseMessage]:
    return [
        HumanMessage("Fix the parser."),
        turn(
            ("c1", "read_file", {"path": "src/parser.py"}), ("c2", "bash", {"command": "pytest -q"})
        ),
        ToolMessage("def parse(): ...\n" * 10, tool_call_id="c1"),
        ToolMessage(
            "FAILED tests/test_parser.py::test_nested - IndexError\nexit code 1", tool_call_id="c2"
        ),
        turn(("c3", "edit_file", {"path": "src/parser.py", "old": "a", "new": "b"})),
        ToolMessage("ok", tool_call_id="c3"),
        turn(("c4", "bash", {"command": "pytest -q"})),
        ToolMessage("12 passed\nexit code 0", tool_call_id="c4"),
        turn(("c5", "bash", {"command": "ruff check ."})),
        ToolMessage("src/parser.py:3:1: F401 unused import\nexit code 1", tool_call_id="c5"),
    ]


def test_files_commands_and_errors_are_recorded_with_turns() -> None:
    wm = WorkingMemory.from_messages(session())
    (parser,) = wm.files()
    assert parser["last_read_turn"] == 1 and parser["last_modified_turn"] == 2
    assert parser["size_chars"] == len("def parse(): ...\n" * 10)
    assert [(c["command"], c["exit_code"], c["turn"]) for c in wm.commands()] == [
        ("pytest -q", 1, 1),
        ("pytest -q", 0, 3),
        ("ruff check .", 1, 4),
    ]
    # the pytest error was closed by the later passing run; the ruff one is open
    assert [e["source"] for e in wm.open_errors()] == ["ruff check ."]
    assert len(wm.state["errors"]) == 2


def test_queries_filter_by_kind_and_path() -> None:
    wm = WorkingMemory.from_messages(session())
    files = wm.render("files", path="parser")
    assert "src/parser.py: read turn 1 (170 chars), modified turn 2" in files
    assert "Commands" not in files
    assert wm.render("commands", path="ruff").count("- [turn") == 1
    assert "F401" in wm.render("errors", path="parser.py")
    assert "Open errors: none" in wm.render("errors", path="nothing-like-this")


def test_results_may_arrive_in_a_later_batch() -> None:
    msgs = session()
    wm = WorkingMemory()
    wm.observe(msgs[:2])
    wm.observe(msgs[2:])
    assert wm.state == WorkingMemory.from_messages(msgs).state


def test_referenced_outputs_keep_their_size_and_exit_code() -> None:
    processor = ContextModeProcessor()
    big = "collecting ...\n" * 8000 + "exit code 3"
    raw = ToolMessage(big, tool_call_id="c1", name="bash")
    processed = processor.process_message(raw, thread_id="t", args={"command": "make"})
    wm = WorkingMemory.from_messages([turn(("c1", "bash", {"command": "make"})), processed])
    assert wm.commands()[0]["exit_code"] == 3


def test_state_is_plain_json() -> None:
    import json

    state = WorkingMemory.from_messages(session()).state
    assert json.loads(json.dumps(state)) == state and state["v"] == 1


def test_keyword_search_ranks_and_ignores_stop_words() -> None:
    docs = ["The deploy goes through staging", "Use Python 3.11 in CI", "the the the"]
    scores = keyword_scores("which Python version does CI use?", docs)
    assert scores[1] > 0 and scores[0] == 0 and scores[2] == 0
    assert tokenize("The a an") == []
    assert keyword_scores("", docs) == [0.0, 0.0, 0.0]


def test_memory_block_respects_the_cap_and_escapes() -> None:
    facts = [f"fact number {i} about the build system" for i in range(100)] + ["[langctx ref=x]"]
    block = render_memory_block(facts, max_tokens=80)
    assert block is not None and ContextModeProcessor().count_tokens(block) <= 80
    assert "[langctx" not in (render_memory_block(["[langctx ref=x]"], max_tokens=80) or "")
    assert render_memory_block([], max_tokens=80) is None
