"""langctx.facts: mechanical extraction of files, commands and errors from agent messages."""

from __future__ import annotations

import doctest
import importlib
import json
import pkgutil
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

import langctx.facts as facts_module
import langctx.facts.extract as extract_module
import langctx.facts.failures as failures_module
from langctx.errors import ConfigError, InvalidMessageError
from langctx.facts import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    DEFAULT_MAX_COMMANDS,
    DEFAULT_MAX_ERRORS,
    DEFAULT_PATH_KEYS,
    Facts,
    FileToolSpec,
    empty_facts,
    extract_facts,
    merge_facts,
)
from langctx.facts.record import MAX_MODIFIED_FILES

# ---------------------------------------------------------------------------------- builders


def call(name: str, args: Any = None, call_id: str | None = None) -> dict[str, Any]:
    return {
        "id": call_id or f"{name}-{json.dumps(args, sort_keys=True)}",
        "name": name,
        "args": args or {},
    }


def ai(*calls: dict[str, Any], content: Any = "", msg_id: str | None = None) -> AIMessage:
    return AIMessage(content=content, tool_calls=list(calls), id=msg_id)


def result(
    call_id: str,
    content: Any = "",
    *,
    status: str = "success",
    name: str | None = None,
    msg_id: str | None = None,
    **kwargs: Any,
) -> ToolMessage:
    return ToolMessage(
        content=content, tool_call_id=call_id, status=status, name=name, id=msg_id, **kwargs
    )


def files_of(*calls: dict[str, Any], **kwargs: Any) -> tuple[list[str], list[str]]:
    facts = extract_facts([ai(*calls)], **kwargs)
    return facts["read_files"], facts["modified_files"]


def run_command(output: Any, *, status: str = "success", command: str = "make", **kw: Any) -> Facts:
    return extract_facts(
        [
            ai(call("bash", {"command": command}, "c1"), msg_id="a1"),
            result("c1", output, status=status, msg_id="t1", **kw),
        ]
    )


# ---------------------------------------------------------------------------------- public surface


FACT_MODULES = sorted(
    ["langctx.facts"]
    + [m.name for m in pkgutil.iter_modules(facts_module.__path__, "langctx.facts.")]
)


def isort_key(name: str) -> tuple[bool, bool, str]:  # constants, classes, functions
    return (not name.isupper(), not name[0].isupper(), name)


def test_package_all_is_sorted_and_complete() -> None:
    module = facts_module
    assert module.__all__ == sorted(module.__all__, key=isort_key)
    for exported in module.__all__:
        assert hasattr(module, exported)


@pytest.mark.parametrize("name", FACT_MODULES)
def test_docstring_examples_run(name: str) -> None:
    outcome = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert outcome.attempted >= 1
    assert outcome.failed == 0


def test_defaults_are_immutable() -> None:
    with pytest.raises(TypeError):
        DEFAULT_FILE_TOOLS["mine"] = FileToolSpec(role="read")  # type: ignore[index]
    assert isinstance(DEFAULT_COMMAND_TOOLS, frozenset)
    spec = DEFAULT_FILE_TOOLS["read"]
    with pytest.raises(AttributeError):
        spec.role = "modified"  # type: ignore[misc]
    assert FileToolSpec(role="read").path_keys == DEFAULT_PATH_KEYS
    assert DEFAULT_PATH_KEYS == ("path", "file_path", "filename", "file")


def test_empty_facts_is_fresh_each_time() -> None:
    a, b = empty_facts(), empty_facts()
    a["read_files"].append("x")
    assert b == {"read_files": [], "modified_files": [], "commands": [], "errors": []}


# ---------------------------------------------------------------------------------- files


def test_paths_come_only_from_tool_call_arguments() -> None:
    messages: list[BaseMessage] = [
        SystemMessage("Edit src/app.py carefully."),
        HumanMessage("Please fix src/app.py and read docs/README.md"),
        AIMessage("I will open src/app.py and write tests/test_app.py now."),
        ai(call("read", {"path": "src/util.py"}, "r1"), content="Reading lib/other.py first"),
        result("r1", "see also conf/settings.py"),
    ]
    facts = extract_facts(messages)
    assert facts["read_files"] == ["src/util.py"]
    assert facts["modified_files"] == []


def test_read_and_modified_are_ordered_unique_and_independent() -> None:
    read, modified = files_of(
        call("read", {"path": "b.py"}),
        call("read", {"path": "a.py"}),
        call("edit", {"path": "a.py", "oldText": "x", "newText": "y"}),
        call("read", {"path": "b.py"}, "again"),
        call("write", {"path": "c.py", "content": ""}),
        call("edit", {"path": "a.py"}, "again2"),
    )
    assert read == ["a.py", "b.py"]  # by latest read; a modified file stays listed as read
    assert modified == ["a.py", "c.py"]  # by first change; modifying does not imply reading


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  src/app.py \n", "src/app.py"),
        ("./src/app.py", "src/app.py"),
        ("././src/app.py", "src/app.py"),
        ("../lib/x.py", "../lib/x.py"),
        ("/abs/path/x.py", "/abs/path/x.py"),
        ("a/./b.py", "a/./b.py"),
        ("~/.pi/agent/themes/nord.json", "~/.pi/agent/themes/nord.json"),
        ("C:\\work\\x.py", "C:\\work\\x.py"),
        ("/workspace", "/workspace"),
    ],
)
def test_path_normalisation_is_light(raw: str, expected: str) -> None:
    assert files_of(call("read", {"path": raw}))[0] == [expected]


@pytest.mark.parametrize("value", ["", "   ", "./", None, 3, {"p": "x"}, "a\nb", "x" * 5000])
def test_empty_or_non_string_paths_are_ignored(value: object) -> None:
    assert files_of(call("read", {"path": value})) == ([], [])


def test_a_list_of_paths_is_allowed() -> None:
    read, _ = files_of(call("read_file", {"path": ["a.py", " ./b.py", 7, "", "a.py"]}))
    assert read == ["a.py", "b.py"]
    read, _ = files_of(call("read_many_files", {"paths": ["x.md", "y.md"]}))
    assert read == ["x.md", "y.md"]


@pytest.mark.parametrize("key", DEFAULT_PATH_KEYS)
def test_every_default_path_key_is_read(key: str) -> None:
    spec = FileToolSpec(role="read")
    assert files_of(call("t", {key: "f.txt"}), file_tools={"t": spec})[0] == ["f.txt"]


@pytest.mark.parametrize(
    ("name", "args", "read", "modified"),
    [
        # pi
        ("read", {"path": "src/a.ts", "offset": 1, "limit": 20}, ["src/a.ts"], []),
        ("edit", {"path": "src/a.ts", "oldText": "a", "newText": "b"}, [], ["src/a.ts"]),
        ("write", {"path": "src/b.ts", "content": "x"}, [], ["src/b.ts"]),
        # aider's synthetic edits
        ("edit", {"path": "aider/repo.py", "search": "a", "replace": "b"}, [], ["aider/repo.py"]),
        # SWE-agent function calling
        ("open", {"path": "src/fields.py", "line_number": 1474}, ["src/fields.py"], []),
        ("create", {"filename": "reproduce.py"}, [], ["reproduce.py"]),
        # SWE-agent text actions
        ("open", {"command": "open src/fields.py 1474"}, ["src/fields.py"], []),
        ("open", {"command": 'open "dir with space/x.py"'}, ["dir with space/x.py"], []),
        ("create", {"command": "create reproduce.py"}, [], ["reproduce.py"]),
        # common LangChain / agent tool names
        ("read_file", {"file_path": "a.py"}, ["a.py"], []),
        ("read_file", {"target_file": "a.py"}, ["a.py"], []),
        ("read_file", {"absolute_path": "/w/a.py"}, ["/w/a.py"], []),
        ("view", {"path": "a.py"}, ["a.py"], []),
        ("cat", {"path": "a.py"}, ["a.py"], []),
        ("write_file", {"file_path": "a.py", "text": "x"}, [], ["a.py"]),
        ("edit_file", {"file_path": "a.py", "old_string": "x", "new_string": "y"}, [], ["a.py"]),
        ("create_file", {"path": "a.py", "content": ""}, [], ["a.py"]),
        ("delete_file", {"path": "a.py"}, [], ["a.py"]),
        ("file_delete", {"file_path": "a.py"}, [], ["a.py"]),
        ("move_file", {"source_path": "a.py", "destination_path": "b.py"}, [], ["a.py", "b.py"]),
        # Claude Code names are matched case-insensitively
        ("Read", {"file_path": "a.py"}, ["a.py"], []),
        ("Write", {"file_path": "a.py", "content": ""}, [], ["a.py"]),
        ("MultiEdit", {"file_path": "a.py", "edits": []}, [], ["a.py"]),
        ("NotebookEdit", {"notebook_path": "n.ipynb"}, [], ["n.ipynb"]),
        # not file reads
        ("ls", {"path": "src"}, [], []),
        ("glob", {"pattern": "**/*.py", "path": "src"}, [], []),
        ("grep", {"pattern": "x", "path": "src"}, [], []),
        ("find_file", {"file_name": "a.py", "dir": "src"}, [], []),
        ("cat", {"command": "cat secret.txt"}, [], []),  # a cat tool's text is not a shell line
        ("bash", {"command": "cat a.py && sed -i s/x/y/ b.py"}, ["a.py"], ["b.py"]),
        # Claude Code Grep / SWE-agent search_file: a read of one named file only
        ("Grep", {"pattern": "x", "path": "src/app.py"}, ["src/app.py"], []),
        ("Grep", {"pattern": "x", "path": "src/*.py"}, [], []),
        ("search_file", {"command": "search_file foo src/app.py"}, ["src/app.py"], []),
        ("search_file", {"command": "search_file foo"}, [], []),
        # an unclosed quote: the first line's words, never a word of a later line
        ("search_file", {"command": "search_file 'foo\nsecond x.py"}, [], []),
        ("Glob", {"pattern": "src/app.py"}, [], []),
        ("unknown_tool", {"path": "a.py"}, [], []),
    ],
)
def test_default_file_tools(
    name: str, args: dict[str, Any], read: list[str], modified: list[str]
) -> None:
    assert files_of(call(name, args)) == (read, modified)


@pytest.mark.parametrize("tool", ["str_replace_editor", "str_replace_based_edit_tool"])
@pytest.mark.parametrize(
    ("command", "role"),
    [
        ("view", "read"),
        ("create", "modified"),
        ("str_replace", "modified"),
        ("insert", "modified"),
        ("undo_edit", "modified"),
        ("delete_everything", None),
        (None, None),
        (3, None),
    ],
)
def test_editor_role_depends_on_the_command_argument(
    tool: str, command: object, role: str | None
) -> None:
    read, modified = files_of(call(tool, {"command": command, "path": "/w/a.py"}))
    assert read == (["/w/a.py"] if role == "read" else [])
    assert modified == (["/w/a.py"] if role == "modified" else [])


def test_swe_agent_edits_act_on_the_open_file() -> None:
    facts = extract_facts(
        [
            ai(call("open", {"command": "open setup.py"}, "1")),
            ai(call("create", {"command": "create reproduce.py"}, "2")),
            ai(call("edit", {"command": "edit 1:1\nprint(1)\nend_of_edit"}, "3")),
            ai(call("open", {"command": "open src/fields.py 1474"}, "4")),
            ai(call("edit", {"command": "edit 1475:1475\n    x\nend_of_edit"}, "5")),
            ai(call("insert", {"text": "more"}, "6")),
            ai(call("edit", {"search": "a", "replace": "b"}, "7")),
        ]
    )
    assert facts["read_files"] == ["setup.py", "src/fields.py"]
    assert facts["modified_files"] == ["reproduce.py", "src/fields.py"]


def test_an_edit_without_path_and_without_open_file_names_nothing() -> None:
    assert files_of(call("edit", {"command": "edit 1:1\nx\nend_of_edit"})) == ([], [])
    # the open file does not leak from one extract_facts call to the next
    extract_facts([ai(call("open", {"path": "a.py"}))])
    assert files_of(call("edit", {"search": "a", "replace": "b"})) == ([], [])


CODEX_PATCH = """*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print("hi")
+    print("hello")
*** Add File: src/new.py
+x = 1
*** Delete File: old.py
*** Update File: src/name.py
*** Move to: src/renamed.py
*** End Patch"""

UNIFIED_DIFF = """diff --git a/lib/x.py b/lib/x.py
--- a/lib/x.py
+++ b/lib/x.py
@@ -1,3 +1,3 @@
--- a SQL comment line that was removed
-old
+new
--- /dev/null
+++ b/docs/added.md\t2024-01-01 00:00:00
@@ -0,0 +1 @@
+hello
"""


def test_apply_patch_lists_files_from_patch_headers() -> None:
    _, modified = files_of(call("apply_patch", {"input": CODEX_PATCH}))
    assert modified == ["src/app.py", "src/new.py", "old.py", "src/name.py", "src/renamed.py"]
    _, modified = files_of(call("apply_patch", {"patch": UNIFIED_DIFF}))
    assert modified == ["lib/x.py", "docs/added.md"]
    op = {"type": "update_file", "path": "web/index.html", "diff": "@@\n-a\n+b"}
    _, modified = files_of(call("apply_patch", {"operation": op}))
    assert modified == ["web/index.html"]
    assert files_of(call("apply_patch", {"input": "no headers here"})) == ([], [])


def test_custom_file_tools() -> None:
    spec = FileToolSpec(role="read", path_keys=("target", "more"))
    read, _ = files_of(
        call("peek", {"target": "a.py", "more": ["b.py"]}), file_tools={"peek": spec}
    )
    assert read == ["a.py", "b.py"]
    # the custom table replaces the defaults
    assert files_of(call("read", {"path": "a.py"}), file_tools={"peek": spec}) == ([], [])
    extended = {**DEFAULT_FILE_TOOLS, "peek": spec}
    assert files_of(call("read", {"path": "a.py"}), file_tools=extended) == (["a.py"], [])


def test_role_callable_and_paths_callable() -> None:
    def role(args: dict[str, Any]) -> Any:
        return {"r": "read", "w": "modified"}.get(str(args.get("mode")))

    spec = FileToolSpec(role=role, path_keys=(), paths=lambda args: [args.get("p", ""), " ./q "])
    read, modified = files_of(
        call("fs", {"mode": "r", "p": "a"}, "1"),
        call("fs", {"mode": "w", "p": "b"}, "2"),
        call("fs", {"mode": "?", "p": "c"}, "3"),
        file_tools={"fs": spec},
    )
    assert read == ["a", "q"]
    assert modified == ["b", "q"]


def test_role_callable_returning_garbage_is_a_config_error() -> None:
    spec = FileToolSpec(role=lambda args: "deleted")  # type: ignore[arg-type,return-value]
    with pytest.raises(ConfigError, match="'read', 'modified' or None"):
        files_of(call("fs", {"path": "a"}), file_tools={"fs": spec})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"role": "write"},
        {"role": None},
        {"role": "read", "path_keys": "path"},
        {"role": "read", "path_keys": ("path", 3)},
        {"role": "read", "path_keys": None},
        {"role": "read", "paths": "not callable"},
    ],
)
def test_file_tool_spec_is_validated(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        FileToolSpec(**kwargs)


def test_file_tool_spec_path_keys_become_a_tuple() -> None:
    spec = FileToolSpec(role="read", path_keys=["a", "b"])  # type: ignore[arg-type]
    assert spec.path_keys == ("a", "b")
    assert hash(spec) == hash(FileToolSpec(role="read", path_keys=("a", "b")))


def test_file_tool_spec_is_keyword_only() -> None:
    with pytest.raises(TypeError):
        FileToolSpec("read")  # type: ignore[call-arg]


def test_bad_options_are_config_errors() -> None:
    msgs = [ai(call("read", {"path": "a"}))]
    with pytest.raises(ConfigError, match="FileToolSpec"):
        extract_facts(msgs, file_tools={"read": "read"})  # type: ignore[dict-item]
    with pytest.raises(ConfigError, match="map tool names"):
        extract_facts(msgs, file_tools=[("read", FileToolSpec(role="read"))])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"command_tools=\{'bash'\}"):
        extract_facts(msgs, command_tools="bash")
    for bad in (-1, 1.5, True, "3"):
        with pytest.raises(ConfigError):
            extract_facts(msgs, max_commands=bad)  # type: ignore[arg-type]
        with pytest.raises(ConfigError):
            merge_facts(empty_facts(), max_errors=bad)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------- bad input


def test_non_messages_are_rejected_with_the_fix() -> None:
    with pytest.raises(InvalidMessageError, match="convert_to_messages"):
        extract_facts([ai(), {"role": "user", "content": "hi"}])  # type: ignore[list-item]
    with pytest.raises(InvalidMessageError, match="wrap it in a list"):
        extract_facts(ai())  # type: ignore[arg-type]
    with pytest.raises(InvalidMessageError):
        extract_facts("hello")  # type: ignore[arg-type]


def test_empty_inputs() -> None:
    assert extract_facts([]) == empty_facts()
    assert extract_facts([AIMessage(""), ToolMessage("", tool_call_id="x"), HumanMessage("")]) == (
        empty_facts()
    )


def test_malformed_tool_calls_do_not_crash() -> None:
    bad_calls: list[Any] = [
        {"id": "1", "name": "read", "args": "not json"},
        {"id": "2", "name": "read", "args": None},
        {"id": "3", "name": "read", "args": ["a.py"]},
        {"id": "4", "name": None, "args": {"path": "x.py"}},
        {"id": None, "name": "read", "args": {"path": "ok.py"}},
        {"name": "read"},
        "not a dict",
        {"id": "5", "name": "read", "args": '{"path": "from_json.py"}'},
        {"id": "6", "name": "bash", "args": {"command": ""}},
        {"id": "7", "name": "bash", "args": {"command": ["", 3]}},
    ]
    message = AIMessage("")
    message.tool_calls = bad_calls  # bypasses validation, as hand-built messages can
    facts = extract_facts([message, result("6", "boom", status="error")])
    assert facts["read_files"] == ["ok.py", "from_json.py"]
    assert facts["commands"] == []
    assert [e["command"] for e in facts["errors"]] == [None]


def test_tool_use_blocks_in_list_content_are_read() -> None:
    message = AIMessage(
        content=[
            {"type": "text", "text": "Reading the file"},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}},
            {"type": "tool_call", "id": "t2", "name": "bash", "args": {"command": "ls"}},
        ]
    )
    assert message.tool_calls == []
    facts = extract_facts([message, result("t2", "exit code 0")])
    assert facts["read_files"] == ["a.py"]
    assert facts["commands"][0]["command"] == "ls"
    assert facts["commands"][0]["ok"] is True


def test_tool_calls_win_over_content_blocks() -> None:
    message = AIMessage(
        content=[{"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "b.py"}}],
        tool_calls=[call("read_file", {"path": "a.py"}, "t1")],
    )
    assert extract_facts([message])["read_files"] == ["a.py"]


# ---------------------------------------------------------------------------------- commands


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"command": "  pytest -q  "}, "pytest -q"),
        ({"cmd": "make"}, "make"),
        ({"commands": ["cd src", "make"]}, "cd src\nmake"),
        ({"command": ["bash", "-lc", "npm test"]}, "npm test"),
        ({"command": ["git", "commit", "-m", "a b"]}, "git commit -m 'a b'"),
        ({"script": "echo hi"}, "echo hi"),
    ],
)
def test_command_text(args: dict[str, Any], expected: str) -> None:
    facts = extract_facts([ai(call("bash", args, "c"))])
    assert facts["commands"] == [
        {"command": expected, "exit_code": None, "ok": None, "message_id": None}
    ]


def test_long_commands_are_clipped() -> None:
    facts = extract_facts([ai(call("bash", {"command": "echo " + "x" * 2000}, "c"))])
    command = facts["commands"][0]["command"]
    assert len(command) == 500
    assert command.endswith("…")


@pytest.mark.parametrize("name", [*sorted(DEFAULT_COMMAND_TOOLS), "Bash", "EXECUTE_BASH"])
def test_default_command_tools(name: str) -> None:
    facts = extract_facts([ai(call(name, {"command": "ls"}, "c"))])
    assert [c["command"] for c in facts["commands"]] == ["ls"]


def test_custom_command_tools() -> None:
    msgs = [
        ai(call("python", {"command": "python x.py"}, "c")),
        result("c", 'Traceback (most recent call last):\n  File "x.py", line 1\nKeyError: 1'),
    ]
    other = [ai(call("runner", {"command": "python x.py"}, "c")), msgs[1]]
    assert extract_facts(other)["commands"] == []
    assert extract_facts(other, command_tools={"runner"})["commands"][0]["ok"] is False
    # a tool named after the program its one command runs (SWE-agent's shape) is a command
    facts = extract_facts(msgs)
    assert facts["commands"][0]["ok"] is False
    assert facts["errors"][0]["lines"][-1] == "KeyError: 1"


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("ok\nexit code 1", 1),
        ("Exit code: 2", 2),
        ("...\nProcess exited with code 3", 3),
        ("[exit_code: 1]", 1),
        ("(no output)\n\nCommand exited with code 1", 1),
        ("returncode: 4", 4),
        ("returncode=5", 5),
        ("<returncode>1</returncode>\n<output>\nx\n</output>", 1),
        ("<returncode>0</returncode>\n<output>\n" + "y\n" * 2000 + "</output>", 0),
        ("go test ./...\nexit status 1", 1),
        ("build failed (exit status 2)", 2),
        ("Command `ls` executed with exit code 0.", 0),
        ("[The command completed with exit code 0.]", 0),
        ("Exit Status: 127", 127),
        ("killed\nexit code -9", -9),
        ("first run: exit code 1\n... retried ...\nexit code 0", 0),  # the trailer wins
        ("no code here", None),
        ("exitCode: 1\nconst exit_code_name = 'x'", None),  # code identifiers are not trailers
        ("x" * 1000 + "\nexit code 1 in the middle\n" + "x" * 1000, None),
    ],
)
def test_exit_code_patterns(output: str, code: int | None) -> None:
    assert run_command(output)["commands"][0]["exit_code"] == code


def test_exit_code_from_structured_fields() -> None:
    facts = run_command("done", artifact={"returncode": 2})
    assert facts["commands"][0]["exit_code"] == 2
    facts = run_command("done", additional_kwargs={"exit_code": 0})
    assert facts["commands"][0]["exit_code"] == 0
    facts = run_command("done", artifact={"returncode": True})  # a bool is not an exit code
    assert facts["commands"][0]["exit_code"] is None


@pytest.mark.parametrize(
    ("output", "status", "ok"),
    [
        ("all good\nexit code 0", "success", True),
        ("all good", "success", None),
        ("all good", "error", False),
        ("exit code 0", "error", True),  # the known exit code decides, not the status
        ("exit code 1", "success", False),
        (
            "Traceback (most recent call last):\n  File 'x'\nValueError: x\nexit code 0",
            "success",
            True,
        ),
        (
            "collected 3 items\nFAILED tests/test_a.py::test_x - assert 1\nexit code 0",
            "success",
            True,
        ),
        ("Error: Cannot find module 'x'", "success", False),
        ("src/a.c:3:5: error: expected ';'", "success", False),
        ("error[E0308]: mismatched types", "success", False),
        ("src/a.ts(3,5): error TS2304: Cannot find name 'x'.", "success", False),
        ("fatal: not a git repository", "success", False),
        ("panic: runtime error: index out of range", "success", False),
        ("npm ERR! code 1", "success", False),
        ("make: *** [Makefile:1: all] Error 2", "success", False),
        ("bash: ponyc: command not found", "success", False),
        ("\nEXECUTION TIMED OUT\n(Open file: x.py)", "success", False),
        ("partial output\nCommand timed out after 30 seconds", "success", False),
        ("setTimeout(() => done(), 100)\nexit code 0", "success", True),
        ("Found 0 errors. Compiled successfully.\nexit code 0", "success", True),
        ("12: raise ValueError('x')\n    throw new Error('y')\nexit code 0", "success", True),
        ("class MyError(Exception):\nexit code 0", "success", True),
    ],
)
def test_ok(output: str, status: str, ok: bool | None) -> None:
    facts = run_command(output, status=status)
    assert facts["commands"][0]["ok"] is ok
    assert bool(facts["errors"]) is (ok is False)


def test_command_without_result_stays_unknown() -> None:
    facts = extract_facts([ai(call("bash", {"command": "sleep 1"}, "c"), msg_id="a1")])
    assert facts["commands"] == [
        {"command": "sleep 1", "exit_code": None, "ok": None, "message_id": "a1"}
    ]
    assert facts["errors"] == []


def test_message_ids_point_at_the_result() -> None:
    facts = run_command("Traceback (most recent call last):\nOSError: x", status="error")
    assert facts["commands"][0]["message_id"] == "t1"
    assert facts["errors"][0]["message_id"] == "t1"
    assert facts["errors"][0]["command"] == "make"


def test_synthetic_placeholder_results_are_not_failures() -> None:
    facts = run_command(
        "[no tool result recorded in source trajectory]",
        status="error",
        additional_kwargs={"synthetic": True},
    )
    assert facts["commands"][0]["ok"] is None
    assert facts["errors"] == []


def test_ansi_colour_codes_do_not_hide_failures() -> None:
    facts = run_command("\x1b[31mError: boom\x1b[0m\n\x1b[1mexit code 1\x1b[0m")
    assert facts["commands"][0]["exit_code"] == 1
    assert facts["errors"][0]["lines"] == ["Error: boom"]


# ---------------------------------------------------------------------------------- errors


def test_traceback_keeps_head_last_frame_and_exception() -> None:
    output = (
        "running\n"
        "Traceback (most recent call last):\n"
        '  File "/w/main.py", line 9, in <module>\n'
        "    main()\n"
        '  File "/w/app.py", line 5, in main\n'
        "    raise SystemExit(lookup())\n"
        "my.pkg.NotFound: the key is missing\n"
        "exit code 1"
    )
    lines = run_command(output)["errors"][0]["lines"]
    assert lines == [
        "Traceback (most recent call last):",
        'File "/w/app.py", line 5, in main',
        "my.pkg.NotFound: the key is missing",
    ]


def test_error_lines_are_capped_and_clipped() -> None:
    output = "\n".join(f"src/f{i}.c:{i}:1: error: bad thing {i} " + "z" * 600 for i in range(30))
    lines = run_command(output)["errors"][0]["lines"]
    assert len(lines) == 8
    assert all(len(line) <= 500 for line in lines)
    assert lines[0].startswith("src/f0.c") and lines[2].startswith("src/f2.c")
    assert lines[3].startswith("src/f25.c") and lines[-1].startswith("src/f29.c")


def test_error_lines_prefer_strong_lines_and_dedupe() -> None:
    output = "warning: failed to cache\nError: disk full\nError: disk full\nexit code 1"
    assert run_command(output)["errors"][0]["lines"] == ["Error: disk full"]


def test_a_line_printed_again_counts_where_it_was_printed_last() -> None:
    """npm prints the compiler's errors, its own wrapper lines, then the errors again: the
    latest error lines are the compiler's, not npm's."""
    ts = [f"src/m.ts({n},4): error TS2345: Argument of type 'A' is not assignable." for n in (5, 9)]
    output = "\n".join([*ts, "npm error code 2", "npm error command failed", *ts, "exit code 2"])
    assert run_command(output)["errors"][0]["lines"][-2:] == ts


def test_error_lines_fall_back_to_the_tail() -> None:
    output = "step 1\nstep 2\n\nstep 3\nsomething went sideways\nexit code 3"
    assert run_command(output)["errors"][0]["lines"] == [
        "step 3",
        "something went sideways",
        "exit code 3",
    ]


def test_a_bare_error_label_keeps_its_message() -> None:
    facts = extract_facts(
        [
            ai(call("str_replace_editor", {"command": "str_replace", "path": "/w/a.c"}, "e1")),
            result("e1", "ERROR:\nNo replacement was performed in /w/a.c.", status="error"),
        ]
    )
    assert facts["errors"] == [
        {
            "command": None,
            "lines": ["ERROR:", "No replacement was performed in /w/a.c."],
            "message_id": None,
        }
    ]
    assert facts["modified_files"] == ["/w/a.c"]  # the attempted edit still counts


def test_successful_non_command_results_are_never_scanned(monkeypatch: pytest.MonkeyPatch) -> None:
    scanned: list[object] = []
    real_text_of = extract_module.text_of

    def spy(content: object) -> str:
        scanned.append(content)
        return real_text_of(content)

    monkeypatch.setattr(extract_module, "text_of", spy)
    huge = "Traceback (most recent call last):\nValueError: x\n" * 50_000
    facts = extract_facts(
        [ai(call("read", {"path": "a.py"}, "r1")), result("r1", huge), result("orphan", huge)]
    )
    assert scanned == []
    assert facts["errors"] == []
    run_command("exit code 0")
    assert len(scanned) == 1


def test_list_of_blocks_tool_content() -> None:
    content = [
        {"type": "text", "text": "Traceback (most recent call last):"},
        {"type": "image", "url": "https://example.invalid/x.png"},
        "KeyError: 'x'",
        {"type": "text", "text": "exit code 1"},
    ]
    facts = run_command(content)
    assert facts["commands"][0]["exit_code"] == 1
    assert facts["errors"][0]["lines"] == ["Traceback (most recent call last):", "KeyError: 'x'"]


def test_non_command_tool_error_status_gives_an_error_without_command() -> None:
    facts = extract_facts(
        [
            ai(call("read", {"path": "missing.py"}, "r1")),
            result("r1", "ENOENT: no such file or directory, open 'missing.py'", status="error"),
        ]
    )
    assert facts["read_files"] == ["missing.py"]  # the attempted read still counts
    assert facts["commands"] == []
    assert facts["errors"][0]["command"] is None


# ---------------------------------------------------------------------------------- pairing


def test_parallel_calls_are_matched_by_id_in_any_order() -> None:
    facts = extract_facts(
        [
            ai(
                call("bash", {"command": "make a"}, "c1"),
                call("read", {"path": "x.py"}, "c2"),
                call("bash", {"command": "make b"}, "c3"),
                msg_id="a1",
            ),
            result("c3", "Error: b broke\nexit code 2", msg_id="t3"),
            result("c2", "contents", msg_id="t2"),
            result("c1", "exit code 0", msg_id="t1"),
        ]
    )
    assert facts["commands"] == [
        {"command": "make a", "exit_code": 0, "ok": True, "message_id": "t1"},
        {"command": "make b", "exit_code": 2, "ok": False, "message_id": "t3"},
    ]
    assert facts["errors"] == [
        {"command": "make b", "lines": ["Error: b broke"], "message_id": "t3"}
    ]


def test_results_whose_call_is_absent() -> None:
    facts = extract_facts(
        [
            result("gone1", "whatever", status="error", msg_id="t1"),
            result("gone2", "Traceback (most recent call last):\nKeyError: 1", name="bash"),
            result("gone3", "Traceback (most recent call last):\nKeyError: 1", name="read"),
            result("gone4", "fine", name="bash"),
        ]
    )
    assert facts["commands"] == []
    assert [(e["command"], e["message_id"]) for e in facts["errors"]] == [
        (None, "t1"),
        (None, None),
    ]


# ---------------------------------------------------------------------------------- caps & merge


def test_extract_keeps_the_most_recent_commands_and_errors() -> None:
    messages: list[BaseMessage] = []
    for i in range(30):
        messages.append(ai(call("bash", {"command": f"run {i}"}, f"c{i}")))
        messages.append(result(f"c{i}", f"Error: {i}\nexit code 1"))
    facts = extract_facts(messages)
    assert [c["command"] for c in facts["commands"]] == [f"run {i}" for i in range(10, 30)]
    assert [e["command"] for e in facts["errors"]] == [f"run {i}" for i in range(25, 30)]
    assert len(facts["commands"]) == DEFAULT_MAX_COMMANDS
    assert len(facts["errors"]) == DEFAULT_MAX_ERRORS
    small = extract_facts(messages, max_commands=2, max_errors=0)
    assert [c["command"] for c in small["commands"]] == ["run 28", "run 29"]
    assert small["errors"] == []


def _facts(read: list[str], modified: list[str], commands: list[str], errors: list[str]) -> Facts:
    return Facts(
        read_files=read,
        modified_files=modified,
        commands=[{"command": c, "exit_code": 0, "ok": True, "message_id": c} for c in commands],
        errors=[{"command": e, "lines": [e], "message_id": e} for e in errors],
    )


def test_merge_is_a_union_with_caps() -> None:
    a = _facts(["a", "b"], ["b"], [f"a{i}" for i in range(15)], ["ea1", "ea2", "ea3"])
    b = _facts(["c", "a"], ["d", "b"], [f"b{i}" for i in range(15)], ["eb1", "eb2", "eb3"])
    merged = merge_facts(a, b)
    assert merged["read_files"] == ["b", "c", "a"]  # by latest read: a was read again in b
    assert merged["modified_files"] == ["b", "d"]
    assert [c["command"] for c in merged["commands"]] == [f"a{i}" for i in range(10, 15)] + [
        f"b{i}" for i in range(15)
    ]
    assert [e["command"] for e in merged["errors"]] == ["ea2", "ea3", "eb1", "eb2", "eb3"]
    small = merge_facts(a, b, max_commands=1, max_errors=0)
    assert [c["command"] for c in small["commands"]] == ["b14"]
    assert small["errors"] == []


def test_merge_copies_and_tolerates_missing_keys() -> None:
    a = _facts(["a"], [], ["x"], ["e"])
    merged = merge_facts(a, {"read_files": ["z"]})  # type: ignore[typeddict-item]
    merged["read_files"].append("new")
    merged["commands"][0]["ok"] = False
    merged["errors"][0]["lines"].append("more")
    assert a == _facts(["a"], [], ["x"], ["e"])
    assert merge_facts() == empty_facts()
    assert merge_facts(a) == a


def test_facts_are_plain_json() -> None:
    facts = extract_facts(
        [
            ai(call("read", {"path": "a.py"}, "r"), call("bash", {"command": "make"}, "c")),
            result("r", "x"),
            result("c", "Error: nope\nexit code 2"),
        ]
    )
    assert json.loads(json.dumps(facts)) == facts
    assert merge_facts(facts, facts) == {
        **facts,
        "commands": facts["commands"] * 2,
        "errors": facts["errors"] * 2,
    }


# ---------------------------------------------------------------------------------- properties

_PATHS = st.sampled_from(["a.py", "./b.py", "src/c.py", " d.md ", "", "e/f.txt"])
_CALLS = st.tuples(st.sampled_from(["read", "write", "edit", "view", "ls", "bash"]), _PATHS)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_CALLS, min_size=1, max_size=3), max_size=12), st.integers(0, 12))
def test_extract_then_merge_equals_extract_of_the_whole(
    turns: list[list[tuple[str, str]]], cut: int
) -> None:
    messages: list[BaseMessage] = []
    for t, calls in enumerate(turns):
        messages.append(
            ai(
                *[
                    call(name, {"path": p, "command": p}, f"{t}-{i}")
                    for i, (name, p) in enumerate(calls)
                ]
            )
        )
        messages.extend(result(f"{t}-{i}", "exit code 0") for i in range(len(calls)))
    cut = min(cut, len(turns))
    index = sum(1 + len(calls) for calls in turns[:cut])
    whole = extract_facts(messages)
    parts = merge_facts(extract_facts(messages[:index]), extract_facts(messages[index:]))
    assert parts == whole
    for key in ("read_files", "modified_files"):
        paths = whole[key]
        assert len(set(paths)) == len(paths)
        assert all(p and p == p.strip() and not p.startswith("./") for p in paths)
    assert merge_facts(whole, whole)["read_files"] == whole["read_files"]


_ERROR_LINE_PIECES = [
    "Traceback (most recent call last):",
    '  File "src/a.py", line 3, in f',
    "ValueError: bad value",
    "E   AssertionError: assert 1 == 2",
    "FAILED tests/t.py::test_x",
    "Failed to build wheel",
    "PASSED: 3 FAIL: 1",
    "error[E0308]: mismatched types",
    "src/a.c:3:4: error: expected ';'",
    "a.ts(1,2): error TS2322: x",
    "fatal: not a git repository",
    "thread 'main' panicked at src/main.rs:2:5",
    "npm ERR! code 1",
    "make[2]: *** [all] Error 1",
    "sh: foo: command not found",
    "EXECUTION TIMED OUT",
    "src/x.py:1:2: E501 line too long",
    "cat: x: No such file or directory",
    "E: Unable to locate package",
    "E       assert 3 == 4",
    "tests/test_calc.py:5: AssertionError",
    "ERROR:",
    "tests/test_errors.py::test_ok PASSED",
    "İSTANBUL Error",  # lower() changes the length of this line
    "e: lower",
    "ok",
    "",
    "   ",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_ERROR_LINE_PIECES) | st.text(max_size=30), max_size=15))
def test_candidate_lines_include_every_line_an_error_pattern_matches(lines: list[str]) -> None:
    """The fast pre-scan may over-select but never skip a line the regexes would keep."""
    lines = [line for chunk in lines for line in (chunk.splitlines() or [chunk])]
    candidates = set(failures_module._candidate_lines(lines))
    matching = {
        i for i, line in enumerate(lines) if failures_module._ANY_LINE_RE.search(line.rstrip())
    }
    assert matching <= candidates
    assert candidates <= set(range(len(lines)))


# ---------------------------------------------------------------------------------- failing command


def _shell_run(*steps: tuple[str, str]) -> Facts:
    """Run (command, output) pairs through bash calls, in order."""
    messages: list[BaseMessage] = []
    for i, (command, output) in enumerate(steps):
        messages.append(ai(call("bash", {"command": command}, f"c{i}")))
        messages.append(result(f"c{i}", output, msg_id=f"t{i}"))
    return extract_facts(messages)


PYTEST_FAIL = """============================= test session starts ==============================
collected 3 items

tests/test_calc.py .F.                                                   [100%]

=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(1, 2) == 4
E       assert 3 == 4

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 3 == 4
========================= 1 failed, 2 passed in 0.05s ========================="""


@pytest.mark.parametrize(
    ("command", "output", "ok"),
    [
        # a search that matched nothing answers; it does not fail
        ("grep -n console src/theme.ts", "(no output)\n\nCommand exited with code 1", None),
        ("cd /r && rg -n foo src/a.py", "Command exited with code 1", None),
        ("diff a.txt b.txt", "1c1\n< a\n---\n> b\nexit code 1", None),
        ("grep -n x missing.ts", "grep: missing.ts: No such file or directory\nexit code 2", False),
        ("grep -n x a.ts | wc -l", "0\nexit code 1", False),  # wc's exit 1 is a failure
        # file content is not a diagnosis
        ("cat log.txt", "Traceback (most recent call last):\nValueError: x\nexit code 0", True),
        ("sed -n '1,40p' test_x.py", "FAILED = 1\nraise Error('x')", None),
        ("grep -rn 'error:' src", "src/a.c:3: error: old message", None),
        ("cat missing.py", "cat: missing.py: No such file or directory", False),
        # a failing test run fails whatever the exit code of the pipe says
        ("pytest -q 2>&1 | tail -20", PYTEST_FAIL + "\nexit code 0", False),
        ("go test ./... | tail", "--- FAIL: TestAdd (0.00s)\nFAIL\nexit code 0", False),
        (
            "cargo test 2>&1 | tail -3",
            "test result: FAILED. 1 passed; 1 failed\nexit code 0",
            False,
        ),
        ("npm test | cat", "npm ERR! Test failed.\nexit code 0", False),
        # a clean exit 0 is not overruled by shell noise...
        (
            "git pull",
            "fatal: unable to access proxy, retrying\nAlready up to date.\nexit code 0",
            True,
        ),
        ("make", "warning: x\nError: deprecated flag (ignored)\nexit code 0", True),
        # ... unless a pipe or a list may hide the failure
        ("make 2>&1 | tail -5", "Error: cannot find x\nexit code 0", False),
        ("make; echo done", "make: *** [all] Error 2\ndone\nexit code 0", False),
        # the exit code alone
        ("pytest -q", "exit code 1", False),
        ("python run.py", "done\nexit code 0", True),
    ],
)
def test_failing_command_rule(command: str, output: str, ok: bool | None) -> None:
    facts = _shell_run((command, output))
    assert facts["commands"][0]["ok"] is ok
    assert bool(facts["errors"]) is (ok is False)


def test_the_latest_failure_is_the_failing_test_not_later_noise() -> None:
    from langctx.projection import render_facts

    facts = _shell_run(
        ("pytest -q 2>&1 | tail -40", PYTEST_FAIL + "\nexit code 0"),
        ("git status", "warning: LF will be replaced by CRLF in a.py\nOn branch main\nexit code 0"),
        ("grep -rn 'Error' src | head", "src/errors.py:3:class ParseError(Exception):"),
        ("cat build.log", "fatal: error: linker failed\nexit code 0"),
        ("grep -n add src/calc.py", "Command exited with code 1"),
    )
    assert [e["command"] for e in facts["errors"]] == ["pytest -q 2>&1 | tail -40"]
    lines = facts["errors"][-1]["lines"]
    assert "FAILED tests/test_calc.py::test_add - assert 3 == 4" in lines
    assert "E       assert 3 == 4" in lines
    assert any("1 failed, 2 passed" in line for line in lines)
    failure = next(ln for ln in render_facts(facts).splitlines() if "Latest failure" in ln)
    assert "pytest -q" in failure and "test_add" in failure


def test_go_failure_lines_name_the_test() -> None:
    output = "=== RUN   TestAdd\n--- FAIL: TestAdd (0.00s)\n    calc_test.go:9: got 3\nFAIL\nexit status 1"
    facts = _shell_run(("go test ./...", output))
    assert "--- FAIL: TestAdd (0.00s)" in facts["errors"][0]["lines"]


# ---------------------------------------------------------------------------------- bounded merge


def test_read_files_keep_the_most_recent_and_count_the_rest() -> None:
    calls = [call("read", {"path": f"f{i}.py"}, f"r{i}") for i in range(60)]
    facts = extract_facts([ai(*calls)])
    assert facts["read_files"] == [f"f{i}.py" for i in range(10, 60)]
    assert facts["read_files_dropped"] == 10
    small = extract_facts([ai(*calls)], max_read_files=3)
    assert small["read_files"] == ["f57.py", "f58.py", "f59.py"]
    assert small["read_files_dropped"] == 57
    assert "read_files_dropped" not in extract_facts([ai(*calls[:5])])  # optional: 0 is left out
    with pytest.raises(ConfigError):
        extract_facts([], max_read_files=-1)
    with pytest.raises(ConfigError):
        merge_facts(max_read_files=True)


def test_read_paths_are_capped_by_characters_too() -> None:
    long_paths = [f"{'d' * 1000}/{i}.py" for i in range(20)]
    facts = extract_facts([ai(*[call("read", {"path": p}, p) for p in long_paths])])
    assert 1 <= len(facts["read_files"]) <= 8
    assert facts["read_files"][-1] == long_paths[-1]
    assert len(facts["read_files"]) + facts["read_files_dropped"] == 20


def test_a_file_read_again_is_listed_again() -> None:
    old = extract_facts([ai(*[call("read", {"path": f"f{i}.py"}, f"r{i}") for i in range(60)])])
    again = extract_facts([ai(call("read", {"path": "f0.py"}, "x"))])
    merged = merge_facts(old, again)
    assert merged["read_files"][-1] == "f0.py" and len(merged["read_files"]) == 50
    assert merged["read_files_dropped"] == 11  # an upper bound: f0.py was counted once


def test_20000_merges_stay_bounded_and_count_the_earlier_modified_files() -> None:
    facts = empty_facts()
    sizes: list[int] = []
    for turn in range(20_000):
        modified = [f"src/mod_{turn}.py"] if turn % 100 == 0 else []
        batch = Facts(
            read_files=[f"src/pkg_{turn % 97}/file_{turn}.py"],
            modified_files=modified,
            commands=[
                {
                    "command": f"pytest -k t{turn}",
                    "exit_code": 1,
                    "ok": False,
                    "message_id": str(turn),
                }
            ],
            errors=[
                {
                    "command": f"pytest -k t{turn}",
                    "lines": ["E   assert 1 == 2"],
                    "message_id": str(turn),
                }
            ],
        )
        facts = merge_facts(facts, batch)
        if turn % 1000 == 999:
            sizes.append(len(json.dumps(facts)))
    every = [f"src/mod_{t}.py" for t in range(0, 20_000, 100)]
    assert facts["modified_files"] == every[-MAX_MODIFIED_FILES:]  # the most recent, in order
    assert facts["modified_files_dropped"] == len(every) - MAX_MODIFIED_FILES
    assert len(facts["read_files"]) == 50
    assert facts["read_files"][-1] == "src/pkg_19999/file_19999.py".replace(
        "pkg_19999", f"pkg_{19999 % 97}"
    )
    assert facts["read_files_dropped"] == 20_000 - 50
    assert (
        len(facts["commands"]) == DEFAULT_MAX_COMMANDS
        and len(facts["errors"]) == DEFAULT_MAX_ERRORS
    )
    # nothing accumulates: the size stops growing once the modified files reach their bound
    read_part = len(json.dumps(facts["read_files"]))
    assert read_part < 2_500
    assert max(sizes[-8:]) - min(sizes[-8:]) <= 50 * 2 + 10  # longer numbers only
    assert sizes[-1] < 8_000, sizes


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=8),
    st.integers(1, 10),
)
def test_capped_merge_lists_the_tail_of_the_uncapped_one(parts: list[list[int]], cap: int) -> None:
    batches = [
        extract_facts(
            [ai(*[call("read", {"path": f"f{i}.py"}, f"{j}-{k}") for k, i in enumerate(p)])],
            max_read_files=cap,
        )
        for j, p in enumerate(parts)
    ]
    capped = merge_facts(*batches, max_read_files=cap)
    whole = [f"f{i}.py" for p in parts for i in p]
    latest = list(dict.fromkeys(reversed(whole)))[::-1]  # by latest read
    assert capped["read_files"] == latest[-cap:]
    assert capped.get("read_files_dropped", 0) >= len(latest) - len(capped["read_files"])


def test_an_error_status_that_mirrors_a_search_without_match_is_no_failure() -> None:
    facts = run_command(
        "(no output)\n\nCommand exited with code 1", status="error", command="grep -n x a.py"
    )
    assert facts["commands"][0]["ok"] is None and facts["errors"] == []
    facts = run_command("Command exited with code 1", status="error", command="make")
    assert facts["commands"][0]["ok"] is False
