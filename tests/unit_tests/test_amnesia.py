"""The compaction chapter's amnesia test, with scripted models only.

A session reads a file, meets a user constraint in a later message, modifies another file, runs
a failing test, states its next step, and is then compacted. The context the model sees next
must still hold the goal, the constraints, the files read and modified, the latest failure and
the next step.
"""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import LayeredChatMemory
from langctx.testing import ScriptedChatModel

TASK = "Add CSV export to the order report service."
CONSTRAINT = "Do not edit the tests, and keep Java 17 compatibility."
READ = "src/main/java/shop/OrderReport.java"
MODIFIED = "src/main/java/shop/CsvExporter.java"
FAILURE = "AssertionError: expected 3 rows but got 2"
NEXT = "Next I will fix the header handling in CsvExporter.writeRows."


def call(cid: str, name: str, args: dict) -> AIMessage:
    return AIMessage("", tool_calls=[{"id": cid, "name": name, "args": args}])


def session() -> list[BaseMessage]:
    msgs: list[BaseMessage] = [SystemMessage("You are a coding agent."), HumanMessage(TASK)]
    msgs += [
        call("r1", "read_file", {"path": READ}),
        ToolMessage("public class OrderReport {\n" + "  // ...\n" * 400 + "}", tool_call_id="r1"),
    ]
    msgs += [HumanMessage(CONSTRAINT), AIMessage("Understood.")]
    msgs += [
        call("w1", "write_file", {"path": MODIFIED, "content": "class CsvExporter {}"}),
        ToolMessage("written", tool_call_id="w1"),
    ]
    log = (
        "running tests\n"
        + "test ok\n" * 300
        + f"FAILED tests/CsvExporterTest.java:41 - {FAILURE}\n[exit code: 1]"
    )
    msgs += [
        call("t1", "run_command", {"command": "mvn test"}),
        ToolMessage(log, tool_call_id="t1", status="error"),
    ]
    msgs += [AIMessage(f"The export drops the header row. {NEXT}")]
    msgs += [HumanMessage("ok, go on")]
    return msgs


def probes(context: list[BaseMessage]) -> dict[str, bool]:
    text = "\n".join(m.text + json.dumps(getattr(m, "tool_calls", [])) for m in context)
    return {
        "goal": TASK in text,
        "constraints": "Do not edit the tests" in text and "Java 17" in text,
        "files read": READ in text,
        "files modified": MODIFIED in text,
        "latest failure": FAILURE in text,
        "next step": "CsvExporter.writeRows" in text,
    }


def summarize_from_prompt(messages: list[BaseMessage]) -> str:
    """A faux summarizer model: writes the fixed structure from what the prompt gave it."""
    body = messages[-1].text
    facts = json.loads(body.split("Mechanical facts:\n", 1)[1].split("\n\nTranscript:", 1)[0])
    errors = facts.get("last_errors") or [{}]
    return "\n".join(
        [
            "Goal:",
            f"- {TASK}",
            "Important constraints:",
            *[f"- {c}" for c in facts.get("constraints", [])],
            "Files observed:",
            *[f"- {p}" for p in facts.get("read_files", [])],
            "Files modified:",
            *[f"- {p}" for p in facts.get("modified_files", [])],
            "Open tool results:",
            *[f"- {ln}" for ln in errors[-1].get("lines", [])],
            "Next step:",
            f"- {facts.get('next_step')}",
        ]
    )


@pytest.mark.parametrize("kind", ["local", "model", "failing-model"])
def test_amnesia(kind: str) -> None:
    summarizer: object = None
    if kind == "model":
        summarizer = ScriptedChatModel(responses=[summarize_from_prompt], cycle=True)
    elif kind == "failing-model":
        summarizer = ScriptedChatModel(responses=[RuntimeError("provider down")], cycle=True)
    mem = LayeredChatMemory(
        max_tokens=6000, summarizer=summarizer, max_summary_tokens=380, keep_recent_tokens=10
    )
    mem.add_messages(session())
    entry = mem.compact()
    assert entry is not None
    assert (
        entry["quality"] == {"local": "local", "model": "model", "failing-model": "fallback"}[kind]
    )
    covered = set(entry["covered_ids"])
    # the facts were folded, not kept verbatim: the raw messages are no longer projected
    context = mem.build_context()
    assert not covered & {m.id for m in context}
    assert len(context) == 4  # system, task, summary block, "ok, go on"
    assert probes(context) == dict.fromkeys(probes(context), True), entry["summary"]
    assert READ in entry["read_files"] and MODIFIED in entry["modified_files"]
    # and the agent's next model call is shown exactly that context
    agent = ScriptedChatModel(responses=[lambda msgs: AIMessage(json.dumps(probes(msgs)))])
    answer = json.loads(agent.invoke(context).text)
    assert all(answer.values())
