"""Shell words: a forgiving POSIX-ish lexer, simple commands and option parsing (pure).

Example:
    >>> [w.value for w in Lexer("cat 'a b.py' > out.txt").run() if isinstance(w, Word)]
    ['cat', 'a b.py']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field


@dataclass(slots=True)
class Word:
    value: str
    literal: bool = True  # no unquoted expansion or glob (``$x``, ``*``): a path as written


@dataclass(slots=True)
class Redir:
    op: str
    fd: str
    target: Word
    body: str | None = None  # heredoc text


Token = Word | Redir | str  # a str is an operator (``&&``, ``|``, ``(``, a newline, ...)

_META = frozenset(" \t\r\n;&|()<>")
_PLAIN_RE = re.compile(r"[^\s'\"\\$`;&|()<>*?\[{]+")
_REDIR_RE = re.compile(r"(\d*|&)(>>|>\||>&|>|<<<|<<-|<<|<>|<&|<)[ \t]*")  # with the blanks after
_OPS = ("&&", "||", ";;", "|&", ";", "|", "&", "(", ")")
_PARAM_RE = re.compile(r"\$[\w{@*#?$!-]")


class Lexer:
    """A forgiving POSIX-ish tokenizer: unbalanced quotes run to the end of the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.subs: list[str] = []  # bodies of $(...), `...`, <(...) to parse on their own
        self.tokens: list[Token] = []
        self._heredocs: list[tuple[Redir, str, bool]] = []

    def run(self) -> list[Token]:
        text, n = self.text, len(self.text)
        while self.pos < n:
            c = text[self.pos]
            if c == "\n":
                self.tokens.append("\n")
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
                self.tokens.append(Word("", literal=False))
            elif (m := _REDIR_RE.match(text, self.pos)) is not None and self._redir(m):
                pass
            elif (op := next((o for o in _OPS if text.startswith(o, self.pos)), None)) is not None:
                self.tokens.append(op)
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
        if self.pos >= len(self.text) or self.text[self.pos] in "\n;&|()<>":
            target = Word("", literal=False)
        else:
            target = self._word()
        redir = Redir(op=op, fd=fd, target=target)
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
                if (line.lstrip("\t") if strip_tabs else line).rstrip() == delimiter:
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

    def _word(self) -> Word:
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
            elif c in "$`" and self._substitution(parts):
                literal = False
            else:  # $VAR, ${x}, globs, braces
                parts.append(c)
                self.pos += 1
                literal = False
        self.pos = min(self.pos, n)
        return Word("".join(parts), literal=literal)

    def _substitution(self, parts: list[str]) -> bool:
        """Read a ``$(...)`` or backtick substitution into ``parts``; False when none starts here."""
        if self.text.startswith("$(", self.pos):
            self.pos += 1
            body = self._balanced("(", ")")
            parts.append(f"$({body})")
        elif self.text.startswith("`", self.pos):
            body = self._balanced("`", "`")
            parts.append(f"`{body}`")
        else:
            return False
        self.subs.append(body)
        return True

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
            if c in "$`" and self._substitution(parts):
                literal = False
                continue
            if _PARAM_RE.match(text, self.pos):  # $x, ${x}, $@, ...
                literal = False
            parts.append(c)
            self.pos += 1
        return literal


@dataclass(slots=True)
class SimpleCommand:
    words: list[Word] = field(default_factory=list)
    redirs: list[Redir] = field(default_factory=list)


_KEYWORDS = frozenset("if then elif else do while until ! { } fi done esac time".split())
ASSIGNMENT_RE = re.compile(r"^[A-Za-z_]\w*=")


def split_commands(tokens: Sequence[Token]) -> Iterator[tuple[SimpleCommand, str | None]]:
    """Yield (simple command, the operator that ends it); ``(`` opens a subshell on its own."""
    current = SimpleCommand()
    for token in tokens:
        if isinstance(token, str):
            if token == "(":
                if current.words or current.redirs:
                    yield current, ";"
                yield SimpleCommand(), "("
            else:
                yield current, token
            current = SimpleCommand()
        elif isinstance(token, Redir):
            current.redirs.append(token)
        elif current.words or token.value not in _KEYWORDS:
            current.words.append(token)
    yield current, None


@dataclass(slots=True)
class ParsedArgs:
    operands: list[Word]
    flags: set[str]
    values: dict[str, list[str]]


def parse_args(
    args: Sequence[Word], short_values: str = "", long_values: Iterable[str] = ()
) -> ParsedArgs:
    """Split arguments into flags, option values and operands (``--`` ends the options)."""
    long_set = frozenset(long_values)
    out = ParsedArgs(operands=[], flags=set(), values={})
    words = iter(args)
    for word in words:
        value = word.value
        if value == "--":
            out.operands.extend(words)
            break
        if value.startswith("--") and len(value) > 2:
            name, eq, attached = value[2:].partition("=")
            out.flags.add(name)
            if eq:
                out.values.setdefault(name, []).append(attached)
            elif name in long_set and (given := next(words, None)) is not None:
                out.values.setdefault(name, []).append(given.value)
            continue
        if value.startswith("-") and len(value) > 1 and not value[1].isdigit():
            for j, ch in enumerate(value[1:], start=1):
                out.flags.add(ch)
                if ch in short_values:
                    rest = value[j + 1 :]
                    if rest:
                        out.values.setdefault(ch, []).append(rest)
                    elif (given := next(words, None)) is not None:
                        out.values.setdefault(ch, []).append(given.value)
                    break
            continue
        if value.startswith("-") and value[1:].isdigit():  # head -20
            continue
        out.operands.append(word)
    return out


_FILE_NAMES = frozenset(
    "Makefile makefile Dockerfile LICENSE README Gemfile Rakefile Procfile Jenkinsfile "
    "Vagrantfile BUILD WORKSPACE Containerfile".split()
)
# an extension starts with a letter or is ``7z``-like: a version directory (``x__0.1``) is none
_EXTENSION_RE = re.compile(r"[A-Za-z][\w-]{0,11}|\d[A-Za-z]\w{0,10}")


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


def literal_paths(words: Iterable[Word]) -> list[str]:
    return [w.value for w in words if w.literal and w.value and w.value != "-"]
