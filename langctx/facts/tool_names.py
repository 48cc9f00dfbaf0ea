"""Tool names as words: one normaliser for every agent's spelling of a tool's name."""

from __future__ import annotations

import re

_NAMESPACE = re.compile(r"__|[./:]")
_LOWER_UPPER = re.compile(r"([a-z0-9])([A-Z])")  # readFile -> read_File
_ACRONYM = re.compile(r"([A-Z]+)([A-Z][a-z])")  # HTTPRequest -> HTTP_Request
_NOT_WORD = re.compile(r"[^A-Za-z0-9]+")
MAX_NAME_CHARS = 256  # words are read from this much of a name (the split is quadratic)


def tool_base_name(name: str) -> str:
    """``name`` without its namespace: the text after the last ``__``, ``.``, ``/`` or ``:``."""
    parts = [part for part in _NAMESPACE.split(name.strip()) if part.strip()]
    return parts[-1].strip() if parts else ""


def tool_name_words(name: str) -> tuple[str, ...]:
    """The lower-case words of ``name`` without its namespace (camelCase and kebab-case split).

    Example:
        >>> tool_name_words("developer__text_editor"), tool_name_words("default_api:ExecuteBash")
        (('text', 'editor'), ('execute', 'bash'))
    """
    base = tool_base_name(name)[:MAX_NAME_CHARS]
    base = _ACRONYM.sub(r"\1_\2", _LOWER_UPPER.sub(r"\1_\2", base))
    return tuple(word.lower() for word in _NOT_WORD.split(base) if word)


def normalize_tool_name(name: str) -> str:
    """``name`` as one snake_case name without its namespace (``functions.ReadFile`` -> ``read_file``).

    Example:
        >>> normalize_tool_name("mcp__shell__run_command"), normalize_tool_name("MultiEdit")
        ('run_command', 'multi_edit')
    """
    return "_".join(tool_name_words(name))


def tool_name_forms(name: str) -> tuple[str, ...]:
    """The spellings of ``name`` a tool table is searched for, in order, each once."""
    base = tool_base_name(name)
    forms = (name, name.lower(), base, base.lower(), normalize_tool_name(name))
    return tuple(form for form in dict.fromkeys(forms) if form)
