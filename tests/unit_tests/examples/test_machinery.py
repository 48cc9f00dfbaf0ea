"""The examples of `langctx.machinery`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from langctx.machinery import DEFAULT_MACHINERY, is_machinery, strip_machinery, substantive_text


def test_machinery() -> None:
    rules = DEFAULT_MACHINERY.extend(tags=("my-agent-note",))
    assert strip_machinery("<my-agent-note>cwd=/x</my-agent-note>Add a CLI", rules) == "Add a CLI"


def test_strip_machinery() -> None:
    assert (
        strip_machinery("Why does Codex send `<environment_context>x</environment_context>`?")
        == "Why does Codex send `<environment_context>x</environment_context>`?"
    )


def test_substantive_text() -> None:
    assert (
        substantive_text(
            HumanMessage(
                "<command-message>review-pr is running…</command-message>\n"
                "<command-name>/review-pr</command-name>\n<command-args>123, focus on auth</command-args>"
            )
        )
        == "/review-pr 123, focus on auth"
    )


def test_is_machinery() -> None:
    assert (
        is_machinery(
            HumanMessage("<environment_context>\n  <cwd>/repo</cwd>\n</environment_context>")
        )
        is True
    )
