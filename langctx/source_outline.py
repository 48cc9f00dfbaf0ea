"""Outline of a source file (imports, declarations by line), by regexes that work on parts, and
the code of a numbered listing (``cat -n``); pure, shared by Context-mode and the files in hand."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

LANGUAGES: dict[str, str] = {
    "py": "python", "pyi": "python", "ts": "typescript", "tsx": "typescript", "mts": "typescript",
    "cts": "typescript", "js": "javascript", "jsx": "javascript", "mjs": "javascript",
    "cjs": "javascript", "java": "java", "kt": "kotlin", "kts": "kotlin", "scala": "scala",
    "cs": "csharp", "go": "go", "rs": "rust", "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp",
    "cxx": "cpp", "hpp": "cpp", "hh": "cpp", "m": "objective-c", "swift": "swift", "rb": "ruby",
    "php": "php", "sh": "shell", "bash": "shell", "zsh": "shell", "pony": "pony", "lua": "lua",
    "ex": "elixir", "exs": "elixir", "erl": "erlang", "hs": "haskell", "ml": "ocaml",
    "dart": "dart", "r": "r", "jl": "julia", "pl": "perl", "sql": "sql", "md": "markdown",
    "markdown": "markdown", "mdx": "markdown", "rst": "rst", "vue": "javascript",
    "svelte": "javascript", "zig": "zig", "nim": "nim", "toml": "toml", "yaml": "yaml",
    "yml": "yaml", "ini": "ini", "cfg": "ini", "gradle": "kotlin",
}  # fmt: skip
"""File extension -> language name."""


@dataclass(frozen=True, slots=True)
class Declaration:
    """One outline entry."""

    line: int  # 1-based line number in the file
    depth: int  # nesting depth (0 = top level)
    text: str  # the declaration line, stripped
    index: int = 0  # position of the line in the lines given to outline_source


@dataclass(slots=True)
class Outline:
    """Imports and declarations of a source file."""

    imports: list[str] = field(default_factory=list)  # module names, in order, no duplicates
    declarations: list[Declaration] = field(default_factory=list)  # in order


def language_for_path(path: str | None) -> str | None:
    """Language of a file from its extension, or ``None``."""
    if not path:
        return None
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    if "." not in name:
        return {"Makefile": "make", "Dockerfile": "dockerfile"}.get(name)
    return LANGUAGES.get(name.rsplit(".", 1)[-1].lower())


_KEYWORDS = frozenset(
    "if for while switch catch return function new else do super typeof await with sizeof "
    "elif except try finally match case when foreach using lock throw yield delete void".split()
)

_PY_IMPORT = re.compile(r"^(?:from\s+([\w.]+)\s+import\b|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))")
_PY_DECL = re.compile(r"^(\s*)(?:async\s+def|def|class)\s+\w+")

_JS_IMPORT = re.compile(
    r"""^\s*(?:import\s+(?:type\s+)?(?:[^'"]*?\sfrom\s+)?|export\s+[^'"]*?\sfrom\s+)['"]([^'"]+)['"]"""
    r"""|require\(\s*['"]([^'"]+)['"]\s*\)"""
)
_JS_DECL = re.compile(
    r"^(\s*)(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(?:class|interface|enum|type|namespace|module|function\*?)\s+[\w$]+"
)
_JS_FUNC_CONST = re.compile(
    r"^(?:export\s+)?(?:const|let|var)\s+[\w$]+\s*(?::[^=]+)?=\s*(?:async\s+)?"
    r"(?:function\b|\([^)]*\)?\s*(?::[^=]+)?=>|[\w$]+\s*=>|\(\s*$)"
)
_MEMBER = re.compile(
    r"^(\s+)(?:(?:public|private|protected|static|readonly|abstract|override|async|get|set|"
    r"final|synchronized|native|virtual|internal|open|suspend|inline|def|fun|func|fn|pub|"
    r"unsafe|extern|const|constexpr|explicit|friend|operator)\s+)*"
    r"(?:[\w$<>\[\],.?*&:]+\s+)*?(#?[\w$~]+)\s*(?:<[^>()]*>)?\s*(?:\(|=\s*(?:async\s*)?\()"
)

_GO_DECL = re.compile(r"^(?:func\s+(?:\([^)]*\)\s*)?\w+|type\s+\w+\s+(?:struct|interface)\b)")
_GO_IMPORT = re.compile(r'^\s*(?:import\s+)?(?:\w+\s+)?"([^"]+)"\s*$')
_RUST_DECL = re.compile(
    r"^(\s*)(?:pub(?:\([^)]*\))?\s+)?(?:async\s+|unsafe\s+|const\s+|extern\s+\"C\"\s+)*"
    r"(?:fn|struct|enum|trait|impl|mod|type|union|macro_rules!)\b"
)
_RUST_IMPORT = re.compile(r"^\s*(?:pub\s+)?use\s+([\w:]+)")
_C_INCLUDE = re.compile(r"^\s*#\s*include\s*[<\"]([^>\"]+)[>\"]")
_C_TYPE = re.compile(r"^(?:typedef\s+)?(?:struct|class|enum|union|namespace)\s+\w+[^;]*$")
_C_FUNC = re.compile(
    r"^(?!(?:if|for|while|switch|return|else|do|case|typedef|using|namespace|extern)\b)"
    r"[A-Za-z_][\w\s*&:<>,~]*?\b(~?\w+)\s*\([^;]*$"
)
_JAVA_TYPE = re.compile(
    r"^(\s*)(?:(?:public|private|protected|static|final|abstract|sealed|data|open|internal|"
    r"partial|inline|enum|annotation)\s+)*(?:class|interface|enum|record|object|trait|struct)\s+\w+"
)
_JAVA_IMPORT = re.compile(r"^\s*(?:import|using|package)\s+(?:static\s+)?([\w.*]+)")
_RUBY_DECL = re.compile(r"^(\s*)(?:class|module|def)\s+\S+")
_RUBY_IMPORT = re.compile(r"^\s*require(?:_relative)?\s+['\"]([^'\"]+)['\"]")
_PHP_DECL = re.compile(
    r"^(\s*)(?:(?:abstract|final|public|private|protected|static)\s+)*(?:class|interface|trait|"
    r"function|enum)\s+\w+"
)
_SHELL_DECL = re.compile(r"^(\s*)(?:function\s+[\w:-]+|[\w:-]+\s*\(\)\s*\{?)")
_PONY_DECL = re.compile(
    r"^(\s*)(?:class|actor|primitive|trait|interface|struct|type|fun|be|new)\b\s*(?:\w+\s+)?\w+"
)
_PONY_IMPORT = re.compile(r'^use\s+(?:\w+\s*=\s*)?"([^"]+)"')
_CONTAINER = re.compile(
    r"\b(?:class|interface|enum|namespace|module|object|trait|struct|impl|record)\b"
)
_JS_IMPORT_OPEN = re.compile(r"^\s*(?:import|export)\s+(?:type\s+)?\{[^'\"]*$")
_JS_FROM = re.compile(r"""\bfrom\s+['"]([^'"]+)['"]""")
_HEADING = re.compile(r"^(#{1,6})\s+\S")
_FENCE = re.compile(r"^\s*(```|~~~)")
_GENERIC_DECL = re.compile(
    r"^(\s*)(?:export\s+|public\s+|private\s+|static\s+|pub\s+)*"
    r"(?:class|def|fn|func|function|fun|struct|interface|enum|trait|impl|module|type|sub|proc)\s+"
    r"[\w$:.]+"
)


def _indent(line: str) -> int:
    expanded = line.expandtabs(4) if "\t" in line else line
    return len(expanded) - len(expanded.lstrip())


def _member_indent(lines: Sequence[str], start: int) -> int | None:
    """Indent of the first non-blank line after ``start`` (a type's members)."""
    for line in lines[start + 1 : start + 40]:
        if line.strip() and not line.strip().startswith(("}", ")", "//", "/*", "*", "#")):
            return _indent(line)
    return None


def outline_source(
    lines: Sequence[str], *, language: str | None, numbers: Sequence[int] | None = None
) -> Outline:
    """The imports and declarations of a file's ``lines``; ``numbers``: their line numbers."""
    scan = _Scan(lines, language or "")
    for i, line in enumerate(lines):
        if line.strip():
            scan.line(i, numbers[i] if numbers is not None else i + 1, line)
    return scan.outline


class _Scan:
    """The state of one outline: what was found, the open constructs around the line."""

    def __init__(self, lines: Sequence[str], family: str) -> None:
        self.lines = lines
        self.family = family
        self.outline = Outline()
        self.seen: set[str] = set()
        self.enclosing: list[int] = []  # indents of the declarations around the line
        self.member_indents: list[tuple[int, int]] = []  # (type indent, member indent)
        self.in_fence = False
        self.in_import = False  # inside a multi-line `import { ... } from "x"`

    def line(self, i: int, number: int, line: str) -> None:
        if self.in_import:
            self._import_continued(line)
        elif self.family in ("markdown", "rst"):
            self._markup(i, number, line)
        else:
            indent = _indent(line)
            while self.member_indents and indent <= self.member_indents[-1][0]:
                self.member_indents.pop()
            if _FAMILY_RULES.get(self.family, _GENERIC_RULE)(self, i, line, indent):
                self._declare(i, number, line, indent)

    def took_import(self, pattern: re.Pattern[str] | None, line: str) -> bool:
        """Record the import ``pattern`` finds on ``line``, if any."""
        m = pattern.match(line) if pattern is not None else None
        if m is not None:
            self._import(next(filter(None, m.groups()), None))
        return m is not None

    def _import(self, name: str | None) -> None:
        for part in (name or "").split(","):
            if (part := part.strip()) and part not in self.seen:
                self.seen.add(part)
                self.outline.imports.append(part)

    def _declare(self, i: int, number: int, line: str, indent: int) -> None:
        while self.enclosing and self.enclosing[-1] >= indent:
            self.enclosing.pop()
        depth = len(self.enclosing)
        self.enclosing.append(indent)
        text = line.strip()
        text = text[:-1].rstrip() if text.endswith("{") else text
        self.outline.declarations.append(Declaration(number, depth, text, i))
        if _CONTAINER.search(line) and line.rstrip().endswith("{"):
            member = _member_indent(self.lines, i)
            if member is not None and member > indent:
                self.member_indents.append((indent, member))

    def _import_continued(self, line: str) -> None:
        m = _JS_FROM.search(line)
        if m or line.strip().startswith("}"):
            self.in_import = False
            self._import(m.group(1) if m else None)

    def _markup(self, i: int, number: int, line: str) -> None:
        """Markdown / reStructuredText: ``#`` headings outside code fences."""
        if _FENCE.match(line):
            self.in_fence = not self.in_fence
            return
        m = _HEADING.match(line)
        if m and not self.in_fence:
            depth = len(m.group(1)) - 1
            self.outline.declarations.append(Declaration(number, depth, line.strip()[:120], i))


def _js_line(scan: _Scan, i: int, line: str, indent: int) -> bool:
    if scan.took_import(_JS_IMPORT, line):
        return False
    if _JS_IMPORT_OPEN.match(line):
        scan.in_import = True
        return False
    if _JS_DECL.match(line) or (indent == 0 and _JS_FUNC_CONST.match(line)):
        return True
    return _is_member(line, indent, scan.member_indents)


def _jvm_line(scan: _Scan, i: int, line: str, indent: int) -> bool:
    """Java and its relatives (Kotlin, Scala, C#, Swift, Dart): imports at the top level only."""
    if indent == 0 and scan.took_import(_JAVA_IMPORT, line):
        return False
    return bool(_JAVA_TYPE.match(line)) or _is_member(line, indent, scan.member_indents)


def _c_line(scan: _Scan, i: int, line: str, indent: int) -> bool:
    if scan.took_import(_C_INCLUDE, line):
        return False
    return indent == 0 and (bool(_C_TYPE.match(line)) or _is_c_function(scan.lines, i))


def _shell_line(scan: _Scan, i: int, line: str, indent: int) -> bool:
    return bool(_SHELL_DECL.match(line)) and "=" not in line.split("(")[0]


_Rule = Callable[[_Scan, int, str, int], bool]


def _plain(imports: re.Pattern[str] | None, declaration: re.Pattern[str]) -> _Rule:
    """A line declares something when it is no import and matches ``declaration``."""
    return lambda scan, i, line, indent: (
        not scan.took_import(imports, line) and bool(declaration.match(line))
    )


_GENERIC_RULE = _plain(None, _GENERIC_DECL)
_FAMILY_RULES: dict[str, _Rule] = {
    **dict.fromkeys(("typescript", "javascript"), _js_line),
    **dict.fromkeys(("java", "kotlin", "scala", "csharp", "swift", "dart"), _jvm_line),
    **dict.fromkeys(("c", "cpp", "objective-c"), _c_line),
    "shell": _shell_line,
    "python": _plain(_PY_IMPORT, _PY_DECL),
    "go": _plain(_GO_IMPORT, _GO_DECL),
    "rust": _plain(_RUST_IMPORT, _RUST_DECL),
    "ruby": _plain(_RUBY_IMPORT, _RUBY_DECL),
    "php": _plain(None, _PHP_DECL),
    "pony": _plain(_PONY_IMPORT, _PONY_DECL),
}
"""Language -> whether a line declares something (recording the imports it finds)."""


def _is_member(line: str, indent: int, member_indents: list[tuple[int, int]]) -> bool:
    """A method (or function-valued property) declared directly in a class body."""
    if not member_indents or indent != member_indents[-1][1]:
        return False
    m = _MEMBER.match(line)
    if not m or m.group(2) in _KEYWORDS:
        return False
    stripped = line.rstrip()
    return stripped.endswith(("{", "(", ",", ")")) or "=>" in stripped


def _is_c_function(lines: Sequence[str], i: int) -> bool:
    line = lines[i]
    m = _C_FUNC.match(line)
    if not m or m.group(1) in _KEYWORDS or line.rstrip().endswith(";"):
        return False
    if "{" in line:
        return True
    for nxt in lines[i + 1 : i + 12]:
        s = nxt.strip()
        if s.startswith("{") or s.endswith("{"):
            return True
        if s.endswith(";"):
            return False
    return False


_NUMBERED = (
    re.compile(r"^\s*(\d+)\t(.*)$"),  # cat -n
    re.compile(r"^(\d+):(.*)$"),  # SWE-agent
    re.compile(r"^\s*(\d+)\s?[│|] ?(.*)$"),  # bat, many viewers
)
_SAMPLE_LINES = 400


@dataclass(frozen=True, slots=True)
class Listing:
    """A file's code lines with their line numbers, and the viewer's own lines around them."""

    code: list[str]  # code lines, without number prefixes
    numbers: list[int]  # the file line number of each code line
    rows: list[int]  # the row of the text each code line came from
    notes: list[tuple[int, str]]  # (row, text) of the non-blank lines without a number
    numbered: bool  # whether the text had line-number prefixes


def split_listing(text: str, *, first_line: int = 1) -> Listing:
    """Separate code from line-number prefixes and viewer notes (``first_line``: if no prefixes)."""
    lines = text.split("\n")
    sample = [line for line in lines[:_SAMPLE_LINES] if line.strip()]
    hits = [sum(1 for line in sample if pattern.match(line)) for pattern in _NUMBERED]
    best = _NUMBERED[hits.index(max(hits))]
    if max(hits) < max(3, len(sample) // 2):
        rows = list(range(len(lines)))
        numbers = [first_line + i for i in rows]
        return Listing(lines, numbers, rows, [], numbered=False)
    matches = [(row, line, best.match(line)) for row, line in enumerate(lines)]
    found = [(row, m) for row, _, m in matches if m]
    notes = [(row, line) for row, line, m in matches if not m and line.strip()]
    code, numbers = [m.group(2) for _, m in found], [int(m.group(1)) for _, m in found]
    return Listing(code, numbers, [row for row, _ in found], notes, numbered=True)
