"""``langctx.cli.inspect`` without a database: reports from state values, layouts, errors, options."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from langctx import InvalidMessageError, LangctxError, LayeredChatMemory, StateVersionError
from langctx.channel import channel_update
from langctx.cli import main
from langctx.cli.inspect import (
    CheckpointNotFoundError,
    DatabaseNotFoundError,
    InspectError,
    NotACheckpointDatabaseError,
    ThreadInfo,
    ThreadNotFoundError,
    build_report,
)
from langctx.cli.inspect.render import (
    figure_rows,
    format_report,
    format_threads,
    print_report,
    print_threads,
    threads_to_dict,
)
from langctx.cli.inspect.store import checkpoint_time
from langctx.summarize.sections import SECTIONS

BUDGET = 2000


def _session(turns: int = 24) -> list[BaseMessage]:
    messages: list[BaseMessage] = [
        SystemMessage("You are a coding agent.", id="system"),
        HumanMessage("Fix the parser. Do not edit the tests.", id="task"),
    ]
    for i in range(turns):
        call = {"id": f"c{i}", "name": "read_file", "args": {"path": f"src/f{i}.py"}}
        messages += [
            AIMessage(f"Reading f{i}.", id=f"a{i}", tool_calls=[call]),
            ToolMessage("x = 1\n" * (300 if i % 4 == 3 else 80), tool_call_id=f"c{i}", id=f"t{i}"),
        ]
    return messages


def _memory(messages: list[BaseMessage]) -> LayeredChatMemory:
    memory = LayeredChatMemory(max_tokens=BUDGET)
    memory.add_messages(messages[:2])
    for i in range(2, len(messages), 2):  # turn by turn, as an agent adds them
        memory.add_messages(messages[i : i + 2])
    assert len(memory.compactions) >= 3
    assert memory.edits  # in-place edits (truncations of the large outputs) happened too
    return memory


def _state(memory: LayeredChatMemory, messages: list[BaseMessage] | None = None) -> dict[str, Any]:
    return {
        "messages": memory.messages if messages is None else messages,
        "langctx": channel_update(
            compactions=memory.compactions, edits=memory.edits, priorities=memory.priorities
        ),
    }


@pytest.fixture
def memory() -> LayeredChatMemory:
    return _memory(_session())


def test_report_mirrors_the_memory(memory: LayeredChatMemory) -> None:
    report = build_report(_state(memory), thread_id="t1", budget=BUDGET)
    f = report.figures
    assert f["context_tokens"] == memory.context_tokens()
    assert f["messages_in_state"] == len(memory.messages) == f["messages_logged"]
    assert f["messages_in_context"] == len(memory.build_context())
    assert f["budget"] == BUDGET and f["budget_used"] == round(memory.context_tokens() / BUDGET, 4)
    assert f["compactions"] == memory.stats()["compactions"]
    assert f["full_history_tokens"] > f["context_tokens"] and 0 < f["saved_share"] < 1
    assert [p["id"] for p in report.pinned] == memory.pinned_ids == ["system", "task"]
    assert [s["id"] for s in report.summaries] == [e["id"] for e in memory.summaries]
    assert report.recent["first_kept_id"] == memory.first_kept_id
    context = memory.build_context()
    pinned = len([p for p in report.pinned if p["layer"] == "pinned"])
    assert report.recent["messages"] == len(context) - pinned - 1  # minus the summary block
    assert [r["id"] for r in report.timeline] == [e["id"] for e in memory.compactions]
    assert report.timeline[0]["read_files"] and report.timeline[0]["messages_covered"] > 0
    assert [r["id"] for r in report.edits] == [e["id"] for e in memory.edits]
    assert len(report.eviction_log) == len(memory.compactions) + len(memory.edits)
    ats = [r["at"] for r in report.eviction_log]
    assert ats == sorted(ats)
    assert report.notes == []


def test_rebuilding_changes_nothing(memory: LayeredChatMemory) -> None:
    state = _state(memory)
    before = json.dumps(state["langctx"], sort_keys=True)
    build_report(state)
    assert json.dumps(state["langctx"], sort_keys=True) == before


def test_unknown_budget_is_noted(memory: LayeredChatMemory) -> None:
    report = build_report(_state(memory))
    assert report.figures["budget"] is None and report.figures["budget_used"] is None
    assert any("budget is not stored" in n for n in report.notes)
    assert report.figures["context_tokens"] == memory.context_tokens()  # same caps above ~3.5k


def test_control_messages_are_not_the_conversation(memory: LayeredChatMemory) -> None:
    extra = [
        HumanMessage("/compact keep the lexer notes", id="cmd"),
        AIMessage(
            "[langctx] Compacted.",
            id="langctx-notice-1",
            response_metadata={"langctx": "notice"},
        ),
    ]
    report = build_report(_state(memory, [*memory.messages, *extra]))
    assert report.figures["control_messages"] == 2
    assert report.figures["messages_logged"] == len(memory.messages)


def test_entries_naming_removed_messages_are_left_out(memory: LayeredChatMemory) -> None:
    last = memory.compactions[-1]
    kept = [m for m in memory.messages if m.id != last["first_kept_id"]]
    report = build_report(_state(memory, kept))
    assert len(report.timeline) < len(memory.compactions)
    assert any("no longer in 'messages'" in n for n in report.notes)


def test_state_without_channel_or_messages() -> None:
    report = build_report({"messages": [("user", "Hi"), ("ai", "Hello")]})
    assert report.timeline == [] and report.summaries == [] and report.recent["messages"] == 2
    assert any("no 'langctx' channel" in n for n in report.notes)
    report = build_report({"docs": ["a"]})
    assert any("no 'messages' channel (channels: docs)" in n for n in report.notes)


def test_bad_state_values_raise_langctx_errors(memory: LayeredChatMemory) -> None:
    state = _state(memory)
    state["langctx"] = {"v": 7, "compactions": []}
    with pytest.raises(StateVersionError, match="version 7"):
        build_report(state)
    with pytest.raises(InvalidMessageError):
        build_report({"messages": [object()]})


def test_to_dict_limit_and_json(memory: LayeredChatMemory) -> None:
    report = build_report(_state(memory), thread_id="t1")
    full = report.to_dict()
    assert set(full) >= {"v", "figures", "layers", "timeline", "edits", "eviction_log", "notes"}
    assert set(full["layers"]) == {"pinned", "summaries", "facts", "recent"}
    assert "omitted" not in full
    short = json.loads(report.to_json(limit=1))
    assert short["timeline"] == full["timeline"][-1:]
    assert short["omitted"]["timeline"] == len(full["timeline"]) - 1
    assert json.loads(report.to_json()) == full


def test_plain_layout(memory: LayeredChatMemory) -> None:
    report = build_report(_state(memory), thread_id="t1", budget=BUDGET)
    text = format_report(report, limit=1)
    assert text.splitlines()[0] == "langctx inspect: thread 't1'"
    for part in (
        "figures",
        f"of budget {BUDGET:,}",
        "pinned (system messages and the task, verbatim)",
        "Fix the parser. Do not edit the tests.",
        f"level {memory.summaries[-1]['level']} · {memory.summaries[-1]['id']}",
        "recent (verbatim)",
        f"first kept id '{memory.first_kept_id}'",
        "compaction timeline (oldest first)",
        "tokens before → after",
        "eviction log",
    ):
        assert part in text, part
    if len(report.timeline) > 1:
        assert "earlier rows not shown" in text
    assert "earlier rows not shown" not in format_report(report, limit=0)
    rows = dict(figure_rows(report))
    assert "compaction" in rows["entries"]


def test_rich_layout(memory: LayeredChatMemory) -> None:
    report = build_report(_state(memory), thread_id="t1")
    out = io.StringIO()
    print_report(report, file=out, use_rich=True)
    text = out.getvalue()
    for part in (
        "figures",
        "summaries",
        "recent (verbatim)",
        "compaction timeline",
        "eviction log",
    ):
        assert part in text, part
    assert any(f"{name}:" in text for name in SECTIONS)  # the summaries' text
    tricky = build_report({"messages": [("user", "Fix [b]x[/b]")]})
    out = io.StringIO()
    print_report(tricky, file=out, use_rich=True)
    assert "Fix [b]x[/b]" in out.getvalue()  # content is printed as is, not as rich markup


def test_thread_list_layouts() -> None:
    threads = [
        ThreadInfo(
            "t2", 5, "1f1ec5ba-1825-6d5a-8001-f3781c633ffd", "2026-11-30T01:16:12.105+00:00"
        ),
        ThreadInfo("t1", 3, "1f0", None),
    ]
    source = {"kind": "sqlite", "location": "cp.sqlite"}
    text = format_threads(threads, source=source, limit=1)
    assert "2 threads in sqlite cp.sqlite" in text and "t2" in text and "t1" not in text
    assert "1 more threads" in text and "langctx inspect --db cp.sqlite --thread ID" in text
    out = io.StringIO()
    print_threads(threads, source={"kind": "postgres", "location": "postgresql://h/db"}, file=out)
    assert "--postgres postgresql://h/db" in out.getvalue()
    data = threads_to_dict(threads, source=source, limit=1)
    assert data["total"] == 2 and data["omitted"] == 1 and data["threads"][0]["thread_id"] == "t2"
    assert "no threads" in format_threads([])


def test_checkpoint_time() -> None:
    assert (
        checkpoint_time("1f1ec5ba-1825-6d5a-8001-f3781c633ffd") == "2026-11-30T01:16:12.105+00:00"
    )
    assert checkpoint_time("12345678-1234-4234-8234-123456789abc") is None  # not a v6 id
    assert checkpoint_time("x") is None


def test_error_tree_and_messages() -> None:
    assert issubclass(InspectError, LangctxError)
    assert issubclass(DatabaseNotFoundError, FileNotFoundError)
    assert issubclass(NotACheckpointDatabaseError, ValueError)
    assert issubclass(ThreadNotFoundError, LookupError)
    assert issubclass(CheckpointNotFoundError, LookupError)
    assert str(DatabaseNotFoundError("no such file: 'x'", path="x")) == "no such file: 'x'"
    err = ThreadNotFoundError("t9", known=["a", "b"], total=7, location="cp.sqlite")
    assert "no thread 't9' in cp.sqlite; existing threads: 'a', 'b' (and 5 more)" in str(err)
    assert "no checkpoints in cp.sqlite yet" in str(
        ThreadNotFoundError("t9", known=[], total=0, location="cp.sqlite")
    )
    err2 = CheckpointNotFoundError("t1", "zz", recent=["c2", "c1"], total=2)
    assert "'c2', 'c1'" in str(err2) and "Omit --checkpoint" in str(err2)


def test_cli_bad_options_need_no_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "cp.sqlite"
    assert main(["inspect", "--db", str(missing), "--checkpoint", "c1"]) == 2
    assert "--checkpoint needs --thread" in capsys.readouterr().err
    assert main(["inspect", "--postgres", "mysql://h/db"]) == 2
    assert "expects a postgresql:// connection string" in capsys.readouterr().err
    assert main(["inspect", "--db", str(missing)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err
    assert not missing.exists()
    assert main(["inspect", "--db", ":memory:"]) == 2
    assert "in-memory database" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["inspect", "--thread", "t1"])  # --db or --postgres is required
    assert info.value.code == 2
    capsys.readouterr()
