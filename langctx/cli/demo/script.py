"""The script the demo's scripted chat model plays: a long, realistic coding session.

Reads, parallel reads, failing tests, giant outputs (a 4,000-row CSV, a 3,000-line build log, a
verbose test run), notes, the fix, passing tests, and a final answer.

Example:
    >>> steps = demo_script(turns=20)
    >>> steps[0].tool_calls[0]["name"], steps[-1].content[:8]
    ('read_file', 'Fixed it')
"""

from __future__ import annotations

from langchain_core.messages import AIMessage

from langctx.cli.demo.sandbox import BUGGY_LINE, FIXED_LINE

__all__ = ["DEMO_TASK", "demo_script"]

DEMO_TASK = (
    "The test tests/test_parser.py::test_nested_lists fails: parse('[1, [2, 3]]') returns a flat "
    "list. Fix calc/parser.py. Do not edit the tests. Keep the public API of calc.parse unchanged."
)


def _call(n: int, text: str, *calls: tuple[str, dict[str, str]]) -> AIMessage:
    return AIMessage(
        content=text,
        tool_calls=[
            {"id": f"call_{n}_{k}", "name": name, "args": args, "type": "tool_call"}
            for k, (name, args) in enumerate(calls)
        ],
    )


def demo_script(turns: int = 120) -> list[AIMessage]:
    """``turns`` AI steps; the fix lands at about 80% of the way, the last step answers."""
    turns = max(turns, 12)
    fix_at = int(turns * 0.8)
    steps: list[AIMessage] = [
        _call(0, "Let me read the parser first.", ("read_file", {"path": "calc/parser.py"})),
        _call(
            1,
            "I'll read the lexer and the failing test together.",
            ("read_file", {"path": "calc/lexer.py"}),
            ("read_file", {"path": "tests/test_parser.py"}),
        ),
        _call(2, "Now I will run the tests.", ("run_command", {"command": "python run_tests.py"})),
    ]
    cycle = [
        lambda n: _call(
            n,
            "Let me look at the order export the report reads.",
            ("read_file", {"path": "data/orders.csv"}),
        ),
        lambda n: _call(
            n,
            "I'll check the build log for related errors.",
            ("run_command", {"command": "cat logs/build.log"}),
        ),
        lambda n: _call(
            n,
            "Next I will run the verbose test suite.",
            ("run_command", {"command": "python run_tests.py -v"}),
        ),
        lambda n: _call(
            n,
            "Let me search for where sub-lists are added.",
            ("run_command", {"command": "grep -n 'items' calc/parser.py"}),
        ),
        lambda n: _call(
            n,
            "I'll write down what I found so far.",
            (
                "write_file",
                {
                    "path": f"notes/step_{n}.md",
                    "content": f"step {n}: nested lists are flattened by extend()",
                },
            ),
        ),
        lambda n: _call(
            n, "Re-reading the parser to confirm.", ("read_file", {"path": "calc/parser.py"})
        ),
        lambda n: _call(
            n, "Running the tests again.", ("run_command", {"command": "python run_tests.py"})
        ),
    ]
    small = [  # after the first rounds the agent stops dumping whole files
        lambda n: _call(
            n,
            "Only the header and first rows this time.",
            ("run_command", {"command": "head -n 5 data/orders.csv"}),
        ),
        lambda n: _call(
            n,
            "Only the errors of the build log.",
            ("run_command", {"command": "grep -n ERROR logs/build.log"}),
        ),
        lambda n: _call(
            n,
            "Next I will run the tests quietly.",
            ("run_command", {"command": "python run_tests.py"}),
        ),
    ]
    n = len(steps)
    while n < fix_at:
        k = (n - 3) % len(cycle)
        giant = k < len(small) and n - 3 >= 2 * len(cycle)
        steps.append(small[k](n) if giant else cycle[k](n))
        n += 1
    steps.append(
        _call(
            n,
            "The bug: sub-lists are merged with extend(). Next I will use append().",
            ("edit_file", {"path": "calc/parser.py", "old": BUGGY_LINE, "new": FIXED_LINE}),
        )
    )
    n += 1
    while n < turns - 1:
        steps.append(
            _call(
                n,
                "Running the tests after the fix.",
                ("run_command", {"command": "python run_tests.py"}),
            )
        )
        n += 1
    steps.append(
        AIMessage(
            content="Fixed it: calc/parser.py now appends parsed sub-lists instead of extending, "
            "so nested lists keep their structure; all 4 tests pass. Tests were not edited."
        )
    )
    return steps
