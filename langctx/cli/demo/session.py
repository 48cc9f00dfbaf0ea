"""A deterministic, realistic coding-agent session for demos, tests and benchmarks.

The agent is asked to fix a failing parser test under two constraints; it reads files, runs the
tests (failing with a traceback, then passing), edits files, and now and then gets a giant tool
output (a verbose test log, a large file). Same seed, same session.

Example:
    >>> msgs = coding_session(turns=3, seed=1)
    >>> [m.type for m in msgs[:4]]
    ['system', 'human', 'ai', 'tool']
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

__all__ = ["SYSTEM_PROMPT", "TASK", "coding_session", "iter_turns"]

SYSTEM_PROMPT = "You are a careful coding agent. Use the tools to read, edit and test code."
TASK = (
    "The test tests/test_parser.py::test_nested_lists fails. Fix the parser in src/calc/parser.py. "
    "Do not edit the tests. Keep the public API of calc.parse unchanged. We use Python 3.11."
)

_MODULES = ["parser", "lexer", "ast", "eval", "errors", "cli", "util", "format"]
_WORDS = (
    "token node parse expr term factor value stack list nested bracket index error position "
    "state buffer stream result scope"
).split()


def _source(rng: random.Random, module: str, lines: int) -> str:
    out = [
        f'"""calc.{module}: {rng.choice(_WORDS)} handling."""',
        "from __future__ import annotations",
        "",
    ]
    for k in range(lines // 6):
        name = f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}_{k}"
        out += [
            f"def {name}(tokens: list[str], pos: int = 0) -> tuple[object, int]:",
            f'    """Parse a {rng.choice(_WORDS)} starting at pos."""',
            "    if pos >= len(tokens):\n        raise ParseError('unexpected end at %d' % pos)",
            f"    return tokens[pos], pos + {rng.randint(1, 3)}",
            "",
        ]
    return "\n".join(out)


def _test_log(rng: random.Random, failing: bool, verbose: int) -> str:
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.7, pytest-8.3.4",
        "collected 148 items",
        "",
    ]
    for k in range(verbose):
        lines.append(
            f"tests/test_{rng.choice(_MODULES)}.py::test_{rng.choice(_WORDS)}_{k} PASSED [{k % 100:3d}%]"
        )
    if failing:
        lines += [
            "=================================== FAILURES ===================================",
            "____________________________ test_nested_lists _____________________________",
            "    def test_nested_lists():",
            ">       assert parse('[1, [2, 3]]') == [1, [2, 3]]",
            "E       AssertionError: assert [1, 2, 3] == [1, [2, 3]]",
            "tests/test_parser.py:42: AssertionError",
            "FAILED tests/test_parser.py::test_nested_lists - AssertionError: assert [1, 2, 3] == [1, [2, 3]]",
            "========================= 1 failed, 147 passed in 2.31s =========================",
            "[exit code: 1]",
        ]
    else:
        lines += [
            "============================= 148 passed in 2.12s ==============================",
            "[exit code: 0]",
        ]
    return "\n".join(lines)


def iter_turns(turns: int, *, seed: int = 0) -> Iterator[list[BaseMessage]]:
    """Yield the session turn by turn: each item is one AI message and its tool results."""
    rng = random.Random(seed)
    call = 0

    def tool_turn(text: str, calls: list[tuple[str, dict[str, object], str]]) -> list[BaseMessage]:
        nonlocal call
        tcs = []
        results: list[BaseMessage] = []
        for name, args, out in calls:
            call += 1
            cid = f"call_{seed}_{call}"
            tcs.append({"id": cid, "name": name, "args": args, "type": "tool_call"})
            results.append(ToolMessage(out, tool_call_id=cid, name=name, id=f"tool-{seed}-{call}"))
        return [AIMessage(text, tool_calls=tcs, id=f"ai-{seed}-{call}"), *results]

    for t in range(turns):
        phase = t % 12
        module = _MODULES[t % len(_MODULES)]
        path = f"src/calc/{module}.py"
        if phase in (0, 1, 2, 3):
            big = rng.random() < 0.15
            yield tool_turn(
                f"Let me read {path} to see how {rng.choice(_WORDS)}s are handled.",
                [
                    (
                        "read_file",
                        {"path": path},
                        _source(rng, module, 600 if big else rng.randint(30, 120)),
                    )
                ],
            )
        elif phase == 4:
            yield tool_turn(
                "I'll read the lexer and the failing test together.",
                [
                    ("read_file", {"path": "src/calc/lexer.py"}, _source(rng, "lexer", 60)),
                    (
                        "read_file",
                        {"path": "tests/test_parser.py"},
                        _source(rng, "test_parser", 40),
                    ),
                ],
            )
        elif phase in (5, 9):
            yield tool_turn(
                "Now I will run the parser tests.",
                [
                    (
                        "run_command",
                        {"command": "pytest tests/test_parser.py -x"},
                        _test_log(rng, failing=True, verbose=rng.choice([20, 20, 900])),
                    )
                ],
            )
        elif phase in (6, 7, 10):
            yield tool_turn(
                f"The nested list is flattened in parse_list. Next I will edit {path}.",
                [
                    (
                        "edit_file",
                        {"path": path, "old": "items.extend(sub)", "new": "items.append(sub)"},
                        f"Edited {path}: 1 replacement.",
                    )
                ],
            )
        elif phase == 8:
            yield [
                AIMessage(
                    f"The parser still flattens nested lists; next step is to check how {module} returns positions.",
                    id=f"ai-{seed}-note-{t}",
                )
            ]
        else:
            yield tool_turn(
                "Next I will run the whole test suite.",
                [
                    (
                        "run_command",
                        {"command": "pytest -q"},
                        _test_log(rng, failing=t < turns - 1, verbose=60),
                    )
                ],
            )


def coding_session(turns: int = 200, *, seed: int = 0) -> list[BaseMessage]:
    """The whole session: system prompt, task, then ``turns`` agent turns."""
    out: list[BaseMessage] = [
        SystemMessage(SYSTEM_PROMPT, id=f"sys-{seed}"),
        HumanMessage(TASK, id=f"task-{seed}"),
    ]
    for turn in iter_turns(turns, seed=seed):
        out.extend(turn)
    return out
