"""File and command tools confined to a sandbox directory (for the demo coding agent).

Paths are resolved inside the sandbox; anything outside raises. Commands run with a timeout and
their output is capped; a timeout or a non-zero exit becomes a tool result, not a crash.

Example:
    >>> import tempfile
    >>> tools = {t.name: t for t in make_tools(tempfile.mkdtemp())}
    >>> tools["write_file"].invoke({"path": "a.txt", "content": "hello"})
    'Wrote a.txt (5 characters).'
    >>> tools["read_file"].invoke({"path": "a.txt"})
    'hello'
    >>> tools["run_command"].invoke({"command": "exit 3"})
    '[exit code: 3]'
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from langchain_core.tools import BaseTool, ToolException, tool

__all__ = ["make_tools"]


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
        """Run a shell command in the project root; returns its output and exit code."""
        try:
            proc = subprocess.run(
                command,
                shell=True,
                cwd=base,
                capture_output=True,
                text=True,
                timeout=timeout,
                errors="replace",
            )
        except subprocess.TimeoutExpired:
            return f"[command timed out after {timeout:g} s: {command}]"
        out = (proc.stdout + proc.stderr)[:max_output_chars]
        if "[exit code:" not in out[-40:]:
            out = f"{out.rstrip()}\n[exit code: {proc.returncode}]".lstrip()
        return out

    for t in (read_file, write_file, edit_file, run_command):
        t.handle_tool_error = True
    return [read_file, write_file, edit_file, run_command]
