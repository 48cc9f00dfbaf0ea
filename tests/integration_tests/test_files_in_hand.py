"""Issue 44 (3): after a fold, the files the agent has in hand stay in the request, through
``create_agent`` + ``LangctxMiddleware`` at its defaults, within their share of the budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver

from langctx.cli.demo.session import TASK
from langctx.config import DEFAULT_FILES_SHARE
from langctx.files_in_hand import STALE, files_text
from langctx.markers import SUMMARY_ID_PREFIX
from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel, ai_tool_call
from langctx.tokens import ApproximateCounter
from tests.integration_tests._agents import check_calls, config, middleware_agent

PARSER = "def parse(src):\n    return tokens(src)  # parser-marker-7f3\n" * 12
BIG = "\n".join(f"def handler_{i}(event):\n    return route(event, {i})" for i in range(900))


def _tools(files: dict[str, str]) -> list[BaseTool]:
    @tool
    def read_file(path: str) -> str:
        """Read a file of the repository."""
        return files[path]

    @tool
    def edit_file(path: str, old: str, new: str) -> str:
        """Replace text in a file."""
        files[path] = files[path].replace(old, new)
        return f"edited {path}"

    @tool
    def run_command(command: str) -> str:
        """Run a shell command."""
        return f"$ {command}\n" + "".join(f"test_{i} PASSED in {i}ms\n" for i in range(260))

    return [read_file, edit_file, run_command]


def _commands(n: int) -> list[AIMessage]:
    return [ai_tool_call("run_command", {"command": f"pytest -k case{k}"}) for k in range(n)]


def _run(script: list[Any], files: dict[str, str], **options: Any) -> ScriptedChatModel:
    model = ScriptedChatModel(responses=[*script, "Done."])
    agent = middleware_agent(model, _tools(files), LangctxMiddleware(**options), InMemorySaver())
    agent.invoke({"messages": [("user", TASK)]}, config())
    return model


def _after_fold(model: ScriptedChatModel) -> list[BaseMessage]:
    """The first request that carries a summary block."""
    return next(call for call in model.calls if _folded(call))


def _folded(call: Sequence[BaseMessage]) -> bool:
    return any(str(m.id or "").startswith(SUMMARY_ID_PREFIX) for m in call)


@pytest.mark.parametrize("files_share", [None, 0.0])
def test_a_file_read_just_before_a_fold_is_in_the_next_request(files_share: float | None) -> None:
    script = [ai_tool_call("read_file", {"path": "src/parser.py"}), *_commands(24)]
    options = {} if files_share is None else {"files_share": files_share}
    model = _run(script, {"src/parser.py": PARSER}, max_context_tokens=32_000, **options)
    request = _after_fold(model)
    read = [m for m in request if isinstance(m, AIMessage) and "read_file" in str(m.tool_calls)]
    assert not read  # the read itself was folded: only the files in hand can bring it back
    shown = PARSER.strip() in files_text(request)
    assert shown is (files_share is None)  # the default shows it; a share of 0 does not


def test_at_4k_the_share_holds_and_no_request_is_over_budget() -> None:
    paths = [f"src/mod{k}.py" for k in range(8)]
    files = {p: BIG.replace("handler", f"h{k}") for k, p in enumerate(paths)}
    files["src/parser.py"] = PARSER
    reads = [ai_tool_call("read_file", {"path": p}) for p in ["src/parser.py", *paths]]
    script = [*reads, *_commands(6), *reads[:3], *_commands(4)]
    model = _run(script, files, max_context_tokens=4_000)
    counter = ApproximateCounter()
    report = check_calls(model.calls, counter, 4_000, skip_system_prompt=True)
    assert report.violations == 0 and report.orphans == 0 and report.unanswered == 0
    shares = [counter.count_text(files_text(call)) for call in model.calls]
    assert any(shares) and max(shares) <= int(DEFAULT_FILES_SHARE * 4_000)


def test_a_file_read_then_edited_is_not_restored_and_it_is_said() -> None:
    script = [
        ai_tool_call("read_file", {"path": "src/parser.py"}),
        ai_tool_call("edit_file", {"path": "src/parser.py", "old": "tokens", "new": "lex"}),
        *_commands(24),
    ]
    model = _run(script, {"src/parser.py": PARSER}, max_context_tokens=32_000)
    files = files_text(_after_fold(model))
    assert "parser-marker-7f3" not in files
    assert f"Not shown ({STALE}): src/parser.py." in files


def test_a_file_larger_than_its_share_is_shown_by_its_outline() -> None:
    script = [ai_tool_call("read_file", {"path": "src/handlers.py"}), *_commands(24)]
    model = _run(script, {"src/handlers.py": BIG}, max_context_tokens=32_000)
    files = files_text(_after_fold(model))
    assert 'seen="outline of the content read"' in files
    assert "python · 1,800 lines, outlined" in files and "L1 def handler_0(event):" in files
    assert "return route(event, 0)" not in files  # the body is not shown
