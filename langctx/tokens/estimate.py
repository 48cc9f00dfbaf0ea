"""The script-aware estimator: tokens from character classes, without a tokenizer."""

from __future__ import annotations

from langctx.tokens.messages import MessageCounter

# BPE tokenizers encode pieces (words, digit runs, punctuation runs, whitespace runs), so the
# estimate counts pieces: each UTF-8 byte is mapped to a class letter and runs are counted with
# bytes.translate/count (in C). Weights fitted against o200k_base (bench/estimator_ratio.py).

_WORD = 1.01  # a run of ASCII letters
_HUMP = 0.89  # a lowercase->uppercase step inside a word (camelCase splits there)
_DIGIT_RUN = 0.96  # a run of digits ...
_DIGIT = 0.21  # ... plus a little per digit (long numbers split every 3 digits)
_PUNCT_RUN = 0.77  # a run of ASCII punctuation or symbols
_SPACE_RUN = 0.60  # a run of 2+ spaces or tabs (indentation, column padding)
_SPACE_DIGIT = 1.30  # a space before a digit is a token of its own
_NEWLINE = 0.88  # per newline character
_CJK = 0.76  # per CJK ideograph, kana, hangul or fullwidth character
_NON_ASCII_2 = 0.22  # per 2-byte character (accented Latin, Cyrillic, Greek ...), mostly in words
_NON_ASCII_3 = 1.0  # per other 3-byte character (symbols, arrows, box drawing)
# A 4-byte character (emoji) gets 2 * _NON_ASCII_3 - _NON_ASCII_2 = 1.78 by the formula below.

# Longer texts are estimated from evenly spaced windows, scaled up (flat cost, about 1% off)
_SAMPLE_ABOVE = 32_768
_WINDOWS = 32
_WINDOW = 1_024


def _class_table() -> bytes:
    table = bytearray(b"p" * 0x80 + b"x" * 0x80)  # p: other ASCII; x: continuation byte, invalid
    for letter, members in (
        ("a", b"abcdefghijklmnopqrstuvwxyz"),
        ("A", b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
        ("d", b"0123456789"),
        ("n", b"\r\n"),
        ("s", b" \t\x0b\x0c"),
        ("k", bytes([*range(0xE3, 0xEE), 0xEF])),  # lead of U+3000..U+DFFF, U+F000..U+FFFF: CJK
        ("o", bytes([*range(0xC2, 0xE3), 0xEE, *range(0xF0, 0xF5)])),  # lead of other non-ASCII
    ):
        for byte in members:
            table[byte] = ord(letter)
    return bytes(table)


def _member_table(members: bytes) -> bytes:
    """Map the class letters in ``members`` to ``w`` and everything else to ``.``."""
    return bytes(ord("w") if byte in members else ord(".") for byte in range(256))


_CLASSES = _class_table()
_LETTERS = _member_table(b"aA")
_DIGITS = _member_table(b"d")
_PUNCT = _member_table(b"p")
_SPACES = _member_table(b"s")


def _runs(classes: bytes, members: bytes, min_length: int = 1) -> int:
    marked = classes.translate(members)
    start = b"w" * min_length
    return marked.count(b"." + start) + marked.startswith(start)


def _estimate_all(text: str) -> float:
    data = text.encode("utf-8", "surrogatepass")
    classes = data.translate(_CLASSES)
    estimate = (
        _WORD * _runs(classes, _LETTERS)
        + _HUMP * classes.count(b"aA")
        + _DIGIT_RUN * _runs(classes, _DIGITS)
        + _DIGIT * classes.count(b"d")
        + _PUNCT_RUN * _runs(classes, _PUNCT)
        + _SPACE_RUN * _runs(classes, _SPACES, 2)
        + _SPACE_DIGIT * classes.count(b"sd")
        + _NEWLINE * classes.count(b"n")
    )
    extra_bytes = len(data) - len(text)
    if extra_bytes:
        cjk = classes.count(b"k")
        other = classes.count(b"o")
        # A non-CJK character of n bytes costs a + b * (n - 1): 2 bytes -> _NON_ASCII_2,
        # 3 bytes -> _NON_ASCII_3. CJK characters are 3 bytes, so they hold 2 * cjk extra bytes.
        b = _NON_ASCII_3 - _NON_ASCII_2
        a = _NON_ASCII_2 - b
        estimate += _CJK * cjk + a * other + b * (extra_bytes - 2 * cjk)
    return estimate


def _estimate(text: str) -> float:
    """Estimate all of a short text; for a long one, scale up evenly spaced windows."""
    length = len(text)
    if length <= _SAMPLE_ABOVE:
        return _estimate_all(text)
    step = (length - _WINDOW) / (_WINDOWS - 1)
    starts = (int(i * step) for i in range(_WINDOWS))
    sampled = sum(_estimate_all(text[start : start + _WINDOW]) for start in starts)
    return sampled * length / (_WINDOWS * _WINDOW)


def count_tokens_approximately(text: str) -> int:
    """Estimate the tokens in ``text`` without a tokenizer; non-empty text counts at least 1.

    Example:
        >>> count_tokens_approximately("The quick brown fox jumps over the lazy dog.")
        10
        >>> count_tokens_approximately("")
        0
    """
    return max(1, round(_estimate(text))) if text else 0


class ApproximateCounter(MessageCounter):
    """Script-aware token estimator: fast, offline, within a few percent of ``o200k_base``.

    Options as :class:`~langctx.tokens.messages.MessageCounter`.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> counter = ApproximateCounter()
        >>> counter.count_text("Hello, world!"), counter.count_message(HumanMessage("Hello, world!"))
        (4, 7)
    """

    name = "approximate"

    def count_text(self, text: str) -> int:
        """Estimate the tokens in ``text``."""
        return count_tokens_approximately(text)
