"""Run a project script in a Python confined to the project (the demo's ``python`` command).

``python -I confine.py ROOT SCRIPT [ARGS...]`` (this file) installs an audit hook
(:pep:`578`; it cannot be removed once installed) and then runs ``SCRIPT``. The hook refuses:

- opening, listing, creating, changing or removing a path outside ``ROOT`` (symlinks resolved),
  except reading the Python installation the script runs on (its standard library and packages);
- starting processes (``subprocess``, ``os.system``, ``exec``, ``spawn``, ``fork``), opening
  network sockets and loading native code (``ctypes``), and importing the private modules that
  would do those without an audit event (``_posixsubprocess``, ``_ctypes``).

A refused operation raises ``PermissionError`` in the script. This confines well-behaved and
curious code alike; it is a guard for a demo, not an operating-system sandbox.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["confine", "main"]

_NO_PROCESS = frozenset(
    {
        "subprocess.Popen",
        "os.system",
        "os.exec",
        "os.posix_spawn",
        "os.spawn",
        "os.fork",
        "os.forkpty",
        "os.startfile",
        "pty.spawn",
        "socket.connect",
        "socket.bind",
        "socket.sendto",
        "socket.sendmsg",
        "socket.getaddrinfo",
        "ctypes.dlopen",
        "ctypes.dlsym",
        "ctypes.cdata",
        "os.kill",
        "os.killpg",
    }
)
_FORBIDDEN_MODULES = frozenset({"_posixsubprocess", "_ctypes", "ctypes", "_socket", "socket"})
_PATH_EVENTS = {  # event -> the indices of its path arguments, and whether it writes
    "os.listdir": ((0,), False),
    "os.scandir": ((0,), False),
    "os.chdir": ((0,), False),
    "os.mkdir": ((0,), True),
    "os.rmdir": ((0,), True),
    "os.remove": ((0,), True),
    "os.rename": ((0, 1), True),
    "os.link": ((0, 1), True),
    "os.symlink": ((0, 1), True),
    "os.truncate": ((0,), True),
    "os.chmod": ((0,), True),
    "os.chown": ((0,), True),
    "os.utime": ((0,), True),
    "shutil.rmtree": ((0,), True),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def confine(root: str) -> None:
    """Install the hook: from now on this interpreter works inside ``root`` only."""
    base = os.path.realpath(root)
    readable = [base] + [
        os.path.realpath(p)
        for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, *sys.path}
        if p and os.path.isabs(p) and not _inside(os.path.realpath(p), base)
    ]

    def check(path: Any, writing: bool) -> None:
        if path is None or isinstance(path, int):
            return  # an open file descriptor: it was checked when it was opened
        real = os.path.realpath(os.fsdecode(path))
        if _inside(real, base) or (not writing and any(_inside(real, r) for r in readable)):
            return
        msg = f"sandbox: {os.fsdecode(path)!r} is outside the project"
        raise PermissionError(msg)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            writing = bool(mode and any(c in str(mode) for c in "wax+")) or bool(
                (flags or 0) & _WRITE_FLAGS
            )
            check(path, writing)
        elif event in _NO_PROCESS:
            msg = f"sandbox: {event} is not allowed"
            raise PermissionError(msg)
        elif event == "import" and args[0] in _FORBIDDEN_MODULES:
            msg = f"sandbox: importing {args[0]} is not allowed"
            raise PermissionError(msg)
        elif event in _PATH_EVENTS:
            where, writing = _PATH_EVENTS[event]
            for i in where:
                if i < len(args):
                    check(args[i], writing)

    sys.dont_write_bytecode = True
    sys.addaudithook(hook)


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def main(argv: Sequence[str] | None = None) -> None:
    """``ROOT SCRIPT [ARGS...]``: run ``SCRIPT`` (inside ``ROOT``) confined to ``ROOT``."""
    root, script, *args = list(sys.argv[1:] if argv is None else argv)
    os.chdir(root)
    confine(root)
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.realpath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
