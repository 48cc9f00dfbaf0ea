"""Files a shell command reads and modifies, read from its text (pure; never raises).

:func:`parse_command` splits a command line the way a POSIX shell would (quotes, escapes,
``&&`` / ``||`` / ``;`` / ``|`` / newlines, subshells, ``$(...)``, heredocs, ``bash -lc "..."``
wrappers) and knows the common forms agents use to look at and change files: reads with
``cat``, ``sed -n``, ``head``, ``tail``, ``nl``, ``less``, ``wc``, ``grep`` / ``rg`` with a file,
``awk``, ``diff``, ``<`` input; writes with ``apply_patch`` / ``*** Begin Patch`` heredocs,
``git apply`` / ``patch`` with the diff in the command, ``sed -i``, ``perl -pi``, ``>`` / ``>>``
redirects, ``tee``, ``mv``, ``cp`` (source read, destination modified), ``rm``, ``touch``,
``truncate``, ``git mv`` / ``git rm`` / ``git restore`` / ``git checkout --``. Relative paths are
resolved against a ``cd`` earlier in the same command. What a script does inside an interpreter
(``python - <<EOF ... open("x", "w")``) is out of scope: only the shell's own words are read.

Example:
    >>> cmd = parse_command("cd src && sed -n '1,80p' app.py && sed -i 's/a/b/' util.py > /dev/null")
    >>> cmd.read, cmd.modified
    (('src/app.py',), ('src/util.py',))
    >>> parse_command("grep -rn TODO src | head -5").inspects_only
    True
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

__all__ = [
    "MAX_COMMAND_CHARS",
    "ShellCommand",
    "looks_like_file",
    "parse_command",
    "patch_text_paths",
]

MAX_COMMAND_CHARS = 200_000
"""Longer command texts are parsed up to this many characters (bounded work)."""

_MAX_DEPTH = 4
"""Nesting depth of ``bash -c``, ``$(...)`` and shell heredocs that is still parsed."""


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """What :func:`parse_command` found in one command text."""

    read: tuple[str, ...]
    """Files the command reads, unique, in order."""
    modified: tuple[str, ...]
    """Files it creates, changes, moves or deletes, unique, in order."""
    programs: tuple[str, ...]
    """The program of every simple command, in order (``git`` as ``git <subcommand>``)."""
    inspects_only: bool
    """Every program only reads, searches or lists (``cat``, ``sed -n``, ``grep``, ``ls``,
    ``git diff``...) and nothing is written: its output is file content, not a diagnosis."""
    status_program: str | None
    """The program whose exit status is the command's (the last one run at the top level)."""
    status_masked: bool
    """A failure before the last part may not reach the exit status (``|``, ``;``, ``||``,
    ``&``, a newline)."""


# --------------------------------------------------------------------------------------------
# Patch text
# --------------------------------------------------------------------------------------------

_PATCH_FILE_RE = re.compile(
    r"^\*\*\* (?:Update File|Add File|Delete File|Move to): (.+?)\s*$", re.M
)
_GIT_DIFF_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)


def _diff_header_path(line: str) -> str | None:
    path = line[4:].split("\t", 1)[0].strip()
    if path == "/dev/null" or not path:
        return None
    if path.startswith(("a/", "b/")):
        path = path[2:]
    return path


def patch_text_paths(text: str) -> Iterator[str]:
    """Files named by patch text: Codex ``*** Update File: x`` blocks and unified diffs.

    Example:
        >>> list(patch_text_paths("*** Begin Patch\\n*** Add File: a.py\\n+x\\n*** End Patch"))
        ['a.py']
    """
    if "*** " in text:
        for match in _PATCH_FILE_RE.finditer(text):
            yield match.group(1)
    if "diff --git " in text:
        for match in _GIT_DIFF_RE.finditer(text):
            yield match.group(1)
            yield match.group(2)
    if "+++ " in text:
        # A '--- x' line directly followed by '+++ y' is a file header; a hunk line that only
        # looks like one ('-- comment' removed) is not followed by '+++ '.
        before = ""
        for line in text.splitlines():
            if before.startswith("--- ") and line.startswith("+++ "):
                for path in (_diff_header_path(before), _diff_header_path(line)):
                    if path:
                        yield path
            before = line


# --------------------------------------------------------------------------------------------
# Lexer
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Word:
    value: str
    literal: bool = True
    """No unquoted expansion or glob (``$x``, ``$(...)``, ``*``, ``{a,b}``): a path as written."""


@dataclass(slots=True)
class _Redir:
    op: str
    fd: str
    target: _Word
    body: str | None = None  # heredoc text


@dataclass(slots=True)
class _Op:
    op: str


_Token = _Word | _Redir | _Op

_META = frozenset(" \t\r\n;&|()<>")
_PLAIN_RE = re.compile(r"[^\s'\"\\$`;&|()<>*?\[{]+")
_REDIR_RE = re.compile(r"(\d*|&)(>>|>\||>&|>|<<<|<<-|<<|<>|<&|<)")
_OPS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")


class _Lexer:
    """A forgiving POSIX-ish tokenizer: unbalanced quotes run to the end of the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.subs: list[str] = []  # bodies of $(...), `...`, <(...) to parse on their own
        self.tokens: list[_Token] = []
        self._heredocs: list[tuple[_Redir, str, bool]] = []

    def run(self) -> list[_Token]:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c == "\n":
                self.tokens.append(_Op("\n"))
                self.pos += 1
                self._read_heredocs()
            elif c in " \t\r":
                self.pos += 1
            elif c == "\\" and text.startswith("\\\n", self.pos):
                self.pos += 2
            elif c == "#":
                end = text.find("\n", self.pos)
                self.pos = n if end == -1 else end
            elif text.startswith(("<(", ">("), self.pos):
                self.pos += 1
                self.subs.append(self._balanced("(", ")"))
                self.tokens.append(_Word("", literal=False))
            elif (m := _REDIR_RE.match(text, self.pos)) is not None and self._redir(m):
                pass
            elif (op := next((o for o in _OPS if text.startswith(o, self.pos)), None)) is not None:
                self.tokens.append(_Op(op))
                self.pos += len(op)
            else:
                start = self.pos
                word = self._word()
                if self.pos == start:  # a character no rule takes: skip it
                    self.pos += 1
                else:
                    self.tokens.append(word)
        return self.tokens

    def _redir(self, m: re.Match[str]) -> bool:
        fd, op = m.group(1), m.group(2)
        if fd == "&" and op not in (">", ">>"):
            return False  # `&<` is not a redirection; let `&` be an operator
        self.pos = m.end()
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        if self.pos >= len(self.text) or self.text[self.pos] in "\n;&|()<>":
            target = _Word("", literal=False)
        else:
            target = self._word()
        redir = _Redir(op=op, fd=fd, target=target)
        if op in ("<<", "<<-"):
            self._heredocs.append((redir, target.value, op == "<<-"))
        self.tokens.append(redir)
        return True

    def _read_heredocs(self) -> None:
        text = self.text
        for redir, delimiter, strip_tabs in self._heredocs:
            lines: list[str] = []
            while self.pos < len(text):
                end = text.find("\n", self.pos)
                end = len(text) if end == -1 else end
                line = text[self.pos : end]
                self.pos = end + 1
                check = line.lstrip("\t") if strip_tabs else line
                if check.rstrip() == delimiter:
                    break
                lines.append(line)
            redir.body = "\n".join(lines)
        self._heredocs.clear()
        self.pos = min(self.pos, len(text))

    def _balanced(self, open_: str, close: str) -> str:
        """From just after ``open_``: the text up to the matching ``close`` (quotes respected)."""
        text, n = self.text, len(self.text)
        self.pos += 1
        start, depth = self.pos, 1
        while self.pos < n:
            c = text[self.pos]
            if c == "\\":
                self.pos += 2
                continue
            if c == "'" and open_ != "`":
                end = text.find("'", self.pos + 1)
                self.pos = n if end == -1 else end + 1
                continue
            if c == close and (open_ == close or depth == 1):
                body = text[start : self.pos]
                self.pos += 1
                return body
            if c == close:
                depth -= 1
            elif c == open_:
                depth += 1
            self.pos += 1
        return text[start:]

    def _word(self) -> _Word:
        text, n = self.text, len(self.text)
        parts: list[str] = []
        literal = True
        while self.pos < n:
            m = _PLAIN_RE.match(text, self.pos)
            if m is not None:
                parts.append(m.group())
                self.pos = m.end()
                continue
            c = text[self.pos]
            if c in _META:
                break
            if c == "'":
                end = text.find("'", self.pos + 1)
                end = n if end == -1 else end
                parts.append(text[self.pos + 1 : end])
                self.pos = end + 1
            elif c == '"':
                literal = self._double_quoted(parts) and literal
            elif c == "\\":
                parts.append(text[self.pos + 1 : self.pos + 2])
                self.pos += 2
            elif c == "$" and text.startswith("$(", self.pos):
                self.pos += 1
                body = self._balanced("(", ")")
                self.subs.append(body)
                parts.append(f"$({body})")
                literal = False
            elif c == "`":
                body = self._balanced("`", "`")
                self.subs.append(body)
                parts.append(f"`{body}`")
                literal = False
            else:  # $VAR, ${x}, globs, braces
                parts.append(c)
                self.pos += 1
                literal = False
        self.pos = min(self.pos, n)
        return _Word("".join(parts), literal=literal)

    def _double_quoted(self, parts: list[str]) -> bool:
        """Read a ``"..."`` string into ``parts``; False when it holds an expansion."""
        text, n = self.text, len(self.text)
        self.pos += 1
        literal = True
        while self.pos < n:
            c = text[self.pos]
            if c == '"':
                self.pos += 1
                return literal
            if c == "\\" and self.pos + 1 < n and text[self.pos + 1] in '"\\$`\n':
                if text[self.pos + 1] != "\n":
                    parts.append(text[self.pos + 1])
                self.pos += 2
                continue
            if c == "$" and text.startswith("$(", self.pos):
                self.pos += 1
                body = self._balanced("(", ")")
                self.subs.append(body)
                parts.append(f"$({body})")
                literal = False
                continue
            if c == "`":
                body = self._balanced("`", "`")
                self.subs.append(body)
                parts.append(f"`{body}`")
                literal = False
                continue
            if (
                c == "$"
                and self.pos + 1 < n
                and (text[self.pos + 1].isalnum() or text[self.pos + 1] in "_{@*#?$!-")
            ):
                literal = False
            parts.append(c)
            self.pos += 1
        return literal


# --------------------------------------------------------------------------------------------
# Simple commands
# --------------------------------------------------------------------------------------------

_UNKNOWN = "\x00unknown-cwd"
"""The working directory after a ``cd`` langctx cannot follow (``cd $X``, ``cd -``, ``popd``)."""


@dataclass(slots=True)
class _Simple:
    words: list[_Word] = field(default_factory=list)
    redirs: list[_Redir] = field(default_factory=list)
    cwd: str | None = None


_KEYWORDS = frozenset(("if then elif else do while until ! { } fi done esac time ").split())
_SKIP_WHOLE = frozenset({"for", "case", "select", "function"})
_ASSIGN_RE = re.compile(r"^[A-Za-z_]\w*=")
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})


def _split(tokens: Sequence[_Token]) -> Iterator[tuple[_Simple, str | None, int]]:
    """Yield (simple command, the operator that ends it, subshell depth)."""
    current = _Simple()
    depth = 0
    for token in tokens:
        if isinstance(token, _Op):
            if token.op == "(":
                if current.words or current.redirs:
                    yield current, ";", depth
                    current = _Simple()
                depth += 1
                yield _Simple(), "(", depth
                continue
            if token.op == ")":
                yield current, ")", depth
                depth = max(depth - 1, 0)
                current = _Simple()
                continue
            yield current, token.op, depth
            current = _Simple()
        elif isinstance(token, _Redir):
            current.redirs.append(token)
        else:
            if not current.words and token.value in _KEYWORDS:
                continue
            current.words.append(token)
    yield current, None, depth


# --------------------------------------------------------------------------------------------
# Option parsing
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Args:
    operands: list[_Word]
    flags: set[str]
    values: dict[str, list[str]]


def _parse_args(
    args: Sequence[_Word], short_values: str = "", long_values: Iterable[str] = ()
) -> _Args:
    """Split arguments into flags, option values and operands (``--`` ends the options)."""
    long_set = frozenset(long_values)
    out = _Args(operands=[], flags=set(), values={})
    i = 0
    while i < len(args):
        word = args[i]
        value = word.value
        i += 1
        if value == "--":
            out.operands.extend(args[i:])
            break
        if value.startswith("--") and len(value) > 2:
            name, eq, attached = value[2:].partition("=")
            out.flags.add(name)
            if eq:
                out.values.setdefault(name, []).append(attached)
            elif name in long_set and i < len(args):
                out.values.setdefault(name, []).append(args[i].value)
                i += 1
            continue
        if value.startswith("-") and len(value) > 1 and not value[1].isdigit():
            for j, ch in enumerate(value[1:], start=1):
                out.flags.add(ch)
                if ch in short_values:
                    rest = value[j + 1 :]
                    if rest:
                        out.values.setdefault(ch, []).append(rest)
                    elif i < len(args):
                        out.values.setdefault(ch, []).append(args[i].value)
                        i += 1
                    break
            continue
        if value.startswith("-") and value[1:].isdigit():  # head -20
            continue
        out.operands.append(word)
    return out


_FILE_NAMES = frozenset(
    (
        "Makefile makefile Dockerfile LICENSE README Gemfile Rakefile Procfile Jenkinsfile "
        "Vagrantfile BUILD WORKSPACE Containerfile "
    ).split()
)


_EXTENSION_RE = re.compile(r"[A-Za-z][\w-]{0,11}|\d[A-Za-z]\w{0,10}")
"""An extension: starts with a letter (``py``, ``d.ts``'s ``ts``) or is ``7z``-like, so a
version directory (``ponyc__0.1``) is not taken for a file."""


def looks_like_file(path: str) -> bool:
    """A name with an extension (or a well-known extensionless file name), not a directory.

    Example:
        >>> looks_like_file("src/app.py"), looks_like_file("src"), looks_like_file("Makefile")
        (True, False, True)
    """
    if not path or path.endswith("/"):
        return False
    base = path.rsplit("/", 1)[-1]
    if base in _FILE_NAMES:
        return True
    stem, dot, ext = base.rpartition(".")
    return bool(dot and stem and stem not in (".", "..") and _EXTENSION_RE.fullmatch(ext))


def _paths(words: Iterable[_Word]) -> list[str]:
    return [w.value for w in words if w.literal and w.value and w.value != "-"]


# --------------------------------------------------------------------------------------------
# Program handlers: (args, heredoc bodies) -> (read, modified)
# --------------------------------------------------------------------------------------------

_Found = tuple[list[str], list[str]]
_Handler = Callable[[list[_Word], list[str], bool], _Found]
"""(arguments, heredoc bodies, whether to name the files put into a directory) -> (read,
modified)."""


def _reader(short_values: str = "", long_values: Iterable[str] = ()) -> _Handler:
    def handler(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
        operands = _parse_args(args, short_values, long_values).operands
        return _paths(w for w in operands if not w.value.startswith("+")), []  # less +G

    return handler


def _sed_in_place(args: Sequence[_Word]) -> bool:
    for word in args:
        value = word.value
        if value == "--":
            return False
        if value.startswith("--in-place") or (
            value.startswith("-") and not value.startswith("--") and "i" in value[1:2]
        ):
            return True
    return False


def _writes_anyway(name: str, args: Sequence[_Word]) -> bool:
    """An inspector that writes here (``sed -i`` on a glob, ``find -delete``)."""
    if name in ("sed", "gsed"):
        return _sed_in_place(args)
    if name in ("find", "fd"):
        return any(w.value in ("-delete", "-exec", "-execdir", "-ok", "-x", "-X") for w in args)
    return False


def _sed(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    cleaned: list[_Word] = []
    i = 0
    while i < len(args):
        word = args[i]
        cleaned.append(word)
        i += 1
        # BSD sed: `-i ''` or `-i .bak` -- the suffix is a separate word
        if word.value == "-i" and i + 1 < len(args):
            nxt = args[i].value
            if nxt == "" or re.fullmatch(r"\.[\w.~-]+", nxt):
                i += 1
    parsed = _parse_args(cleaned, "ef", ("expression", "file"))
    in_place = "i" in parsed.flags or "in-place" in parsed.flags
    operands = parsed.operands
    if not (
        "e" in parsed.values
        or "f" in parsed.values
        or "expression" in parsed.flags
        or "file" in parsed.flags
    ):
        operands = operands[1:]  # the script
    paths = _paths(operands)
    return ([], paths) if in_place else (paths, [])


def _perl(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = _parse_args(args, "eEIMml")
    if "i" not in parsed.flags:
        return [], []
    operands = (
        parsed.operands if ("e" in parsed.values or "E" in parsed.values) else parsed.operands[1:]
    )
    return [], _paths(operands)


def _grep(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = _parse_args(
        args,
        "efmABCdD",
        (
            "regexp",
            "file",
            "max-count",
            "after-context",
            "before-context",
            "context",
            "include",
            "exclude",
            "exclude-dir",
            "label",
            "directories",
            "devices",
        ),
    )
    operands = parsed.operands
    if not ({"e", "f"} & parsed.values.keys() or {"regexp", "file"} & parsed.flags):
        operands = operands[1:]  # the pattern
    paths = _paths(operands)
    if parsed.flags & {"r", "R", "recursive", "dereference-recursive"}:
        paths = [p for p in paths if looks_like_file(p)]
    return paths, []


def _rg(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = _parse_args(
        args,
        "efgtTmABCjMEr",
        (
            "regexp",
            "file",
            "glob",
            "iglob",
            "type",
            "type-not",
            "max-count",
            "after-context",
            "before-context",
            "context",
            "threads",
            "max-columns",
            "encoding",
            "sort",
            "sortr",
            "replace",
            "type-add",
            "max-depth",
            "max-filesize",
            "pre",
            "colors",
            "path-separator",
        ),
    )
    if "files" in parsed.flags or "type-list" in parsed.flags:
        return [], []
    operands = parsed.operands
    if not ({"e", "f"} & parsed.values.keys() or {"regexp", "file"} & parsed.flags):
        operands = operands[1:]
    return [p for p in _paths(operands) if looks_like_file(p)], []


def _awk(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = _parse_args(args, "Fvf")
    operands = parsed.operands if "f" in parsed.values else parsed.operands[1:]
    return [p for p in _paths(operands) if not _ASSIGN_RE.match(p)], []


def _jq(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    if any(
        w.value in ("--arg", "--argjson", "--slurpfile", "--rawfile", "--args", "--jsonargs")
        for w in args
    ):
        return [], []
    parsed = _parse_args(args, "fL", ("indent", "from-file"))
    operands = (
        parsed.operands
        if "f" in parsed.values or "from-file" in parsed.flags
        else parsed.operands[1:]
    )
    return _paths(operands), []


def _diff(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = _parse_args(args, "USIxXFL", ("label", "exclude", "from-file", "to-file"))
    if parsed.flags & {"r", "recursive"}:
        return [], []
    return _paths(parsed.operands), []


def _tee(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    return [], _paths(_parse_args(args).operands)


def _touch(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    return [], _paths(_parse_args(args, "drtsA", ("date", "reference", "size")).operands)


def _rm(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = _parse_args(args)
    paths = _paths(parsed.operands)
    if parsed.flags & {"r", "R", "recursive", "d", "dir"}:
        paths = [p for p in paths if looks_like_file(p)]
    return [], paths


def _into(directory: str, source: str) -> str:
    return posixpath.join(directory, posixpath.basename(source.rstrip("/")))


def _move_or_copy(args: list[_Word], *, copy: bool, resolve: bool = True) -> _Found:
    parsed = _parse_args(args, "tSZ", ("target-directory", "suffix", "backup", "context"))
    paths = _paths(parsed.operands)
    if not all(w.literal for w in parsed.operands):
        return [], []  # `mv *.py dir/`: the sources are not paths as written
    target = next(
        iter(parsed.values.get("t", []) + parsed.values.get("target-directory", [])), None
    )
    if target is not None:
        sources, dest, into = paths, target, True
    elif len(paths) >= 2:
        sources, dest = paths[:-1], paths[-1]
        into = len(sources) > 1 or dest.endswith("/") or dest in (".", "..")
    else:
        return [], []
    if into and not resolve:
        return ([], [*sources, dest]) if not copy else (sources, [dest])
    destinations = [_into(dest, s) for s in sources] if into else [dest]
    # a directory moved or copied whole is not a file: keep the pairs that name files
    pairs = [(s, d) for s, d in zip(sources, destinations, strict=False) if looks_like_file(s)]
    if len(destinations) == 1 and len(sources) == 1 and not pairs and looks_like_file(dest):
        pairs = [(sources[0], dest)]
    if copy:
        return [s for s, _ in pairs], [d for _, d in pairs]
    return [], [p for pair in pairs for p in pair]


def _patch_bodies(texts: Iterable[str]) -> list[str]:
    return [p for text in texts for p in patch_text_paths(text)]


def _apply_patch(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    return [], _patch_bodies([*bodies, *(w.value for w in args)])


def _patch(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = _parse_args(args, "pioBdDFrVYzg", ("input", "output", "directory", "strip"))
    read = parsed.values.get("i", []) + parsed.values.get("input", [])
    modified = _patch_bodies(bodies)
    operands = _paths(parsed.operands)
    if operands:
        modified.insert(0, operands[0])  # `patch file.py < fix.diff`
        read.extend(operands[1:2])  # `patch file.py fix.diff`
    return read, modified


def _git(args: list[_Word], bodies: list[str], resolve: bool) -> _Found:
    sub, rest = _git_subcommand(args)
    if sub == "apply":
        parsed = _parse_args(rest, "pC", ("directory", "exclude", "include"))
        read = _paths(parsed.operands)
        if parsed.flags & {"check", "stat", "numstat", "summary"}:
            return read, []
        return read, _patch_bodies(bodies)
    if sub == "mv":
        return _move_or_copy(rest, copy=False, resolve=resolve)
    if sub == "rm":
        parsed = _parse_args(rest)
        if "cached" in parsed.flags:
            return [], []
        return _rm(rest, bodies, resolve)
    if sub == "restore":
        parsed = _parse_args(rest, "s", ("source",))
        if parsed.flags & {"S", "staged"} and not parsed.flags & {"W", "worktree"}:
            return [], []
        return [], [p for p in _paths(parsed.operands) if looks_like_file(p)]
    if sub == "checkout":
        values = [w.value for w in rest]
        if "--" in values:
            return [], [p for p in _paths(rest[values.index("--") + 1 :]) if looks_like_file(p)]
    return [], []


def _git_subcommand(args: Sequence[_Word]) -> tuple[str | None, list[_Word]]:
    i = 0
    while i < len(args):
        value = args[i].value
        if value in ("-C", "-c", "--git-dir", "--work-tree", "--namespace"):
            i += 2
        elif value.startswith("-"):
            i += 1
        else:
            return value, list(args[i + 1 :])
    return None, []


_HANDLERS: dict[str, _Handler] = {
    "cat": _reader(),
    "nl": _reader("bdfhilnsvw"),
    "less": _reader("bhjkoOpPtTxyz#"),
    "more": _reader(),
    "bat": _reader(
        "lrHmp", ("language", "line-range", "highlight-line", "map-syntax", "style", "theme")
    ),
    "batcat": _reader(
        "lrHmp", ("language", "line-range", "highlight-line", "map-syntax", "style", "theme")
    ),
    "head": _reader("nc", ("lines", "bytes")),
    "tail": _reader("ncs", ("lines", "bytes", "sleep-interval", "pid")),
    "wc": _reader(),
    "cmp": _reader("in", ("ignore-initial", "bytes")),
    "diff": _diff,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    "grep": _grep,
    "egrep": _grep,
    "fgrep": _grep,
    "rg": _rg,
    "awk": _awk,
    "gawk": _awk,
    "jq": _jq,
    "tee": _tee,
    "touch": _touch,
    "truncate": _touch,
    "rm": _rm,
    "unlink": _tee,
    "mv": lambda args, bodies, resolve: _move_or_copy(args, copy=False, resolve=resolve),
    "cp": lambda args, bodies, resolve: _move_or_copy(args, copy=True, resolve=resolve),
    "apply_patch": _apply_patch,
    "applypatch": _apply_patch,
    "patch": _patch,
    "git": _git,
}

_INSPECTORS = frozenset(
    (
        "cat nl less more bat batcat head tail wc cmp diff grep egrep fgrep rg ag ack awk "
        "gawk jq ls ll tree find fd pwd cd pushd popd echo printf file stat which type "
        "realpath readlink dirname basename sort uniq cut tr column true du df xxd od hexdump "
        "strings sed "
    ).split()
) | frozenset(
    {
        "git status",
        "git log",
        "git diff",
        "git show",
        "git grep",
        "git blame",
        "git branch",
        "git ls-files",
        "git rev-parse",
        "git remote",
    }
)
"""Programs whose output is what they read or list (``sed`` only without ``-i``)."""

_WRAPPERS: dict[str, str] = {
    "sudo": "ugCDhprt",
    "env": "uCS",
    "nice": "n",
    "nohup": "",
    "command": "",
    "exec": "a",
    "builtin": "",
    "stdbuf": "ioe",
    "ionice": "cnpt",
    "time": "fo",
    "timeout": "sk",
    "xvfb-run": "ase",
}
"""Programs that run the rest of their words as a command (option letters taking a value)."""


# --------------------------------------------------------------------------------------------
# The walk
# --------------------------------------------------------------------------------------------


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
        lexer = _Lexer(text)
        tokens = lexer.run()
        status_program: str | None = None
        masked = pending_mask = after_group = False
        stack: list[str | None] = []
        for simple, op, _level in _split(tokens):
            if op == "(":
                stack.append(cwd)
                continue
            content = bool(simple.words or simple.redirs)
            if content:
                masked = masked or pending_mask
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
        self, simple: _Simple, cwd: str | None, depth: int
    ) -> tuple[str | None, str | None, bool]:
        """Record one simple command: (its status program, the working directory after it,
        whether a script it ran masks a failure)."""
        words = list(simple.words)
        while words and _ASSIGN_RE.match(words[0].value):
            words.pop(0)
        words = _unwrap(words)
        if words and words[0].value in _SKIP_WHOLE:
            return None, cwd, False
        bodies = [r.body for r in simple.redirs if r.body is not None]
        if self._redirects(simple.redirs, cwd):
            self.inspects_only = False
        if not words:
            return None, cwd, False
        first = words[0]
        name = posixpath.basename(first.value) if first.literal else first.value
        if not first.literal and first.value not in ("[", "[["):
            name = "?"
        args = words[1:]
        label = name
        if name == "git":
            sub, _ = _git_subcommand(args)
            label = f"git {sub}" if sub else "git"
        self.programs.append(label)
        if name in ("cd", "pushd"):
            return label, _cd(args, cwd), False
        if name == "popd":
            return label, _UNKNOWN, False
        if name in _SHELLS:
            script = _shell_script(args)
            status: str | None = label
            masked = False
            if depth < _MAX_DEPTH:
                for text in [script] if script is not None else bodies:  # bash <<EOF ... EOF
                    inner, inner_masked = self.script(text, cwd, depth + 1)
                    status, masked = inner or status, masked or inner_masked
            return status, cwd, masked
        if name == "git":
            directory = _git_directory(args)
            if directory is not None:
                cwd = _cd([directory], cwd)
        handler = _HANDLERS.get(name)
        read, modified = handler(args, bodies, self.resolve) if handler is not None else ([], [])
        if modified or label not in _INSPECTORS or _writes_anyway(name, args):
            self.inspects_only = False
        for path in read:
            self.read.setdefault(self._path(path, cwd), None)
        for path in modified:
            self.modified.setdefault(self._path(path, cwd), None)
        return label, cwd, False

    def _redirects(self, redirs: Sequence[_Redir], cwd: str | None) -> bool:
        wrote = False
        for r in redirs:
            target = r.target
            if not target.literal or not target.value or target.value.startswith("/dev/"):
                continue
            if r.op in (">", ">>", ">|", "<>") and r.fd in ("", "1", "&"):
                self.modified.setdefault(self._path(target.value, cwd), None)
                wrote = True
            elif (
                r.op == ">&"
                and r.fd in ("", "1")
                and not target.value.isdigit()
                and target.value != "-"
            ):
                self.modified.setdefault(self._path(target.value, cwd), None)
                wrote = True
            elif r.op == "<" and r.fd in ("", "0"):
                self.read.setdefault(self._path(target.value, cwd), None)
        return wrote


_MASKING = frozenset({"|", "|&", ";", "\n", "&", "||", ";;"})


def _cd(args: Sequence[_Word], cwd: str | None) -> str | None:
    """The working directory after ``cd args`` run in ``cwd`` (``None``: the agent's own)."""
    operands = [w for w in args if not (w.value.startswith("-") and len(w.value) > 1)]
    if not operands:
        return _UNKNOWN  # `cd` alone goes home
    target = operands[0]
    value = target.value
    if not target.literal or value in ("-", "") or value.startswith("~"):
        return _UNKNOWN
    if value.startswith("/"):
        return posixpath.normpath(value)
    if cwd == _UNKNOWN:
        return _UNKNOWN
    return posixpath.normpath(value if cwd is None else posixpath.join(cwd, value))


def _git_directory(args: Sequence[_Word]) -> _Word | None:
    """The ``-C dir`` of a git command line, when it is a literal path."""
    for i, word in enumerate(args[:-1]):
        if word.value == "-C":
            return args[i + 1] if args[i + 1].literal else None
        if not word.value.startswith("-"):
            return None
    return None


def _unwrap(words: list[_Word]) -> list[_Word]:
    """Drop ``sudo``/``env``/``timeout``/... prefixes, their options and assignments."""
    for _ in range(8):
        if not words or not words[0].literal:
            return words
        name = posixpath.basename(words[0].value)
        takes = _WRAPPERS.get(name)
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
            elif _ASSIGN_RE.match(value):
                i += 1
            else:
                break
        if name == "timeout" and i < len(words):
            i += 1  # the duration
        words = words[i:]
    return words


def _shell_script(args: Sequence[_Word]) -> str | None:
    """The script of ``bash -c '...'`` / ``bash -lc "..."`` (None for ``bash script.sh``)."""
    for i, word in enumerate(args):
        value = word.value
        if value.startswith("-") and not value.startswith("--") and "c" in value[1:]:
            return args[i + 1].value if i + 1 < len(args) else None
        if not value.startswith("-"):
            return None
    return None


def parse_command(command: str, *, resolve_cd: bool = True) -> ShellCommand:
    """Parse a shell command text into the files it reads and modifies.

    Args:
        command: The command line or script, as the agent sent it.
        resolve_cd: Join relative paths to the directory of an earlier ``cd`` in the same
            command (``cd src && cat a.py`` reads ``src/a.py``) and name the files ``mv`` /
            ``cp`` put into a directory. With ``False`` every path is exactly as written.

    Returns:
        A :class:`ShellCommand`. Anything it does not understand names no file; it never
        raises, whatever the text.

    Example:
        >>> parse_command("cat a.py b.py | rg -n 'def ' && cp a.py /tmp/a.py").read
        ('a.py', 'b.py')
        >>> parse_command("bash -lc \\"tail -n 5 log.txt >> notes.md\\"").modified
        ('notes.md',)
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
