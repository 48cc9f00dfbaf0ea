"""The demo's tools cannot read or write outside the project: escape attempts, each refused.

``run_command`` ran ``shell=True`` with only a working directory once, so it read and wrote
anywhere (and a real model got that shell with ``OPENAI_API_KEY`` set).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from langctx.cli.demo.sandbox import make_sandbox
from langctx.cli.demo.tools import make_tools


@pytest.fixture
def world(tmp_path: Path) -> tuple[dict, Path, Path]:
    project = tmp_path / "project"
    make_sandbox(project)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET", encoding="utf-8")
    (project / "link").symlink_to(secret)
    tools = {t.name: t for t in make_tools(project)}
    return tools, project, secret


def run(tools: dict, command: str) -> str:
    return str(tools["run_command"].invoke({"command": command}))


def script(project: Path, name: str, code: str) -> str:
    (project / name).write_text(code, encoding="utf-8")
    return f"python {name}"


SHELL_ESCAPES = [
    "cat ../secret.txt",
    "cat /etc/passwd",
    "cat link",
    "head -n 1 ../secret.txt",
    "grep -r SECRET ..",
    "grep -f ../secret.txt calc/parser.py",
    "ls /",
    "cat calc/parser.py; cat ../secret.txt",
    "cat calc/parser.py && cat ../secret.txt",
    "cat $HOME/.bashrc",
    "sh -c 'cat ../secret.txt'",
    "bash -c id",
    "env",
    "python -c \"print(open('../secret.txt').read())\"",
    "python -m http.server",
    "python ../outside.py",
    "echo hi > ../pwned.txt",
]


@pytest.mark.parametrize("command", SHELL_ESCAPES)
def test_commands_cannot_reach_outside_the_project(world: tuple, command: str) -> None:
    tools, project, _ = world
    out = run(tools, command)
    assert "TOP SECRET" not in out and "root:" not in out
    assert not (project.parent / "pwned.txt").exists()


SCRIPT_ESCAPES = {
    "read": "print(open(%r).read())",
    "write": "open(%r + '.pwned', 'w').write('x')",
    "listdir": "import os; print(os.listdir(os.path.dirname(%r)))",
    "remove": "import os; os.remove(%r)",
    "rename": "import os; os.rename(%r, 'stolen.txt')",
    "subprocess": "import subprocess; print(subprocess.run(['cat', %r], capture_output=True).stdout)",
    "os.system": "import os; os.system('cat ' + %r)",
    "fork": "import os; os.fork() or print(open(%r).read())",
    "ctypes": "import ctypes; print(%r)",
    "socket": "import socket; socket.create_connection(('127.0.0.1', 5432)); print(%r)",
    "pathlib": "import pathlib; print(pathlib.Path(%r).read_text())",
    "symlink": "import os; os.symlink(%r, 'l2'); print(open('l2').read())",
}


@pytest.mark.parametrize("kind", sorted(SCRIPT_ESCAPES))
def test_project_scripts_run_confined_to_the_project(world: tuple, kind: str) -> None:
    tools, project, secret = world
    out = run(tools, script(project, "evil.py", SCRIPT_ESCAPES[kind] % str(secret)))
    assert "TOP SECRET" not in out, out
    assert "PermissionError" in out or "sandbox" in out, out
    assert secret.read_text(encoding="utf-8") == "TOP SECRET"
    assert not Path(str(secret) + ".pwned").exists()


def test_what_the_demo_needs_still_works(world: tuple) -> None:
    tools, project, _ = world
    assert "[exit code:" in run(tools, "python run_tests.py")
    assert "def " in run(tools, "grep -n def calc/parser.py")
    assert run(tools, "head -n 1 data/orders.csv").strip()
    out = run(
        tools,
        script(
            project,
            "ok.py",
            "import json, pathlib\nprint(json.dumps(sorted(p.name for p in pathlib.Path('.').iterdir()))[:40])\nopen('note.txt', 'w').write('inside')",
        ),
    )
    assert "[exit code: 0]" in out and (project / "note.txt").read_text() == "inside"


def test_outputs_name_project_paths_relative_to_its_root(world: tuple) -> None:
    """The absolute temp path entered tool outputs, so two demo runs counted different tokens."""
    tools, project, _ = world
    out = run(tools, script(project, "boom.py", "raise SystemExit(open('missing.txt').read())"))
    assert str(project) not in out
