"""What each program reads and modifies, from its arguments (pure): the shell's handler table."""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Sequence

from langctx.facts.shell_words import (
    ASSIGNMENT_RE,
    ParsedArgs,
    Word,
    literal_paths,
    looks_like_file,
    parse_args,
)

# the name is cut by patch_name: a lazy ``(.+?)\s*$`` is quadratic on a run of spaces
_PATCH_FILE_RE = re.compile(r"^\*\*\* (?:Update File|Add File|Delete File|Move to): (.+)$", re.M)
_GIT_DIFF_RE = re.compile(r"^diff --git a/(\S+) b/(\S+)", re.M)
_JQ_ARGUMENT_OPTIONS = ("--arg", "--argjson", "--slurpfile", "--rawfile", "--args", "--jsonargs")
_SED_SUFFIX_RE = re.compile(r"(?:\.[\w.~-]+)?")  # BSD sed's ``-i ''`` or ``-i .bak``


def patch_name(rest: str) -> str:
    """The rest of a patch line as ``(.+?)\\s*$`` reads it: without trailing spaces."""
    return rest.rstrip() or rest[:1]


def patch_text_paths(text: str) -> Iterator[str]:
    """Files named by patch text: Codex ``*** Update File: x`` blocks and unified diffs.

    Example:
        >>> list(patch_text_paths("*** Begin Patch\\n*** Add File: a.py\\n+x\\n*** End Patch"))
        ['a.py']
    """
    if "*** " in text:
        yield from (patch_name(match.group(1)) for match in _PATCH_FILE_RE.finditer(text))
    if "diff --git " in text:
        yield from (path for match in _GIT_DIFF_RE.finditer(text) for path in match.groups())
    if "+++ " in text:
        # a '--- x' line directly followed by '+++ y' is a file header (not a removed '-- x')
        for before, line in itertools.pairwise(text.splitlines()):
            if before.startswith("--- ") and line.startswith("+++ "):
                for header in (before, line):
                    path = header[4:].split("\t", 1)[0].strip()
                    if path == "/dev/null":
                        continue
                    path = path[2:] if path.startswith(("a/", "b/")) else path
                    if path:
                        yield path


_Found = tuple[list[str], list[str]]
# (arguments, heredoc bodies, name the files put into a directory) -> (read, modified)
_Handler = Callable[[list[Word], list[str], bool], _Found]


def _operands(
    short_values: str = "", long_values: Iterable[str] = (), writes: bool = False
) -> _Handler:
    """A handler whose operands are the files it reads (or ``writes``)."""

    def handler(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
        operands = parse_args(args, short_values, long_values).operands
        if writes:
            return [], literal_paths(operands)
        return literal_paths(w for w in operands if not w.value.startswith("+")), []  # less +G

    return handler


def _file_paths(words: Iterable[Word]) -> list[str]:
    return [p for p in literal_paths(words) if looks_like_file(p)]


def writes_anyway(name: str, args: Sequence[Word]) -> bool:
    """An inspector that writes here (``sed -i`` on a glob, ``find -delete``)."""
    if name in ("find", "fd"):
        return any(w.value in ("-delete", "-exec", "-execdir", "-ok", "-x", "-X") for w in args)
    if name not in ("sed", "gsed"):
        return False
    for value in (w.value for w in args):
        if value == "--":
            return False
        if value.startswith(("--in-place", "-i")):
            return True
    return False


def _sed(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    # BSD sed: `-i ''` or `-i .bak` -- the suffix is a separate word (dropped unless it is last)
    suffixes = {
        i + 1
        for i, word in enumerate(args[:-2])
        if word.value == "-i" and _SED_SUFFIX_RE.fullmatch(args[i + 1].value)
    }
    cleaned = [word for i, word in enumerate(args) if i not in suffixes]
    parsed = parse_args(cleaned, "ef", ("expression", "file"))
    paths = literal_paths(_after_script(parsed, "ef", ("expression", "file")))
    return ([], paths) if parsed.flags & {"i", "in-place"} else (paths, [])


def _perl(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = parse_args(args, "eEIMml")
    return [], literal_paths(_after_script(parsed, "eE")) if "i" in parsed.flags else []


def _after_script(parsed: ParsedArgs, short: str, long: Iterable[str] = ()) -> list[Word]:
    """The operands after the script or pattern, unless a ``short`` or ``long`` option gave it."""
    if any(c in parsed.values for c in short) or not parsed.flags.isdisjoint(long):
        return parsed.operands
    return parsed.operands[1:]


_GREP_LONG_VALUES = (
    "regexp file max-count after-context before-context context include exclude exclude-dir "
    "label directories devices"
).split()
_BAT_LONG_VALUES = "language line-range highlight-line map-syntax style theme".split()
_RG_LONG_VALUES = (
    "regexp file glob iglob type type-not max-count after-context before-context context "
    "threads max-columns encoding sort sortr replace type-add max-depth max-filesize pre "
    "colors path-separator"
).split()


def _grep(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = parse_args(args, "efmABCdD", _GREP_LONG_VALUES)
    operands = _after_script(parsed, "ef", ("regexp", "file"))
    recursive = parsed.flags & {"r", "R", "recursive", "dereference-recursive"}
    return (_file_paths if recursive else literal_paths)(operands), []


def _rg(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = parse_args(args, "efgtTmABCjMEr", _RG_LONG_VALUES)
    if "files" in parsed.flags or "type-list" in parsed.flags:
        return [], []
    return _file_paths(_after_script(parsed, "ef", ("regexp", "file"))), []


def _awk(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    operands = _after_script(parse_args(args, "Fvf"), "f")
    return [p for p in literal_paths(operands) if not ASSIGNMENT_RE.match(p)], []


def _jq(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    if any(w.value in _JQ_ARGUMENT_OPTIONS for w in args):
        return [], []
    parsed = parse_args(args, "fL", ("indent", "from-file"))
    return literal_paths(_after_script(parsed, "f", ("from-file",))), []


def _diff(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = parse_args(args, "USIxXFL", ("label", "exclude", "from-file", "to-file"))
    return [] if parsed.flags & {"r", "recursive"} else literal_paths(parsed.operands), []


def _rm(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = parse_args(args)
    recursive = parsed.flags & {"r", "R", "recursive", "d", "dir"}
    return [], (_file_paths if recursive else literal_paths)(parsed.operands)


def _move_or_copy(args: list[Word], bodies: list[str], resolve: bool, *, copy: bool) -> _Found:
    parsed = parse_args(args, "tSZ", ("target-directory", "suffix", "backup", "context"))
    paths = literal_paths(parsed.operands)
    if not all(w.literal for w in parsed.operands):
        return [], []  # `mv *.py dir/`: the sources are not paths as written
    targets = parsed.values.get("t", []) + parsed.values.get("target-directory", [])
    if targets:
        sources, dest, into = paths, targets[0], True
    elif len(paths) >= 2:
        sources, dest = paths[:-1], paths[-1]
        into = len(sources) > 1 or dest.endswith("/") or dest in (".", "..")
    else:
        return [], []
    if into and not resolve:
        return ([], [*sources, dest]) if not copy else (sources, [dest])
    destinations = [posixpath.join(dest, posixpath.basename(s.rstrip("/"))) for s in sources]
    destinations = destinations if into else [dest]  # not into: the one source becomes dest
    # a directory moved or copied whole is not a file: keep the pairs that name files
    pairs = [(s, d) for s, d in zip(sources, destinations, strict=True) if looks_like_file(s)]
    if len(sources) == 1 and not pairs and looks_like_file(dest):
        pairs = [(sources[0], dest)]
    if copy:
        return [s for s, _ in pairs], [d for _, d in pairs]
    return [], [p for pair in pairs for p in pair]


def _patch_bodies(texts: Iterable[str]) -> list[str]:
    return [p for text in texts for p in patch_text_paths(text)]


def _apply_patch(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    return [], _patch_bodies([*bodies, *(w.value for w in args)])


def _patch(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    parsed = parse_args(args, "pioBdDFrVYzg", ("input", "output", "directory", "strip"))
    read = parsed.values.get("i", []) + parsed.values.get("input", [])
    operands = literal_paths(parsed.operands)  # `patch file.py < fix.diff`, `patch f.py fix.diff`
    return read + operands[1:2], operands[:1] + _patch_bodies(bodies)


def _git(args: list[Word], bodies: list[str], resolve: bool) -> _Found:
    sub, rest, _ = git_subcommand(args)
    if sub == "apply":
        parsed = parse_args(rest, "pC", ("directory", "exclude", "include"))
        dry_run = parsed.flags & {"check", "stat", "numstat", "summary"}
        return literal_paths(parsed.operands), [] if dry_run else _patch_bodies(bodies)
    if sub == "mv":
        return _move_or_copy(rest, bodies, resolve, copy=False)
    if sub == "rm":
        return ([], []) if "cached" in parse_args(rest).flags else _rm(rest, bodies, resolve)
    if sub == "restore":
        parsed = parse_args(rest, "s", ("source",))
        if parsed.flags & {"S", "staged"} and not parsed.flags & {"W", "worktree"}:
            return [], []
        return [], _file_paths(parsed.operands)
    if sub == "checkout":
        values = [w.value for w in rest]
        if "--" in values:
            return [], _file_paths(rest[values.index("--") + 1 :])
    return [], []


# git's global options whose value is the next word
GIT_OPTIONS_WITH_VALUE = frozenset(("-C", "-c", "--git-dir", "--work-tree", "--namespace"))


def git_subcommand(args: Sequence[Word]) -> tuple[str | None, list[Word], list[Word]]:
    """git's subcommand, its arguments, and the ``-C dir`` options before it (in order, up to
    the first that is not literal)."""
    directories: list[Word] = []
    literal = True
    i = 0
    while i < len(args):
        value = args[i].value
        if value == "-C" and i + 1 < len(args):
            literal = literal and args[i + 1].literal
            if literal:
                directories.append(args[i + 1])
        if value in GIT_OPTIONS_WITH_VALUE:
            i += 2
        elif value.startswith("-"):
            i += 1
        else:
            return value, list(args[i + 1 :]), directories
    return None, [], directories


HANDLERS: dict[str, _Handler] = {
    **dict.fromkeys(("cat", "more", "wc"), _operands()),
    "nl": _operands("bdfhilnsvw"),
    "less": _operands("bhjkoOpPtTxyz#"),
    **dict.fromkeys(("bat", "batcat"), _operands("lrHmp", _BAT_LONG_VALUES)),
    "head": _operands("nc", ("lines", "bytes")),
    "tail": _operands("ncs", ("lines", "bytes", "sleep-interval", "pid")),
    "cmp": _operands("in", ("ignore-initial", "bytes")),
    "diff": _diff,
    **dict.fromkeys(("sed", "gsed"), _sed),
    "perl": _perl,
    **dict.fromkeys(("grep", "egrep", "fgrep"), _grep),
    "rg": _rg,
    **dict.fromkeys(("awk", "gawk"), _awk),
    "jq": _jq,
    **dict.fromkeys(("tee", "unlink"), _operands(writes=True)),
    **dict.fromkeys(
        ("touch", "truncate"), _operands("drtsA", ("date", "reference", "size"), writes=True)
    ),
    "rm": _rm,
    "mv": functools.partial(_move_or_copy, copy=False),
    "cp": functools.partial(_move_or_copy, copy=True),
    **dict.fromkeys(("apply_patch", "applypatch"), _apply_patch),
    "patch": _patch,
    "git": _git,
}

INSPECTORS = frozenset(
    "cat nl less more bat batcat head tail wc cmp diff grep egrep fgrep rg ag ack awk "
    "gawk jq ls ll tree find fd pwd cd pushd popd echo printf file stat which type "
    "realpath readlink dirname basename sort uniq cut tr column true du df xxd od hexdump "
    "strings sed ".split()
) | frozenset(
    f"git {sub}"
    for sub in "status log diff show grep blame branch ls-files rev-parse remote".split()
)
"""Programs whose output is what they read or list (``sed`` only without ``-i``)."""

WRAPPERS: dict[str, str] = dict(
    entry.split("=")
    for entry in "sudo=ugCDhprt env=uCS nice=n nohup= command= exec=a builtin= stdbuf=ioe "
    "ionice=cnpt time=fo timeout=sk xvfb-run=ase".split()
)
"""Programs that run the rest of their words as a command (option letters taking a value)."""
