"""The public surface: curated exports, runnable docstrings, the README's code."""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
import re
import subprocess
import sys
import tomllib
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
        "LangctxDeltaAgentState",
        "LangctxDeltaState",
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


def test_core_does_not_import_integrations() -> None:
    excluded = _integration_paths()
    core = [p for p in (ROOT / "langctx").rglob("*.py") if p not in excluded]
    pattern = r"^\s*(from|import) (langgraph|langchain\b|langchain\.|langchain_openai|psycopg|rich|matplotlib)"
    offenders = [
        str(p.relative_to(ROOT))
        for p in core
        if re.search(pattern, p.read_text(encoding="utf-8"), re.M)
    ]
    assert offenders == []
    missing = [str(p) for p in excluded if not p.exists()]
    assert missing == []


def test_import_langctx_loads_no_integration_library() -> None:
    code = (
        "import sys, langctx, langctx.memory, langctx.tokens, langctx.facts, langctx.summarize\n"
        "bad = [m for m in ('langgraph', 'langchain', 'langchain_openai', 'rich', 'matplotlib') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


_CLAIM = re.compile(r"#\s*->\s*(?P<claim>.*?)(?:\s+\(.*\))?\s*$")


def test_readme_python_blocks_print_what_their_comments_claim() -> None:
    """Every README block runs, and each ``print(...)  # -> X`` prints exactly X (the text
    in parentheses after X is commentary; a long X goes on the comment line below the print).
    A printed value that drifts from its comment fails."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks
    checked = 0
    for block in blocks:
        lines = block.splitlines()
        claims = {}
        for n, line in enumerate(lines, 1):
            below = lines[n] if n < len(lines) else ""  # a claim too long for the line goes below
            if "print(" in line:
                m = _CLAIM.search(line) or (_CLAIM.match(below.strip()) if below.strip() else None)
                if m:
                    claims[n] = m["claim"]
        printed: dict[int, list[str]] = {}

        def spy(
            *args: object, sep: str = " ", printed: dict[int, list[str]] = printed, **_: object
        ) -> None:
            line = sys._getframe(1).f_lineno
            printed.setdefault(line, []).append(sep.join(str(a) for a in args))

        exec(compile(block, "README.md", "exec"), {"print": spy})
        for line, claim in claims.items():
            assert printed.get(line) == [claim], (
                f"README block line {line}: prints {printed.get(line)}, its comment claims {claim!r}"
            )
            checked += 1
    assert checked >= 10


def _doc_python_blocks() -> list[tuple[str, str]]:
    """(file name, source) of every ```python block of the README and docs/*.md."""
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return [
        (path.name, block)
        for path in paths
        for block in re.findall(r"```python\n(.*?)```", path.read_text(encoding="utf-8"), re.S)
    ]


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


def test_doc_examples_import_from_at_most_two_langctx_modules() -> None:
    blocks = _doc_python_blocks()
    assert blocks
    offenders = [
        (name, sorted(modules))
        for name, block in blocks
        if len(modules := _langctx_modules(block)) > 2
    ]
    assert offenders == []


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
