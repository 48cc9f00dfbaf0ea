"""The OpenAI chat models the CLI drives when asked (``demo --model``, ``replay --summarizer``).

They need the ``openai`` extra (langchain-openai) and ``OPENAI_API_KEY``; without either the CLI
stops with one line naming the fix. langchain-openai is imported here, and only when called.

Example:
    >>> OPENAI_EXTRA
    "pip install 'langctx[openai]'"
"""

from __future__ import annotations

import os

from langchain_core.language_models import BaseChatModel

from langctx.errors import ConfigError

__all__ = ["OPENAI_EXTRA", "openai_chat_model"]

OPENAI_EXTRA = "pip install 'langctx[openai]'"
"""How to install what an OpenAI model needs (``uv run --extra openai ...`` in a checkout)."""


def openai_chat_model(
    name: str, *, option: str, offline: str, temperature: float | None = None
) -> BaseChatModel:
    """A ``ChatOpenAI(model=name)``, for the command-line ``option`` that named it.

    Args:
        name: the OpenAI model, e.g. ``"gpt-4o-mini"``.
        option: the option as the user typed it, e.g. ``"--model"`` (named in the errors).
        offline: how to stay offline instead, e.g. ``"leave out --model"`` (ends the errors).
        temperature: passed to ``ChatOpenAI`` when given.

    Raises:
        ConfigError: langchain-openai is not installed (the ``openai`` extra), or
            ``OPENAI_API_KEY`` is not set.
    """
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        msg = (
            f"{option} {name} needs the openai extra (langchain-openai): {OPENAI_EXTRA} "
            f"(in a checkout: uv run --extra openai langctx ...), or {offline}."
        )
        raise ConfigError(msg) from exc
    if not os.environ.get("OPENAI_API_KEY"):
        msg = f"{option} {name} needs OPENAI_API_KEY in the environment; set it, or {offline}."
        raise ConfigError(msg)
    if temperature is None:
        return ChatOpenAI(model=name)
    return ChatOpenAI(model=name, temperature=temperature)
