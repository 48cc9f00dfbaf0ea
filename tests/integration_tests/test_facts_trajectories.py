"""extract_facts against the ground truth of 38 recorded agent sessions.

Each ``<id>.truth.json`` in ``../shared/data/trajectories`` lists the exact ``files_read`` and
``files_modified`` of the original recording. Sessions whose file sets match the truth exactly
(as sets; see ``EXPECTED``):

=============== ======== =========== =========== ===============
source          sessions both exact read exact  modified exact
=============== ======== =========== =========== ===============
aider                  8           0           0               8
mini-swe-agent         1           0           1               0
openhands              9           9           9               9
pi-mono                2           1           1               2
swe-agent             18           4          18               4
=============== ======== =========== =========== ===============

Every remaining difference is one of these, and the tests check each is still needed:

* **Path form (SWE-agent, 12 sessions).** For an ``edit`` (which takes line numbers, not a
  path) the truth records the file SWE-agent's environment reported as open, in its absolute
  form (``/marshmallow-code__marshmallow/src/marshmallow/fields.py``), often next to the
  relative form given to ``create``. langctx sees only the arguments, so it attributes the edit
  to the path of the last ``open``/``create`` call (``src/marshmallow/fields.py``). Two paths
  are the same file when they are equal or one ends with ``/`` + the other.
* **aider reads.** aider's read files are the files on its command line and in ``/add`` or
  "Added ... to the chat" lines -- free text in human messages, which langctx never parses.
  aider makes no read tool calls, so ``read_files`` is empty.
* **Truth-only paths** (``DEVIATIONS``): a read in a pi turn whose tool calls were dropped from
  the conversion (the truth's notes say so).
* **langctx-only paths** (``DEVIATIONS``): SWE-agent's function-calling ``create`` passes the
  file as ``filename`` and its ``insert`` edits the open file; the truth ignores both, langctx
  counts creating a file as modifying it.

File order is not compared: the truth also counts calls dropped from the conversion, which
moves first appearances (pi ``large-session``).

The truth's file lists come from structured read/edit/write calls (and, for mini-swe-agent, its
``sed -i`` / ``cat >`` edits). langctx also parses shell commands, so it finds more. The table
above is measured with the tool-call files only (``command_tools=()``); the full facts must
find every truth path the tool calls find, plus mini-swe-agent's shell edits, and every path
they add beyond the truth must be checked independently: named in a shell command of the
session (by its file name) and shaped like a file, not a directory (``SHELL_ADDED`` counts
them per source).
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Iterable
from dataclasses import dataclass

import pytest
from langchain_core.messages import AIMessage, ToolMessage

from langctx.facts import (
    DEFAULT_COMMAND_TOOLS,
    DEFAULT_FILE_TOOLS,
    Facts,
    extract_facts,
)
from langctx.facts.failures import shown_failure_lines
from langctx.facts.shell_parse import parse_command
from langctx.markers import QUOTED_OUTPUT_RE
from langctx.projection import render_facts
from langctx.user_messages import render_user_messages, user_message_facts
from tests._trajectories import DATA_DIR, Session, iter_sessions, require_data_dir

pytestmark = pytest.mark.trajectories

SESSIONS = list(iter_sessions())
PARAMS = [pytest.param(s, id=f"{s.source}/{s.id}") for s in SESSIONS] or [
    pytest.param(None, id=f"no-data-at-{DATA_DIR}")
]


@dataclass(frozen=True)
class Deviation:
    """A documented, justified difference between langctx and one session's truth."""

    why: str
    truth_only_read: frozenset[str] = frozenset()
    truth_only_modified: frozenset[str] = frozenset()
    ours_only_modified: frozenset[str] = frozenset()


_SWE_CREATE_INSERT = Deviation(
    why="the truth ignores create's `filename` argument and `insert` on the open file",
    ours_only_modified=frozenset({"reproduce.py"}),
)

DEVIATIONS: dict[tuple[str, str], Deviation] = {
    ("pi-mono", "before-compaction"): Deviation(
        why="read call of an aborted turn that the conversion dropped (see truth notes)",
        truth_only_read=frozenset({"/Users/badlogic"}),
    ),
    (
        "swe-agent",
        "replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1__"
        "marshmallow-code__marshmallow-1867",
    ): _SWE_CREATE_INSERT,
    (
        "swe-agent",
        "replay__marshmallow-code__marshmallow-1867__function_calling_replace_from_source__"
        "marshmallow-code__marshmallow-1867",
    ): _SWE_CREATE_INSERT,
}

SOURCES_WITHOUT_READ_CALLS = frozenset({"aider"})
"""Sources whose truth reads come from free text; langctx must report no reads for them."""

# source -> (sessions, both exact, read exact, modified exact)
EXPECTED: dict[str, tuple[int, int, int, int]] = {
    "aider": (8, 0, 0, 8),
    "mini-swe-agent": (1, 0, 1, 0),
    "openhands": (9, 9, 9, 9),
    "pi-mono": (2, 1, 1, 2),
    "swe-agent": (18, 4, 18, 4),
}


def same_file(a: str, b: str) -> bool:
    """Equal, or one path is the other with a directory prefix (absolute vs relative form)."""
    return a == b or a.endswith("/" + b) or b.endswith("/" + a)


def unmatched(paths: Iterable[str], others: list[str]) -> list[str]:
    return [p for p in paths if not any(same_file(p, q) for q in others)]


def facts_of(session: Session | None, **kwargs: object) -> tuple[Session, Facts]:
    if session is None:
        require_data_dir()
        pytest.fail("unreachable: the data directory exists but holds no sessions")
    return session, extract_facts(session.messages(), max_read_files=10**6, **kwargs)  # type: ignore[arg-type]


def shell_commands(session: Session) -> list[str]:
    """The command text of every shell-tool call of the session (an independent read)."""
    out: list[str] = []
    for message in session.messages():
        for tool_call in getattr(message, "tool_calls", None) or []:
            value = tool_call["args"].get("command") or tool_call["args"].get("cmd")
            named_after = isinstance(value, str) and value.split(" ", 1)[0] == tool_call["name"]
            if tool_call["name"].lower() not in DEFAULT_COMMAND_TOOLS and not named_after:
                continue  # a shell tool, or one named after the program it runs (SWE-agent)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str):
                out.append(value)
    return out


_FILE_NAME_RE = re.compile(r"[^/]*[A-Za-z0-9_-]\.[A-Za-z][\w-]*|Makefile|LICENSE|Dockerfile")


def named_by_a_command(path: str, commands: list[str]) -> bool:
    """The path's file name is written in one of the commands, and it is shaped like a file."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return (
        not path.endswith("/")
        and _FILE_NAME_RE.fullmatch(name) is not None
        and any(name in command for command in commands)
    )


# ---------------------------------------------------------------------------------- loader


@pytest.mark.parametrize("session", PARAMS)
def test_loader_keeps_every_message_and_pair(session: Session | None) -> None:
    session, _ = facts_of(session)
    messages = session.messages()
    truth = session.truth()
    assert len(messages) == truth["n_messages"]
    assert [m.id for m in messages] == [f"{session.id}-{i}" for i in range(len(messages))]
    calls = {c["id"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls}
    results = [m for m in messages if isinstance(m, ToolMessage)]
    assert len(results) == truth["n_by_type"].get("tool", 0)
    assert {r.tool_call_id for r in results} <= calls
    assert all(r.status in ("success", "error") for r in results)


# ---------------------------------------------------------------------------------- files


@pytest.mark.parametrize("session", PARAMS)
def test_files_match_truth(session: Session | None) -> None:
    session, facts = facts_of(session)
    truth = session.truth()
    deviation = DEVIATIONS.get((session.source, session.id), Deviation(why=""))

    ours_read, ours_modified = facts["read_files"], facts["modified_files"]
    truth_read, truth_modified = truth["files_read"], truth["files_modified"]
    if session.source in SOURCES_WITHOUT_READ_CALLS:
        assert ours_read == []
        truth_read = []

    missing_read = unmatched(truth_read, ours_read)
    missing_modified = unmatched(truth_modified, ours_modified)
    extra_read = unmatched(ours_read, truth_read)
    extra_modified = unmatched(ours_modified, truth_modified)
    context = f"{session}: {deviation.why or 'no documented deviation'}"
    # each documented deviation is still real, so the table cannot go stale
    assert set(missing_read) == deviation.truth_only_read, context
    assert set(missing_modified) == deviation.truth_only_modified, context
    # beyond the truth: the documented tool-call deviations, and paths a shell command names
    commands = shell_commands(session)
    shell_extra = [p for p in extra_modified if p not in deviation.ours_only_modified] + extra_read
    assert deviation.ours_only_modified <= set(extra_modified), context
    wrong = [p for p in shell_extra if not named_by_a_command(p, commands)]
    assert wrong == [], f"{context}: paths no shell command names as a file: {wrong}"


def _exact(ours: list[str], truth: list[str]) -> bool:
    return set(ours) == set(truth)


def test_exact_match_figures_per_source() -> None:
    require_data_dir()
    found: dict[str, list[int]] = {}
    for session in SESSIONS:
        facts = extract_facts(session.messages(), command_tools=())  # tool-call files only
        truth = session.truth()
        read = _exact(facts["read_files"], truth["files_read"])
        modified = _exact(facts["modified_files"], truth["files_modified"])
        row = found.setdefault(session.source, [0, 0, 0, 0])
        row[0] += 1
        row[1] += read and modified
        row[2] += read
        row[3] += modified
    table = "\n".join(
        f"{source:15s} sessions={n:3d} both={b:3d} read={r:3d} modified={m:3d}"
        for source, (n, b, r, m) in sorted(found.items())
    )
    print("\nexact matches against truth.json\n" + table)
    assert {k: tuple(v) for k, v in found.items()} == EXPECTED, table


def _shell_gain(session: Session) -> tuple[int, int, int, int]:
    """(truth paths, found with tool calls only, found with shell parsing too, paths added
    beyond the truth), reads and modifications together (aider's free-text reads left out)."""
    truth = session.truth()
    truth_paths = [
        ("r", p) for p in truth["files_read"] if session.source not in SOURCES_WITHOUT_READ_CALLS
    ]
    truth_paths += [("m", p) for p in truth["files_modified"]]
    found = []
    for kwargs in ({"command_tools": ()}, {}):
        _, facts = facts_of(session, **kwargs)
        ours = {"r": facts["read_files"], "m": facts["modified_files"]}
        found.append(sum(any(same_file(p, q) for q in ours[k]) for k, p in truth_paths))
    extra = len(unmatched(facts["read_files"], [p for k, p in truth_paths if k == "r"]))
    extra += len(unmatched(facts["modified_files"], [p for k, p in truth_paths if k == "m"]))
    return len(truth_paths), found[0], found[1], extra


# source -> (truth paths, found by tool calls, found with shell too, added beyond the truth)
SHELL_ADDED: dict[str, tuple[int, int, int, int]] = {
    "aider": (10, 10, 10, 0),
    "mini-swe-agent": (1, 0, 1, 2),  # its sed -i / cat > edit is found; its cat reads added
    "openhands": (12, 12, 12, 6),  # echo > / touch / mv / cat of files the editor never opened
    "pi-mono": (80, 79, 79, 65),  # grep/cat/head reads, sed -i '' / mv / cp / rm / cat > edits
    "swe-agent": (53, 53, 53, 5),  # DEVIATIONS' two `create` files; pub1..3.pub read by `cat`
}


def test_shell_parsing_adds_truth_files_and_names_only_files() -> None:
    require_data_dir()
    rows: dict[str, list[int]] = {}
    for session in SESSIONS:
        row = rows.setdefault(session.source, [0, 0, 0, 0])
        for i, value in enumerate(_shell_gain(session)):
            row[i] += value
    table = "\n".join(
        f"{source:15s} truth={t:3d} tool-calls={a:3d} with-shell={b:3d} added={x:3d}"
        for source, (t, a, b, x) in sorted(rows.items())
    )
    print("\ntruth paths found, before/after shell parsing\n" + table)
    for t, before, after, _ in rows.values():
        assert before <= after <= t, table  # shell parsing never loses a truth path
    assert {k: tuple(v) for k, v in rows.items()} == SHELL_ADDED, table


# ---------------------------------------------------------------------------------- commands


NOT_FAILURES: dict[tuple[str, str], frozenset[str]] = {
    # the truth's heuristic took a `_curses.error: setupterm` warning line for a failure; the
    # script ran to the end (it printed all 17 numbers and closed the connection)
    ("swe-agent", "ctf__crypto__katy"): frozenset({"python retrieve_random_numbers.py"}),
}
"""Commands the truth lists as failing that did not fail."""


def _is_no_match(command: str, output_tail: str) -> bool:
    """A lone ``grep`` whose only output is the exit-1 trailer (read independently of langctx)."""
    body = output_tail.replace("(no output)", "").replace("Command exited with code 1", "")
    try:  # the standard library's shell lexer: one simple command, no pipe or list
        tokens = list(shlex.shlex(command, posix=True, punctuation_chars=True))
    except ValueError:
        return False
    return (
        command.startswith(("grep ", "rg "))
        and not any(set(token) <= set("|&;") for token in tokens)
        and output_tail.rstrip().endswith("Command exited with code 1")
        and not body.strip()
    )


def _command_tools_for(truth: dict[str, object]) -> set[str]:
    """Default command tools plus the shell-like tool names of the truth's failures.

    SWE-agent's conversion names a tool after the first word of its shell line (``python``,
    ``pip``); a user of such an agent would list them in ``command_tools``.
    """
    tools = set(DEFAULT_COMMAND_TOOLS)
    for failure in truth["latest_failures"]:  # type: ignore[attr-defined]
        args = json.loads(failure["args"])
        if isinstance(args.get("command"), str) and failure["tool"] not in DEFAULT_FILE_TOOLS:
            tools.add(failure["tool"])
    return tools


@pytest.mark.parametrize("session", PARAMS)
def test_truth_failures_are_found(session: Session | None) -> None:
    """Every failing command in the truth's ``latest_failures`` is among the error facts."""
    session, _ = facts_of(session)
    truth = session.truth()
    tools = _command_tools_for(truth)
    facts = extract_facts(
        session.messages(), command_tools=tools, max_commands=10**6, max_errors=10**6
    )
    ours = [e["command"] for e in facts["errors"] if e["command"] is not None]
    for failure in truth["latest_failures"]:
        command = json.loads(failure["args"]).get("command")
        if failure["tool"] not in tools or not isinstance(command, str):
            continue
        command = command.strip()
        if _is_no_match(command, failure["output_tail"]):
            # grep's exit 1 means "no line selected": an answer, not a failure
            assert command not in ours, f"{session}: a search without match reported: {command!r}"
            continue
        if command in NOT_FAILURES.get((session.source, session.id), frozenset()):
            assert command not in ours, f"{session}: NOT_FAILURES is stale for {command!r}"
            continue
        assert any(
            c == command or (c.endswith("…") and command.startswith(c[:-1])) for c in ours
        ), f"{session}: failing {failure['tool']} command not reported: {command[:120]!r}"
        assert all(e["lines"] and len(e["lines"]) <= 8 for e in facts["errors"])


@pytest.mark.parametrize("session", PARAMS)
def test_facts_are_json_and_bounded(session: Session | None) -> None:
    session, facts = facts_of(session)
    assert json.loads(json.dumps(facts)) == facts
    assert len(facts["commands"]) <= 20
    assert len(facts["errors"]) <= 5
    for error in facts["errors"]:
        assert 1 <= len(error["lines"]) <= 8
        assert all(len(line) <= 300 for line in error["lines"])


def test_all_sessions_are_fast() -> None:
    require_data_dir()
    loaded = [session.messages() for session in SESSIONS]
    start = time.perf_counter()
    for messages in loaded:
        extract_facts(messages)
    elapsed = time.perf_counter() - start
    total = sum(len(m) for m in loaded)
    # ~0.1 s on a laptop for ~3,000 messages and ~3.7 MB of text; the bound only catches blowups
    assert elapsed < 5.0, f"{elapsed:.2f}s for {total} messages"


@pytest.mark.parametrize("session", PARAMS)
def test_known_exit_codes_decide_failure(session: Session | None) -> None:
    """A command's known exit code decides whether it failed (its output is read only when the
    code is another program's, ``x | tail``), and the ledger's latest failure is the latest
    command that exited non-zero whenever one did."""
    session, _ = facts_of(session)
    facts = extract_facts(session.messages(), max_commands=10**6, max_errors=10**6)
    known = [c for c in facts["commands"] if c["exit_code"] is not None]
    for c in known:
        if c["exit_code"] == 0 and not parse_command(c["command"]).status_masked:
            assert c["ok"] is True, f"{session}: exit 0 read as a failure: {c['command'][:120]!r}"
    exited = [c for c in known if c["exit_code"] != 0 and c["ok"] is False]
    if exited:
        latest = exited[-1]
        line = next(
            ln for ln in render_facts(facts).splitlines() if ln.startswith("Latest failure")
        )
        assert line.startswith(
            f"Latest failure: `{latest['command'][:160]}` exit {latest['exit_code']}"
        ), f"{session}: {line[:200]}"


@pytest.mark.parametrize("session", PARAMS)
def test_failure_lines_reach_the_ledger_verbatim(session: Session | None) -> None:
    """Every error line the ledger shows (its quoted outputs) is text the tool printed, byte for
    byte: the ledger rewrites no quote."""
    session, facts = facts_of(session)
    outputs = {m.id: str(m.content) for m in session.messages() if isinstance(m, ToolMessage)}
    ledger = render_facts(facts)
    for error in facts["errors"]:
        printed = outputs.get(error["message_id"], "")
        for line in shown_failure_lines(error):
            if line.endswith("…"):  # clipped: its head is checked
                line = line[:-1]
            assert line in printed, f"{session}: {line[:120]!r} is not in its output"
    for span in QUOTED_OUTPUT_RE.finditer(ledger):
        text = span.group("text")
        parts = [p.removesuffix("…") for p in text.strip(" ").split("; ")]
        assert all(any(p in out for out in outputs.values()) for p in parts), text[:200]


@pytest.mark.parametrize("session", PARAMS)
def test_user_messages_render_byte_exact(session: Session | None) -> None:
    """Every real user message of the session, rendered in full in the "User messages" section,
    is there byte for byte (multi-line ones too: no indent added)."""
    session, _ = facts_of(session)
    items = user_message_facts(session.messages())
    text = render_user_messages(items, max_tokens=10**9, count=len)
    missing = [i["text"][:80] for i in items if i["text"] not in text]
    assert not missing, f"{session}: {len(missing)} of {len(items)} not verbatim: {missing[:3]}"


def _modified_line(ledger: str) -> str:
    return next((ln for ln in ledger.splitlines() if ln.startswith("Files modified so far")), "")


@pytest.mark.parametrize("session", PARAMS)
def test_the_ledger_names_modified_files_by_the_whole_path_the_call_gave(
    session: Session | None,
) -> None:
    """Where the ledger names a modified file (its file name is on the line), it names it by the
    whole path the tool call gave (a relative one may be joined to the session's root), read by
    the replay's independent truth, never relative to a prefix said once; the ones it leaves
    out at a tight cap are counted ("… and N earlier files")."""
    from langchain_core.messages import HumanMessage

    from langctx.cli.replay.truth import Request, Truth, session_roots

    session, facts = facts_of(session)
    messages = session.messages()
    truth = Truth(session_roots(messages))
    for m in messages:
        truth.add(m)
    given = [p for p in truth.modified if p not in truth.modified_by]  # named whole by its call
    for cap in (None, 300, 60):
        line = _modified_line(render_facts(facts, max_tokens=cap, count=lambda t: len(t) // 4))
        assert "(under " not in line and "by directory" not in line, line[:200]
        request = Request([HumanMessage(line)])
        body = line.split(": ", 1)[-1] if line else ""
        for path in given:
            if re.search(r"(?<![\w.-])" + re.escape(path.rsplit("/", 1)[-1]) + r"\b", body):
                assert request.has_path(path, truth.roots), f"{session} cap {cap}: {path}"
        named = len(body.split(", ")) if body else 0
        m = re.search(r"… and (\d+) earlier files", line)
        assert named + (int(m.group(1)) if m else 0) == len(facts["modified_files"]) or any(
            '"' in p or ", " in p for p in facts["modified_files"]
        ), f"{session} cap {cap}: {line[:200]}"
