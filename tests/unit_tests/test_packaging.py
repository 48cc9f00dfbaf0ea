"""The quick start installs what CI tests: pyproject's uv constraints are the lock's pins."""

from __future__ import annotations

import re
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
