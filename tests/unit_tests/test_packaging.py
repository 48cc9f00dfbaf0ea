"""The quick start installs what CI tests: pyproject's uv constraints are the lock's pins."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _lock_pins() -> set[str]:
    pins = set()
    for line in (ROOT / "requirements.lock").read_text(encoding="utf-8").splitlines():
        m = re.match(r"^([A-Za-z0-9_.\-\[\]]+==[^\s;\\]+)\s*(;[^\\]*)?\\?\s*$", line)
        if m:
            pins.add(m.group(1) + (f"; {m.group(2)[1:].strip()}" if m.group(2) else ""))
    return pins


def test_uv_constraints_are_the_lock_pins() -> None:
    """``uv run`` (the README's two commands) resolves from pyproject, not from the hashed lock
    that ``.ci/run`` installs; ``tool.uv.constraint-dependencies`` pins it to the same versions.
    After recompiling the lock, copy its pins (this test says which differ)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    constraints = set(project["tool"]["uv"]["constraint-dependencies"])
    pins = _lock_pins()
    assert len(pins) > 100
    assert constraints == pins, (sorted(constraints - pins)[:5], sorted(pins - constraints)[:5])


def test_no_file_names_a_package_index() -> None:
    for name in ("pyproject.toml", "requirements.lock", ".ci/run"):
        text = (ROOT / name).read_text(encoding="utf-8")
        assert not re.search(r"--(extra-)?index-url|https?://[^\s\"']*(simple|pypi)", text), name


def test_what_the_readme_imports_is_a_core_dependency() -> None:
    """``pip install langctx`` then the README's start-here example failed with
    ``ModuleNotFoundError: No module named 'langchain'`` (it was an extra). The examples of
    docs/ run on the core dependencies too."""
    import ast

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {
        re.split(r"[<>=!~\[; ]", d, maxsplit=1)[0].replace("-", "_")
        for d in project["dependencies"]
    }
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    imported: set[str] = set()
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        for node in ast.walk(ast.parse(block)):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
            elif isinstance(node, ast.Import):
                imported.update(a.name.split(".")[0] for a in node.names)
    optional = {"langchain_openai", "psycopg"}  # shown with the extra or the key they need
    third_party = imported - {"langctx", "__future__"} - set(sys.stdlib_module_names) - optional
    packages = {
        "langgraph": "langgraph",
        "langchain": "langchain",
        "langchain_core": "langchain_core",
    }
    missing = {m for m in third_party if packages.get(m, m) not in core}
    assert missing == set(), f"the docs import {sorted(missing)}, not core dependencies"


def test_licence_and_metadata() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")
    assert project["license"] == "MIT" and project["classifiers"] and project["keywords"]


def test_the_readme_links_nothing_relative() -> None:
    """The README is the package's page too, shown without the repository beside it: its image
    of a replay was a relative path that such a page cannot load."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"!?\[[^\]]*\]\(([^)\s]+)", readme)
    targets += re.findall(r"<img[^>]*\ssrc=[\"']([^\"']+)", readme)
    relative = [t for t in targets if not re.match(r"[a-z]+://|#", t)]
    assert relative == [], f"README links {relative}; name files as code instead"


def _imports_only(paragraph: str) -> bool:
    """A run of import lines (an example's opening), which examples share by nature."""
    lines = [line for line in paragraph.splitlines() if not line.startswith("```")]
    return bool(lines) and all(re.match(r"(from \S+ )?import ", line) for line in lines)


def test_each_readme_section_has_one_copy() -> None:
    """README and docs/*.md held diverging copies of the same sections."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    docs = sorted((ROOT / "docs").glob("*.md"))
    assert docs
    for doc in docs:
        paragraphs = [p.strip() for p in re.split(r"\n\s*\n", doc.read_text(encoding="utf-8"))]
        copied = [p for p in paragraphs if len(p) > 80 and p in readme and not _imports_only(p)]
        assert not copied, f"{doc.name} repeats README paragraphs: {copied[0][:80]!r}"
    assert _imports_only("```python\nfrom langctx import LayeredChatMemory\nimport json")
    assert not _imports_only("from langctx import LayeredChatMemory\nmem = LayeredChatMemory()")
