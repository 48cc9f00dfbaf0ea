"""The public surface: curated exports, runnable docstrings, the README's code."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import langctx

ROOT = Path(__file__).resolve().parents[2]

EXPECTED_ALL = [
    "ApproximateCounter",
    "BudgetError",
    "CompactionEntry",
    "CompactionEvent",
    "ConfigError",
    "ContextOverflowError",
    "EditEntry",
    "FileToolSpec",
    "InvalidHistoryError",
    "InvalidMessageError",
    "LangctxError",
    "LangctxWarning",
    "LayeredChatMemory",
    "LocalSummarizer",
    "MemoryConfig",
    "ModelSummarizer",
    "ReferenceNotFoundError",
    "StateVersionError",
    "SummarizerError",
    "SummaryRequest",
    "TiktokenCounter",
    "TokenCounter",
    "__version__",
    "resolve_token_counter",
]


def test_all_is_sorted_and_pinned() -> None:
    assert langctx.__all__ == sorted(
        langctx.__all__, key=str.casefold
    ) or langctx.__all__ == sorted(langctx.__all__)
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


CORE_EXCLUDED = (
    "integrations",
    "demo",
    "replay",
    "inspect",
)  # adapters and the CLI's skin, which import the core


def test_core_does_not_import_integrations() -> None:
    core = [
        p
        for p in (ROOT / "langctx").rglob("*.py")
        if not set(p.relative_to(ROOT / "langctx").parts) & set(CORE_EXCLUDED)
        and p.name != "cli.py"
    ]
    pattern = r"^\s*(from|import) (langgraph|langchain\b|langchain\.|langchain_openai|psycopg|rich|matplotlib)"
    offenders = [
        str(p.relative_to(ROOT))
        for p in core
        if re.search(pattern, p.read_text(encoding="utf-8"), re.M)
    ]
    assert offenders == []


def test_import_langctx_loads_no_integration_library() -> None:
    code = (
        "import sys, langctx, langctx.memory, langctx.tokens, langctx.facts, langctx.summarize\n"
        "bad = [m for m in ('langgraph', 'langchain', 'langchain_openai', 'rich', 'matplotlib') if m in sys.modules]\n"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_readme_python_block_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks
    for block in blocks:
        if "ChatOpenAI" in block or "OPENAI_API_KEY" in block:
            continue
        exec(compile(block, "README.md", "exec"), {})


def test_readme_quick_start_has_exactly_two_commands() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.findall(r"```bash\n(.*?)```", quick, re.S)[0]
    commands = [ln.split("#")[0].strip() for ln in block.splitlines() if ln.split("#")[0].strip()]
    assert commands == ["uv run langctx demo", "uv run pytest"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\nuv run pytest\n" in ci
