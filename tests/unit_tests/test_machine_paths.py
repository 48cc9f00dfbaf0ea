"""No doc and no saved notebook output names a folder of the machine that wrote it.

The replay notebook was saved with ``recorded sessions: /work/shared/data/trajectories`` and the
tables of 38 sessions a fresh clone does not have. Docs are the README, ``notebooks/*.md``,
``docs/*.md`` and the benchmark results; a notebook's markdown cells and text outputs count as
docs too (its code may name paths: it runs anywhere).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]

MACHINE_PATH = re.compile(
    r"(?<![\w.~-])("
    r"/work/|/root/|/tmp/|/var/folders/|/private/var/|"
    r"/home/[\w.-]+/|/Users/[\w.-]+/|[A-Za-z]:\\Users\\"
    r")"
)
"""The roots of a developer's or CI machine's own files (home folders, temp folders, /work)."""

MADE_UP_ROOTS = ("/home/dev/",)
"""Project roots that the benchmarks' synthetic sessions make up (``bench/facts_growth.py``):
content of a session, not a folder of the machine."""

_TEXT_OUTPUTS = ("text/plain", "text/html", "text/markdown", "application/json")


def _docs() -> list[Path]:
    found = [ROOT / "README.md"]
    for pattern in ("notebooks/*.md", "docs/**/*.md", "bench/results/*.md"):
        found += sorted(ROOT.glob(pattern))
    return found


def _notebook_texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) of a notebook's markdown cells and text outputs (never its images)."""
    nb = nbformat.read(path, as_version=4)
    texts = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            texts.append((f"cell {i} (markdown)", cell.source))
        for output in cell.get("outputs", []):
            where = f"cell {i} output"
            if "text" in output:
                texts.append((where, str(output["text"])))
            for mime, value in (output.get("data") or {}).items():
                if mime in _TEXT_OUTPUTS:
                    texts.append((where, value if isinstance(value, str) else "".join(value)))
            texts += [(where, line) for line in output.get("traceback", [])]
    return texts


def machine_paths(text: str) -> list[str]:
    """The machine paths ``text`` holds: well-known roots, and this checkout's own folders.

    Example:
        >>> machine_paths("saved from /home/alice/repo/x.py, run in /testbed/src")
        ['/home/alice/repo/x.py']
    """
    found = []
    for pattern in (MACHINE_PATH, _this_machine()):
        for m in pattern.finditer(text):
            word = text[m.start() :].split(maxsplit=1)[0].rstrip(",.;:)]}'\"`")
            if not word.startswith(MADE_UP_ROOTS) and not any(f.startswith(word) for f in found):
                found.append(word[:120])
    return found


def _this_machine() -> re.Pattern[str]:
    """This checkout's folder, the home folder and the temp folder, however they are named."""
    roots = {str(ROOT), str(Path.home()), tempfile.gettempdir()} - {"/", ""}
    alternatives = "|".join(re.escape(r) for r in sorted(roots, key=len, reverse=True))
    return re.compile(rf"(?<![\w.~/-])({alternatives})(?![\w.-])")


def test_the_pattern_finds_machine_paths_and_spares_the_rest() -> None:
    assert machine_paths("recorded sessions: /work/shared/data/trajectories")
    assert machine_paths(r"C:\Users\ana\langctx\README.md") and machine_paths("/tmp/x.sqlite")
    assert machine_paths(f"{ROOT}/langctx/memory.py")
    clean = "../shared/data/trajectories, /testbed/src/app.py, ~/.pi/agent, https://x.org/tmp/a"
    assert machine_paths(clean) == []
    assert machine_paths("edited /home/dev/projects/webshop/src/a.py") == []


def test_every_docs_page_is_checked() -> None:
    """The README's manual moved to docs/: each of its pages is among the docs checked here."""
    pages = sorted(ROOT.glob("docs/*.md"))
    assert len(pages) >= 10
    assert set(pages) <= set(_docs())


@pytest.mark.parametrize("doc", _docs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_doc_names_a_machine_path(doc: Path) -> None:
    lines = doc.read_text(encoding="utf-8").splitlines()
    found = [(n, paths) for n, line in enumerate(lines, 1) if (paths := machine_paths(line))]
    assert found == [], f"{doc.relative_to(ROOT)}: {found[:5]}"


@pytest.mark.parametrize(
    "notebook", sorted((ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.name
)
def test_no_saved_notebook_output_names_a_machine_path(notebook: Path) -> None:
    found = [
        (where, paths)
        for where, text in _notebook_texts(notebook)
        if (paths := machine_paths(text))
    ]
    assert found == [], (
        f"{notebook.name}: {found[:5]}; print paths relative (os.path.relpath) and execute it "
        "again (see notebooks/README.md)"
    )
