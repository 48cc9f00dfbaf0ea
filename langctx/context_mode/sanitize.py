"""Make tool output safe and readable: neutralise langctx delimiters, undo terminal control codes."""

from __future__ import annotations

import re

# CSI sequences, OSC sequences (terminated by BEL or ST) and two-character escapes.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_BACKSPACED = re.compile(r"[^\n\x08]\x08")


def clean_terminal(text: str) -> str:
    """The final screen text: ANSI codes removed, backspaces and carriage returns applied.

    Example:
        >>> clean_terminal("50%\\r100%\\n\\x1b[31mFAILED\\x1b[0m"), clean_terminal("ab\\x08c\\r\\n")
        ('100%\\nFAILED', 'ac\\n')
    """
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\x08" in text:
        for _ in range(4):  # nested spinners rarely need more than one pass
            text = _BACKSPACED.sub("", text)
            if "\x08" not in text:
                break
        text = text.replace("\x08", "")
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if "\r" in text:
        text = "\n".join(_shown(line) if "\r" in line else line for line in text.split("\n"))
    return text


def _shown(line: str) -> str:
    """What a terminal shows of a line with carriage returns: its last non-empty segment."""
    segments = [segment for segment in line.split("\r") if segment]
    return segments[-1] if segments else ""
