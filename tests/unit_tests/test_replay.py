"""`langctx replay`: the four input formats, bad inputs, the report, the plot and the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

import langctx.cli.samples
from langctx import LangctxError, LangctxWarning
from langctx.cli import build_parser, main
from langctx.cli.replay import (
    PROBES,
    SESSION_FORMATS,
    EmptySessionError,
    SessionFormatError,
    detect_format,
    parse_session,
    parse_token_count,
    read_session,
    replay_session,
)
from langctx.cli.replay.render import format_report, print_report, report_rows
from langctx.cli.samples import SAMPLE_SESSION, sample_session
from langctx.errors import ConfigError
from langctx.testing import ScriptedChatModel
from tests._helpers import assert_pairs_intact

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "replay"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"

EXPECTED = {
    "langchain.messages.jsonl": (
        "langchain",
        ["system", "human", "ai", "tool", "tool", "ai", "tool", "ai"],
    ),
    "openai_request.json": (
        "openai",
        ["system", "human", "ai", "tool", "tool", "ai", "tool", "ai"],
    ),
    "openai_messages.json": ("openai", ["system", "human", "ai", "tool", "ai"]),
    "anthropic_request.json": ("openai", ["system", "human", "ai", "tool", "ai"]),
    "claude_code.jsonl": (
        "claude-code",
        ["human", "ai", "tool", "ai", "tool", "tool", "ai", "tool", "ai"],
    ),
    "pi_session.jsonl": (
        "pi",
        ["human", "ai", "tool", "tool", "ai", "tool", "human", "human", "ai"],
    ),
    "pi_tree.jsonl": ("pi", ["human", "ai", "human", "human", "ai", "tool", "ai"]),
}


def write_long_session(path: Path, turns: int = 60) -> Path:
    """A langchain JSONL session long enough to compact several times at a 3k budget."""
    lines = [
        {"type": "system", "content": "You are a coding agent."},
        {"type": "human", "content": "Port the parser to the new API. Never edit the fixtures."},
    ]
    for i in range(turns):
        call = {
            "id": f"c{i}",
            "name": "edit" if i % 3 == 0 else "read",
            "args": {"path": f"src/m{i}.py"},
        }
        lines.append(
            {
                "type": "ai",
                "content": f"Step {i} done. Next I will open src/m{i + 1}.py.",
                "tool_calls": [call],
            }
        )
        out = f"FAILED test_m{i} - AssertionError: {i}\n" if i % 7 == 0 else ""
        lines.append(
            {
                "type": "tool",
                "content": out + f"line of module {i}\n" * 40,
                "tool_call_id": f"c{i}",
                "status": "error" if out else "success",
            }
        )
    lines.append({"type": "ai", "content": "Done."})
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    return path


# ------------------------------------------------------------------------------- formats


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_each_format_is_detected_and_parsed(fixture: str) -> None:
    fmt, types = EXPECTED[fixture]
    session = read_session(FIXTURES / fixture)
    assert session.format == fmt
    assert [m.type for m in session.messages] == types
    assert_pairs_intact(session.messages)
    ids = [m.id for m in session.messages]
    assert len(set(ids)) == len(ids)
    assert ids == [m.id for m in read_session(FIXTURES / fixture).messages]  # stable


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_detection_reads_the_content_not_the_extension(fixture: str, tmp_path: Path) -> None:
    copy = tmp_path / "session.txt"
    shutil.copy(FIXTURES / fixture, copy)
    assert read_session(copy).format == EXPECTED[fixture][0]
    assert detect_format(copy.read_text(encoding="utf-8")) == EXPECTED[fixture][0]


def test_langchain_lines_keep_calls_status_and_ids() -> None:
    s = read_session(FIXTURES / "langchain.messages.jsonl")
    ai = s.messages[2]
    assert isinstance(ai, AIMessage)
    assert [tc["id"] for tc in ai.tool_calls] == ["c1", "c2"]
    assert ai.tool_calls[0]["args"] == {"path": "src/parser.py"}
    failing = s.messages[4]
    assert isinstance(failing, ToolMessage) and failing.status == "error"
    assert s.name == "langchain" and s.messages[0].id == "langchain:1"


def test_langchain_dict_records_from_messages_to_dict() -> None:
    from langchain_core.messages import messages_to_dict

    records = messages_to_dict([HumanMessage("hi"), AIMessage("hello")])
    text = "\n".join(json.dumps(r) for r in records)
    s = parse_session(text, name="x")
    assert s.format == "langchain"
    assert [(m.type, m.content, m.id) for m in s.messages] == [
        ("human", "hi", "x:1"),
        ("ai", "hello", "x:2"),
    ]


def test_openai_arguments_are_decoded() -> None:
    s = read_session(FIXTURES / "openai_request.json")
    ai = s.messages[2]
    assert isinstance(ai, AIMessage)
    assert ai.tool_calls[1]["args"] == {"command": "python cli.py --help"}
    assert s.messages[1].content == "Add a --verbose flag to cli.py. Keep the output format."


def test_openai_one_message_per_line() -> None:
    text = "\n".join(
        json.dumps(m)
        for m in [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
        ]
    )
    s = parse_session(text)
    assert s.format == "openai" and [m.type for m in s.messages] == ["human", "ai"]


def test_claude_code_merges_split_assistant_lines_and_skips_bookkeeping() -> None:
    s = read_session(FIXTURES / "claude_code.jsonl")
    first = s.messages[1]
    assert isinstance(first, AIMessage)
    assert first.content == "Running the tests first."  # thinking dropped, text kept
    assert [tc["name"] for tc in first.tool_calls] == ["Bash"]
    parallel = s.messages[3]
    assert isinstance(parallel, AIMessage)
    assert [tc["id"] for tc in parallel.tool_calls] == ["toolu_02", "toolu_03"]
    assert s.messages[2].status == "error"  # type: ignore[union-attr]
    assert "Sub-agent" not in " ".join(m.text for m in s.messages)
    assert any("sidechain" in n for n in s.notes) and any("summary" in n for n in s.notes)


def test_pi_blocks_bash_execution_and_own_compactions() -> None:
    s = read_session(FIXTURES / "pi_session.jsonl")
    ai = s.messages[1]
    assert isinstance(ai, AIMessage)
    assert ai.content == "Reading the theme."  # the thinking block is dropped
    assert ai.tool_calls[0] == {
        "id": "toolu_A1",
        "name": "read",
        "args": {"path": "src/theme.ts"},
        "type": "tool_call",
    }
    error = s.messages[5]
    assert isinstance(error, ToolMessage) and error.status == "error" and error.name == "write"
    assert s.messages[6].text.startswith("Ran `chmod u+w src/selectors`")
    assert any("compaction" in n for n in s.notes)


def test_pi_tree_follows_the_active_branch() -> None:
    s = read_session(FIXTURES / "pi_tree.jsonl")
    text = " ".join(m.text for m in s.messages)
    assert "abandoned branch" not in text and "Adding 1.0." not in text
    assert "Tried version 1.0" in text  # the branch summary pi sends
    assert any("other branches" in n for n in s.notes)


def test_format_override() -> None:
    text = (FIXTURES / "openai_messages.json").read_text(encoding="utf-8")
    assert parse_session(text, format="openai").format == "openai"
    with pytest.raises(SessionFormatError, match="item 1"):
        parse_session(text, format="langchain")


# ------------------------------------------------------------------------------- bad input


def test_corrupt_file_names_the_line() -> None:
    with pytest.raises(SessionFormatError) as info:
        read_session(FIXTURES / "corrupt.jsonl")
    assert info.value.line == 3
    assert "line 3" in str(info.value) and "corrupt.jsonl" in str(info.value)
    assert isinstance(info.value, LangctxError)


def test_broken_pretty_printed_json_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "req.json"
    p.write_text('{\n  "messages": [\n    {"role": "user", "content": "hi"},\n    oops\n  ]\n}\n')
    with pytest.raises(SessionFormatError, match="line 4"):
        read_session(p)


def test_unknown_format_is_a_clear_error() -> None:
    with pytest.raises(SessionFormatError, match=r"line 1: not a known session format.*--format"):
        read_session(FIXTURES / "unknown.jsonl")


def test_unknown_record_type_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text('{"type": "human", "content": "hi"}\n{"type": "robot", "content": "beep"}\n')
    with pytest.raises(SessionFormatError, match="line 2: unknown message type 'robot'"):
        read_session(p)


def test_binary_file_is_rejected(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"type": "human", "content": "hi"}\n\xff\xfe\x00garbage')
    with pytest.raises(SessionFormatError, match="line 2: not UTF-8"):
        read_session(p)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SessionFormatError, match="cannot read session file"):
        read_session(tmp_path / "nope.jsonl")


def test_empty_session() -> None:
    with pytest.raises(EmptySessionError, match="empty"):
        read_session(FIXTURES / "empty.jsonl")
    with pytest.raises(EmptySessionError, match="no AI message"):
        replay_session(read_session(FIXTURES / "no_model_calls.jsonl"))
    with pytest.raises(EmptySessionError):
        replay_session([])


def test_session_of_bookkeeping_only_is_empty() -> None:
    text = '{"type": "summary", "summary": "x", "leafUuid": "u"}\n'
    with pytest.raises(EmptySessionError, match="no messages"):
        parse_session(text)


def test_orphan_tool_results_are_repaired_warned_and_counted() -> None:
    session = read_session(FIXTURES / "orphan.messages.jsonl")
    with pytest.warns(LangctxWarning, match="1 orphan tool result"):
        report = replay_session(session, max_tokens=4000)
    assert report.orphans_in_input == 1
    assert report.projection_orphans == 0
    assert report.totals()["orphans_in_input"] == 1
    assert any("orphan" in w for w in report.warnings)


def test_unanswered_tool_calls_are_counted() -> None:
    msgs: list[BaseMessage] = [
        HumanMessage("go", id="h"),
        AIMessage("", id="a1", tool_calls=[{"id": "x", "name": "bash", "args": {"command": "ls"}}]),
        HumanMessage("stop, do something else", id="h2"),
        AIMessage("ok", id="a2"),
    ]
    with pytest.warns(LangctxWarning, match="1 tool call"):
        report = replay_session(msgs, max_tokens=4000)
    assert report.unanswered_in_input == 1
    assert report.projection_orphans == 0  # answered with a placeholder in the projection


# ------------------------------------------------------------------------------- the replay


def test_replay_counts_calls_baseline_and_prefix() -> None:
    report = replay_session(read_session(FIXTURES / "langchain.messages.jsonl"), max_tokens=8000)
    assert [c.message_index for c in report.calls] == [2, 5, 7]
    assert all(c.context_tokens == c.full_tokens for c in report.calls)  # nothing to compact
    # without compaction every request extends the previous one
    for prev, cur in zip(report.calls, report.calls[1:], strict=False):
        assert cur.prefix_tokens == prev.context_tokens
    assert report.reduction == 0.0
    assert report.cacheable_tokens == report.cacheable_tokens_full
    assert report.task_missing_calls == 0 and report.projection_orphans == 0


def test_replay_long_session_compacts_with_probes(tmp_path: Path) -> None:
    session = read_session(write_long_session(tmp_path / "long.jsonl"))
    report = replay_session(session, max_tokens=3000)
    assert len(report.calls) == 61
    assert report.count("fold") >= 3
    assert report.reduction > 0.5
    assert report.max_context_tokens <= 3000 and report.over_budget_calls == 0
    assert report.projection_orphans == 0 and report.task_missing_calls == 0
    assert report.summarizer_calls == report.count("fold") + report.count("merge")
    fold = next(c for c in report.compactions if c.kind == "fold")
    assert fold.before_call is not None and fold.tokens_after < fold.tokens_before
    assert fold.quality == "local" and fold.level == 1
    assert set(fold.probes) == set(PROBES)
    shares = report.probe_shares()
    assert shares["task"] == 1.0 and shares["next_step"] == 1.0
    assert 0.0 < report.mean_prefix_share < 1.0
    assert report.cacheable_tokens < report.input_tokens
    assert report.cached_share == report.cacheable_tokens / report.input_tokens
    assert report.totals()["cached_share"] == round(report.cached_share, 6)
    rows = dict(report_rows(report))
    assert rows["prompt-cache prefix"].startswith(f"cached share {100 * report.cached_share:.1f}%")


def test_model_summarizer_calls_are_counted(tmp_path: Path) -> None:
    session = read_session(write_long_session(tmp_path / "long.jsonl"))
    model = ScriptedChatModel(responses=["Goal:\n- port the parser"], cycle=True)
    report = replay_session(session, max_tokens=3000, summarizer=model, summary_threshold_tokens=0)
    assert report.summarizer_calls == len(model.calls) > 0
    assert report.summarizer_input_tokens > 0
    assert report.settings["summarizer"] == "ScriptedChatModel"
    assert any(c.quality == "model" for c in report.compactions)


def test_messages_without_ids_and_a_full_config() -> None:
    from langctx import MemoryConfig

    msgs = [HumanMessage("Fix the lexer."), AIMessage("Done.")]
    report = replay_session(msgs, config=MemoryConfig(max_tokens=4000), name="plain")
    assert report.session == "plain" and report.settings["max_tokens"] == 4000
    assert report.calls[0].task_present is True and report.task == "Fix the lexer."


def test_window_sets_the_budget() -> None:
    report = replay_session(read_session(FIXTURES / "pi_session.jsonl"), context_window=128_000)
    assert (
        report.settings["max_tokens"] == 32_000
    )  # 55% of the window, capped at 32,000 (docs/configuration.md)
    assert report.settings["context_window"] == 128_000


def test_report_json_fields(tmp_path: Path) -> None:
    report = replay_session(read_session(write_long_session(tmp_path / "l.jsonl")), max_tokens=3000)
    d = json.loads(json.dumps(report.to_dict()))
    assert d["v"] == 2 and d["session"] == "l" and d["format"] == "langchain"
    assert set(d["totals"]) >= {
        "calls",
        "input_tokens",
        "input_tokens_full",
        "reduction",
        "max_context_tokens",
        "compactions",
        "merges",
        "summarizer_calls",
        "mean_prefix_share",
        "cacheable_tokens",
        "orphans_in_input",
        "projection_orphans",
        "task_missing_calls",
    }
    assert set(d["probes"]) == set(PROBES) and set(d["probes_all_requests"]) == set(PROBES)
    assert isinstance(d["losses"], list)
    assert set(d["calls"][0]) >= {
        "index",
        "context_tokens",
        "full_tokens",
        "prefix_share",
        "probes",
    }
    assert set(d["compactions"][0]) >= {
        "before_call",
        "kind",
        "trigger",
        "level",
        "quality",
        "tokens_before",
        "tokens_after",
        "probes",
    }
    assert d["settings"]["max_tokens"] == 3000


def test_plain_and_rich_reports(tmp_path: Path) -> None:
    report = replay_session(read_session(write_long_session(tmp_path / "l.jsonl")), max_tokens=3000)
    text = format_report(report, max_rows=2)
    assert "fewer" in text and "amnesia probes" in text and "more (use --rows 0" in text
    out = tmp_path / "out.txt"
    with out.open("w", encoding="utf-8") as handle:
        print_report(report, file=handle, use_rich=True)
    assert "compactions" in out.read_text(encoding="utf-8")


def test_plot_is_a_png(tmp_path: Path) -> None:
    from langctx.cli.replay.plot import draw_report, plot_report

    report = replay_session(read_session(write_long_session(tmp_path / "l.jsonl")), max_tokens=3000)
    path = plot_report(report, tmp_path / "p.png")
    assert path.read_bytes()[:8] == PNG_MAGIC
    assert draw_report(report, log_scale=True).axes[0].get_yscale() == "log"


@pytest.mark.parametrize(
    ("text", "value"), [("32k", 32_000), ("32000", 32_000), ("32_000", 32_000), ("1.5M", 1_500_000)]
)
def test_token_counts(text: str, value: int) -> None:
    assert parse_token_count(text) == value


@pytest.mark.parametrize("text", ["", "abc", "-5", "0", "3g"])
def test_bad_token_counts(text: str) -> None:
    with pytest.raises(ConfigError):
        parse_token_count(text)


# ------------------------------------------------------------------------------- the CLI


def test_replay_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["replay", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for option in ("--budget", "--window", "--summarizer", "--plot", "--json", "--format"):
        assert option in out
    for fmt in SESSION_FORMATS:
        assert fmt in out


def test_cli_writes_json_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = write_long_session(tmp_path / "long.jsonl")
    js, png = tmp_path / "r.json", tmp_path / "r.png"
    args = ["replay", str(session), "--budget", "3k", "--counter", "approximate"]
    code = main([*args, "--json", str(js), "--plot", str(png)])
    assert code == 0
    out = capsys.readouterr().out
    assert "langctx replay: long" in out and "fewer" in out
    report = json.loads(js.read_text(encoding="utf-8"))
    assert report["settings"]["max_tokens"] == 3000 and report["totals"]["compactions"] >= 3
    assert png.read_bytes()[:8] == PNG_MAGIC


def test_cli_json_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["replay", str(FIXTURES / "claude_code.jsonl"), "--json", "-", "--counter", "approximate"]
    )
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert d["format"] == "claude-code" and d["totals"]["calls"] == 4


def test_cli_without_a_session_replays_the_shipped_sample_and_it_compacts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["replay", "--json", "-"]) == 0  # the default budget, 32k
    out, err = capsys.readouterr()
    d = json.loads(out)
    assert "sample session" in err and SAMPLE_SESSION in err
    assert d["settings"]["max_tokens"] == 32_000 and d["format"] == "langchain"
    totals = d["totals"]
    assert totals["compactions"] >= 2 and totals["input_tokens"] < totals["input_tokens_full"] / 2
    assert totals["max_full_tokens"] > 2 * 32_000 and totals["over_budget_calls"] == 0
    assert main(["replay", "--sample", "--json", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"] == totals
    with sample_session() as path:  # package data: a file of the installed package
        assert path.is_file() and path.parent == Path(langctx.cli.samples.__file__).parent
    assert main(["replay", str(FIXTURES / "claude_code.jsonl"), "--sample"]) == 2
    assert "not both" in capsys.readouterr().err


def test_cli_bad_input_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(FIXTURES / "corrupt.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("langctx: error:") and "line 3" in err
    assert main(["replay", str(FIXTURES / "empty.jsonl")]) == 2
    assert "empty" in capsys.readouterr().err


def test_cli_bad_budget_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["replay", str(FIXTURES / "pi_session.jsonl"), "--budget", "lots"])
    assert info.value.code == 2
    assert "not a token count" in capsys.readouterr().err


def test_cli_model_summarizer_needs_a_key(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main(["replay", str(FIXTURES / "pi_session.jsonl"), "--summarizer", "gpt-4o-mini"])
    assert code == 2
    assert "OPENAI_API_KEY" in capsys.readouterr().err


def test_cli_orphans_warn(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["replay", str(FIXTURES / "orphan.messages.jsonl"), "--counter", "approximate"])
    assert code == 0
    captured = capsys.readouterr()
    assert "langctx: warning:" in captured.err and "orphan" in captured.err
    assert "orphan" in captured.out  # the report's notes


def test_parser_keeps_demo_and_adds_replay() -> None:
    parser = build_parser()
    assert parser.parse_args(["demo"]).command == "demo"
    assert parser.parse_args(["replay", "x.jsonl"]).command == "replay"


@pytest.mark.parametrize("rich", [True, False])
def test_progress_draws_counts(rich: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    import io

    from langctx.cli.replay import render

    monkeypatch.setattr(render, "_rich_available", lambda: rich)
    buf = io.StringIO()
    with render.progress(enabled=True, label="replaying", file=buf) as tick:
        for done in range(1, 4):
            tick(done, 3)
    if not rich:
        assert "replaying 3/3 calls" in buf.getvalue()
    quiet = io.StringIO()
    with render.progress(enabled=False, file=quiet) as tick:
        tick(1, 1)
    assert quiet.getvalue() == ""


def test_importing_replay_needs_no_ui_library() -> None:
    code = (
        "import sys, langctx, langctx.cli.replay; "
        "print(sorted(m for m in ('rich', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_system_messages_keep_their_role() -> None:
    s = read_session(FIXTURES / "anthropic_request.json")
    assert isinstance(s.messages[0], SystemMessage)


def test_replay_through_context_mode_reduces_giant_outputs() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from langctx.cli.replay import replay_session

    log = (
        "\n".join(f"[{i:05d}] INFO step {i}" for i in range(6000))
        + "\nERROR boom at x.py:12\n[exit code: 1]"
    )
    msgs = [
        HumanMessage("fix the build", id="h"),
        AIMessage(
            "", id="a1", tool_calls=[{"id": "c1", "name": "bash", "args": {"command": "make"}}]
        ),
        ToolMessage(log, tool_call_id="c1", id="t1"),
        AIMessage("done", id="a2"),
    ]
    raw = replay_session(msgs, max_tokens=200_000)
    reduced = replay_session(msgs, max_tokens=200_000, context_mode=True)
    assert reduced.calls[-1].context_tokens < raw.calls[-1].context_tokens / 5
    assert reduced.calls[-1].full_tokens == raw.calls[-1].full_tokens  # the baseline stays raw


def test_cli_cache_marks_fold_where_it_is_cheaper(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--cache-marks replays with MemoryConfig(cache_prices=<the --prices sheet>): a slowly
    growing session folds earlier and its modeled cost is lower."""
    from tests.unit_tests.test_cache_mark import _slow_session

    path = tmp_path / "slow.jsonl"
    fields = {"content", "tool_calls", "tool_call_id", "id"}
    lines = [
        json.dumps({"type": m.type, **m.model_dump(include=fields)})
        for turn in _slow_session(300)
        for m in turn
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reports = []
    for extra in ([], ["--cache-marks"]):
        args = ["replay", str(path), "--counter", "approximate", "--json", "-", *extra]
        assert main(args) == 0
        reports.append(json.loads(capsys.readouterr().out))
    plain, cheap = reports
    assert plain["settings"]["cache_prices"] is None
    assert cheap["settings"]["cache_prices"] == "anthropic"
    assert cheap["totals"]["compactions"] > plain["totals"]["compactions"]
    assert cheap["cost"]["with_langctx"] < plain["cost"]["with_langctx"]


# ---------------------------------------------------------------- transcripts in no known format


def test_role_and_content_lists_in_other_shapes_are_read_as_transcripts() -> None:
    swe_agent = {
        "history": [
            {"role": "system", "content": "You are an agent."},
            {"role": "user", "content": "Fix the parser."},
            {"role": "assistant", "content": "ls", "thought": "look", "action": "ls"},
            {"role": "user", "content": "a.py b.py"},
        ],
        "trajectory": [{"action": "ls"}],
    }
    gemini = {
        "sessionId": "s1",
        "messages": [
            {"type": "user", "content": "Fix the parser."},
            {
                "type": "gemini",
                "content": "Reading.",
                "toolCalls": [
                    {
                        "id": "c1",
                        "name": "read_file",
                        "args": {"absolute_path": "/a.py"},
                        "result": [{"functionResponse": {"response": {"output": "x = 1"}}}],
                    }
                ],
            },
        ],
    }
    sharegpt = {
        "conversations": [
            {"from": "human", "value": "Fix it"},
            {"from": "gpt", "value": "Ok"},
            {"from": "observation", "value": "done"},
        ]
    }
    jsonl = '{"speaker": "user", "text": "Fix it"}\n\n{"speaker": "assistant", "text": "Ok"}'
    cases = [
        (json.dumps(swe_agent), ["system", "human", "ai", "human"]),
        (json.dumps(gemini), ["human", "ai", "tool"]),
        (json.dumps(sharegpt), ["human", "ai", "tool"]),
        (jsonl, ["human", "ai"]),
    ]
    for text, types in cases:
        session = parse_session(text, name="s")
        assert session.format == "transcript"
        assert [m.type for m in session.messages] == types
        calls = {
            c["id"] for m in session.messages if isinstance(m, AIMessage) for c in m.tool_calls
        }
        assert {m.tool_call_id for m in session.messages if isinstance(m, ToolMessage)} <= calls
    assert (
        parse_session(json.dumps(gemini), name="s").messages[1].tool_calls[0]["name"] == "read_file"
    )
    assert "answers no call" in parse_session(json.dumps(sharegpt), name="s").notes[0]


def test_a_list_without_speakers_is_still_no_known_format() -> None:
    for text in ('{"foo": [1, 2]}', '{"messages": [{"foo": 1}]}', '[{"type": "text", "x": 1}]'):
        with pytest.raises(SessionFormatError, match="not a known session format"):
            parse_session(text, name="s")
