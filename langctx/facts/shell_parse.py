"""Files a shell command reads and modifies, from the shell's own words (pure; never raises)."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import dropwhile

from langctx.facts.shell_programs import (
    HANDLERS,
    INSPECTORS,
    WRAPPERS,
    git_subcommand,
    writes_anyway,
)
from langctx.facts.shell_words import (
    ASSIGNMENT_RE,
    Lexer,
    Redir,
    SimpleCommand,
    Word,
    split_commands,
)

MAX_COMMAND_CHARS = 200_000
"""Longer command texts are parsed up to this many characters (bounded work)."""
_MAX_DEPTH = 4  # nesting of ``bash -c``, ``$(...)`` and shell heredocs still parsed


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """What :func:`parse_command` found in one command text."""

    read: tuple[str, ...]  # files read, unique, in order
    modified: tuple[str, ...]  # files created, changed, moved or deleted, unique, in order
    programs: tuple[str, ...]  # the program of every simple command (``git <subcommand>``)
    inspects_only: bool  # every program only reads or lists: its output is file content
    status_program: str | None  # the last program run at the top level: its status is the exit
    status_masked: bool  # a failure before the last part may not reach the exit status (``|``)


_UNKNOWN = "\x00unknown-cwd"  # the directory after a ``cd`` we cannot follow (``cd $X``)
_SKIP_WHOLE = frozenset({"for", "case", "select", "function"})
_MASKING = frozenset({"|", "|&", ";", "\n", "&", "||", ";;"})
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})  # their ``-c`` scripts are parsed too


class _Walk:
    def __init__(self, resolve: bool) -> None:
        self.resolve = resolve
        self.read: dict[str, None] = {}
        self.modified: dict[str, None] = {}
        self.programs: list[str] = []
        self.inspects_only = True

    def _path(self, path: str, cwd: str | None) -> str:
        if not self.resolve or cwd is None or cwd == _UNKNOWN or path.startswith(("/", "~")):
            return path
        return posixpath.normpath(posixpath.join(cwd, path))

    def script(self, text: str, cwd: str | None, depth: int) -> tuple[str | None, bool]:
        """Walk one script; return (the status program, whether its status is masked)."""
        lexer = Lexer(text)
        status_program: str | None = None
        masked = pending_mask = after_group = False
        stack: list[str | None] = []
        for simple, op in split_commands(lexer.run()):
            if op == "(":
                stack.append(cwd)
                continue
            content = bool(simple.words or simple.redirs)
            masked = masked or (content and pending_mask)
            program, cwd, inner_masked = self.simple(simple, cwd, depth)
            if program is not None:
                status_program = program
                masked = masked or inner_masked
            if op == ")":
                cwd = stack.pop() if stack else cwd
                after_group = True
                continue
            if op in _MASKING and (content or after_group):
                pending_mask = True
            after_group = False
        if depth < _MAX_DEPTH:
            for sub in lexer.subs:
                self.script(sub, cwd, depth + 1)
        return status_program, masked

    def simple(
        self, simple: SimpleCommand, cwd: str | None, depth: int
    ) -> tuple[str | None, str | None, bool]:
        """Record one simple command: (its status program, the directory after it, masked)."""
        words = _unwrap(list(dropwhile(lambda w: ASSIGNMENT_RE.match(w.value), simple.words)))
        if words and words[0].value in _SKIP_WHOLE:
            return None, cwd, False
        bodies = [r.body for r in simple.redirs if r.body is not None]
        self._redirects(simple.redirs, cwd)
        if not words:
            return None, cwd, False
        name = _program_name(words[0])
        args = words[1:]
        sub, _, git_dirs = git_subcommand(args) if name == "git" else (None, [], [])
        label = f"git {sub}" if sub else name  # git is listed as ``git <subcommand>``
        self.programs.append(label)
        if name in ("cd", "pushd"):
            return label, _cd(args, cwd), False
        if name == "popd":
            return label, _UNKNOWN, False
        if name in SHELLS:
            return self._shell(label, args, bodies, cwd, depth)
        for directory in git_dirs:
            cwd = _cd([directory], cwd)
        handler = HANDLERS.get(name)
        read, modified = handler(args, bodies, self.resolve) if handler is not None else ([], [])
        if modified or label not in INSPECTORS or writes_anyway(name, args):
            self.inspects_only = False
        self.read.update(dict.fromkeys(self._path(path, cwd) for path in read))
        self.modified.update(dict.fromkeys(self._path(path, cwd) for path in modified))
        return label, cwd, False

    def _shell(
        self, label: str, args: list[Word], bodies: list[str], cwd: str | None, depth: int
    ) -> tuple[str | None, str | None, bool]:
        """``bash -c '...'`` or ``bash <<EOF``: walk the script."""
        script = _shell_script(args)
        status: str | None = label
        masked = False
        if depth < _MAX_DEPTH:
            for text in [script] if script is not None else bodies:  # bash <<EOF ... EOF
                inner, inner_masked = self.script(text, cwd, depth + 1)
                status, masked = inner or status, masked or inner_masked
        return status, cwd, masked

    def _redirects(self, redirs: Sequence[Redir], cwd: str | None) -> None:
        for r in redirs:
            target = r.target.value
            if not r.target.literal or not target or target.startswith("/dev/"):
                continue
            if (r.op in (">", ">>", ">|", "<>") and r.fd in ("", "1", "&")) or (
                r.op == ">&" and r.fd in ("", "1") and not target.isdigit() and target != "-"
            ):
                self.modified.setdefault(self._path(target, cwd), None)
                self.inspects_only = False
            elif r.op == "<" and r.fd in ("", "0"):
                self.read.setdefault(self._path(target, cwd), None)


def _cd(args: Sequence[Word], cwd: str | None) -> str | None:
    """The working directory after ``cd args`` run in ``cwd`` (``None``: the agent's own)."""
    operands = [w for w in args if not (w.value.startswith("-") and len(w.value) > 1)]
    if not operands:
        return _UNKNOWN  # `cd` alone goes home
    target = operands[0]
    value = target.value
    if not target.literal or value in ("-", "") or value.startswith("~"):
        return _UNKNOWN
    if cwd == _UNKNOWN and not value.startswith("/"):
        return _UNKNOWN
    return posixpath.normpath(posixpath.join(cwd or "", value))


def _program_name(first: Word) -> str:
    """The program a command word names: its basename, ``[`` / ``[[``, or ``?`` (not literal)."""
    if first.literal:
        return posixpath.basename(first.value)
    return first.value if first.value in ("[", "[[") else "?"


def _unwrap(words: list[Word]) -> list[Word]:
    """Drop ``sudo``/``env``/``timeout``/... prefixes, their options and assignments."""
    for _ in range(8):
        if not words or not words[0].literal:
            return words
        name = posixpath.basename(words[0].value)
        takes = WRAPPERS.get(name)
        if takes is None:
            return words
        i = 1
        while i < len(words):
            value = words[i].value
            if value == "--":
                i += 1
                break
            if value.startswith("-") and len(value) > 1:
                i += 2 if value[-1] in takes and len(value) == 2 else 1
            elif ASSIGNMENT_RE.match(value):
                i += 1
            else:
                break
        if name == "timeout" and i < len(words):
            i += 1  # the duration
        words = words[i:]
    return words


def _shell_script(args: Sequence[Word]) -> str | None:
    """The script of ``bash -c '...'`` / ``bash -lc "..."`` (None for ``bash script.sh``)."""
    for i, word in enumerate(args):
        value = word.value
        if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
            return args[i + 1].value if i + 1 < len(args) else None
        if not value.startswith("-"):
            return None
    return None


def parse_command(command: str, *, resolve_cd: bool = True) -> ShellCommand:
    """Parse a shell command text into the files it reads and modifies (the rest names none).

    Args:
        resolve_cd: Join relative paths to an earlier ``cd`` and name the files ``mv``/``cp`` put
            into a directory; with ``False`` every path is exactly as written.

    Example:
        >>> cmd = parse_command("cd src && sed -n '1,80p' app.py && sed -i 's/a/b/' u.py > /dev/null")
        >>> cmd.read, cmd.modified
        (('src/app.py',), ('src/u.py',))
    """
    if not isinstance(command, str):
        return ShellCommand((), (), (), True, None, False)
    walk = _Walk(resolve_cd)
    status_program, masked = walk.script(command[:MAX_COMMAND_CHARS], None, 0)
    return ShellCommand(
        read=tuple(walk.read),
        modified=tuple(walk.modified),
        programs=tuple(walk.programs),
        inspects_only=walk.inspects_only and bool(walk.programs),
        status_program=status_program,
        status_masked=masked,
    )
