"""A small Python project in a scratch directory, for the demo agent to work on.

It has a real bug (nested lists are flattened), real unit tests that fail until the bug is
fixed, and two big files (a CSV export and a build log) that make giant tool outputs.

Example:
    >>> import tempfile
    >>> root = make_sandbox(tempfile.mkdtemp())
    >>> sorted(p.name for p in root.iterdir())
    ['calc', 'data', 'logs', 'run_tests.py', 'tests']
"""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["BUGGY_LINE", "FIXED_LINE", "make_sandbox"]

BUGGY_LINE = "            items.extend(sub)"
FIXED_LINE = "            items.append(sub)"

_PARSER = f'''"""calc.parser: parse list literals like [1, [2, 3]]."""
from __future__ import annotations

from calc.lexer import tokenize


class ParseError(ValueError):
    """Raised on malformed input."""


def parse(text: str) -> list:
    """Parse a list literal."""
    tokens = tokenize(text)
    value, pos = _parse_list(tokens, 0)
    if pos != len(tokens):
        raise ParseError(f"unexpected token at {{pos}}")
    return value


def _parse_list(tokens: list[str], pos: int) -> tuple[list, int]:
    if tokens[pos] != "[":
        raise ParseError(f"expected [ at {{pos}}")
    pos += 1
    items: list = []
    while tokens[pos] != "]":
        if tokens[pos] == "[":
            sub, pos = _parse_list(tokens, pos)
{BUGGY_LINE}
        else:
            items.append(int(tokens[pos]))
            pos += 1
        if tokens[pos] == ",":
            pos += 1
    return items, pos + 1
'''

_LEXER = '''"""calc.lexer: split a list literal into tokens."""
from __future__ import annotations

import re

_TOKEN = re.compile(r"\\s*(\\[|\\]|,|-?\\d+)")


def tokenize(text: str) -> list[str]:
    """Tokens of a list literal."""
    out, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"bad character at {pos}")
        out.append(m.group(1))
        pos = m.end()
    return out
'''

_TESTS = """import unittest

from calc.parser import parse


class ParserTest(unittest.TestCase):
    def test_flat(self):
        self.assertEqual(parse("[1, 2, 3]"), [1, 2, 3])

    def test_empty(self):
        self.assertEqual(parse("[]"), [])

    def test_nested_lists(self):
        self.assertEqual(parse("[1, [2, 3]]"), [1, [2, 3]])

    def test_deeply_nested(self):
        self.assertEqual(parse("[[[4]]]"), [[[4]]])
"""

_RUNNER = '''"""Run the tests; print a verbose log when asked (python run_tests.py [-v])."""
import sys
import unittest
import unittest.runner


class _Clock:  # "Ran N tests in 0.000s": the same log on every run
    @staticmethod
    def perf_counter():
        return 0.0


unittest.runner.time = _Clock
verbose = "-v" in sys.argv
if verbose:
    for i in range(1500):
        print(f"tests/test_generated.py::test_case_{i} PASSED")
suite = unittest.defaultTestLoader.discover("tests")
result = unittest.TextTestRunner(verbosity=2 if verbose else 1, stream=sys.stdout).run(suite)
print(f"[exit code: {0 if result.wasSuccessful() else 1}]")
sys.exit(0 if result.wasSuccessful() else 1)
'''


def make_sandbox(root: str | Path, *, seed: int = 0) -> Path:
    """Create (or reset) the demo project under ``root``; return its path."""
    rng = random.Random(seed)
    base = Path(root)
    (base / "calc").mkdir(parents=True, exist_ok=True)
    (base / "tests").mkdir(exist_ok=True)
    (base / "data").mkdir(exist_ok=True)
    (base / "logs").mkdir(exist_ok=True)
    (base / "calc" / "__init__.py").write_text('"""calc: a tiny list-literal parser."""\n')
    (base / "calc" / "parser.py").write_text(_PARSER)
    (base / "calc" / "lexer.py").write_text(_LEXER)
    (base / "tests" / "__init__.py").write_text("")
    (base / "tests" / "test_parser.py").write_text(_TESTS)
    (base / "run_tests.py").write_text(_RUNNER)
    rows = ["order_id,customer,amount,status"] + [
        f"{i},{rng.choice(['ada', 'bob', 'cy', 'dee'])},{rng.randint(1, 999)}.{rng.randint(0, 99):02d},"
        f"{rng.choice(['paid', 'open', 'refunded'])}"
        for i in range(4000)
    ]
    (base / "data" / "orders.csv").write_text("\n".join(rows) + "\n")
    log = [f"[{i:05d}] INFO compiling module_{rng.randint(0, 50)}.c" for i in range(3000)]
    log.insert(2400, "[02400] ERROR module_17.c:88: undefined reference to `parse_list'")
    (base / "logs" / "build.log").write_text("\n".join(log) + "\n")
    return base
