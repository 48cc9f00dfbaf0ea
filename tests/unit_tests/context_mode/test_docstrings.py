"""Every public Context-mode function has a ``>>>`` example; the public names are pinned.

Their examples run once, with every langctx module's, in ``tests/unit_tests/test_public_api.py``.
"""

from __future__ import annotations

import doctest

import langctx.context_mode as context_mode


def test_public_functions_have_examples() -> None:
    finder = doctest.DocTestFinder()
    for name in context_mode.__all__:
        obj = getattr(context_mode, name)
        if callable(obj) and not isinstance(obj, type) and obj.__doc__:
            assert any(t.examples for t in finder.find(obj, name)), f"{name} has no >>> example"


def _isort_key(name: str) -> tuple[int, str]:
    """Ruff's RUF022 order: CONSTANTS, then Classes, then functions, each alphabetical."""
    return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)


def test_all_is_sorted_and_complete() -> None:
    assert context_mode.__all__ == sorted(context_mode.__all__, key=_isort_key)
    assert context_mode.__all__ == [
        "CONTENT_KINDS",
        "DEFAULT_MAX_INLINE_TOKENS",
        "MIN_INLINE_TOKENS",
        "REDUCERS",
        "ContentKind",
        "OutputMeta",
        "Reducer",
        "Reduction",
        "build_meta",
        "clean_terminal",
        "detect_kind",
        "escape_delimiters",
        "reduce_output",
    ]
    for name in context_mode.__all__:
        assert hasattr(context_mode, name)
