"""The examples of `langctx.paths`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.paths import join_paths, split_paths


def test_join_paths() -> None:
    assert join_paths(["/w/src/a.py", "tests/t.py", "/w/src/a.py"]) == "/w/src/a.py, tests/t.py"
    assert join_paths(["ok.py", "odd, name.py"]) == 'ok.py, "odd, name.py"'


def test_split_paths() -> None:
    assert split_paths('/w/src/a.py, "odd, name.py", t.py') == [
        "/w/src/a.py",
        "odd, name.py",
        "t.py",
    ]
    assert split_paths("") == []
