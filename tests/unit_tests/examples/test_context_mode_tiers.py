"""The examples of `langctx.context_mode.tiers`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage

from langctx.context_mode.tiers import WorkingMemory, keyword_scores, render_memory_block, tokenize


def test_tokenize() -> None:
    assert tokenize("The API uses Python 3.11 and pytest-asyncio") == [
        "api",
        "uses",
        "python",
        "3.11",
        "pytest-asyncio",
    ]


def test_keyword_scores() -> None:
    docs = ["The user prefers tabs", "Deploys go through staging first", "tabs vs spaces"]
    assert [round(s, 2) > 0 for s in keyword_scores("tabs", docs)] == [True, False, True]


def test_render_memory_block() -> None:
    assert (
        str(render_memory_block(["Deploy via staging.", "Use tabs."], max_tokens=100))
        == "Long-term memory (retrieved for this request; may be outdated):\n- Deploy via staging.\n- Use tabs."
    )
    assert render_memory_block([" ".join(f"fact{i}" for i in range(500))], max_tokens=30) is None


def test_working_memory_from_messages() -> None:
    calls = [{"id": "c1", "name": "bash", "args": {"command": "pytest -q"}}]
    wm = WorkingMemory.from_messages(
        [
            AIMessage("", tool_calls=calls),
            ToolMessage("FAILED t.py::x\nexit code 1", tool_call_id="c1"),
        ]
    )
    assert wm.render("commands").splitlines()[-1] == "- [turn 1] pytest -q -> exit 1"


def test_working_memory_render() -> None:
    assert WorkingMemory().render("errors") == "Working memory (turn 0)\nOpen errors: none"
