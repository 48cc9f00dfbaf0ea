"""detect_kind: each content kind, from hints and from content alone."""

from __future__ import annotations

from typing import Any

import pytest

from langctx.context_mode import detect_kind
from langctx.context_mode.config import ContextModeConfig
from langctx.context_mode.detect import is_command_call, is_read_call, output_path
from langctx.errors import ConfigError
from langctx.facts import DEFAULT_COMMAND_TOOLS
from tests.unit_tests.context_mode import samples as s

CASES: list[tuple[str, str, str | None, dict[str, Any] | None]] = [
    # (sample, expected kind, tool name, args)
    ("PYTEST_FAILURE", "log", "bash", {"command": "pytest -q"}),
    ("TSC_ERRORS", "log", "execute_bash", {"command": "npx tsc --noEmit"}),
    ("PYTHON_TRACE", "stack_trace", None, None),
    ("JS_TRACE", "stack_trace", None, None),
    ("JAVA_TRACE", "stack_trace", None, None),
    ("GO_PANIC", "stack_trace", None, None),
    ("RUST_PANIC", "stack_trace", None, None),
    ("HTML_PAGE", "html", "browse_page", {"url": "https://shop.example/checkout"}),
    ("A11Y_SNAPSHOT", "html", "browser_snapshot", {}),
    ("CSV_TABLE", "table", "query_db", {"sql": "select * from users"}),
    ("PSQL_RESULT", "table", "bash", {"command": "psql -c 'select * from jobs'"}),
    ("MARKDOWN_TABLE", "table", None, None),
    ("JSON_RECORDS", "json", "http_get", {"url": "https://api.example/issues"}),
    ("JSON_OBJECT", "json", None, None),
    ("PYTHON_SOURCE", "source", "read_file", {"path": "pkg/cache.py"}),
    ("TS_SOURCE", "source", "read", {"path": "src/runner.ts"}),
    ("GO_SOURCE", "source", "read", {"file_path": "cmd/server.go"}),
    ("RUST_SOURCE", "source", "view", {"path": "src/store.rs"}),
    ("JAVA_SOURCE", "source", "read_file", {"path": "Service.java"}),
    ("C_SOURCE", "source", "bash", {"command": "cat src/point.c"}),
    ("MARKDOWN_DOC", "source", "read", {"path": "docs/DESIGN.md"}),
    ("SWE_AGENT_LISTING", "source", "open", {"command": "open src/marshmallow/fields.py 1374"}),
    ("CAT_N_LISTING", "source", "str_replace_editor", {"command": "view", "path": "/ws/match.c"}),
]


@pytest.mark.parametrize(("name", "expected", "tool", "args"), CASES, ids=[c[0] for c in CASES])
def test_detects_each_kind_with_the_tool_call(
    name: str, expected: str, tool: str | None, args: dict[str, Any] | None
) -> None:
    assert detect_kind(getattr(s, name), tool_name=tool, args=args) == expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("PYTEST_FAILURE", "log"),
        ("TSC_ERRORS", "log"),
        ("HTML_PAGE", "html"),
        ("A11Y_SNAPSHOT", "html"),
        ("CSV_TABLE", "table"),
        ("PSQL_RESULT", "table"),
        ("JSON_RECORDS", "json"),
        ("TS_SOURCE", "source"),
        ("SWE_AGENT_LISTING", "source"),
        ("CAT_N_LISTING", "source"),
        ("PYTHON_TRACE", "stack_trace"),
    ],
)
def test_detects_from_content_alone(name: str, expected: str) -> None:
    assert detect_kind(getattr(s, name)) == expected


def test_plain_prose_is_text() -> None:
    prose = "The meeting moved to Thursday. Everyone agreed on the plan.\n" * 50
    assert detect_kind(prose) == "text"


def test_a_read_of_a_source_file_wins_over_its_content() -> None:
    # A Python file full of HTML strings is still a source file when it was read as one.
    code = 'PAGE = """<html><body><div><p>x</p></div></body></html>"""\n' * 40
    assert detect_kind(code, tool_name="read", args={"path": "views.py"}) == "source"


def test_a_command_that_prints_a_traceback_among_other_output_is_a_log() -> None:
    out = "building...\n" * 30 + s.PYTHON_TRACE + "done\n"
    assert detect_kind(out, tool_name="bash", args={"command": "make"}) == "log"


def test_malformed_json_is_not_json() -> None:
    assert detect_kind('{"a": 1, "b": [1, 2,') != "json"


def test_json_lines_are_json() -> None:
    lines = "".join(f'{{"ts": {i}, "level": "info", "msg": "m{i}"}}\n' for i in range(30))
    assert detect_kind(lines) == "json"


def test_error_lines_with_commas_are_not_csv() -> None:
    out = "".join(f"src/a.ts({i},5): error TS2304: Cannot find name 'x{i}'.\n" for i in range(40))
    assert detect_kind(out) != "table"


def test_hints() -> None:
    assert output_path("read", {"file_path": "a/b.py"}) == "a/b.py"
    assert output_path("bash", {"command": "open src/x.py 120"}) == "src/x.py"
    assert output_path("bash", {"command": "pytest -q"}) is None
    assert is_read_call("read_file", {})
    assert is_read_call("str_replace_editor", {"command": "view", "path": "a.c"})
    assert not is_read_call("write_file", {"path": "a.py"})
    assert is_command_call("bash", None)
    assert is_command_call("RsaCtfTool.py", {"command": "RsaCtfTool.py --publickey k.pub"})
    assert not is_command_call("read", {"path": "a.py"})


def test_command_tools_are_the_memorys_and_configurable() -> None:
    assert all(is_command_call(name, None) for name in DEFAULT_COMMAND_TOOLS)
    assert not is_command_call("runner", None)
    assert is_command_call("runner", None, command_tools={"runner"})
    log = "step 1 ok\nstep 2 ok\n" * 5
    assert detect_kind(log, tool_name="runner") == "text"
    assert detect_kind(log, tool_name="runner", command_tools={"runner"}) == "log"
    assert ContextModeConfig().command_tools == DEFAULT_COMMAND_TOOLS
    assert ContextModeConfig(command_tools=["runner"]).command_tools == frozenset({"runner"})
    with pytest.raises(ConfigError, match="command_tools"):
        ContextModeConfig(command_tools="runner")  # type: ignore[arg-type]
