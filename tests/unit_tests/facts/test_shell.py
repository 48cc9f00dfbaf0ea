"""langctx.facts.parse_command and the shell facts of extract_facts: real command shapes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langctx.facts import extract_facts, looks_like_file, parse_command


def files(command: str, **kwargs: Any) -> tuple[list[str], list[str]]:
    parsed = parse_command(command, **kwargs)
    return list(parsed.read), list(parsed.modified)


# ---------------------------------------------------------------------------------- reads

READS = [
    ("cat src/app.py", ["src/app.py"]),
    ("cat -n a.py b.py", ["a.py", "b.py"]),
    ("sed -n '120,180p' src/fields.py", ["src/fields.py"]),
    ("sed -n -e '1,5p' -e '9p' a.py", ["a.py"]),
    ("head -n 40 README.md", ["README.md"]),
    ("head -40 README.md", ["README.md"]),
    ("tail -n +20 log.txt", ["log.txt"]),
    ("tail -f -n 5 server.log", ["server.log"]),
    ("nl -ba src/app.py", ["src/app.py"]),
    ("less +G notes.md", ["notes.md"]),
    ("wc -l src/a.py src/b.py", ["src/a.py", "src/b.py"]),
    ("grep -n 'def parse' src/parser.py", ["src/parser.py"]),
    ('grep -n "x\\|y" a.ts b.ts', ["a.ts", "b.ts"]),
    ("grep -e foo -e bar src/a.py", ["src/a.py"]),
    ("grep -A 5 -B2 TODO main.go", ["main.go"]),
    ("grep -rn TODO src", []),  # a directory search reads no one file
    ("grep -rn TODO src/app.py", ["src/app.py"]),
    ('grep -r "class CommandParser" /workspace/ponylang__ponyc__0.1', []),
    ("rg -n 'fn main' src/main.rs", ["src/main.rs"]),
    ("rg -n --glob '*.py' TODO .", []),
    ("rg --files src", []),
    ("rg -t py -e import src/app.py", ["src/app.py"]),
    ("awk -F: '{print $1}' /etc/passwd", ["/etc/passwd"]),
    ("diff -u old.py new.py", ["old.py", "new.py"]),
    ("python run.py < input.txt", ["input.txt"]),
    ("jq .scripts package.json", ["package.json"]),
    ("ls -la src", []),
    ("find . -name '*.py'", []),
    ("cat", []),
    ("cat -", []),
    ("cat $FILE", []),  # an expansion is not a path as written
    ("cat *.py", []),
]


@pytest.mark.parametrize(("command", "read"), READS)
def test_reads(command: str, read: list[str]) -> None:
    assert files(command) == (read, [])


# ---------------------------------------------------------------------------------- writes

CODEX_HEREDOC = """apply_patch <<'EOF'
*** Begin Patch
*** Update File: src/app.py
@@ def main():
-    print("hi")
+    print("hello")
*** Add File: src/new.py
+x = 1
*** Delete File: old.py
*** Update File: src/name.py
*** Move to: src/renamed.py
*** End Patch
EOF"""

GIT_APPLY = """git apply <<'PATCH'
diff --git a/lib/x.py b/lib/x.py
--- a/lib/x.py
+++ b/lib/x.py
@@ -1 +1 @@
-old
+new
PATCH"""

WRITES = [
    ("sed -i 's/a/b/' src/app.py", [], ["src/app.py"]),
    ("sed -i.bak -e 's/a/b/' x.py y.py", [], ["x.py", "y.py"]),
    ("sed -i '' 's|from \"../|from \"../../|g' src/a.ts", [], ["src/a.ts"]),  # BSD sed
    ("sed --in-place=.orig 's/x/y/' conf.ini", [], ["conf.ini"]),
    ("perl -pi -e 's/foo/bar/g' lib/a.pm", [], ["lib/a.pm"]),
    ("echo hi > notes.txt", [], ["notes.txt"]),
    ("echo hi >> notes.txt", [], ["notes.txt"]),
    ("printf 'x' >| out.txt", [], ["out.txt"]),
    ("make 2> build.log", [], []),  # stderr logs are not a change the agent made
    ("make > /dev/null 2>&1", [], []),
    ("make &> /dev/null", [], []),
    ("make &> build.log", [], ["build.log"]),
    ("make >&2", [], []),
    ("cat > tests/t.py << 'EOF'\nimport x\nEOF", [], ["tests/t.py"]),
    ("cat <<EOF > a.txt\n$HOME\nEOF", [], ["a.txt"]),
    ("tee out.log < in.txt", ["in.txt"], ["out.log"]),
    ("echo x | tee -a a.md b.md", [], ["a.md", "b.md"]),
    ("mv old.py new.py", [], ["old.py", "new.py"]),
    ("mv a.ts b.ts lib/", [], ["a.ts", "lib/a.ts", "b.ts", "lib/b.ts"]),
    ("mv -t dest a.py", [], ["a.py", "dest/a.py"]),
    ("mv build dist", [], []),  # directories
    ("mv *.py lib/", [], []),
    ("cp src/a.py /tmp/a.py", ["src/a.py"], ["/tmp/a.py"]),
    ("cp -r src dst", [], []),
    ("cp conf.example.yml conf.yml", ["conf.example.yml"], ["conf.yml"]),
    ("rm reproduce.py", [], ["reproduce.py"]),
    ("rm -f a.py b.py", [], ["a.py", "b.py"]),
    ("rm -rf build", [], []),
    ("rm -rf build/out.o", [], ["build/out.o"]),
    ("touch LICENSE", [], ["LICENSE"]),
    ("touch -d yesterday a.txt", [], ["a.txt"]),
    ("truncate -s 0 app.log", [], ["app.log"]),
    (CODEX_HEREDOC, [], ["src/app.py", "src/new.py", "old.py", "src/name.py", "src/renamed.py"]),
    (GIT_APPLY, [], ["lib/x.py"]),
    ("git apply fix.diff", ["fix.diff"], []),  # the diff text is not in the command
    ("patch -p1 < fix.diff", ["fix.diff"], []),
    ("patch -p1 <<'EOF'\n--- a/m.c\n+++ b/m.c\n@@ -1 +1 @@\n-a\n+b\nEOF", [], ["m.c"]),
    ("git mv a.py b.py", [], ["a.py", "b.py"]),
    ("git rm -q old.py", [], ["old.py"]),
    ("git rm --cached secret.env", [], []),
    ("git checkout -- src/app.py", [], ["src/app.py"]),
    ("git checkout -- .", [], []),
    ("git restore src/app.py", [], ["src/app.py"]),
    ("git restore --staged src/app.py", [], []),
    # out of scope: what an interpreter does with its script
    ("python - <<'EOF'\nopen('x.txt', 'w').write('1')\nEOF", [], []),
    ("python -c \"open('x.txt','w')\"", [], []),
]


@pytest.mark.parametrize(("command", "read", "modified"), WRITES)
def test_writes(command: str, read: list[str], modified: list[str]) -> None:
    assert files(command) == (read, modified)


# ---------------------------------------------------------------------------------- structure

STRUCTURE = [
    ("cat a.py && sed -i 's/x/y/' b.py", ["a.py"], ["b.py"]),
    ("cat a.py || cat b.py; cat c.py", ["a.py", "b.py", "c.py"], []),
    ("cat a.py | grep -n foo | head -5", ["a.py"], []),
    ("(cat a.py); cat b.py & wait", ["a.py", "b.py"], []),
    ("cat a.py\nsed -i 's/a/b/' b.py\n", ["a.py"], ["b.py"]),
    ("cd src && cat app.py", ["src/app.py"], []),
    ("cd /repo && sed -n '1,5p' lib/x.py", ["/repo/lib/x.py"], []),
    ("cd /repo && cd sub && cat ../x.py", ["/repo/x.py"], []),
    ("(cd sub && cat x.py); cat y.py", ["sub/x.py", "y.py"], []),
    ("cd $DIR && cat x.py", ["x.py"], []),  # a directory langctx cannot follow: as written
    ("cd src && cat /etc/hosts ~/notes.md", ["/etc/hosts", "~/notes.md"], []),
    ("git -C /repo checkout -- a.py", [], ["/repo/a.py"]),
    ("git -c core.pager=cat -C /repo checkout -- a.py", [], ["/repo/a.py"]),  # -c takes a value
    ("git -C /repo -C sub checkout -- a.py", [], ["/repo/sub/a.py"]),  # each -C from the last
    ("cd /repo && git --no-pager -C sub checkout -- a.py", [], ["/repo/sub/a.py"]),
    ("git -C $D -C sub checkout -- a.py", [], ["a.py"]),  # a directory langctx cannot follow
    ('bash -lc "cat a.py && echo x > b.txt"', ["a.py"], ["b.txt"]),
    ("sh -c 'sed -i s/a/b/ c.py'", [], ["c.py"]),
    ("bash <<'EOF'\ncat a.py\nEOF", ["a.py"], []),
    ("sudo -u app tee /etc/app.conf < new.conf", ["new.conf"], ["/etc/app.conf"]),
    ("env FOO=1 timeout 10 cat a.py", ["a.py"], []),
    ("FOO=1 BAR=2 cat a.py", ["a.py"], []),
    ("time cat a.py", ["a.py"], []),
    ("if grep -q x a.py; then rm b.py; fi", ["a.py"], ["b.py"]),
    ("for f in a.py b.py; do cat $f; done", [], []),
    ("cat $(git ls-files '*.md') extra.md", ["extra.md"], []),
    ("diff <(cat a.txt) <(sort b.txt)", ["a.txt"], []),  # sort is not a reader
    (
        "cat 'dir with space/x.py' \"y z.py\" a\\ b.py",
        ["dir with space/x.py", "y z.py", "a b.py"],
        [],
    ),
    ("cat a.py # and then > b.py", ["a.py"], []),
    ("cat a.py \\\n  b.py", ["a.py", "b.py"], []),
    ("echo 'a > b.txt'", [], []),
    ('echo "x" 2>/dev/null >out.txt', [], ["out.txt"]),
]


@pytest.mark.parametrize(("command", "read", "modified"), STRUCTURE)
def test_chains_quotes_and_wrappers(command: str, read: list[str], modified: list[str]) -> None:
    assert files(command) == (read, modified)


def test_cd_resolution_can_be_turned_off() -> None:
    assert files("cd src && cat app.py && mv a.py b.py lib/", resolve_cd=False) == (
        ["app.py"],
        ["a.py", "b.py", "lib/"],
    )


@pytest.mark.parametrize(
    "command",
    [
        "echo 'unbalanced",
        'cat "a.py',
        "cat a.py <<EOF\nno end",
        "$(",
        "`",
        ")))(((",
        "<<",
        ">",
        "2>&",
        "cat <(",
        "\\",
        "sed -i",
        "mv",
        "cp -t",
        "git",
        "git -C",
        "bash -c",
        "cd",
        "\x00\x1b[31m",
    ],
)
def test_weird_input_never_raises(command: str) -> None:
    parsed = parse_command(command)
    assert isinstance(parsed.read, tuple) and isinstance(parsed.modified, tuple)


def test_unbalanced_quote_runs_to_the_end() -> None:
    assert files("cat a.py 'b.py") == (["a.py", "b.py"], [])


def test_a_non_string_names_nothing() -> None:
    assert parse_command(None).read == ()  # type: ignore[arg-type]


def test_status_program_and_masking() -> None:
    plain = parse_command("cd x && pytest -q")
    assert plain.status_program == "pytest" and plain.status_masked is False
    piped = parse_command("pytest -q 2>&1 | tail -20")
    assert piped.status_program == "tail" and piped.status_masked is True
    assert parse_command("make; echo done").status_masked is True
    assert parse_command('bash -lc "npm test | tail -5"').status_masked is True
    assert parse_command('bash -lc "grep -n x a.py"').status_program == "grep"
    assert parse_command("git grep -n x").status_program == "git grep"
    assert parse_command("[ -f a.py ]").status_program == "["


@pytest.mark.parametrize(
    ("command", "inspects"),
    [
        ("cat a.py", True),
        ("grep -rn x src | head", True),
        ("cd src && sed -n '1,9p' a.py && git diff", True),
        ("sed -i 's/a/b/' *.py", False),
        ("cat a.py > b.py", False),
        ("find . -name '*.pyc' -delete", False),
        ("pytest -q", False),
        ("cat a.py && make", False),
    ],
)
def test_inspects_only(command: str, inspects: bool) -> None:
    assert parse_command(command).inspects_only is inspects


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.py", True),
        ("src/types.d.ts", True),
        ("Makefile", True),
        ("src", False),
        ("src/", False),
        (".", False),
        ("..", False),
        ("/workspace/ponyc__0.1", False),
        (".git", False),
        ("archive.7z", True),
    ],
)
def test_looks_like_file(path: str, expected: bool) -> None:
    assert looks_like_file(path) is expected


# ---------------------------------------------------------------------------------- properties

_PIECES = st.sampled_from(
    [
        "cat",
        "sed",
        "-n",
        "-i",
        "'1,5p'",
        "head",
        "-n",
        "5",
        "tail",
        "rg",
        "grep",
        "-rn",
        "mv",
        "cp",
        "rm",
        "-rf",
        "touch",
        "tee",
        "-a",
        "cd",
        "src",
        "..",
        "a.py",
        "b/c.ts",
        "'x y.md'",
        '"q.txt"',
        "&&",
        "||",
        ";",
        "|",
        ">",
        ">>",
        "2>",
        "<",
        "<<",
        "EOF",
        "\n",
        "(",
        ")",
        "$(",
        "`",
        "'",
        '"',
        "\\",
        "bash",
        "-lc",
        "apply_patch",
        "*** Update File:",
        "*** Begin Patch",
        "--- a/x.py",
        "+++ b/x.py",
        "git",
        "apply",
        "-C",
        "/dev/null",
        "&>",
        "$X",
        "*",
        "{",
        "}",
        "#",
        "=",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES | st.text(max_size=8), max_size=25), st.sampled_from([" ", "", "\n"]))
def test_parser_never_raises_and_finds_only_what_is_written(pieces: list[str], sep: str) -> None:
    command = sep.join(pieces)
    parsed = parse_command(command, resolve_cd=False)
    bare = command.replace("'", "").replace('"', "").replace("\\", "")
    for path in (*parsed.read, *parsed.modified):
        assert path
        if not any(c in path for c in "'\"\\"):
            assert path in bare, (path, command)
    parse_command(command)  # with cd resolution: never raises either


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_parser_never_raises_on_arbitrary_text(text: str) -> None:
    parsed = parse_command(text)
    assert all(isinstance(p, str) and p for p in (*parsed.read, *parsed.modified))


def test_parsing_is_linear_on_a_large_heredoc() -> None:
    body = "\n".join(f"+line {i} with 'quotes' and \"more\" $x `y`" for i in range(20_000))
    command = (
        f"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: big.py\n{body}\n*** End Patch\nEOF"
    )
    assert parse_command(command).modified == ("big.py",)


# ---------------------------------------------------------------------------------- through extract_facts


def _call(name: str, args: dict[str, Any], call_id: str = "c1") -> AIMessage:
    return AIMessage("", tool_calls=[{"id": call_id, "name": name, "args": args}])


@pytest.mark.parametrize(
    ("name", "args", "read", "modified"),
    [
        # Codex: shell takes an argv list, exec_command a string in `cmd`
        (
            "shell",
            {"command": ["bash", "-lc", "sed -n '1,80p' src/app.py"], "workdir": "/r"},
            ["src/app.py"],
            [],
        ),
        (
            "shell",
            {"command": ["apply_patch", CODEX_HEREDOC.split("\n", 1)[1]]},
            [],
            ["src/app.py", "src/new.py", "old.py", "src/name.py", "src/renamed.py"],
        ),
        (
            "exec_command",
            {"cmd": "rg -n TODO src/a.py && cat b.py", "workdir": "/r"},
            ["src/a.py", "b.py"],
            [],
        ),
        (
            "exec_command",
            {"cmd": CODEX_HEREDOC},
            [],
            ["src/app.py", "src/new.py", "old.py", "src/name.py", "src/renamed.py"],
        ),
        # Claude Code
        ("Bash", {"command": "cat a.py > b.py", "description": "copy"}, ["a.py"], ["b.py"]),
        # OpenHands
        (
            "execute_bash",
            {"command": "cd /workspace && touch LICENSE", "is_input": "false"},
            [],
            ["/workspace/LICENSE"],
        ),
        # SWE-agent / mini-swe-agent bash
        (
            "bash",
            {"command": "sed -i 's/x/y/' tests/missing_colon.py"},
            [],
            ["tests/missing_colon.py"],
        ),
    ],
)
def test_shell_tools_of_the_agents(
    name: str, args: dict[str, Any], read: list[str], modified: list[str]
) -> None:
    facts = extract_facts([_call(name, args)])
    assert (facts["read_files"], facts["modified_files"]) == (read, modified)


def test_codex_freeform_apply_patch_text_is_read() -> None:
    message = AIMessage("")
    patch: Any = CODEX_HEREDOC.split("\n", 1)[1]  # a freeform tool's raw text, not JSON
    message.tool_calls = [{"id": "p", "name": "apply_patch", "args": patch}]
    assert extract_facts([message])["modified_files"][:2] == ["src/app.py", "src/new.py"]


def test_a_non_command_tool_text_is_not_parsed() -> None:
    facts = extract_facts([_call("python", {"command": "cat a.py > b.py"})])
    assert facts["read_files"] == [] and facts["modified_files"] == []
    facts = extract_facts([_call("python", {"command": "cat a.py"})], command_tools={"python"})
    assert facts["read_files"] == ["a.py"]


def test_shell_and_tool_paths_share_one_list() -> None:
    messages: list[BaseMessage] = [
        _call("read", {"path": "./a.py"}, "r"),
        ToolMessage("x", tool_call_id="r"),
        _call("bash", {"command": "cat a.py && cat ./b.py"}, "b"),
        ToolMessage("x", tool_call_id="b"),
    ]
    assert extract_facts(messages)["read_files"] == ["a.py", "b.py"]
