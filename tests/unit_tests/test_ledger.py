"""The facts ledger: every modified file named whole at any cap, read files bounded, paths lossless."""

from __future__ import annotations

import doctest
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

import langctx.paths as paths_module
import langctx.projection as projection_module
from langctx import LayeredChatMemory
from langctx.errors import ConfigError
from langctx.paths import join_paths, split_paths
from langctx.projection import DEFAULT_MAX_READ_FILES, FACTS_GROWTH, render_facts
from langctx.tokens import TiktokenCounter

EXACT = TiktokenCounter().count_text


def COUNT(text: str) -> int:  # a cheap counter for property tests
    return (len(text) + 3) // 4


# ----------------------------------------------------------------- an independent reader

_EDGE = r"(?<![\w./-])"
_TAIL = r"(?![\w/-]|\.\w)"


def whole_path_named(path: str, text: str) -> bool:
    """A reader that knows nothing of the ledger's format: ``path`` is in ``text`` whole,
    bounded by characters that cannot be part of it (no prefix said once counts)."""
    return re.search(_EDGE + re.escape(path) + _TAIL, text) is not None


def modified_line(ledger: str) -> tuple[list[str], int]:
    """The modified files a ledger names (read back with :func:`split_paths`) and the number of
    earlier ones it only counts ("... and N earlier files")."""
    line = next((ln for ln in ledger.splitlines() if ln.startswith("Files modified so far")), "")
    if not line:
        return [], 0
    if line.startswith("Files modified so far ("):
        head, _, body = line.partition("): ")
    else:
        head, body = "", line.split(": ", 1)[1]
    m = re.search(r"… and (\d+) earlier files", head)
    return split_paths(body), int(m.group(1)) if m else 0


def modified_named(ledger: str) -> list[str]:
    """The modified files a ledger names, whole."""
    return modified_line(ledger)[0]


# ----------------------------------------------------------------- strategies

_segment = st.sampled_from(["src", "lib", "pkg", "tests", "core", "a", "b_c", "x-y"])
_name = st.builds(
    "{}{}.{}".format,
    st.sampled_from(["mod", "test_", "util", "a", "b"]),
    st.integers(0, 99),
    st.sampled_from(["py", "ts", "md"]),
)


@st.composite
def project_paths(draw: st.DrawFn, max_size: int = 40) -> list[str]:
    """Paths of one project: relative, or absolute under one root (like real agent sessions)."""
    root = draw(st.sampled_from(["", "/home/dev/proj/", "/testbed/", "/Users/x/w/app/"]))
    dirs = draw(st.lists(st.lists(_segment, max_size=3).map("/".join), min_size=1, max_size=6))
    picks = draw(st.lists(st.tuples(st.integers(0, len(dirs) - 1), _name), max_size=max_size))
    return [root + (dirs[i] + "/" if dirs[i] else "") + name for i, name in picks]


_odd_text = st.text(
    alphabet=st.sampled_from(list('ab/.,;: "\\\n\t-_é')) | st.characters(), max_size=12
)


# ----------------------------------------------------------------- paths


@settings(max_examples=400, deadline=None)
@given(st.lists(_odd_text, max_size=12), st.booleans())
def test_join_round_trip_any_strings(raw: list[str], absolute: bool) -> None:
    paths = ["/r/o/" + p for p in raw] if absolute else raw
    assert split_paths(join_paths(paths)) == list(dict.fromkeys(paths))


@settings(max_examples=300, deadline=None)
@given(project_paths())
def test_join_keeps_each_path_whole_and_in_order(paths: list[str]) -> None:
    text = join_paths(paths)
    assert split_paths(text) == list(dict.fromkeys(paths))
    assert (text.split(", ") if text else []) == list(dict.fromkeys(paths))


def test_a_broken_quoted_path_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="broken quoted path"):
        split_paths('"unterminated')


# ----------------------------------------------------------------- the ledger


def _facts(modified: list[str], read: list[str], constraints: list[str], failing: bool) -> dict:
    return {
        "constraints": constraints,
        "modified_files": modified,
        "read_files": read,
        "commands": [{"command": "pytest -q", "exit_code": 1, "ok": False}] if failing else [],
        "errors": [{"lines": ["E   AssertionError: 2 != 3"]}] if failing else [],
    }


_constraints = st.lists(
    st.from_regex(r"(Do not|Never|Always) [a-z ]{3,30}\.", fullmatch=True), max_size=6
)


@settings(max_examples=150, deadline=None)
@given(
    project_paths(max_size=40),
    project_paths(max_size=40),
    _constraints,
    st.booleans(),
    st.integers(min_value=1, max_value=400),
)
def test_every_modified_file_is_named_at_any_cap(
    modified: list[str], read: list[str], constraints: list[str], failing: bool, cap: int
) -> None:
    facts = _facts(modified, read, constraints, failing)
    text = render_facts(facts, max_tokens=cap, count=COUNT, ceiling_tokens=10**9)
    assert sorted(modified_named(text)) == sorted(set(modified))
    # below an unbounded ceiling an independent whole-path reader finds each
    assert all(whole_path_named(p, text) for p in modified)


@settings(max_examples=150, deadline=None)
@given(
    project_paths(max_size=50),
    _constraints,
    st.booleans(),
    st.integers(min_value=20, max_value=400),
)
def test_past_the_ceiling_the_most_recent_are_named_and_the_rest_counted(
    modified: list[str], constraints: list[str], failing: bool, cap: int
) -> None:
    facts = _facts(modified, [], constraints, failing)
    text = render_facts(facts, max_tokens=cap, count=COUNT)
    unique = list(dict.fromkeys(modified))
    named = modified_named(text)
    if not unique:
        assert "Files modified" not in text
        return
    named, earlier = modified_line(text)
    assert all(whole_path_named(p, text) for p in named)
    assert earlier == len(unique) - len(named)  # the ones not named are counted
    assert named == unique[len(unique) - len(named) :]  # the most recent, in order
    if earlier:  # only past FACTS_GROWTH * cap
        assert COUNT(text) <= FACTS_GROWTH * cap or len(named) == 1
        assert 'working_memory(kind="files")' in text
    unbounded = render_facts(facts, max_tokens=cap, count=COUNT, ceiling_tokens=10**9)
    assert COUNT(unbounded) > FACTS_GROWTH * cap or not earlier


@settings(max_examples=80, deadline=None)
@given(
    project_paths(max_size=10),
    st.integers(min_value=0, max_value=2000),
    _constraints,
    st.integers(min_value=60, max_value=600),
)
def test_read_files_are_bounded_and_counted(
    modified: list[str], n_read: int, constraints: list[str], cap: int
) -> None:
    read = [f"/srv/app/src/m{i // 50}/file_{i}.py" for i in range(n_read)]
    facts = _facts(modified, read, constraints, True)
    text = render_facts(facts, max_tokens=cap, count=COUNT)
    shown = re.findall(r"file_(\d+)\.py", text)
    assert len(shown) <= DEFAULT_MAX_READ_FILES
    assert [int(s) for s in shown] == list(range(n_read - len(shown), n_read))  # the most recent
    if 0 < len(shown) < n_read or (n_read and not shown and "Files read" in text):
        assert f"of {n_read}" in text or f"Files read: {n_read} (not listed" in text
    whole = render_facts(facts, max_tokens=10**9, count=COUNT, ceiling_tokens=10**9)
    if COUNT(text) > cap:  # only the latest failure, newest constraint and modified files grow it
        assert "Files read" not in text
        assert sum(ln.startswith("- ") for ln in text.splitlines()) <= 1
    assert len(re.findall(r"file_\d+\.py", whole)) == min(n_read, DEFAULT_MAX_READ_FILES)


def test_read_files_never_grow_the_ledger_with_the_session() -> None:
    sizes = []
    for n in (100, 1_000, 10_000, 100_000):
        read = [f"/srv/app/src/m{i % 97:02d}/file_{i:06d}.py" for i in range(n)]
        facts = _facts(["/srv/app/src/core.py"], read, ["Never push."], True)
        sizes.append(COUNT(render_facts(facts, max_tokens=300, count=COUNT)))
    assert max(sizes) <= 300 and max(sizes) - min(sizes) <= 4  # only the count's digits change


def test_a_tight_ledger_names_whole_paths_never_under_a_root() -> None:
    """Real sessions under a deep home directory got ``(under /Users/dev/.../core/): mod_0.ts``:
    no whole path in the request, so the model could not call a tool with one."""
    modified = [
        f"/Users/dev/work/pi-mono/packages/coding-agent/src/core/mod_{i}.ts" for i in range(6)
    ]
    facts = _facts(modified, [], [], False)
    roomy = render_facts(facts, max_tokens=500, count=COUNT)
    assert all(whole_path_named(p, roomy) for p in modified)
    tight = render_facts(facts, max_tokens=60, count=COUNT)  # grows to 300 for them
    assert all(whole_path_named(p, tight) for p in modified) and "under " not in tight
    capped = render_facts(facts, max_tokens=16, count=COUNT)  # 80 tokens hold only some
    named, earlier = modified_line(capped)
    assert 0 < len(named) < 6 and earlier == 6 - len(named)
    assert named == modified[6 - len(named) :]
    assert f"… and {earlier} earlier files" in capped and COUNT(capped) <= 80


def test_modified_files_outrank_read_files_and_older_constraints() -> None:
    modified = [f"src/pkg_{i}/mod_{i}.py" for i in range(30)]
    constraints = ["Keep Python 3.9.", "Never push to main.", "Do not edit tests."]
    facts = _facts(modified, [f"docs/d{i}.md" for i in range(30)], constraints, True)
    text = render_facts(facts, max_tokens=80, count=COUNT)
    assert all(whole_path_named(p, text) for p in modified)
    assert "Do not edit tests." in text and "Keep Python 3.9." not in text
    assert "docs/d" not in text and "Latest failure: `pytest -q` exit 1" in text


def test_read_files_dropped_by_the_merge_are_counted() -> None:
    facts = {**_facts([], ["a.py", "b.py"], [], False), "read_files_dropped": 310}
    text = render_facts(facts, max_read_files=1)
    assert (
        text
        == 'Files read (the 1 most recent of 312; older: re-read, or working_memory(kind="files")): b.py'
    )


def test_a_zero_cap_turns_the_ledger_off() -> None:
    assert render_facts(_facts(["a.py"], [], [], True), max_tokens=0, count=COUNT) == ""


# ----------------------------------------------------------------- through the memory


def test_every_request_after_a_compaction_names_every_modified_file_whole_or_counts_it() -> None:
    mem = LayeredChatMemory(max_tokens=8000)
    mem.add_messages([SystemMessage("You are a coding agent."), HumanMessage("Refactor the shop.")])
    root = "/home/dev/projects/shop/"
    edited: list[str] = []
    checked = 0
    for t in range(600):
        calls = [{"id": f"r{t}", "name": "read_file", "args": {"path": f"{root}lib/r_{t}.py"}}]
        if t % 10 == 9:
            path = f"{root}src/area_{t % 7}/sub_{t % 3}/changed_{t}.py"
            calls.append({"id": f"e{t}", "name": "edit_file", "args": {"path": path}})
            edited.append(path)
        mem.add_messages(
            [AIMessage(f"step {t} " + "word " * 40, tool_calls=calls)]
            + [ToolMessage("x = 1\n" * 30, tool_call_id=c["id"]) for c in calls]
        )
        if not mem.compactions:
            continue
        folded = {f for e in mem.compactions for f in e["modified_files"]}
        hay = "\n".join(str(m.content) for m in mem.build_context())
        ledger = hay.split("<langctx:facts>\n", 1)[1].split("\n</langctx:facts>", 1)[0]
        earlier = modified_line(ledger)[1]
        lost = [p for p in edited if p in folded and not whole_path_named(p, hay)]
        # only the oldest go, each counted in the ledger's "... and N earlier files"
        assert lost == edited[: len(lost)] and len(lost) <= earlier, f"turn {t}: {lost[:2]}"
        checked += 1
    grown = mem.counter.count_text(ledger) > mem.config.max_facts_tokens_resolved
    named, counted = modified_line(ledger)
    # past its cap, most of them whole, the rest counted
    assert checked > 500 and len(folded) >= 50 and grown and len(named) + counted == len(folded)
    assert len(named) >= 40 and "under " not in ledger


# ----------------------------------------------------------------- docstrings


@pytest.mark.parametrize("module", [paths_module, projection_module])
def test_docstring_examples_exist(module: object) -> None:
    """They run in test_public_api (every module once); here: the module kept its examples."""
    tests = doctest.DocTestFinder(exclude_empty=True).find(module)
    assert sum(len(t.examples) for t in tests) > 0


def test_every_later_user_constraint_is_kept_verbatim_while_the_ledger_has_room() -> None:
    """The facts of a fold kept the 8 newest constraints, each cut at 220 characters, although
    the ledger had room: a session with 13 later instructions lost most of them."""
    long = (
        "Make sure the theme loader never throws on an invalid theme file, because a user who "
        "restarts with an old config must still get a working terminal with the default colours, "
        "and log which key was wrong instead of silently ignoring it or exploding at startup."
    )
    rules = [f"Never touch the file generated_{i}.py by hand." for i in range(12)] + [long]
    assert len(long) > 220
    mem = LayeredChatMemory(max_tokens=32_000, token_counter="tiktoken")
    mem.add_messages([SystemMessage("You code.", id="s"), HumanMessage("Fix the theme.", id="t")])
    for i, rule in enumerate(rules):
        mem.add_messages(
            [HumanMessage(rule, id=f"u{i}"), AIMessage(f"Noted {i}. " * 300, id=f"a{i}")]
        )
    mem.compact(keep_recent_tokens=0)
    text = "\n".join(str(m.content) for m in mem.build_context())
    missing = [r for r in rules if r not in text]
    assert missing == []


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        # a lead-in before a tool call does not replace an older step that names its target
        (
            ["Next I will fix `parse_list` in src/parser.py.", "Let me look at it:"],
            "Next I will fix `parse_list` in src/parser.py.",
        ),
        # a newer step that says what it does is the next step, target or not
        (
            ["I'll fix tokenize() next.", "Now I'll rerun the whole test suite to confirm it."],
            "Now I'll rerun the whole test suite to confirm it.",
        ),
        # apostrophes are not quotes: "what's" names nothing, so this is still a lead-in
        (["I'll fix tokenize() next.", "Let me see what's wrong."], "I'll fix tokenize() next."),
        (["Let me think.", "Let me read it."], "Let me read it."),
        (["All tests pass."], "All tests pass."),
        # a colon introduces what follows, unless the sentence states the step itself
        (
            ["I'll fix tokenize() next.", "Let me read the relevant files first:"],
            "I'll fix tokenize() next.",
        ),
        (
            [
                "I'll fix tokenize() next.",
                "Now let me update the checkboxes in the plan and commit:",
            ],
            "Now let me update the checkboxes in the plan and commit:",
        ),
    ],
)
def test_the_next_step_is_the_newest_that_names_what_it_acts_on(said: list[str], kept: str) -> None:
    from langctx.summarize.text import extract_next_step

    assert extract_next_step([AIMessage(s) for s in said]) == kept
