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
        text = _apply_carriage_returns(text)
    return text


def _apply_carriage_returns(text: str) -> str:
    """Rewrite only the lines that hold a carriage return (found with ``str.find``)."""
    pieces: list[str] = []
    done = 0
    pos = text.find("\r")
    while pos != -1:
        start = text.rfind("\n", done, pos) + 1 or done
        end = text.find("\n", pos)
        end = len(text) if end == -1 else end
        shown = [segment for segment in text[start:end].split("\r") if segment]
        pieces.extend([text[done:start], shown[-1] if shown else ""])  # a terminal shows the last
        done = end
        pos = text.find("\r", end)
    pieces.append(text[done:])
    return "".join(pieces)
