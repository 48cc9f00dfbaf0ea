"""The examples of `langctx.paths`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.paths import common_root, compress_paths, expand_paths, relative_path


def test_common_root() -> None:
    assert common_root(["/r/p/a.py", "/r/p/sub/b.py"]) == "/r/p/"
    assert (common_root(["/r/a.py", "/s/b.py"]), common_root(["/r/a.py", "b.py"])) == ("", "")


def test_relative_path() -> None:
    assert (relative_path("/r/p/a.py", "/r/p/"), relative_path("/x/a.py", "/r/p/")) == (
        "a.py",
        "/x/a.py",
    )


def test_compress_paths() -> None:
    assert (
        compress_paths(["src/a.py", "tests/t.py", "src/b.py"], group=True)
        == "src/: a.py, b.py; tests/t.py"
    )
    assert compress_paths(["odd, name.py", "ok.py"]) == '"odd, name.py"; ok.py'


def test_expand_paths() -> None:
    assert expand_paths("src/: a.py, b.py; t.py", root="/w/") == [
        "/w/src/a.py",
        "/w/src/b.py",
        "/w/t.py",
    ]
