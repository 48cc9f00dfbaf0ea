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
from langctx.cli.replay.truth import (
    Request,
    Truth,
    error_lines,
    is_failure,
    is_informative_step,
    modified_paths,
    probe_request,
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
    import langctx.cli.replay.truth as truth_module
    import langctx.cli.replay.users as users_module

    for module in (truth_module, users_module):
        tree = ast.parse(Path(str(module.__file__)).read_text())
        imported = {
            (node.module or "") if isinstance(node, ast.ImportFrom) else alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for alias in node.names
        }
        assert not {m for m in imported if m.startswith(("langctx.machinery", "langctx.user"))}
        assert not {m for m in imported if m.startswith("langctx.") and "replay" not in m}
