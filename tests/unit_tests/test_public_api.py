"""The public surface: curated exports, runnable docstrings, the code of the README and docs/."""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import re
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

import langctx

ROOT = Path(__file__).resolve().parents[2]

EXPECTED_ALL = [
    "COMPACTION_EVENT",
    "DEFAULT_PRIORITIES",
    "ApproximateCounter",
    "BudgetError",
    "CompactionEntry",
    "CompactionEvent",
    "CompressedSerializer",
    "ConfigError",
    "ConfigOptions",
    "ContextModeMiddleware",
    "ContextModeProcessor",
    "ContextModeToolProcessor",
    "ContextOverflowError",
    "EditEntry",
    "FileToolSpec",
    "InvalidHistoryError",
    "InvalidMessageError",
    "LangctxAgentState",
    "LangctxChannel",
    "LangctxChatMessageHistory",
    "LangctxDeltaAgentState",
    "LangctxDeltaState",
    "LangctxError",
    "LangctxMiddleware",
    "LangctxNode",
    "LangctxState",
    "LangctxWarning",
    "LayeredChatMemory",
    "LocalSummarizer",
    "LongTermMemory",
    "MemoryConfig",
    "MemoryOptions",
    "MemorySettings",
    "ModelSummarizer",
    "OverflowRecovery",
    "PrefixSummarizer",
    "ReferenceNotFoundError",
    "SQLiteChatHistoryStore",
    "StateVersionError",
    "SummarizerError",
    "SummaryRequest",
    "ThreadView",
    "TiktokenCounter",
    "TokenCounter",
    "__version__",
    "afull_log",
    "channel_update",
    "create_agent",
    "fetch_context_tool",
    "full_log",
    "make_compact_tool",
    "make_pre_model_hook",
    "merge_langctx",
    "open_checkpointer",
    "resolve_token_counter",
    "route_after_memory",
    "view_state",
    "with_overflow_recovery",
    "wrap_tools_with_context_mode",
]


def test_all_is_sorted_and_pinned() -> None:
    def group(name: str) -> tuple[int, str]:  # ruff's RUF022 order: CONSTANTS, Classes, the rest
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert langctx.__all__ == sorted(langctx.__all__, key=group)
    assert sorted(langctx.__all__) == sorted(EXPECTED_ALL)
    for name in langctx.__all__:
        assert hasattr(langctx, name), name


def _modules() -> list[str]:
    names = ["langctx"]
    for info in pkgutil.walk_packages(langctx.__path__, "langctx."):
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples_run(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ImportError as exc:  # an optional integration whose extra is not installed
        pytest.skip(f"{name} needs an optional dependency: {exc}")
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for test in finder.find(module, name):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


INTEGRATIONS = {
    "langctx.middleware": ["LangctxMiddleware", "LangctxMiddlewareState", "ToolOutputProcessor"],
    "langctx.agent": ["create_agent"],
    "langctx.memory_step": ["ArchiveWrite", "MemoryStep"],
    "langctx.langgraph": [
        "LangctxAgentState",
        "LangctxNode",
        "LangctxState",
        "make_compact_tool",
        "make_pre_model_hook",
        "route_after_memory",
    ],
    "langctx.delta_state": [
        "DEFAULT_SNAPSHOT_FREQUENCY",
        "ArchivedBatches",
        "LangctxDeltaAgentState",
        "LangctxDeltaChannel",
        "LangctxDeltaState",
        "append_batches",
        "merge_langctx_writes",
    ],
    "langctx.recovery": [
        "DEFAULT_MAX_OVERFLOW_RETRIES",
        "OverflowRecoveringModel",
        "OverflowRecovery",
        "with_overflow_recovery",
    ],
    "langctx.events": [
        "COMPACTION_EVENT",
        "deferred_callbacks",
        "emit_compaction_event",
        "emitting",
        "event_payload",
    ],
    "langctx.history": ["STATE_KEY", "LangctxChatMessageHistory", "SQLiteChatHistoryStore"],
    "langctx.context_mode.middleware": [
        "ContextModeMiddleware",
        "ContextModeState",
        "ContextModeToolProcessor",
        "with_run_id",
    ],
    "langctx.context_mode.tools": [
        "CONTEXT_MODE_SYSTEM_PROMPT",
        "FETCH_CONTEXT_DESCRIPTION",
        "ContextModeTool",
        "fetch_context_tool",
        "guard_tool",
        "guarded_tools",
        "reference_store",
        "remember_tool",
        "working_memory_tool",
        "wrap_tools_with_context_mode",
    ],
    "langctx.stores.archive": [
        "ARCHIVE_NAMESPACE",
        "Archive",
        "ArchiveMissingError",
        "ArchiveOption",
        "afull_log",
        "archive_namespace",
        "aread_batches",
        "assemble",
        "full_log",
        "read_batches",
        "thread_entries",
    ],
    "langctx.stores.references": [
        "CHUNK_BYTES",
        "NO_STORE_WARNING",
        "REFS_NAMESPACE",
        "BaseStoreReferenceStore",
        "GraphReferenceStore",
        "namespace_label",
    ],
    "langctx.stores.long_term": [
        "DEFAULT_LONG_TERM_TOKENS",
        "LONG_TERM_NAMESPACE",
        "LongTermMemory",
    ],
    "langctx.stores.compressed": ["CompressedSerializer"],
    "langctx.stores.beside": ["store_beside"],
    "langctx.stores.checkpoints": [
        "CheckpointerConnectionError",
        "aopen_checkpointer",
        "open_checkpointer",
        "redact",
    ],
}
"""The integration modules (they import LangChain or LangGraph) and their public names."""


@pytest.mark.parametrize("module", sorted(INTEGRATIONS))
def test_integration_modules_public_names_are_pinned(module: str) -> None:
    assert importlib.import_module(module).__all__ == INTEGRATIONS[module]


def _integration_paths() -> set[Path]:
    paths: set[Path] = set()
    for m in INTEGRATIONS:
        base = ROOT / m.replace(".", "/")
        paths |= set(base.rglob("*.py")) if base.is_dir() else {base.with_suffix(".py")}
    return paths | set((ROOT / "langctx" / "cli").rglob("*.py"))


def test_no_module_outside_the_tools_is_over_500_lines() -> None:
    """Issue 10's shape: the engine and the integrations in small files named after what they
    hold (the CLI tools, ``langctx/cli``, are apart); memory.py had grown back to 504 lines,
    config.py to 563 and history.py was 906."""
    cli = ROOT / "langctx" / "cli"
    sizes = {
        str(p.relative_to(ROOT)): len(p.read_text(encoding="utf-8").splitlines())
        for p in (ROOT / "langctx").rglob("*.py")
        if cli not in p.parents
    }
    assert {p: n for p, n in sizes.items() if n > 500} == {}


def _importing(paths: list[Path], pattern: str) -> list[str]:
    """The files of ``paths`` with an import line matching ``pattern``."""
    found = [p for p in paths if re.search(pattern, p.read_text(encoding="utf-8"), re.M)]
    return [str(p.relative_to(ROOT)) for p in found]


def test_core_does_not_import_integrations() -> None:
    excluded = _integration_paths()
    core = [p for p in (ROOT / "langctx").rglob("*.py") if p not in excluded]
    pattern = r"^\s*(from|import) (langgraph|langchain\b|langchain\.|langchain_openai|psycopg|rich|matplotlib)"
    assert _importing(core, pattern) == []
    missing = [str(p) for p in excluded if not p.exists()]
    assert missing == []


def test_core_imports_neither_context_mode_nor_stores() -> None:
    """The engine sits below Context-mode and the stores: only the integrations (and the curated
    ``__init__``) bring them together."""
    excluded = _integration_paths() | {ROOT / "langctx" / "__init__.py"}
    below = [ROOT / "langctx" / "context_mode", ROOT / "langctx" / "stores"]
    core = [
        p
        for p in (ROOT / "langctx").rglob("*.py")
        if p not in excluded and not any(d in p.parents for d in below)
    ]
    assert _importing(core, r"^\s*(from|import) langctx\.(context_mode|stores)\b") == []


def test_import_langctx_loads_no_integration_library() -> None:
    code = (
        "import sys, langctx, langctx.memory, langctx.tokens, langctx.facts, langctx.summarize\n"
        "bad = [m for m in ('langgraph', 'langchain', 'langchain_openai', 'rich', 'matplotlib') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------------------------
# The docs: README.md and docs/*.md

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""Every page of documentation whose code is checked: the README, then docs/*.md."""

_FENCE = re.compile(r"^```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_NO_RUN = re.compile(r"<!--\s*no-run:(?P<reason>[^>]*?)-->\s*$")
_CLAIM = re.compile(r"#\s*->\s*(?P<claim>.*?)(?:\s+\(.*\))?\s*$")

NOT_RUN: dict[str, str] = {}
"""``"page:line"`` of each python block marked ``<!-- no-run: reason -->`` (it cannot run
offline), with the reason. Such a block is parsed and its imports resolved, not run. None today:
a new one must be listed here."""


@dataclass(frozen=True)
class DocBlock:
    """One fenced code block of a page: where it starts, its language, its text."""

    page: str
    line: int
    lang: str
    source: str
    no_run: str | None

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def _page_name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _blocks(path: Path) -> list[DocBlock]:
    text = path.read_text(encoding="utf-8")
    found = []
    for m in _FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = _NO_RUN.search(before)
        found.append(
            DocBlock(
                page=_page_name(path),
                line=text.count("\n", 0, m.start()) + 1,
                lang=m["lang"],
                source=m["body"],
                no_run=mark["reason"].strip() if mark else None,
            )
        )
    return found


def _python_blocks() -> list[DocBlock]:
    return [b for path in DOCS for b in _blocks(path) if b.lang == "python"]


def _doc_python_blocks() -> list[tuple[str, str]]:
    """(file name, source) of every ```python block of the README and docs/*.md."""
    return [(Path(b.page).name, b.source) for b in _python_blocks()]


def _prose(path: Path) -> str:
    """The page without its fenced blocks."""
    return _FENCE.sub("", path.read_text(encoding="utf-8"))


def _code_spans(path: Path) -> list[str]:
    """The inline code spans of a page (outside fenced blocks), whitespace collapsed."""
    return [" ".join(s.split()) for s in re.findall(r"`([^`]+)`", _prose(path))]


def _claims(source: str) -> dict[int, str]:
    """Line -> X of each ``print(...)  # -> X`` (a claim too long for the line goes below)."""
    lines = source.splitlines()
    claims = {}
    for n, line in enumerate(lines, 1):
        below = lines[n] if n < len(lines) else ""
        if "print(" in line:
            m = _CLAIM.search(line) or (_CLAIM.match(below.strip()) if below.strip() else None)
            if m:
                claims[n] = m["claim"]
    return claims


@pytest.mark.parametrize("block", _python_blocks(), ids=lambda b: b.where)
def test_doc_python_blocks_print_what_their_comments_claim(
    block: DocBlock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every python block of the README and docs/*.md runs (offline, in a temporary folder),
    and each ``print(...)  # -> X`` prints exactly X (the text in parentheses after X is
    commentary). A printed value that drifts from its comment fails."""
    code = compile(block.source, block.where, "exec", dont_inherit=True)  # as a user runs it
    if block.no_run is not None:
        assert NOT_RUN.get(block.where) == block.no_run, (
            f"{block.where} is marked no-run ({block.no_run!r}) but not listed in NOT_RUN"
        )
        return
    printed: dict[int, list[str]] = {}

    def spy(*args: object, sep: str = " ", **_: object) -> None:
        line = sys._getframe(1).f_lineno
        printed.setdefault(line, []).append(sep.join(str(a) for a in args))

    monkeypatch.chdir(tmp_path)  # files an example writes ("agent.sqlite") land here
    exec(code, {"print": spy, "__name__": "__doc_example__"})
    for line, claim in _claims(block.source).items():
        assert printed.get(line) == [claim], (
            f"{block.where}, line {line} of the block: prints {printed.get(line)}, "
            f"its comment claims {claim!r}"
        )


def test_the_docs_check_their_claims() -> None:
    """The claims are many, and the README's start-here example has its own."""
    blocks = _python_blocks()
    readme = [b for b in blocks if b.page == "README.md"]
    assert readme and sum(len(_claims(b.source)) for b in readme) >= 3
    assert sum(len(_claims(b.source)) for b in blocks) >= 40
    assert {Path(b.page).name for b in blocks} >= {"README.md", "chat-history.md", "agents.md"}


def test_blocks_that_do_not_run_are_listed() -> None:
    """A block that cannot run offline says why (``<!-- no-run: reason -->`` above it) and is
    listed in NOT_RUN; a listed block that is gone, or runs again, is taken off the list."""
    marked = {b.where: b.no_run for b in _python_blocks() if b.no_run is not None}
    assert all(marked.values()), f"no-run blocks without a reason: {marked}"
    assert marked == NOT_RUN


def test_doc_examples_import_from_at_most_two_langctx_modules() -> None:
    blocks = _doc_python_blocks()
    assert blocks
    offenders = [
        (name, sorted(modules))
        for name, block in blocks
        if len(modules := _langctx_modules(block)) > 2
    ]
    assert offenders == []


def _langctx_modules(source: str) -> set[str]:
    """The langctx modules a block imports from (``from langctx... import``, ``import langctx...``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        found.update(n for n in names if n == "langctx" or n.startswith("langctx."))
    return found


def _documented_code(path: Path) -> list[str]:
    """What a page shows as code: its fenced blocks (any language) and its inline spans."""
    return [b.source for b in _blocks(path)] + _code_spans(path)


def test_every_public_name_is_documented() -> None:
    """Each name of ``langctx.__all__`` appears as code (a span or in a block) in the README or
    docs/*.md, by itself or as ``langctx.NAME``."""
    code = "\n".join(c for path in DOCS for c in _documented_code(path))
    missing = [
        name
        for name in langctx.__all__
        if not re.search(rf"(?<![\w]){re.escape(name)}(?!\w)", code)
    ]
    assert missing == [], f"public names no doc shows: {missing}"


_IMPORT_LINE = re.compile(
    r"\bfrom\s+(?P<module>langctx(?:\.\w+)*)\s+import\s+(?P<names>\([^)]*\)|[\w ,]+)"
)
_DOTTED = re.compile(r"(?<![\w./-])langctx(?:\.\w+)+")


def _span_attributes() -> set[str]:
    """The OpenTelemetry attribute and span names langctx sets (``langctx.trigger``, ...): code
    spans that name them are no import paths."""
    from langctx import telemetry

    source = Path(telemetry.__file__).read_text(encoding="utf-8")
    return set(re.findall(r"\"(langctx\.\w+)\"", source)) | {telemetry.SPAN_NAME}


def _resolves(dotted: str) -> bool:
    """``dotted`` is an importable module, or an attribute path inside one."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_documented_imports_resolve() -> None:
    """Every ``from langctx[.x] import A, B`` a page shows (in a block or a code span) imports,
    and every code span naming ``langctx.x.Y`` resolves. The README once named
    ``OverflowMatcher``, ``CheckpointerConnectionError``, ``aopen_checkpointer`` and
    ``read_batches`` as if ``from langctx import`` found them."""
    attributes = _span_attributes()
    broken = []
    checked = 0
    for path in DOCS:
        for code in _documented_code(path):
            for m in _IMPORT_LINE.finditer(code):
                module = importlib.import_module(m["module"])
                for item in m["names"].strip("()").split(","):
                    name = item.split(" as ")[0].strip()
                    if name and not (hasattr(module, name) or _resolves(f"{m['module']}.{name}")):
                        broken.append(f"{_page_name(path)}: from {m['module']} import {name}")
                    checked += 1
        for span in _code_spans(path):
            for dotted in _DOTTED.findall(span):
                if dotted not in attributes and not _resolves(dotted):
                    broken.append(f"{_page_name(path)}: {dotted}")
                checked += 1
    assert broken == []
    assert checked > 100


def test_the_docs_name_no_missing_module() -> None:
    """The resolver itself: a name that does not exist fails, one that does passes."""
    assert _resolves("langctx.stores.archive.read_batches")
    assert _resolves("langctx.__version__")
    assert not _resolves("langctx.read_batches")
    assert not _resolves("langctx.stores.nothing_here")
    assert "langctx.trigger" in _span_attributes()


# ------------------------------------------------------------------------------------------
# The README: a first screen that points at docs/

README_MAX_LINES = 300
EXTRAS = sorted(
    tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
)


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    """The text of the ``## heading...`` section (up to the next ``## ``)."""
    m = re.search(rf"^## {re.escape(heading)}.*$", text, re.M)
    assert m, f"no '## {heading}' section"
    return re.split(r"^## ", text[m.end() :], maxsplit=1, flags=re.M)[0]


def test_readme_is_a_first_screen() -> None:
    """At most 300 lines; in the first 80: what langctx is and why, ``pip install langctx``
    with every extra of pyproject, and the runnable ``create_agent`` + ``LangctxMiddleware``
    example; then the comparison, the quick start and the map of docs/, in that order."""
    text = _readme()
    lines = text.splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"
    first = "\n".join(lines[:80])
    intro = _prose_paragraphs(first)[1]  # the first paragraph after the one-line tagline
    sentences = re.findall(r"[^.!?]+[.!?](?=\s|$)", intro)
    assert 2 <= len(sentences) <= 5, intro
    assert "pip install langctx" in first
    missing = [extra for extra in EXTRAS if f"langctx[{extra}]" not in first]
    assert missing == [], f"extras not in the README's first 80 lines: {missing}"
    example = next(b for b in _blocks(ROOT / "README.md") if b.lang == "python")
    assert example.line + example.source.count("\n") <= 80, "the example ends after line 80"
    assert "create_agent(" in example.source and "LangctxMiddleware(" in example.source
    order = [text.index(h) for h in ("## How it compares", "## Quick start", "## Documentation")]
    assert order == sorted(order) and order[0] > text.index(example.source)


def _prose_paragraphs(text: str) -> list[str]:
    prose = _FENCE.sub("", text)
    return [
        " ".join(p.split())
        for p in re.split(r"\n\s*\n", prose)
        if p.strip() and not p.lstrip().startswith(("#", "|", "<!--"))
    ]


def test_readme_comparison_quotes_measured_numbers() -> None:
    """The comparison table names the four anchors and the commands that measured it, links
    docs/benchmarks.md, and every number in it is one that docs/benchmarks.md or a
    bench/results file holds (a number written nowhere else was not measured)."""
    section = _section(_readme(), "How it compares")
    for anchor in ("SummarizationMiddleware", "deepagents", "SummarizationNode", "trim_messages"):
        assert anchor in section
    assert "`docs/benchmarks.md`" in section
    commands = re.findall(r"uv run --group bench python bench/(\w+)\.py", " ".join(section.split()))
    assert commands and all((ROOT / "bench" / f"{c}.py").exists() for c in commands)
    measured = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8") + "".join(
        p.read_text(encoding="utf-8") for p in sorted((ROOT / "bench" / "results").glob("*.md"))
    )
    table = "\n".join(line for line in section.splitlines() if line.startswith("|"))
    numbers = re.findall(r"(?<![\w.,$])\$?\d[\d,]*(?:\.\d+)?", table)
    assert len(numbers) > 15
    unmeasured = [
        n for n in numbers if not re.search(rf"(?<![\d,.]){re.escape(n)}(?![\d])", measured)
    ]
    assert unmeasured == []


def test_readme_quick_start_says_how_long_the_tests_take() -> None:
    quick = _section(_readme(), "Quick start")
    assert re.search(r"\b\d+ s\b", quick), "the quick start gives no test time"


def test_readme_maps_every_docs_page() -> None:
    """The README's map names each page of docs/ once, on a line of its own, and nothing else."""
    docs_map = _section(_readme(), "Documentation")
    named = re.findall(r"`(docs/[\w.-]+\.md)`", docs_map)
    pages = sorted(_page_name(p) for p in DOCS[1:])
    assert pages, "no docs/ pages"
    assert sorted(named) == pages
    for page in pages:
        assert sum(page in line for line in docs_map.splitlines()) == 1, page


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_links_between_docs_pages_resolve() -> None:
    """Relative links of docs/*.md point at files that exist and headings that exist."""
    anchors = {
        _page_name(p): {_slug(h) for h in re.findall(r"^#+ (.*)$", _prose(p), re.M)} for p in DOCS
    }
    broken = []
    links = 0
    for path in DOCS[1:]:
        for target in re.findall(r"\]\(([^)\s]+)\)", _prose(path)):
            if re.match(r"[a-z]+://|mailto:", target):
                continue
            links += 1
            file, _, anchor = target.partition("#")
            page = _page_name((path.parent / file).resolve()) if file else _page_name(path)
            if not (ROOT / page).exists():
                broken.append(f"{_page_name(path)} -> {target}: no such file")
            elif anchor and page.endswith(".md") and anchor not in anchors.get(page, set()):
                broken.append(f"{_page_name(path)} -> {target}: no such heading")
    assert broken == []
    assert links > 20
    assert _slug("`/compact` and the `compact_conversation` tool") == (
        "compact-and-the-compact_conversation-tool"
    )


def test_readme_quick_start_has_exactly_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```bash\n(.*?)```", quick, re.S)[0]
    commands = [ln.split("#")[0].strip() for ln in block.splitlines() if ln.split("#")[0].strip()]
    assert commands == [DEMO_COMMAND, TEST_COMMAND]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert f"\ntests {TEST_COMMAND} " in ci, "the README's test command is not one of .ci/run's"


DEMO_COMMAND = "uv run langctx demo"
TEST_COMMAND = 'uv run --group test pytest -n auto -m "not slow"'
"""The quick start's two commands (``.ci/run`` calls the second one, then the slow set)."""


def test_the_demo_installs_no_test_or_lint_tool() -> None:
    """``uv run langctx demo`` installed 153 packages (the test and lint groups were default
    groups); it needs 46. The test command names its group instead."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    defaults = project["tool"]["uv"].get("default-groups", [])
    groups = project["dependency-groups"]
    assert "test" not in defaults and "lint" not in defaults
    tools = {"pytest", "pytest-xdist", "ruff", "mypy", "hypothesis", "nbmake"}
    for group in defaults:
        names = {re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0] for d in groups[group]}
        assert not names & tools, (group, names & tools)


def test_ci_runs_every_test() -> None:
    """The README's command leaves the ``slow`` marker out; .ci/run runs ``-m slow`` as well,
    with the same options, and treats pytest's exit status 5 (nothing selected) as success."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    slow = TEST_COMMAND.replace('-m "not slow"', "-m slow")
    assert f"\ntests {slow} " in ci
    assert '[ "$status" -eq 5 ]' in ci
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    markers = project["tool"]["pytest"]["ini_options"]["markers"]
    assert any(m.startswith("slow:") for m in markers)
