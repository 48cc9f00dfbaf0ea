"""One exception root: every langctx exception derives from LangctxError, drawn in errors.py."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from types import ModuleType

import pytest

import langctx
import langctx.errors as errors_module
from langctx.errors import ConfigError, LangctxError


def _modules() -> list[ModuleType]:
    modules: list[ModuleType] = [langctx]
    for info in pkgutil.walk_packages(langctx.__path__, "langctx."):
        try:
            modules.append(importlib.import_module(info.name))
        except (
            ImportError
        ) as exc:  # an optional extra not installed; langctx's own imports must work
            if (exc.name or "langctx").partition(".")[0] == "langctx":
                raise
    return modules


def _defined_classes() -> dict[str, type[BaseException]]:
    """Every exception and warning class defined in a langctx module, by name."""
    found: dict[str, type[BaseException]] = {}
    for module in _modules():
        for obj in vars(module).values():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
            ):
                assert obj.__name__ not in found, f"two langctx classes named {obj.__name__}"
                found[obj.__name__] = obj
    return found


CLASSES = _defined_classes()
EXCEPTIONS = {name: cls for name, cls in CLASSES.items() if not issubclass(cls, Warning)}

_ROW = re.compile(
    r"^(?P<indent>[ │├└─]*)(?P<name>\w+)(?: \((?P<builtin>\w+)\))?(?:\s{2,}(?P<note>.*))?$"
)


def _tree() -> dict[str, tuple[str | None, str | None, str]]:
    """Each row of the drawn tree: class name -> (parent, builtin base, defining module)."""
    doc = errors_module.__doc__ or ""
    block = re.split(r"\n\n(?=\S)", doc.split("::\n\n", 1)[1], maxsplit=1)[0]
    rows: dict[str, tuple[str | None, str | None, str]] = {}
    parents: list[tuple[int, str]] = []
    for line in filter(None, block.splitlines()):
        m = _ROW.match(line.removeprefix("    "))
        assert m, f"unreadable tree row in langctx/errors.py: {line!r}"
        depth = len(m["indent"])
        while parents and parents[-1][0] >= depth:
            parents.pop()
        note = m["note"] or ""
        where, sep, _ = note.partition(": ")
        module = f"langctx.{where}" if sep and " " not in where else "langctx.errors"
        rows[m["name"]] = (parents[-1][1] if parents else None, m["builtin"], module)
        parents.append((depth, m["name"]))
    return rows


def test_the_scan_finds_exceptions_outside_errors_py() -> None:
    assert {"LangctxError", "GuardTimeoutError", "ScriptExhaustedError", "InspectError"} <= set(
        EXCEPTIONS
    )


@pytest.mark.parametrize("name", sorted(EXCEPTIONS))
def test_every_exception_derives_from_langctx_error(name: str) -> None:
    assert issubclass(EXCEPTIONS[name], LangctxError), (
        f"{EXCEPTIONS[name].__module__}.{name} must derive from LangctxError "
        "(keep a builtin base as a mixin: class X(LangctxError, ValueError))"
    )


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_class_is_drawn_in_the_errors_docstring(name: str) -> None:
    tree = _tree()
    assert name in tree, f"add {name} to the tree in langctx/errors.py's docstring"
    cls = CLASSES[name]
    parent, builtin, module = tree[name]
    assert module == cls.__module__, f"the tree says {name} is in {module}"
    langctx_bases = [b.__name__ for b in cls.__bases__ if b.__module__.startswith("langctx")]
    builtins = [b.__name__ for b in cls.__bases__ if b.__module__ == "builtins"]
    assert langctx_bases == ([parent] if parent else []), f"{name}'s parent in the tree"
    assert builtins == ([builtin] if builtin else ([] if parent else ["Exception"]))


def test_the_tree_names_no_class_that_does_not_exist() -> None:
    assert set(_tree()) == set(CLASSES)


def test_builtin_bases_still_catch() -> None:
    from langctx.context_mode.guard import GuardTimeoutError
    from langctx.testing import ScriptExhaustedError

    assert issubclass(GuardTimeoutError, TimeoutError)
    assert issubclass(ScriptExhaustedError, RuntimeError)
    assert issubclass(ConfigError, ValueError)


def test_pass_either_misuse_is_a_config_error() -> None:
    from langgraph.store.memory import InMemoryStore

    from langctx.context_mode.processor import ContextModeProcessor
    from langctx.context_mode.tools import wrap_tools_with_context_mode

    with pytest.raises(ConfigError, match="not both"):
        wrap_tools_with_context_mode([], processor=ContextModeProcessor(), store=InMemoryStore())
    with pytest.raises(ConfigError, match="not both"):
        ContextModeProcessor(config=ContextModeProcessor().config, max_inline_tokens=100)
