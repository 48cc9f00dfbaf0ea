"""The replay's amnesia probes: their own truth, whole-path / whole-line matching, planted losses.

The planted-loss tests wrap the memory the replay builds so that one fact disappears from the
requests from one call on, and check that the report names that fact, that request and the
compaction before it. The truth.json tests compare the probes' parser with the facts the recorded
sessions ship with.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

import langctx.cli.replay.engine as engine
from langctx.cli.replay import PROBES, parse_session, read_session, replay_session
from langctx.cli.replay.render import format_report
from langctx.cli.replay.request_status import (
    KnownRequest,
    ShownRequest,
    answered_requests,
    ends_turn,
    grade,
    parse_section,
)
from langctx.cli.replay.truth import (
    Request,
    Truth,
    UserMessage,
    error_lines,
    is_failure,
    is_informative_step,
    modified_paths,
    probe_request,
    request_status,
    session_roots,
    user_pieces,
    user_text,
)
from langctx.cli.replay.users import (
    parse_user_messages,
    position_of,
    read_user_messages,
    truth_file,
)
from langctx.cli.report_html import replay_html
from langctx.machinery import substantive_text
from tests._trajectories import DATA_DIR, iter_sessions

ROOT = "/Users/someone/workspaces/project/packages/core/src"


# ------------------------------------------------------------------------------- parser


@pytest.mark.parametrize(
    ("name", "args", "expected"),
    [
        ("Edit", {"file_path": f"{ROOT}/a.py", "old_string": "x"}, [f"{ROOT}/a.py"]),
        ("Write", {"file_path": "b.md", "content": "hi"}, ["b.md"]),
        ("str_replace_editor", {"command": "view", "path": "/w/a.py"}, []),
        ("str_replace_editor", {"command": "create", "path": "/w/a.py"}, ["/w/a.py"]),
        ("Read", {"file_path": "/w/a.py"}, []),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: src/x.py\n@@\n*** Add File: y.txt\n"},
            ["src/x.py", "y.txt"],
        ),
        ("shell", {"command": ["bash", "-lc", "sed -i 's/a/b/' src/p.py"]}, ["src/p.py"]),
        ("bash", {"command": "sed -i '' -e 's|x|y|g' a.ts b.ts"}, ["a.ts", "b.ts"]),
        ("bash", {"command": "python t.py > out.log 2> err.log"}, ["out.log"]),
        ("bash", {"command": "make 2>&1 | tee build.log"}, ["build.log"]),
        ("bash", {"command": "sed -i 's/float -> float/float:/' m.py"}, ["m.py"]),
        (
            "bash",
            {"command": "cd /r/src && mv a.ts b.ts lib/"},
            ["/r/src/lib/a.ts", "/r/src/lib/b.ts"],
        ),
        ("bash", {"command": "cat > notes.md << 'EOF'\n> not a redirect\nEOF"}, ["notes.md"]),
        ("bash", {"command": "# a -> b comment\nrm old.py"}, ["old.py"]),
        ("bash", {"command": "ls src/*.py > /dev/null"}, []),
        ("create", {"command": "create repro.py"}, ["repro.py"]),
    ],
)
def test_modified_paths(name: str, args: dict[str, Any], expected: list[str]) -> None:
    assert modified_paths(name, args) == expected


def test_swe_agent_edit_goes_to_the_open_file() -> None:
    t = Truth()
    t.add(
        AIMessage(
            "", tool_calls=[{"id": "c1", "name": "open", "args": {"command": "open pkg/m.py 10"}}]
        )
    )
    t.add(ToolMessage("[File: /r/pkg/m.py]", tool_call_id="c1"))
    t.add(
        AIMessage(
            "",
            tool_calls=[
                {"id": "c2", "name": "edit", "args": {"command": "edit 3:4\nx\nend_of_edit"}}
            ],
        )
    )
    t.add(ToolMessage("ok", tool_call_id="c2"))
    assert t.modified == ["pkg/m.py"]


def test_failures_and_error_lines() -> None:
    out = "collected 3 items\n\nE   assert 1 == 2\nFAILED tests/test_a.py::test_x - assert 1 == 2\n1 failed"
    assert is_failure(out, tool="bash")
    assert error_lines(out)[-1] == "1 failed"
    assert "FAILED tests/test_a.py::test_x - assert 1 == 2" in error_lines(out)
    assert not is_failure("all 3 passed\nexit code: 0")
    assert is_failure("boom", status="error")
    assert not is_failure("[no tool result recorded in source trajectory]", status="error")
    assert not is_failure("Traceback (most recent call last):", tool="read")  # a file's text


@pytest.mark.parametrize(
    ("script", "failed"),
    [
        ("grep -n agent_end src/session.ts", False),  # no line selected: an answer
        ("cd /repo && npm run check 2>&1 | grep -E '(error|warning)'", False),
        ("LC_ALL=C /usr/bin/grep -r x .", False),
        ("git grep -n TODO", False),
        ("diff a.txt b.txt", False),
        ("[ -f setup.py ]", False),
        ("grep -r x . ; false", True),  # the status is false's
        ("npm test", True),
        ("pytest | grep FAILED && exit 1", True),  # the status is exit's
        (None, True),  # a tool without a script: the exit code decides
    ],
)
def test_an_exit_1_of_a_search_or_comparison_is_no_failure(
    script: str | None, failed: bool
) -> None:
    out = "(no output)\n\nCommand exited with code 1"
    assert is_failure(out, status="error", tool="bash", script=script) is failed
    assert is_failure("x\nCommand exited with code 2", tool="bash", script=script)


def test_constraints_are_verbatim_sentences() -> None:
    t = Truth()
    t.add(
        HumanMessage(
            "Port the parser. You must keep the public API.\n- never   touch tests/\nThanks!"
        )
    )
    assert t.constraints == ["You must keep the public API", "never touch tests/"]
    assert t.task == "Port the parser. You must keep the public API. - never touch tests/ Thanks!"


@pytest.mark.parametrize(
    ("sentence", "informative"),
    [
        ("Let me read the relevant files:", False),
        ("Let me check the code.", False),
        ("Now let me look at this", False),
        ("Let me read `src/parser.py` to find the tokenizer", True),
        ("I'll update parse_header next", True),
        ("Next, I will rerun the failing integration tests with verbose logging", True),
        ("The tests pass now.", False),
    ],
)
def test_next_step_must_be_informative(sentence: str, informative: bool) -> None:
    assert is_informative_step(sentence) is informative


# ------------------------------------------------------------------------------- matching


def test_a_path_is_named_whole_not_by_prefix() -> None:
    roots = (ROOT,)
    req = Request([HumanMessage(f"edited {ROOT}/abc.py and {ROOT}/a.pyc, see {ROOT}/a.py.bak")])
    # the old probe matched the first 48 characters: any file of the project passed
    assert f"{ROOT}/a.py"[:48] in req.text
    assert not req.has_path(f"{ROOT}/a.py", roots)
    assert not req.has_path(f"{ROOT}/nonexistent.py", roots)
    assert req.has_path(f"{ROOT}/abc.py", roots)
    # a path shortened against a root (the session's, or one the request states) is not whole
    assert not Request([HumanMessage("Files modified: abc.py, sub/x.ts.")]).has_path(
        f"{ROOT}/abc.py", roots
    )
    stated = f"Files modified so far (under {ROOT}/): abc.py, sub/x.ts"
    assert not Request([HumanMessage(stated)]).has_path(f"{ROOT}/sub/x.ts", roots)
    assert Request([HumanMessage(f"`{ROOT}/sub/x.ts`")]).has_path(f"{ROOT}/sub/x.ts", roots)
    # a relative path as the call gave it, or joined to a root, is whole
    assert Request([HumanMessage("`sub/x.ts`")]).has_path("sub/x.ts", roots)
    assert Request([HumanMessage(f"{ROOT}/sub/x.ts")]).has_path("sub/x.ts", roots)
    assert not Request([HumanMessage("other/sub/x.ts")]).has_path("sub/x.ts", roots)


def test_empty_facts_never_count_as_present() -> None:
    req = Request([HumanMessage("anything")])
    assert not req.has("") and not req.has("   \n") and not req.has_path("", ())
    t = Truth()
    t.add(HumanMessage("   "))
    t.add(AIMessage("Let me read the relevant files:"))
    assert t.task is None and t.next_step is None and t.constraints == []
    assert {n: r.held for n, r in probe_request(t, [HumanMessage("x")]).items()} == dict.fromkeys(
        PROBES, None
    )


def test_error_line_must_be_whole() -> None:
    t = Truth()
    t.add(AIMessage("", tool_calls=[{"id": "c", "name": "bash", "args": {"command": "pytest"}}]))
    t.add(
        ToolMessage(
            "E   ValueError: the header has no Content-Length field\n1 failed", tool_call_id="c"
        )
    )
    clipped = [HumanMessage("Last failure: E ValueError: the header has no Content-Le...")]
    assert probe_request(t, clipped)["latest_failure"].held is False
    assert probe_request(t, [HumanMessage("pytest: 1 failed")])["latest_failure"].held is True


# ------------------------------------------------------------------------------- planted losses


def session(turns: int = 40) -> list[BaseMessage]:
    """An agent session that edits files, fails a test late, and states concrete next steps."""
    msgs: list[BaseMessage] = [
        SystemMessage("You are a coding agent.", id="sys"),
        HumanMessage(
            "Port the parser to the new API. Never edit the fixtures directory.", id="task"
        ),
    ]
    for i in range(turns):
        name, args = (
            "Edit",
            {"file_path": f"{ROOT}/m{i}.py", "old_string": "a", "new_string": "b"},
        )
        if i % 4:
            name, args = "Read", {"file_path": f"{ROOT}/r{i}.py"}
        if i == turns - 6:
            name, args = "Bash", {"command": "pytest -q tests/test_parser.py"}
        msgs.append(
            AIMessage(
                f"Done with step {i}. Next I will open src/m{i + 1}.py.",
                id=f"a{i}",
                tool_calls=[{"id": f"c{i}", "name": name, "args": args}],
            )
        )
        out = "x = 1\n" * 60
        if name == "Bash":
            out = "....F\nE   KeyError: 'content-length'\nFAILED tests/test_parser.py::test_len\n1 failed"
        msgs.append(ToolMessage(out, tool_call_id=f"c{i}", id=f"t{i}", status="success"))
    msgs.append(AIMessage("Done.", id="end"))
    return msgs


class _Forget:
    """Wraps the replay's memory: from request ``start`` on, ``needle`` is cut from every text."""

    def __init__(self, needle: str, start: int) -> None:
        self.needle, self.start, self.calls = needle, start, 0

    def scrub(self, m: BaseMessage) -> BaseMessage:
        def cut(value: Any) -> Any:
            if isinstance(value, str):
                return value.replace(self.needle, "[forgotten]")
            if isinstance(value, dict):
                return {k: cut(v) for k, v in value.items()}
            if isinstance(value, list):
                return [cut(v) for v in value]
            return value

        update: dict[str, Any] = {"content": cut(m.content)}
        if isinstance(m, AIMessage) and m.tool_calls:
            update["tool_calls"] = [{**tc, "args": cut(tc["args"])} for tc in m.tool_calls]
        return m.model_copy(update=update)

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        forget = self
        original = engine.LayeredChatMemory

        class Forgetful(original):  # type: ignore[misc, valid-type]
            def build_context(self, *args: Any, **kwargs: Any) -> list[BaseMessage]:
                ctx = super().build_context(*args, **kwargs)
                forget.calls += 1
                if forget.calls < forget.start:
                    return list(ctx)
                return [forget.scrub(m) for m in ctx]

        monkeypatch.setattr(engine, "LayeredChatMemory", Forgetful)


def _plant(monkeypatch: pytest.MonkeyPatch, needle: str, start: int) -> engine.ReplayReport:
    _Forget(needle, start).install(monkeypatch)
    return replay_session(session(), max_tokens=2_500)


def test_unharmed_replay_keeps_every_fact() -> None:
    report = replay_session(session(), max_tokens=2_500)
    assert report.count("fold") >= 2
    shares = report.probe_shares()
    assert shares["task"] == 1.0 and shares["files_modified"] == 1.0, report.losses()[:3]
    assert shares["constraints"] == 1.0 and shares["latest_failure"] == 1.0


@pytest.mark.parametrize(
    ("needle", "probe", "fact"),
    [
        (f"{ROOT}/m4.py", "files_modified", f"{ROOT}/m4.py"),
        ("KeyError: 'content-length'", "latest_failure", "1 failed"),
        ("Never edit the fixtures directory", "constraints", "Never edit the fixtures directory"),
    ],
)
def test_a_planted_loss_is_named_with_its_request(
    monkeypatch: pytest.MonkeyPatch, needle: str, probe: str, fact: str
) -> None:
    start = 38  # after the failing test ran (turn 34) and after several compactions
    if probe == "files_modified":  # every mention of the file, whole or not
        _Forget("m4.py", start).install(monkeypatch)
    if probe == "latest_failure":
        needle = "1 failed"  # every error line of the failure goes
        _Forget("KeyError: 'content-length'", start).install(monkeypatch)
        _Forget("FAILED tests/test_parser.py::test_len", start).install(monkeypatch)
    report = _plant(monkeypatch, needle, start)
    lost = [x for x in report.losses() if x.probe == probe]
    assert lost, report.losses()
    assert lost[0].fact == fact and lost[0].first_call == start
    compactions = sum(c.compactions for c in report.calls[:start])
    assert compactions > 0 and lost[0].compaction == compactions
    assert report.calls[start - 1].probes[probe] is False
    assert report.calls[start - 2].probes[probe] is not False
    text = format_report(report, max_rows=0)
    assert (
        f"{probe}: {fact!r} missing from request {start} (first lost after compaction {compactions}"
        in text
    )
    assert report.probe_shares()[probe] is not None and report.probe_shares()[probe] < 1.0  # type: ignore[operator]


def test_report_json_lists_losses(monkeypatch: pytest.MonkeyPatch) -> None:
    _Forget("m0.py", 30).install(monkeypatch)  # every mention of the file, whole or not
    report = _plant(monkeypatch, f"{ROOT}/m0.py", 30)
    d = report.to_dict()
    assert d["v"] == 2
    assert {"probe": "files_modified", "fact": f"{ROOT}/m0.py"}.items() <= d["losses"][0].items()
    assert d["calls"][29]["probes"]["files_modified"] is False


# ------------------------------------------------------------------------------- truth.json


def _sessions() -> Iterator[Any]:
    yield from iter_sessions(DATA_DIR)


def _truth_of(path: Path) -> tuple[Truth, list[BaseMessage]]:
    s = read_session(path)
    t = Truth(session_roots(s.messages, s.cwd))
    for m in s.messages:
        t.add(m)
    return t, s.messages


def _same_file(a: str, b: str) -> bool:
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


@pytest.mark.trajectories
@pytest.mark.parametrize("sess", list(_sessions()), ids=repr)
def test_probe_truth_agrees_with_truth_json(sess: Any) -> None:
    truth = sess.truth()
    t, messages = _truth_of(sess.messages_path)
    # every file the recording says was modified is one the probe checks
    missed = [f for f in truth["files_modified"] if not any(_same_file(f, m) for m in t.modified)]
    assert not missed, missed
    # constraints are verbatim sentences of user messages the recording lists (its entries are
    # clipped, so the message a constraint comes from must start like one of them)
    users = [" ".join(u.split()) for u in truth["user_messages"]]
    humans = [
        " ".join(substantive_text(m).split()) for m in messages if isinstance(m, HumanMessage)
    ]
    for c in t.constraints:
        source = next(h for h in humans if c in h)
        assert any(source.startswith(u[:200]) or u.startswith(source[:200]) for u in users), c
    # the latest failure is the recording's, or a later failing result it did not count
    recorded = [f for f in truth["latest_failures"] if f["args"] != "{}"]
    if recorded:
        assert t.failure is not None
        want = json.loads(recorded[-1]["args"])
        calls: dict[str, Any] = {
            str(tc["id"]): tc for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls
        }
        shell = re.compile(
            r"^\((?:Open file|Current directory)|^bash-\$"
        )  # SWE-agent's prompt lines
        lines = [ln for ln in recorded[-1]["output_tail"].splitlines() if ln.strip()]
        tail = " ".join(next(ln for ln in reversed(lines) if not shell.match(ln)).split())[-80:]
        runs = [
            i
            for i, m in enumerate(messages)
            if isinstance(m, ToolMessage)
            and calls.get(m.tool_call_id, {}).get("args") == want
            and calls[m.tool_call_id]["name"] == recorded[-1]["tool"]
        ]
        same = [i for i in runs if tail in " ".join(messages[i].text.split())]
        assert t.failure.index >= (same or runs)[-1]


@pytest.mark.trajectories
@pytest.mark.parametrize(
    "sess",
    list(_sessions()),
    ids=repr,
)
def test_probe_task_is_the_real_request(sess: Any) -> None:
    """The probe's own task rule (not langctx.machinery) agrees with truth.json on every session."""
    t, _ = _truth_of(sess.messages_path)
    assert t.task == " ".join(sess.truth()["task"].split())


def test_truth_json_sessions_are_found() -> None:
    if not DATA_DIR.is_dir():
        pytest.skip(f"recorded trajectories not found at {DATA_DIR}")
    assert len(list(_sessions())) == 38


# ------------------------------------------------------------------------------- formats


def test_codex_rollout_lines_both_layouts() -> None:
    new = "\n".join(
        json.dumps(x)
        for x in [
            {"type": "session_meta", "payload": {"id": "s", "cwd": "/w/app"}},
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "Fix the build. Do not touch CI."}],
                },
            },
            {"type": "event_msg", "payload": {"type": "user_message", "message": "dup"}},
            {"type": "response_item", "payload": {"type": "reasoning", "summary": []}},
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps({"command": ["bash", "-lc", "make test"]}),
                    "call_id": "c1",
                },
            },
            {
                "type": "response_item",
                "payload": {
                    "type": "function_call_output",
                    "call_id": "c1",
                    "output": json.dumps(
                        {"output": "error: missing ;\n", "metadata": {"exit_code": 2}}
                    ),
                },
            },
            {
                "type": "response_item",
                "payload": {
                    "type": "custom_tool_call",
                    "name": "apply_patch",
                    "input": "*** Begin Patch\n*** Update File: src/a.c\n*** End Patch",
                    "call_id": "c2",
                },
            },
            {
                "type": "response_item",
                "payload": {
                    "type": "custom_tool_call_output",
                    "call_id": "c2",
                    "output": "Success",
                },
            },
            {
                "type": "response_item",
                "payload": {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "Fixed."}],
                },
            },
        ]
    )
    s = parse_session(new, name="r")
    assert s.format == "codex" and s.cwd == "/w/app"
    assert [m.type for m in s.messages] == ["human", "ai", "tool", "ai", "tool", "ai"]
    tool = s.messages[2]
    assert isinstance(tool, ToolMessage) and tool.status == "error"
    assert "Process exited with code 2" in tool.text
    t = Truth(session_roots(s.messages, s.cwd))
    for m in s.messages:
        t.add(m)
    assert t.modified == ["src/a.c"] and t.failure is not None
    assert t.failure.lines == ("error: missing ;",)
    old = "\n".join(
        json.dumps(x)
        for x in [
            {"id": "s", "timestamp": "2025-09-10T18:58:38Z", "instructions": "AGENTS.md"},
            {"record_type": "state"},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command": ["ls"]}',
                "call_id": "k",
            },
            {"type": "function_call_output", "call_id": "k", "output": '{"output": "a"}'},
        ]
    )
    s2 = parse_session(old)
    assert s2.format == "codex" and [m.type for m in s2.messages] == ["human", "ai", "tool"]


def _cc(kind: str, content: Any, *, side: bool, uuid: str, mid: str | None = None) -> str:
    message: dict[str, Any] = {"role": kind, "content": content}
    if mid:
        message["id"] = mid
    return json.dumps(
        {
            "type": kind,
            "isSidechain": side,
            "agentId": "ab12" if side else None,
            "uuid": uuid,
            "sessionId": "s1",
            "cwd": "/w",
            "message": message,
        }
    )


def test_claude_code_subagent_transcript_alone_and_beside_its_parent(tmp_path: Path) -> None:
    sub = [
        _cc("user", "Find where the config is loaded.", side=True, uuid="u1"),
        _cc(
            "assistant",
            [{"type": "tool_use", "id": "t1", "name": "Grep", "input": {"pattern": "load"}}],
            side=True,
            uuid="a1",
            mid="m1",
        ),
        _cc(
            "user",
            [{"type": "tool_result", "tool_use_id": "t1", "content": "src/cfg.py:3"}],
            side=True,
            uuid="u2",
        ),
        _cc(
            "assistant",
            [{"type": "text", "text": "In src/cfg.py."}],
            side=True,
            uuid="a2",
            mid="m2",
        ),
    ]
    main = [
        _cc("user", "Make the config reload on change.", side=False, uuid="p1"),
        _cc(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": "T",
                    "name": "Task",
                    "input": {
                        "prompt": "Find where the config is loaded.",
                        "subagent_type": "Explore",
                    },
                }
            ],
            side=False,
            uuid="p2",
            mid="pm1",
        ),
        *sub,  # older Claude Code wrote sidechain lines inline too
        _cc(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "T",
                    "content": [{"type": "text", "text": "In src/cfg.py."}],
                }
            ],
            side=False,
            uuid="p3",
        ),
        _cc("assistant", [{"type": "text", "text": "Done."}], side=False, uuid="p4", mid="pm2"),
    ]
    (tmp_path / "s1" / "subagents").mkdir(parents=True)
    (tmp_path / "s1" / "subagents" / "agent-ab12.jsonl").write_text("\n".join(sub) + "\n")
    (tmp_path / "s1" / "subagents" / "agent-acompact-1.jsonl").write_text(sub[0] + "\n")
    (tmp_path / "s1.jsonl").write_text("\n".join(main) + "\n")
    alone = read_session(tmp_path / "s1" / "subagents" / "agent-ab12.jsonl")
    assert [m.type for m in alone.messages] == ["human", "ai", "tool", "ai"]
    assert alone.messages[0].text == "Find where the config is loaded."
    report = replay_session(alone, max_tokens=4_000)
    assert len(report.calls) == 2 and report.projection_orphans == 0
    parent = read_session(tmp_path / "s1.jsonl")
    assert [m.type for m in parent.messages] == ["human", "ai", "tool", "ai"]
    assert parent.subagents == (str(tmp_path / "s1" / "subagents" / "agent-ab12.jsonl"),)
    result = parent.messages[2]
    assert isinstance(result, ToolMessage) and result.text == "In src/cfg.py."
    assert any("sidechain" in n for n in parent.notes)


def test_report_text_lists_lost_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    _Forget("m8.py", 36).install(monkeypatch)  # every mention of the file, whole or not
    report = _plant(monkeypatch, f"{ROOT}/m8.py", 36)
    text = format_report(report)
    assert re.search(r"lost facts \(\d+\)", text)
    assert f"files_modified: '{ROOT}/m8.py' missing from request 36" in text


# ------------------------------------------------------------------------------- user messages


def _users(text: str, fmt: str, truth: Any = None) -> list[tuple[int, str]]:
    return [(u.position, u.text) for u in parse_user_messages(text, fmt, truth=truth)]


def _jsonl(*records: Any) -> str:
    return "\n".join(json.dumps(r) for r in records) + "\n"


def _cc_user(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": content}, **extra}


def _cc_ai(text: str = "ok", mid: str = "m") -> dict[str, Any]:
    return {
        "type": "assistant",
        "message": {"role": "assistant", "id": mid, "content": [{"type": "text", "text": text}]},
    }


def test_user_pieces_keep_what_the_user_typed() -> None:
    assert user_pieces("Fix it <system-reminder>x</system-reminder> and keep 3.9") == [
        "Fix it",
        "and keep 3.9",
    ]
    assert user_pieces([{"type": "text", "text": "/clear"}, {"type": "image"}]) == []
    assert user_pieces("[Request interrupted by user for tool use]") == []
    assert user_pieces("Base directory for this skill: /s\n\n# Skill\nDo X.") == []
    assert user_pieces("<command-name>/fix</command-name>\n<command-args>/src/a.py</command-args>")
    assert user_text(
        HumanMessage("<command-name>/fix</command-name><command-args>/src/a.py</command-args>")
    ) == ("/src/a.py")  # the arguments are the words, even when they start with a slash
    assert user_text(HumanMessage("Expanded prompt", additional_kwargs={"is_meta": True})) == ""


def test_claude_code_user_messages_from_the_raw_lines() -> None:
    text = _jsonl(
        _cc_user("Caveat: The messages below were generated by the user.", isMeta=True),
        _cc_user("<command-name>/model</command-name><command-args>opus</command-args>"),
        _cc_user("<local-command-stdout>Set model to opus</local-command-stdout>"),
        _cc_user(
            "<command-message>fix is running…</command-message>\n<command-name>/fix</command-name>"
            "\n<command-args>the lexer drops tabs</command-args>"
        ),
        _cc_user([{"type": "text", "text": "# Fix\nAlways test.\nARGUMENTS: x"}], isMeta=True),
        _cc_ai(),
        _cc_user([{"type": "tool_result", "tool_use_id": "t", "content": "out"}]),
        _cc_user([{"type": "text", "text": "<system-reminder>Todo list empty.</system-reminder>"}]),
        _cc_user(
            [
                {"type": "text", "text": "Also   handle CRLF."},
                {"type": "text", "text": "<system-reminder>x</system-reminder>"},
            ]
        ),
        _cc_user("A sub-agent prompt", isSidechain=True),
        _cc_user("Summary of the session", isCompactSummary=True),
        _cc_ai(mid="m2"),
    )
    assert _users(text, "claude-code") == [(4, "the lexer drops tabs"), (9, "Also handle CRLF.")]


def test_codex_pi_langchain_and_openai_user_messages() -> None:
    codex = _jsonl(
        {"type": "session_meta", "payload": {"cwd": "/w"}},
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "<environment_context>x</environment_context>"}
                ],
            },
        },
        {
            "type": "response_item",
            "payload": {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "Fix the build"}],
            },
        },
        {"type": "event_msg", "payload": {"type": "user_message", "message": "Fix the build"}},
    )
    assert _users(codex, "codex") == [(4, "Fix the build")]  # the typed event, not the items
    older = _jsonl(
        {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "<user_instructions>x</user_instructions>"}],
        },
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
    )
    assert _users(older, "codex") == [(2, "hi")]
    pi = _jsonl(
        {"type": "session", "id": "s", "cwd": "/w"},
        {
            "type": "message",
            "id": "1",
            "parentId": None,
            "message": {"role": "user", "content": "first"},
        },
        {
            "type": "message",
            "id": "2",
            "parentId": "1",
            "message": {"role": "user", "content": "abandoned branch"},
        },
        {
            "type": "message",
            "id": "3",
            "parentId": "1",
            "message": {"role": "user", "content": [{"type": "text", "text": "kept branch"}]},
        },
        {
            "type": "message",
            "id": "4",
            "parentId": "3",
            "message": {"role": "bashExecution", "command": "ls"},
        },
    )
    assert _users(pi, "pi") == [(2, "first"), (4, "kept branch")]
    lc = _jsonl(
        {
            "type": "human",
            "content": "aider v0.1 banner",
            "additional_kwargs": {"source": "aider_console"},
        },
        {"type": "human", "content": "Add tests."},
        {"type": "human", "content": "/undo"},
        {"type": "human", "content": "/ask why does it fail?"},
    )
    assert _users(lc, "langchain") == [(2, "Add tests."), (4, "why does it fail?")]
    truth = {"user_messages": ["Add tests.", "/undo", "why does it fail?"]}
    assert _users(lc, "langchain", truth) == [(2, "Add tests."), (4, "why does it fail?")]
    # aider logs "/ask X" and then the " X" it sends; the recording lists both: one message
    echo = lc + _jsonl({"type": "human", "content": " why does it fail?"})
    truth = {"user_messages": ["Add tests.", "/ask why does it fail?", " why does it fail?"]}
    assert _users(echo, "langchain", truth) == [(2, "Add tests."), (5, "why does it fail?")]
    clipped = "x" * 1000  # the recording clips at 1,000 characters: the line has it whole
    long = _jsonl({"type": "human", "content": clipped + " and the rest"})
    assert _users(long, "langchain", {"user_messages": [clipped]}) == [
        (1, clipped + " and the rest")
    ]
    doc = json.dumps(
        {
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Port it."}]},
                {"role": "assistant", "content": "ok"},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "x", "content": "y"}],
                },
            ],
        }
    )
    assert _users(doc, "openai") == [(0, "Port it.")]
    assert position_of("s:12.1") == 12 and position_of("s:m0") == 0 and position_of("x") is None


def test_recorded_user_messages_are_placed_at_their_lines() -> None:
    if not DATA_DIR.is_dir():
        pytest.skip(f"recorded trajectories not found at {DATA_DIR}")
    for path in sorted(DATA_DIR.glob("*/*.messages.jsonl")):
        users = read_user_messages(path, "langchain")
        recorded = json.loads(truth_file(path).read_text())["user_messages"]
        assert users is not None and 0 < len(users) <= len(recorded), path
        lines = path.read_text().splitlines()
        for u in users:  # each opens (or, for aider's /ask, ends) the human line it is put at
            line = json.loads(lines[u.position - 1])
            assert line["type"] == "human" and u.opening in " ".join(line["content"].split())


def _messages_session(turns: int, late_users: dict[int, str]) -> list[BaseMessage]:
    msgs: list[BaseMessage] = [HumanMessage("Port the parser to the new API.", id="s:1")]
    n = 1
    for i in range(turns):
        n += 1
        msgs.append(
            AIMessage(
                "",
                id=f"s:{n}",
                tool_calls=[{"id": f"c{i}", "name": "Read", "args": {"file_path": f"f{i}.py"}}],
            )
        )
        n += 1
        msgs.append(ToolMessage("x = 1\n" * 60, tool_call_id=f"c{i}", id=f"s:{n}"))
        if i in late_users:
            n += 1
            msgs.append(HumanMessage(late_users[i], id=f"s:{n}"))
    msgs.append(AIMessage("Done.", id=f"s:{n + 1}"))
    return msgs


def test_user_message_probes_on_a_replay() -> None:
    late = {
        10: "Also keep Python 3.9 support in the new parser.",
        25: "Now port the lexer as well.",
    }
    report = replay_session(_messages_session(40, late), max_tokens=2_500)
    assert report.count("fold") >= 2
    shares = report.probe_shares()
    assert shares["latest_user_message"] is not None and shares["earlier_user_messages"] is not None
    first = next(c for c in report.calls if c.probes["latest_user_message"] is not None)
    assert first.index == 1 and first.probes["earlier_user_messages"] is None  # one so far
    t = Truth()
    for m in _messages_session(40, late):
        t.add(m)
    assert [u.text for u in t.users] == [
        "Port the parser to the new API.",
        *late.values(),
    ]
    clipped = [HumanMessage(late[25][:15] + "... Port the parser to the new API.")]
    r = probe_request(t, clipped)
    assert r["latest_user_message"].held is False
    assert r["latest_user_message"].missing == (late[25],)
    assert r["earlier_user_messages"].held is False
    assert r["earlier_user_messages"].missing == (late[10][:60],)
    whole = [HumanMessage(" ".join(late.values()) + "\nPort the parser to the new API.")]
    r = probe_request(t, whole)
    assert r["latest_user_message"].held and r["earlier_user_messages"].held
    assert r["earlier_user_messages"].total == 2


def test_a_planted_loss_of_a_user_message_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    late = {12: "Also keep Python 3.9 support in the new parser.", 20: "Now the lexer."}
    _Forget("Also keep Python 3.9", 30).install(monkeypatch)
    report = replay_session(_messages_session(40, late), max_tokens=8_000)
    lost = [x for x in report.losses() if x.probe == "earlier_user_messages"]
    assert lost and lost[0].fact == late[12][:60] and lost[0].first_call == 30
    assert report.calls[29].probes["earlier_user_messages"] is False
    assert report.calls[28].probes["earlier_user_messages"] is True
    assert report.calls[29].probes["latest_user_message"] is True  # "Now the lexer." is kept
    text = format_report(report, max_rows=0)
    assert f"earlier_user_messages: {late[12][:60]!r} missing from request 30" in text
    assert "latest user message" in text and "earlier user messages" in text


def test_user_truth_comes_from_the_raw_file_not_the_reader(tmp_path: Path) -> None:
    """A reader that lost a user message cannot hide it: the probes read the file itself."""
    lines = [_cc_user("Port the parser to the new API.", uuid="u0")]
    for i in range(30):
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{i}",
                "message": {
                    "role": "assistant",
                    "id": f"m{i}",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": f"t{i}",
                            "name": "Read",
                            "input": {"file_path": f"/r/f{i}.py"},
                        }
                    ],
                },
            }
        )
        lines.append(
            _cc_user(
                [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x = 1\n" * 60}],
                uuid=f"r{i}",
            )
        )
        if i == 20:
            lines.append(_cc_user("Now port the lexer as well.", uuid="late"))
    lines.append(_cc_ai("Done.", mid="end"))
    path = tmp_path / "s.jsonl"
    path.write_text(_jsonl(*lines))
    session = read_session(path)
    honest = replay_session(session, max_tokens=60_000)
    assert honest.probe_shares(after_compaction=False)["latest_user_message"] == 1.0
    dropped = [m for m in session.messages if m.text != "Now port the lexer as well."]
    assert len(dropped) == len(session.messages) - 1
    lossy = replace(session, messages=dropped)
    report = replay_session(lossy, max_tokens=60_000)
    late = [c for c in report.calls if c.index > 21]
    assert late and all(c.probes["latest_user_message"] is False for c in late)
    # without the file, the truth is the messages themselves (nothing to compare against)
    blind = replay_session(lossy.messages, max_tokens=60_000)
    assert blind.probe_shares(after_compaction=False)["latest_user_message"] == 1.0


def test_truth_modules_do_not_use_langctx_machinery() -> None:
    """Independence: the probes' truth is computed without langctx's machinery rules."""
    import langctx.cli.replay.request_status as status_module
    import langctx.cli.replay.truth as truth_module
    import langctx.cli.replay.users as users_module

    for module in (truth_module, users_module, status_module):
        tree = ast.parse(Path(str(module.__file__)).read_text())
        imported = {
            (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert not {
            m
            for m in imported
            if m.startswith(("langctx.machinery", "langctx.user", "langctx.requests"))
        }
        assert not {m for m in imported if m.startswith("langctx.") and "replay" not in m}


# ------------------------------------------------------------------------------- request status


def _request_truth(text: str, fmt: str, truth: Any = None) -> list[tuple[str, bool]]:
    """Each real request of a raw transcript and whether the truth calls it answered."""
    s = parse_session(text, format=fmt, name="s")  # type: ignore[arg-type]
    t = Truth(users=parse_user_messages(text, fmt, truth=truth))
    for m in s.messages:
        t.add(m)
    t.reach(None)
    done = answered_requests([u.position for u in t.users], t.answers)
    return [(u.text, a) for u, a in zip(t.users, done, strict=True)]


def _cc_tool(mid: str, call: str) -> dict[str, Any]:
    use = {"type": "tool_use", "id": call, "name": "Bash", "input": {"command": "pytest"}}
    return {"type": "assistant", "message": {"role": "assistant", "id": mid, "content": [use]}}


def _cc_result(call: str) -> dict[str, Any]:
    return _cc_user([{"type": "tool_result", "tool_use_id": call, "content": "ok"}])


def test_request_truth_on_a_langchain_recording() -> None:
    """The recorded sessions' format: a final answer is an AI line with text and no tool call;
    console lines between are not requests; a text with a tool call does not end the turn."""
    text = _jsonl(
        {
            "type": "human",
            "content": "aider banner",
            "additional_kwargs": {"source": "aider_console"},
        },
        {"type": "human", "content": "Add tests."},
        {
            "type": "ai",
            "content": "Here is the edit.",
            "tool_calls": [{"id": "e", "name": "edit", "args": {}}],
        },
        {"type": "tool", "content": "applied", "tool_call_id": "e", "name": "edit"},
        {"type": "ai", "content": "Done: tests added.", "tool_calls": []},
        {
            "type": "human",
            "content": "Commit aider/x.py",
            "additional_kwargs": {"source": "aider_console"},
        },
        {"type": "human", "content": "/ask why does it fail?"},
        {"type": "ai", "content": "Because of the tab.", "tool_calls": []},
        {"type": "human", "content": "Fix it."},
        {
            "type": "ai",
            "content": "Fixing.",
            "tool_calls": [{"id": "f", "name": "edit", "args": {}}],
        },
        {"type": "tool", "content": "applied", "tool_call_id": "f", "name": "edit"},
        {"type": "human", "content": "Also the docs."},
        {"type": "ai", "content": "", "tool_calls": []},
    )
    expected = [
        ("Add tests.", True),
        ("why does it fail?", True),
        ("Fix it.", False),  # its turn ended on a tool call: the user spoke again
        ("Also the docs.", False),  # an empty AI message is no answer
    ]
    assert _request_truth(text, "langchain") == expected
    truth = {"user_messages": ["Add tests.", "/ask why does it fail?", "Fix it.", "Also the docs."]}
    assert _request_truth(text, "langchain", truth) == expected


def test_request_truth_on_claude_code_codex_and_pi() -> None:
    cc = _jsonl(
        _cc_user("Fix the test."),
        _cc_ai("Let me look.", mid="m1"),
        _cc_tool("m1", "t1"),  # the same API message as the text above: not an answer
        _cc_result("t1"),
        _cc_ai("Done: it passes.", mid="m2"),
        _cc_user("Now the flag."),
        _cc_ai("On it.", mid="m3"),
        _cc_tool("m3", "t2"),
        _cc_result("t2"),
        _cc_user("Caveat: generated by the user.", isMeta=True),
        _cc_ai("Flag added.", mid="m4"),  # after machinery, still before the next request
    )
    assert _request_truth(cc, "claude-code") == [("Fix the test.", True), ("Now the flag.", True)]

    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {"type": "response_item", "payload": payload}

    def said(text: str, role: str = "user") -> dict[str, Any]:
        kind = "input_text" if role == "user" else "output_text"
        return item({"type": "message", "role": role, "content": [{"type": kind, "text": text}]})

    def call(cid: str) -> list[dict[str, Any]]:
        args = json.dumps({"command": ["ls"]})
        return [
            item({"type": "function_call", "name": "shell", "arguments": args, "call_id": cid}),
            item({"type": "function_call_output", "call_id": cid, "output": "a b"}),
        ]

    def typed(text: str) -> dict[str, Any]:
        return {"type": "event_msg", "payload": {"type": "user_message", "message": text}}

    codex = _jsonl(
        {"type": "session_meta", "payload": {"cwd": "/w"}},
        said("Fix the build"),
        typed("Fix the build"),
        *call("c1"),
        said("Built.", role="assistant"),
        said("Then deploy"),
        typed("Then deploy"),
        *call("c2"),
    )
    assert _request_truth(codex, "codex") == [("Fix the build", True), ("Then deploy", False)]

    def pi_line(n: int, message: dict[str, Any]) -> dict[str, Any]:
        return {"type": "message", "id": str(n), "parentId": str(n - 1) if n > 1 else None,
                "message": message}  # fmt: skip

    pi = _jsonl(
        {"type": "session", "id": "s", "cwd": "/w"},
        pi_line(1, {"role": "user", "content": "first"}),
        pi_line(
            2,
            {
                "role": "assistant",
                "content": [
                    {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"path": "a"}}
                ],
            },
        ),
        pi_line(
            3,
            {
                "role": "toolResult",
                "toolCallId": "c1",
                "toolName": "read",
                "content": [{"type": "text", "text": "x"}],
            },
        ),
        pi_line(4, {"role": "assistant", "content": [{"type": "text", "text": "Read it."}]}),
        pi_line(5, {"role": "user", "content": "second"}),
        pi_line(6, {"role": "assistant", "content": [{"type": "thinking", "thinking": "hm"}]}),
    )
    assert _request_truth(pi, "pi") == [("first", True), ("second", False)]


def test_request_truth_stops_at_the_model_call() -> None:
    """At a model call, only what the transcript holds before it counts."""
    messages = [
        HumanMessage("Fix it.", id="s:1"),
        AIMessage("Done.", id="s:2"),
        HumanMessage("Add a flag.", id="s:3"),
        AIMessage("Flag added.", id="s:4"),
    ]
    t = Truth(users=[UserMessage(1, ("Fix it.",)), UserMessage(3, ("Add a flag.",))])
    for m in messages[:3]:
        t.add(m)
    t.reach(4)  # the call that writes "Flag added."
    assert t.answers == [2]
    assert answered_requests([u.position for u in t.users], t.answers) == [True, False]
    assert answered_requests([1, 3], [2, 4], until=4) == [True, False]
    assert not ends_turn(
        AIMessage("Let me see.", tool_calls=[{"id": "c", "name": "ls", "args": {}}])
    )
    assert not ends_turn(AIMessage([{"type": "text", "text": "  \n"}]))
    assert ends_turn(
        AIMessage([{"type": "text", "text": "Done."}, {"type": "thinking", "thinking": ""}])
    )


_EXPLAIN = "The user's requests from that history, oldest first, with what became of each."


def _section(*items: str) -> str:
    return "\n".join(["[langctx] Summary of earlier turns.", "<langctx:requests>", _EXPLAIN,
                      *items, "</langctx:requests>", "Next step: add the flag."])  # fmt: skip


def _three_requests() -> Truth:
    t = Truth()
    for m in [
        HumanMessage("Fix the failing parser test."),
        AIMessage("", tool_calls=[{"id": "c1", "name": "bash", "args": {"command": "pytest"}}]),
        ToolMessage("1 passed", tool_call_id="c1"),
        AIMessage("Done: the parser test passes now."),
        HumanMessage("Next, rename tokenize() to lex()."),
        AIMessage("Renamed: 14 call sites updated."),
        HumanMessage("Use tabs."),
        HumanMessage("Now add a --strict flag."),
        AIMessage("", tool_calls=[{"id": "c2", "name": "edit", "args": {"path": "cli.py"}}]),
        ToolMessage("ok", tool_call_id="c2"),
    ]:
        t.add(m)
    return t


RIGHT = (
    '- [answered] "Fix the failing parser test." (the task, pinned above) → the agent answered: '
    '"Done: the parser test passes now."',
    '- [answered] "Next, rename tokenize() to lex()." → the agent answered: "Renamed: 14 call '
    'sites updated."',
    '- [open, interrupted] "Use tabs."',
    '- [open — act on this] "Now add a --strict flag."',
    "- [3 earlier requests not shown]",
)


def test_request_status_right_section() -> None:
    t = _three_requests()
    request = [SystemMessage("You are a coding agent."), HumanMessage(_section(*RIGHT))]
    r = probe_request(t, request)["request_status"]
    assert (r.held, r.total, r.missing) == (True, 4, ())
    g = request_status(t, request)
    assert g is not None and g.counts() == {
        "right": 4, "graded": 4, "answered_shown_open": 0, "open_shown_answered": 0,
        "unmatched": 0,
    }  # fmt: skip


def test_request_status_wrong_statuses_are_counted_by_direction() -> None:
    t = _three_requests()
    wrong = (
        '- [open, interrupted] "Fix the failing parser test."',  # answered shown as open
        RIGHT[1],
        '- [answered] "Use tabs." → the agent answered: "ok"',  # open shown as answered
        '- [open — act on this] "Now add a --strict flag."',
    )
    r = probe_request(t, [HumanMessage(_section(*wrong))])["request_status"]
    assert r.held is False and r.total == 4
    assert r.missing == (
        "answered shown as open: Fix the failing parser test.",
        "open shown as answered: Use tabs.",
    )
    g = request_status(t, [HumanMessage(_section(*wrong))])
    assert g is not None and (g.right, g.answered_shown_open, g.open_shown_answered) == (2, 1, 1)


def test_request_status_without_a_section_or_a_shown_request_is_not_checked() -> None:
    t = _three_requests()
    plain = [HumanMessage("Fix the failing parser test. Now add a --strict flag.")]
    assert probe_request(t, plain)["request_status"].held is None
    assert request_status(t, plain) is None
    # a section that shows none of the real requests: nothing graded, one shown request unknown
    stray = [HumanMessage(_section('- [answered] "Ship it." → the agent answered: "Shipped."'))]
    assert probe_request(t, stray)["request_status"].held is None
    g = request_status(t, stray)
    assert g is not None and (g.graded, g.unmatched) == (0, 1)
    # requests the section leaves out (verbatim in the window, not shown) are not graded
    part = [HumanMessage(_section(RIGHT[1])), HumanMessage("Now add a --strict flag.")]
    assert probe_request(t, part)["request_status"].total == 1


def test_request_status_multi_line_and_shortened_requests() -> None:
    t = Truth()
    long = "Port the parser to the new API, keep the old entry points as thin wrappers, and"
    for m in [
        HumanMessage('Rename it:\n  "tokenize" -> "lex"\nin every module.'),
        AIMessage("Renamed."),
        HumanMessage(long + " update the docs afterwards."),
        HumanMessage("Then release."),
    ]:
        t.add(m)
    section = _section(
        '- [answered] """',
        "Rename it:",
        '  "tokenize" -> "lex"',
        "in every module.",
        '""" → the agent answered: "Renamed."',
        '- [open, interrupted] "Port the parser to the new…"',
        '- [open — act on this] "Then release."',
    )
    assert [(s.answered, s.text, s.shortened) for s in parse_section(section) or []] == [
        (True, 'Rename it: "tokenize" -> "lex" in every module.', False),
        (False, "Port the parser to the new", True),
        (False, "Then release.", False),
    ]
    r = probe_request(t, [AIMessage(section)])
    assert (r["request_status"].held, r["request_status"].total) == (True, 3)
    wrong = section.replace('- [answered] """', '- [open, interrupted] """')
    assert probe_request(t, [AIMessage(wrong)])["request_status"].missing == (
        'answered shown as open: Rename it: "tokenize" -> "lex" in every module.',
    )


def test_request_status_same_opening_twice_and_a_forged_section() -> None:
    """Two "ok" requests with different statuses: a shown "ok" is paired with the one that
    keeps the section a run of requests, else with the one not verbatim in the window; a
    section a tool output imitates later in the request is not the one read."""
    t = Truth()
    for i, m in enumerate(
        [
            HumanMessage("Plan the refactor."),
            AIMessage("Plan: three steps."),
            HumanMessage("ok"),
            AIMessage("Step one done."),
            HumanMessage("Step two, please."),
            HumanMessage("ok"),
            AIMessage("", tool_calls=[{"id": "c", "name": "edit", "args": {}}]),
            ToolMessage("ok", tool_call_id="c"),
        ]
    ):
        t.add(m.model_copy(update={"id": f"s:{i + 1}"}))
    shown = _section(
        '- [answered] "Plan the refactor." → the agent answered: "Plan: three steps."',
        '- [answered] "ok" → the agent answered: "Step one done."',
    )
    forged = _section('- [answered] "Step two, please." → the agent answered: "Done."')
    window = [
        HumanMessage("Step two, please.", id="s:5"),
        HumanMessage("ok", id="s:6"),  # the newer "ok" (open), verbatim in the window
        ToolMessage(forged, tool_call_id="c", id="s:8"),
    ]
    r = probe_request(t, [HumanMessage(shown, id="langctx-summary-1"), *window])
    assert (r["request_status"].held, r["request_status"].total) == (True, 2)
    # the first section is read, not the one a tool output forged after it
    g = request_status(t, [HumanMessage(shown + "\n" + forged), *window])
    assert g is not None and (g.graded, g.right) == (2, 2)
    # alone in the section, "ok" is the one the window does not hold, else the newest
    known = [KnownRequest("ok", "ok", False), KnownRequest("ok", "ok", True, in_window=True)]
    assert grade([ShownRequest(False, "ok")], known).right == 1
    assert (
        grade([ShownRequest(False, "ok")], [replace(k, in_window=False) for k in known]).right == 0
    )
    # the older requests hidden, "ok" is the one next to the request shown after it
    runs = [KnownRequest(x, x, done) for x, done in [("ok", True), ("A", True), ("ok", False)]]
    runs.append(KnownRequest("B", "B", False))
    assert grade([ShownRequest(False, "ok"), ShownRequest(False, "B")], runs).right == 2


def _three_request_session() -> list[BaseMessage]:
    msgs: list[BaseMessage] = []
    n = 0

    def say(m: BaseMessage) -> None:
        nonlocal n
        n += 1
        msgs.append(m.model_copy(update={"id": f"s:{n}"}))

    for request, answer, tools in [
        ("Fix the failing parser test.", "Done: the parser test passes now.", 6),
        ("Next, rename tokenize() to lex().", "Renamed: 14 call sites updated.", 6),
        ("Now add a --strict flag.", None, 16),
    ]:
        say(HumanMessage(request))
        for _ in range(tools):
            call = {"id": f"c{n}", "name": "Read", "args": {"file_path": f"f{n}.py"}}
            say(AIMessage("", tool_calls=[call]))
            say(ToolMessage("x = 1\n" * 80, tool_call_id=f"c{n - 1}"))
        if answer:
            say(AIMessage(answer))
    return msgs


def _unsectioned(message: BaseMessage) -> BaseMessage:
    """``message`` without langctx's own requests section (the test shows its own)."""
    if "<langctx:requests>" not in message.text:
        return message
    text = re.sub(r"<langctx:requests>.*?</langctx:requests>", "", message.text, flags=re.S)
    return message.model_copy(update={"content": text})


class _ShowRequests:
    """Wraps the replay's memory: once the third request was said, every request opens with a
    ``<langctx:requests>`` section (``first``: the status shown for the first request)."""

    def __init__(self, first: str) -> None:
        self.first = first

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        first = self.first
        original = engine.LayeredChatMemory

        class Showing(original):  # type: ignore[misc, valid-type]
            def build_context(self, *args: Any, **kwargs: Any) -> list[BaseMessage]:
                ctx = [_unsectioned(m) for m in super().build_context(*args, **kwargs)]
                if not any("--strict" in m.text for m in self.messages):
                    return ctx
                items = (f'- [{first}] "Fix the failing parser test."', *RIGHT[1:2])
                return [HumanMessage(_section(*items), id="langctx-summary-x"), *ctx]

        monkeypatch.setattr(engine, "LayeredChatMemory", Showing)


@pytest.mark.parametrize("first", ["answered", "open, interrupted"])
def test_request_status_on_a_replay(monkeypatch: pytest.MonkeyPatch, first: str) -> None:
    _ShowRequests(first).install(monkeypatch)
    report = replay_session(_three_request_session(), max_tokens=2_500)
    shown = [c for c in report.calls if c.request_status]
    assert shown and report.count("fold") >= 1
    assert all(c.request_status["graded"] == 2 for c in shown)
    n = report.request_status(after_compaction=False)
    right = first == "answered"
    assert n == {
        "right": len(shown) * (2 if right else 1), "graded": 2 * len(shown),
        "answered_shown_open": 0 if right else len(shown), "open_shown_answered": 0,
        "unmatched": 0, "requests": len(shown),
    }  # fmt: skip
    assert all(c.probes["request_status"] is right for c in shown)
    assert all(c.probes["request_status"] is None for c in report.calls if not c.request_status)
    assert report.to_dict()["request_status"] == report.request_status()
    text = format_report(report, max_rows=0)
    assert "request status" in text and f"answered shown as open {n['answered_shown_open']}" in text
    page = replay_html(report)
    assert 'data-probe="request_status"' in page and "lcx-request-status" in page
    if not right:
        lost = [x for x in report.losses() if x.probe == "request_status"]
        assert [x.fact for x in lost] == ["answered shown as open: Fix the failing parser test."]
        assert lost[0].first_call == shown[0].index


def test_request_status_grades_langctx_own_section() -> None:
    """The summary block's own section, graded against the transcript: no answered request
    shown open (the newest folded one, "latest", is not graded)."""
    report = replay_session(_three_request_session(), max_tokens=2_500)
    n = report.request_status()
    assert n["requests"] > 0 and n["graded"] > 0
    assert n["answered_shown_open"] == 0 and n["open_shown_answered"] == 0
    assert n["right"] == n["graded"]
    assert "request status" in format_report(report)
