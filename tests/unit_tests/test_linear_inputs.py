"""Inputs built to make a parser read the rest of the text once per opener.

A human message of many ``<system-reminder>`` openers without a closer, an HTML tool output of
many ``<a href='`` tags never closed: a regex ``opener.*?closer`` (or the standard library's HTML
parser) reads to the end of the text from each of them, minutes for a megabyte. langctx pairs
openers and closers once (:mod:`langctx.machinery`) and writes unterminated markup as text before
parsing (:func:`~langctx.context_mode.reducers.html.defuse_tags`). These tests check that both
do what the quadratic forms did, on every input, and run the megabyte inputs (a regression shows
as a test that takes minutes; no test here reads a clock).
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from langctx.cli.replay import truth
from langctx.context_mode.reducers.html import _UNTERMINATED_TAG, defuse_tags, extract_page
from langctx.facts import extract_facts
from langctx.machinery import (
    DEFAULT_MACHINERY,
    MACHINERY_BLOCKS,
    MACHINERY_TAGS,
    Machinery,
    strip_machinery,
    substantive_text,
)
from langctx.text_spans import Finder


def _regex_rules() -> Machinery:
    """The default rules as one regex per tag set and block (``opener.*?closer``): the reference."""
    rules = Machinery()
    flags = re.S | re.M
    names = "|".join(re.escape(t) for t in sorted(set(MACHINERY_TAGS), key=len, reverse=True))
    finders = [
        Finder(re.compile(rf"<({names})(?:\s[^<>]*)?>.*?</\1\s*>", re.S)),
        *(Finder(re.compile(p, flags)) for p in rules.patterns),
        *(Finder(re.compile(f"(?:{a}).*?(?:{b})", flags)) for a, b in MACHINERY_BLOCKS),
    ]
    object.__setattr__(rules, "_finders", tuple(finders))
    return rules


REFERENCE = _regex_rules()

_FRAGMENTS = [
    "<system-reminder>",
    "</system-reminder>",
    "<system-reminder note='x'>",
    "</ system-reminder>",
    "<command-name>",
    "</command-name>",
    "<command-args>",
    "</command-args>",
    "/review-pr",
    "/model",
    "<environment_context>",
    "</environment_context >",
    "# Context from my IDE setup:",
    "## My request for Codex:",
    "--- DEMONSTRATION ---",
    "--- END OF DEMONSTRATION ---",
    "Here is a demonstration of how to correctly accomplish this task.",
    "[Request interrupted by user]",
    "[Request interrupted by user",
    "```",
    "`",
    "\x1b[0m",
    "\n",
    " ",
    "Fix the parser",
    "x",
    "<",
    ">",
]

_texts = st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join)


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_paired_openers_strip_what_the_regexes_strip(text: str) -> None:
    assert strip_machinery(text) == strip_machinery(text, REFERENCE)


@settings(max_examples=300, deadline=None)
@given(st.lists(_texts, min_size=1, max_size=3))
def test_slash_command_requests_are_read_as_before(texts: list[str]) -> None:
    message = HumanMessage(content=[{"type": "text", "text": t} for t in texts])
    assert substantive_text(message) == substantive_text(message, REFERENCE)


def test_a_megabyte_of_unclosed_machinery_is_stripped_in_one_scan() -> None:
    tail = "<system-reminder>hidden</system-reminder>Go"
    # the first opener pairs with the one closer at the end: one element, as the regex reads it
    assert strip_machinery("<system-reminder> x " * 50_000 + tail) == "Go"
    for opener in (
        "# Context from my IDE setup: a\n",
        "--- DEMONSTRATION ---\n",
        "<ide_selection>",
    ):
        out = strip_machinery(opener * (1_000_000 // len(opener)) + tail)
        assert out.endswith("Go") and "hidden" not in out
        assert len(out) > 900_000  # openers without a closer are text, kept


def test_a_megabyte_of_interrupt_markers_and_commands_is_read_in_one_scan() -> None:
    assert strip_machinery("[Request interrupted by user" * 40_000) != ""
    part = "<command-name>/x</command-name><command-args>y</command-args>"
    text = substantive_text(HumanMessage(part * (1_000_000 // len(part))))
    assert text.startswith("/x y") and text.count("/x y") == 1_000_000 // len(part)


def test_a_stripped_request_keeps_its_machinery_rules() -> None:
    rules = DEFAULT_MACHINERY.extend(blocks=[(r"^BEGIN NOTE$", r"^END NOTE$")])
    text = "BEGIN NOTE\ncwd=/x\nEND NOTE\nAdd a flag\nBEGIN NOTE\nnever closed"
    assert strip_machinery(text, rules) == "Add a flag\nBEGIN NOTE\nnever closed"
    assert strip_machinery(text) == text


# ---------------------------------------------------------------- HTML


_MARKUP = st.lists(
    st.sampled_from(
        [
            "<a href='",
            "<p>",
            "</p>",
            "<",
            ">",
            "'",
            '"',
            "<!--",
            "-->",
            "<?x",
            "<![CDATA[",
            "</a",
            "x",
            " ",
            "\n",
        ]
    ),
    max_size=60,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_MARKUP)
def test_defused_markup_has_no_tag_open_before_the_next_one(html: str) -> None:
    out = defuse_tags(html)
    assert not _unterminated(out)
    if not _unterminated(html):
        assert out == html  # well-formed markup is left as it is


def _unterminated(html: str) -> bool:
    """A tag open before the next ``<``, or a comment that never closes."""
    last = html.rfind("-->")
    return bool(_UNTERMINATED_TAG.search(html)) or "<!--" in html[last + 3 if last >= 0 else 0 :]


def test_well_formed_pages_read_as_before() -> None:
    page = (
        "<!DOCTYPE html><html><head><title>T</title><!-- <p>old</p> --></head><body>"
        "<p>Hi <a href='/a'>there</a></p><button>Go</button><![CDATA[x]]></body></html>"
    )
    assert defuse_tags(page) == page
    assert extract_page(page) == (["# T", "Hi [there](/a)", "[button: Go]"], 2)


def test_a_megabyte_of_broken_markup_is_parsed_in_one_scan() -> None:
    for unit in ("<a href='", "<![CDATA[", "<?x ", "<!-- a", "</a "):
        lines, _ = extract_page(unit * (900_000 // len(unit)) + "<p>end</p>")
        assert lines[-1] == "end" and lines[0].startswith(unit)  # the broken markup is text
    # a quote left open inside closed tags runs on to the end, as in a browser: one long tag
    assert extract_page('<a b="x>' * 100_000 + "<p>end</p>") == ([], 0)


# ---------------------------------------------------------------- content detection


_OLD_HTML_START = re.compile(
    r"^(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html|head|body)\b", re.I | re.S
)  # a repeat of lazy comments: 2**n ways to split n comments when no root tag follows


_PAGE_START = ["<!--", "-->", "<!-->", "<html", "<!DOCTYPE html", "<Body", "<head>", "<bodyx"]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from([*_PAGE_START, " ", "\n", "x", "<", ">", "-"]), max_size=14).map(
        "".join
    )
)
def test_a_page_start_is_read_as_before(head: str) -> None:
    from langctx.context_mode.detect import _HTML_START

    assert bool(_HTML_START.match(head)) == bool(_OLD_HTML_START.match(head))


def test_a_megabyte_of_comments_is_detected_in_one_scan() -> None:
    from langctx.context_mode import detect_kind

    # the old start pattern took seconds for 30 comments, doubling every two more
    assert detect_kind("<!--a-->" * 125_000 + "x") == "text"
    assert detect_kind("<!-- a -->\n" * 1_000 + "<html><body><p>x</p></body></html>") == "html"


# ---------------------------------------------------------------- slash commands, line ends

_OLD_COMMAND_PART = re.compile(r"<(command-name|command-args)(?:\s[^<>]*)?>(.*?)</\1\s*>", re.S)


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_command_elements_pair_as_the_regex_did(text: str) -> None:
    from langctx.machinery import _COMMAND_PART
    from langctx.text_spans import pairs

    found = [(o[0], c[1], name, text[o[1] : c[0]]) for o, c, name in pairs(_COMMAND_PART, text)]
    old = [(m.start(), m.end(), m.group(1), m.group(2)) for m in _OLD_COMMAND_PART.finditer(text)]
    assert found == old


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from([" ", "\t", "\n", "\r\n", "x", " x", "\t\n"]), max_size=30).map(
        "".join
    )
)
def test_line_ends_lose_the_same_spaces(text: str) -> None:
    from langctx.machinery import _TRAILING

    assert _TRAILING.sub("", text) == re.sub(r"[ \t]+$", "", text, flags=re.M)


def test_a_megabyte_of_spaces_or_command_openers_is_read_in_one_scan() -> None:
    # "[ \t]+$" tried every space of a run that a word ends; "<command-args>(.*?)</..." read to
    # the end from every opener
    assert strip_machinery(" \t" * 500_000 + "x") == "x"
    opener = "<command-args>"
    text = opener * (1_000_000 // len(opener)) + "<command-args>fix it</command-args>"
    assert substantive_text(HumanMessage(text)).startswith("<command-args>")
    assert substantive_text(HumanMessage(text)).endswith("fix it")


# ---------------------------------------------------------------- table separators, snapshots

_SEP_PARTS = ["|", "---", "-", ":", " ", "\t", "\n", "+", "x"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_SEP_PARTS), max_size=16).map("".join))
def test_separator_lines_match_as_before(line: str) -> None:
    from langctx.context_mode.reducers.html import _A11Y_URL
    from langctx.context_mode.reducers.table import _MD_SEP

    old_sep = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")
    assert bool(_MD_SEP.match(line)) == bool(old_sep.match(line))
    url = line.replace("x", "/url: x")
    old_url = re.compile(r"^\s*-?\s*/url:\s*(\S+)").match(url)
    assert (m.group(1) if (m := _A11Y_URL.match(url)) else None) == (old_url and old_url.group(1))


def test_a_megabyte_line_of_spaces_in_a_table_or_snapshot_is_read_in_one_scan() -> None:
    from langctx.context_mode import reduce_output

    # "\s*\|?\s*" and "\s*-?\s*" split a run of spaces every way before failing on the "x"
    table = reduce_output(
        " \r" * 500_000 + "x\n1,2\n3,4\n", tool_name="read", args={"path": "t.csv"}
    )
    assert table is not None and "1,2" in table.text
    snapshot = reduce_output('- link "a"\n' * 6 + " \t" * 500_000 + "x\n", tool_name="snapshot")
    assert snapshot is not None and snapshot.kind == "html"


# ---------------------------------------------------------------- patch file lines

_PATCH_PARTS = [
    "*** Update File: ",
    "*** Move to: ",
    "*** Add File: b",
    "a",
    "x y",
    " ",
    "\t",
    "\n",
    "\r",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PATCH_PARTS), max_size=14).map("".join))
def test_patch_file_names_are_read_as_before(text: str) -> None:
    from langctx.cli.replay.truth import _PATCH_RE, _patch_name
    from langctx.facts.shell_programs import _PATCH_FILE_RE, patch_name

    old = re.compile(r"^\*\*\* (?:Update File|Add File|Delete File|Move to): (.+?)\s*$", re.M)
    assert [patch_name(m.group(1)) for m in _PATCH_FILE_RE.finditer(text)] == old.findall(text)
    old_truth = re.compile(
        r"^\*\*\* (?:Update|Add|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M
    )
    assert [_patch_name(m.group(1) or m.group(2)) for m in _PATCH_RE.finditer(text)] == [
        m.group(1) or m.group(2) for m in old_truth.finditer(text)
    ]


def test_a_patch_line_of_a_megabyte_of_spaces_is_read_in_one_scan() -> None:
    from langctx.cli.replay.truth import modified_paths

    # "(.+?)\s*$" tried the end of the line from every one of the spaces
    patch = "*** Begin Patch\n*** Update File: a" + " \t" * 500_000 + "b\n*** Add File: c.py \n"
    call = {"id": "c1", "name": "apply_patch", "args": {"input": patch}}
    facts = extract_facts([AIMessage("", tool_calls=[call]), ToolMessage("ok", tool_call_id="c1")])
    assert "c.py" in facts["modified_files"]
    assert "c.py" in modified_paths("apply_patch", {"input": patch})


# ---------------------------------------------------------------- next steps


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "B", "-", ".", "/", "py", "_", " ", "x.c", "é"]), max_size=16
    ).map("".join)
)
def test_a_next_step_target_is_found_as_before(sentence: str) -> None:
    from langctx.summarize.text import _TARGET

    old = re.compile(
        r"`[^`]+`|\"[^\"]+\"|(?<!\w)'[^'\s][^']*'(?!\w)|"
        r"[\w.-]*/[\w./-]+|\b[\w-]+\.[a-z]{1,5}\b|"
        r"\b[a-z]+_[a-z0-9_]+\b|\b[a-z]+[A-Z]\w*\b|\b[A-Z][a-z]+[A-Z]\w*\b|\b\w+\(\)"
    )
    assert bool(_TARGET.search(sentence)) == bool(old.search(sentence))


def test_a_next_step_of_a_megabyte_word_is_read_in_one_scan() -> None:
    from langctx.summarize.text import extract_next_step

    # a path or file name was tried from every character of the word: quadratic
    for word in ("a-" * 500_000, "a" * 1_000_000):
        step = extract_next_step([AIMessage("Next I will fix " + word)])
        assert step is not None and step.startswith("Next I will fix a")


def test_a_huge_tool_name_is_read_from_its_head() -> None:
    from langctx.facts.tool_names import MAX_NAME_CHARS, tool_name_words

    words = tool_name_words("mcp__x__" + "A" * 1_000_000 + "b")  # hung in the acronym split
    assert words == ("a" * MAX_NAME_CHARS,)


# ---------------------------------------------------------------- the replay's own ground truth

_OLD_TRUTH_ELEMENT = re.compile(r"<(" + truth._TAG_NAMES + r")(?:\s[^<>]*)?>.*?</\1>", re.S)
_OLD_TRUTH_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.S)


@settings(max_examples=400, deadline=None)
@given(_texts)
def test_the_truth_parser_cuts_what_its_regexes_cut(text: str) -> None:
    elements = truth._elements(text, truth._OPENER, truth._CLOSER)
    cut = truth._CUT.join(text[a:b] for a, b in truth._gaps(text, elements))
    assert cut == _OLD_TRUTH_ELEMENT.sub(truth._CUT, text)
    old_args = _OLD_TRUTH_ARGS.findall(truth._ANSI.sub("", text))
    assert truth.command_args(text) == [a.strip() for a in old_args if a.strip()]


def test_a_megabyte_of_unclosed_tags_is_read_by_the_truth_parser_in_one_scan() -> None:
    for opener in ("<system-reminder> x ", "<command-args>a", "[Request interrupted by user"):
        text = opener * (1_000_000 // len(opener)) + "<system-reminder>hidden</system-reminder>Go"
        assert truth.user_text(HumanMessage(text)).endswith("Go")
    assert truth.is_informative_step("Let me fix " + "a" * 1_000_000) is False
