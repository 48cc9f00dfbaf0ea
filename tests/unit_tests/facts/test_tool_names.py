"""Tool names however spelled: the normaliser, table lookups, and the rule for unknown tools."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, ToolMessage

from langctx.context_mode.detect import is_read_call
from langctx.facts import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    FileToolSpec,
    extract_facts,
    file_tool_spec,
    infer_command_tool,
    infer_file_tool,
    is_command_tool,
    normalize_tool_name,
    tool_name_words,
)
from tests._tool_spellings import SPELLINGS, respell


def call(name: str, args: dict[str, Any], call_id: str = "c1") -> dict[str, Any]:
    return {"id": call_id, "name": name, "args": args}


def facts_of(
    name: str, args: dict[str, Any], **kwargs: Any
) -> tuple[list[str], list[str], list[str]]:
    facts = extract_facts([AIMessage("", tool_calls=[call(name, args)])], **kwargs)
    return facts["read_files"], facts["modified_files"], [c["command"] for c in facts["commands"]]


# ---------------------------------------------------------------------------------- normaliser


@pytest.mark.parametrize(
    ("name", "normal"),
    [
        ("read_file", "read_file"),
        ("mcp__filesystem__write_file", "write_file"),
        ("mcp__shell__run_command", "run_command"),
        ("developer__text_editor", "text_editor"),
        ("developer__shell", "shell"),
        ("functions.read_file", "read_file"),
        ("fs/read", "read"),
        ("default_api:read_file", "read_file"),
        ("readFile", "read_file"),
        ("ReadFile", "read_file"),
        ("fsWrite", "fs_write"),
        ("str-replace-editor", "str_replace_editor"),
        ("executeBash", "execute_bash"),
        ("HTTPRequest", "http_request"),
        ("Read File", "read_file"),
        ("replace_string_in_file", "replace_string_in_file"),
        ("read_file2", "read_file2"),
        ("a__b__", "b"),
        ("", ""),
        ("__", ""),
    ],
)
def test_normalize_tool_name(name: str, normal: str) -> None:
    assert normalize_tool_name(name) == normal
    assert "_".join(tool_name_words(name)) == normal


@pytest.mark.parametrize(
    ("name", "table_name"),
    [
        ("mcp__fs__read_file", "read_file"),
        ("functions.readFile", "read_file"),
        ("ReadFile", "read_file"),
        ("str-replace-editor", "str_replace_editor"),
        ("developer__text_editor", "text_editor"),
        ("mcp__cc__MultiEdit", "multiedit"),  # lower-cased before it is split
        ("fs:Write", "write"),
    ],
)
def test_table_lookup_by_any_spelling(name: str, table_name: str) -> None:
    assert file_tool_spec(name) is DEFAULT_FILE_TOOLS[table_name]


@pytest.mark.parametrize(
    "name",
    ["bash", "Bash", "BASH", "mcp__shell__run_command", "developer__shell", "executeBash",
     "run-terminal-cmd", "functions.shell", "RunInTerminal"],
)  # fmt: skip
def test_command_tool_by_any_spelling(name: str) -> None:
    assert is_command_tool(name)
    assert is_command_tool(name, DEFAULT_COMMAND_TOOLS)


def test_is_command_tool_keeps_its_signature() -> None:
    assert is_command_tool("runner", {"runner"})
    assert is_command_tool("mcp__x__runner", frozenset({"runner"}))
    assert not is_command_tool("bash", {"runner"})
    assert not is_command_tool(None)
    assert not is_command_tool("")
    assert not is_command_tool("read_file")


# ---------------------------------------------------------------------------------- the file rule


@pytest.mark.parametrize(
    ("name", "args", "read", "modified"),
    [
        # unseen agents: read verbs
        ("readSource", {"path": "a.py"}, ["a.py"], []),
        ("fs_read", {"path": "a.py", "mode": "Line"}, ["a.py"], []),
        ("view_image", {"path": "shot.png"}, ["shot.png"], []),
        ("show_file", {"filePath": "a.py"}, ["a.py"], []),
        ("load_notebook", {"notebookPath": "n.ipynb"}, ["n.ipynb"], []),
        ("mcp__serena__read_file", {"relative_path": "src/a.py"}, ["src/a.py"], []),
        # write verbs
        ("fsWrite", {"path": "a.py", "text": "x"}, [], ["a.py"]),
        ("fsAppend", {"path": "a.py", "text": "x"}, [], ["a.py"]),
        ("strReplace", {"path": "a.py", "oldStr": "a", "newStr": "b"}, [], ["a.py"]),
        ("replace_string_in_file", {"filePath": "a.py", "oldString": "a"}, [], ["a.py"]),
        ("insert_edit_into_file", {"filePath": "a.py", "code": "x"}, [], ["a.py"]),
        ("deleteFile", {"targetFile": "a.py"}, [], ["a.py"]),
        ("save_document", {"file_path": "notes.md"}, [], ["notes.md"]),
        ("update_file", {"path": "a.py", "content": "x"}, [], ["a.py"]),
        ("remove-file", {"path": "a.py"}, [], ["a.py"]),
        ("rename_file", {"old_path": "a.py", "new_path": "b.py"}, [], ["a.py", "b.py"]),
        ("moveFile", {"source": "a.py", "destination": "b.py"}, [], ["a.py", "b.py"]),
        ("copy_path", {"source": "a.py", "destination": "b.py"}, [], ["b.py"]),
        ("read_and_write", {"path": "a.py"}, [], ["a.py"]),  # a write verb wins
        # editor-style command argument
        ("file_editor", {"command": "view", "path": "a.py", "view_range": [1, 9]}, ["a.py"], []),
        ("file_editor", {"command": "str_replace", "path": "a.py"}, [], ["a.py"]),
        ("mcp__x__text_edit", {"command": "write", "path": "a.py"}, [], ["a.py"]),
        ("fs_write", {"command": "append", "path": "a.py", "new_str": "x"}, [], ["a.py"]),
        # patches
        (
            "applyPatch",
            {"patch": "*** Begin Patch\n*** Add File: n.py\n+x\n*** End Patch"},
            [],
            ["n.py"],
        ),
        ("apply_changes", {"diff": "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"}, [], ["x.py"]),
        # searches read the one file they name
        ("grep_search", {"pattern": "x", "path": "src/a.py"}, ["src/a.py"], []),
        ("search_files", {"pattern": "x", "path": "src"}, [], []),
        # no path -> no file call
        ("create_issue", {"title": "bug", "body": "read a.py"}, [], []),
        ("update_plan", {"plan": [{"step": "edit a.py"}]}, [], []),
        ("read_url", {"url": "https://x.org/a.py"}, [], []),
        ("search_web", {"query": "a.py"}, [], []),
        ("write_todos", {"todos": ["a"]}, [], []),
        ("editFile", {"path": ""}, [], []),
        ("editFile", {"path": 3}, [], []),
        # directories and web pages are no files; no verb, no file
        ("create_directory", {"path": "src/new"}, [], []),
        ("mcp__fs__list_directory", {"path": "src"}, [], []),
        ("open_browser_page", {"path": "/index.html"}, [], []),
        ("get_file_info", {"path": "a.py"}, [], []),
        ("memory", {"command": "view", "path": "/memories"}, [], []),
        ("unknown_tool", {"path": "a.py"}, [], []),
    ],
)
def test_file_rule(name: str, args: dict[str, Any], read: list[str], modified: list[str]) -> None:
    assert facts_of(name, args)[:2] == (read, modified)


def test_infer_file_tool_returns_none_without_a_path() -> None:
    assert infer_file_tool("write_file", {"content": "x"}) is None
    assert infer_file_tool("", {"path": "a.py"}) is None
    assert infer_file_tool(None, {"path": "a.py"}) is None
    spec = infer_file_tool("mcp__x__readFile", {"filePath": "a.py"})
    assert spec is not None and spec.role == "read"


# ---------------------------------------------------------------------------------- the command rule


@pytest.mark.parametrize(
    ("name", "args", "command"),
    [
        ("mcp__desktop__start_process", {"command": "make test", "timeout_ms": 9}, "make test"),
        ("exec", {"cmd": ["bash", "-lc", "pytest -q"]}, "pytest -q"),
        ("terminalRun", {"commandLine": "ls src"}, "ls src"),
        ("console_exec", {"script": "npm test"}, "npm test"),
        ("shell-exec", {"argv": ["git", "status"]}, "git status"),
        ("mcp__x__Bash", {"command": "ls"}, "ls"),  # the table, by its normalised name
        ("developer__shell", {"command": "cat a.py"}, "cat a.py"),
    ],
)
def test_command_rule(name: str, args: dict[str, Any], command: str) -> None:
    assert facts_of(name, args)[2] == [command]
    assert infer_command_tool(name, args) or is_command_tool(name)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("execute_ipython_cell", {"code": "print(1)"}),  # code is no shell command
        ("SlashCommand", {"command": "/review"}),
        ("execute_sql", {"command": "SELECT 1"}),
        ("run_tests", {"command": "pytest"}),  # no shell word in the name
        ("BashOutput", {"bash_id": "1"}),  # no command argument
        ("KillShell", {"shell_id": "1"}),
        ("shell", {}),
        ("exec", {"command": "   "}),
    ],
)
def test_not_commands(name: str, args: dict[str, Any]) -> None:
    assert facts_of(name, args)[2] == []


def test_swe_agent_text_actions_keep_their_behaviour_in_any_spelling() -> None:
    calls = [
        call("open", {"command": "open src/fields.py 10"}, "1"),
        call("edit", {"command": "edit 1:2\nx\nend_of_edit"}, "2"),
        call("create", {"command": "create repro.py"}, "3"),
        call("submit", {"command": "submit"}, "4"),
        call("find_file", {"command": "find_file a.py"}, "5"),
        call("python", {"command": "python repro.py"}, "6"),
    ]
    base = extract_facts([AIMessage("", tool_calls=calls)])
    assert base["read_files"] == ["src/fields.py"]
    assert base["modified_files"] == ["src/fields.py", "repro.py"]
    assert [c["command"] for c in base["commands"]] == [
        "submit",
        "find_file a.py",
        "python repro.py",
    ]
    for spell in SPELLINGS.values():
        assert extract_facts(respell([AIMessage("", tool_calls=calls)], spell)) == base


def test_a_respelled_shell_result_gets_its_exit_code() -> None:
    messages = [
        AIMessage("", tool_calls=[call("mcp__sh__executeBash", {"command": "make"}, "c1")]),
        ToolMessage("boom\nexit code 2", tool_call_id="c1", name="mcp__sh__executeBash"),
    ]
    facts = extract_facts(messages)
    assert facts["commands"][0]["exit_code"] == 2
    assert facts["errors"]


# ---------------------------------------------------------------------------------- the tables win


def test_user_entries_win_over_the_rule_and_the_defaults() -> None:
    mine = FileToolSpec(role="modified", path_keys=("target",))
    tools = {**DEFAULT_FILE_TOOLS, "read_notes": mine, "mcp__x__read_file": mine}
    assert facts_of("read_notes", {"target": "n.md", "path": "p.md"}, file_tools=tools)[:2] == (
        [],
        ["n.md"],
    )
    assert facts_of("mcp__x__read_file", {"target": "a.py"}, file_tools=tools)[:2] == ([], ["a.py"])
    # a name in the command tools is never inferred to be a file tool
    assert facts_of("runner", {"path": "a.py", "command": "ls"}, command_tools={"runner"}) == (
        [],
        [],
        ["ls"],
    )


def test_a_table_that_replaces_the_defaults_turns_the_rules_off() -> None:
    only = {"peek": FileToolSpec(role="read")}
    assert facts_of("readFile", {"path": "a.py"}, file_tools=only) == ([], [], [])
    assert facts_of("mcp__x__peek", {"path": "a.py"}, file_tools=only)[0] == ["a.py"]
    extended = {**DEFAULT_FILE_TOOLS, **only}
    assert facts_of("readFile", {"path": "a.py"}, file_tools=extended)[0] == ["a.py"]
    assert facts_of("start_process", {"command": "ls"}, command_tools={"runner"})[2] == []
    assert facts_of("start_process", {"command": "ls"}, command_tools=()) == ([], [], [])
    more = DEFAULT_COMMAND_TOOLS | {"runner"}
    assert facts_of("start_process", {"command": "ls"}, command_tools=more)[2] == ["ls"]


def test_detect_reads_use_the_same_words() -> None:
    assert is_read_call("mcp__fs__readFile", None)
    assert is_read_call("functions.ViewFile", None)
    assert not is_read_call("fsWrite", None)


# ---------------------------------------------------------------------------------- property

_TABLE_NAMES = sorted(
    name
    for name in (*DEFAULT_FILE_TOOLS, *DEFAULT_COMMAND_TOOLS)
    if name.replace("_", "").isalpha()
)
_ARGS = st.fixed_dictionaries(
    {},
    optional={
        "path": st.sampled_from(["a.py", "src/b.ts", "/w/c.md", "d"]),
        "file_path": st.sampled_from(["e.py", "f/g.rs"]),
        "command": st.sampled_from(["view", "create", "ls -la", "open h.py", "make test"]),
        "source": st.just("i.py"),
        "destination": st.just("j.py"),
    },
)
_PREFIX = st.tuples(
    st.from_regex(r"[a-z][a-z0-9]{0,7}", fullmatch=True), st.sampled_from(["__", ".", "/", ":"])
).map("".join)


@settings(max_examples=300, deadline=None)
@given(
    name=st.sampled_from(_TABLE_NAMES),
    args=_ARGS,
    spelling=st.sampled_from(sorted(SPELLINGS)),
    prefix=_PREFIX,
)
def test_any_spelling_of_a_known_tool_gives_the_same_facts(
    name: str, args: dict[str, Any], spelling: str, prefix: str
) -> None:
    base = extract_facts([AIMessage("", tool_calls=[call(name, args)])])
    for spelled in (SPELLINGS[spelling](name), prefix + SPELLINGS[spelling](name)):
        assert extract_facts([AIMessage("", tool_calls=[call(spelled, args)])]) == base, spelled
