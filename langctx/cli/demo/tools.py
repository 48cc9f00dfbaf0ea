"""File and command tools confined to a sandbox directory (for the demo coding agent).

Paths are resolved inside the sandbox; anything outside raises. ``run_command`` has no shell: it
runs an argument vector of an allowed program (:data:`ALLOWED_PROGRAMS`) whose file operands are
inside the project; ``python`` runs a project script in an interpreter confined to the project
(:mod:`langctx.cli.demo.confine`). Commands run with a timeout and their output is capped; a
timeout or a non-zero exit becomes a tool result, not a crash.

Example:
    >>> import tempfile
    >>> tools = {t.name: t for t in make_tools(tempfile.mkdtemp())}
    >>> tools["write_file"].invoke({"path": "a.txt", "content": "hello"})
    'Wrote a.txt (5 characters).'
    >>> tools["read_file"].invoke({"path": "a.txt"})
    'hello'
    >>> print(tools["run_command"].invoke({"command": "ls"}))
    a.txt
    [exit code: 0]
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from langchain_core.tools import BaseTool, ToolException, tool

__all__ = ["ALLOWED_PROGRAMS", "command_argv", "make_tools"]

ALLOWED_PROGRAMS = ("python", "python3", "cat", "head", "tail", "grep", "ls", "wc")
"""What ``run_command`` runs; ``python`` runs a project script under :mod:`confine`."""

_REFUSED_OPTIONS = ("-f", "--file", "-R", "--dereference-recursive", "--include", "--exclude")
"""grep options that would read a file named inside an option or follow symlinks out."""

_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "0"}


_CONFINE = str(Path(__file__).with_name("confine.py"))
"""Run as a file (stdlib only), so a project script does not wait for langctx's imports."""


def command_argv(command: str, root: Path) -> list[str]:
    """The argument vector ``run_command`` executes for ``command``, or ToolException.

    Example:
        >>> import tempfile
        >>> root = Path(tempfile.mkdtemp()).resolve()
        >>> command_argv("grep -n items calc/parser.py", root)[1:]
        ['-n', 'items', 'calc/parser.py']
        >>> command_argv("cat /etc/passwd", root)
        Traceback (most recent call last):
        ...
        langchain_core.tools.base.ToolException: '/etc/passwd' is outside the project; run_command only reads project files (paths relative to the project root).
    """
    try:
        words = shlex.split(command)
    except ValueError as exc:
        msg = f"cannot parse the command ({exc}); quote arguments with ' or \"."
        raise ToolException(msg) from exc
    if not words:
        msg = "empty command; e.g. `python run_tests.py`."
        raise ToolException(msg)
    program, args = words[0], words[1:]
    if program not in ALLOWED_PROGRAMS:
        msg = (
            f"{program!r} is not available: run_command runs {', '.join(ALLOWED_PROGRAMS)} "
            "(no shell: no pipes, redirections, ; or &&)."
        )
        raise ToolException(msg)
    for arg in args:
        if arg.split("=", 1)[0] in _REFUSED_OPTIONS:
            msg = f"option {arg!r} is not allowed in the sandbox."
            raise ToolException(msg)
        if not arg.startswith("-") and not _inside(root, arg):
            msg = (
                f"{arg!r} is outside the project; run_command only reads project files (paths "
                "relative to the project root)."
            )
            raise ToolException(msg)
    if program in ("python", "python3"):
        if not args or args[0].startswith("-") or not (root / args[0]).is_file():
            msg = "python runs a script of the project: `python SCRIPT [ARGS]` (no -c or -m)."
            raise ToolException(msg)
        return [sys.executable, "-I", _CONFINE, str(root), *args]  # a file: no package import
    found = shutil.which(program)
    if found is None:
        msg = f"{program!r} is not installed on this machine."
        raise ToolException(msg)
    return [found, *args]


def _inside(root: Path, arg: str) -> bool:
    target = (root / arg).resolve()
    return target == root or root in target.parents


def make_tools(
    root: str | Path, *, timeout: float = 30.0, max_output_chars: int = 400_000
) -> list[BaseTool]:
    """read_file, write_file, edit_file and run_command, working inside ``root``."""
    base = Path(root).resolve()

    def inside(path: str) -> Path:
        target = (base / path).resolve()
        if target != base and base not in target.parents:
            msg = f"{path!r} is outside the sandbox; use a path relative to the project root."
            raise ToolException(msg)
        return target

    @tool
    def read_file(path: str) -> str:
        """Read a text file of the project (path relative to the project root)."""
        target = inside(path)
        if not target.is_file():
            msg = f"no such file: {path}"
            raise ToolException(msg)
        return target.read_text(encoding="utf-8", errors="replace")[:max_output_chars]

    @tool
    def write_file(path: str, content: str) -> str:
        """Create or overwrite a text file of the project."""
        target = inside(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
        return f"Wrote {path} ({len(content)} characters)."

    @tool
    def edit_file(path: str, old: str, new: str) -> str:
        """Replace the exact text `old` with `new` in a file (`old` must occur exactly once)."""
        target = inside(path)
        text = target.read_text(encoding="utf-8") if target.is_file() else ""
        count = text.count(old)
        if count != 1:
            msg = f"`old` occurs {count} times in {path}; it must occur exactly once."
            raise ToolException(msg)
        target.write_text(text.replace(old, new), encoding="utf-8")
        return f"Edited {path}: 1 replacement."

    @tool
    def run_command(command: str) -> str:
        """Run a command in the project root: `python SCRIPT [ARGS]` (a script of the project) or
        `cat`, `head`, `tail`, `grep`, `ls`, `wc` on project files. No shell: no pipes,
        redirections or variables. Returns the output and the exit code."""
        argv = command_argv(command, base)
        try:
            proc = subprocess.run(
                argv,
                cwd=base,
                capture_output=True,
                text=True,
                timeout=timeout,
                errors="replace",
                env=_ENV,
            )
        except subprocess.TimeoutExpired:
            return f"[command timed out after {timeout:g} s: {command}]"
        out = (proc.stdout + proc.stderr).replace(f"{base}{os.sep}", "").replace(str(base), ".")
        out = out[:max_output_chars]
        if "[exit code:" not in out[-40:]:
            out = f"{out.rstrip()}\n[exit code: {proc.returncode}]".lstrip()
        return out

    for t in (read_file, write_file, edit_file, run_command):
        t.handle_tool_error = True
    return [read_file, write_file, edit_file, run_command]
