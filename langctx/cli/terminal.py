"""The width of the CLI's rich tables: the terminal's, or wide enough when piped.

Rich sizes a console that is not a terminal to 80 columns, which cut the report's tables when
piped to a file or ``less``. Piped output gets ``COLUMNS`` when set, else 200 columns.

Example:
    >>> import io
    >>> console_width(io.StringIO()) >= 200
    True
"""

from __future__ import annotations

import os
from typing import TextIO

__all__ = ["PIPED_WIDTH", "console_width"]

PIPED_WIDTH = 200
"""Columns of a report written to a pipe or file (COLUMNS overrides it)."""


def console_width(stream: TextIO) -> int | None:
    """None for a terminal (rich measures it), else the width to render at."""
    isatty = getattr(stream, "isatty", None)
    if callable(isatty) and isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > PIPED_WIDTH else PIPED_WIDTH
