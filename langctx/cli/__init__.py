"""The tools: the ``langctx`` command (``demo``, ``replay``, ``inspect``) and their packages."""

from langctx.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
