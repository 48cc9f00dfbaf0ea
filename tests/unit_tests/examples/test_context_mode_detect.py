"""The examples of `langctx.context_mode.detect`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.detect import is_command_call, is_read_call, output_path


def test_output_path() -> None:
    assert output_path("bash", {"command": "cat -n src/app.py"}) == "src/app.py"


def test_is_read_call() -> None:
    assert (is_read_call("functions.ReadFile", None), is_read_call("fsWrite", None)) == (
        True,
        False,
    )
    assert is_read_call("str_replace_editor", {"command": "view", "path": "a.c"}) is True


def test_is_command_call() -> None:
    assert (
        is_command_call("execute_bash", {"command": "pytest -q"}),
        is_command_call("Bash", None),
    ) == (True, True)
