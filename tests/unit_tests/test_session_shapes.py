"""Shapes seen in held-out agent sessions, rebuilt as small scripted sessions (issue 40, item 9).

Each test drives ``create_agent`` + ``LangctxMiddleware`` at its defaults (or the function the
defect sits in) with realistic tool calls and outputs, and checks what the model is sent.
"""

from __future__ import annotations

from typing import Annotated

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import InjectedToolCallId, tool

from langctx.context_mode.processor import ContextModeProcessor
from langctx.facts import extract_facts
from langctx.markers import QUOTED_OUTPUT_RE
from langctx.middleware import LangctxMiddleware
from langctx.projection import render_facts
from langctx.testing import ScriptedChatModel, ai_tool_call

SOURCE = "\n".join(f"    def method_{i}(self, value):  # keeps the value {i}" for i in range(60))
"""A file's text the agent reads between the steps that matter (it fills the context)."""


Output = str | tuple[str, int]
"""A tool's output, or its output and exit code (the tool then reports them like a harness that
marks a result with anything on stderr as an error)."""


def _agent_requests(steps: list[tuple[str, Output]], *, reads: int = 24) -> list[BaseMessage]:
    """Run an agent that reads ``reads`` files and then runs ``steps`` (command, output) with a
    ``bash`` tool, then answers; return the messages of its last model request."""
    outputs: dict[str, Output] = {}
    responses: list[AIMessage | str] = []
    for i in range(reads):
        responses.append(ai_tool_call("bash", {"command": f"cat src/mod_{i}.py"}, call_id=f"r{i}"))
        outputs[f"r{i}"] = f"class Mod{i}:\n{SOURCE}"
    for i, (command, output) in enumerate(steps):
        responses.append(ai_tool_call("bash", {"command": command}, call_id=f"s{i}"))
        outputs[f"s{i}"] = output
    for i in range(4):  # the failing steps fold into a compaction behind a few more reads
        responses.append(ai_tool_call("bash", {"command": f"cat docs/p{i}.md"}, call_id=f"t{i}"))
        outputs[f"t{i}"] = f"# Page {i}\n{SOURCE}"
    responses.append("Done.")

    @tool
    def bash(command: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> str | ToolMessage:
        """Run a shell command in the repository."""
        out = outputs[tool_call_id]
        if isinstance(out, str):
            return out
        text, code = out
        status = "error" if code or "cannot" in text else "success"  # stderr seen
        return ToolMessage(
            text, tool_call_id=tool_call_id, status=status, artifact={"exit_code": code}
        )

    model = ScriptedChatModel(responses=responses)
    agent = create_agent(model, tools=[bash], middleware=[LangctxMiddleware()])
    agent.invoke({"messages": [("user", "Stage the changelog and commit the fix.")]})
    return model.calls[-1]


def _ledger(messages: list[BaseMessage]) -> str:
    text = "\n".join(str(m.content) for m in messages)
    assert "<langctx:facts>" in text, "no compaction happened"
    return text.split("<langctx:facts>", 1)[1].split("</langctx:facts>", 1)[0]


# ------------------------------------------------ 1. a known exit code decides failure


GIT_ADD = "git add CHANGELOG.md docs/changes.md"
GIT_FATAL = "fatal: pathspec 'docs/changes.md' did not match any files"
LS_CANNOT = (
    "ls: cannot access 'docs/changes.md': No such file or directory\nCHANGELOG.md\nREADME.md\nsrc\n"
)


def test_a_command_that_exits_0_is_no_failure_and_the_exit_128_stays_the_latest() -> None:
    """``ls`` printing "cannot access" but exiting 0 was named the latest failure and the real
    one (git's exit 128) was dropped from the request."""
    steps: list[tuple[str, Output]] = [
        (GIT_ADD, (GIT_FATAL, 128)),
        ("ls docs/changes.md; ls", (LS_CANNOT, 0)),
    ]
    ledger = _ledger(_agent_requests(steps))
    assert f"Latest failure: `{GIT_ADD}` exit 128" in ledger, ledger
    assert GIT_FATAL in ledger
    assert "cannot access" not in ledger


def test_a_known_exit_code_decides_over_the_error_status() -> None:
    messages = [
        ai_tool_call("bash", {"command": "ls docs/changes.md; ls"}, call_id="c1"),
        ToolMessage(f"{LS_CANNOT}exit code 0", tool_call_id="c1", status="error"),
    ]
    facts = extract_facts(messages)
    assert facts["commands"][0]["ok"] is True and facts["errors"] == []


def test_an_exit_code_beats_a_later_failure_read_from_wording_only() -> None:
    """A later failure guessed from its output (no exit code known) does not hide a command
    that exited non-zero; both are named, the exit code first."""
    messages = [
        ai_tool_call("bash", {"command": GIT_ADD}, call_id="c1"),
        ToolMessage(f"{GIT_FATAL}\nexit code 128", tool_call_id="c1"),
        ai_tool_call("bash", {"command": "ls docs/changes.md"}, call_id="c2"),
        ToolMessage(LS_CANNOT, tool_call_id="c2"),  # no exit code: read from its wording
    ]
    text = render_facts(extract_facts(messages))
    first, later = text.split("\n")[-2:]
    assert first.startswith(f"Latest failure: `{GIT_ADD}` exit 128") and GIT_FATAL in first
    assert later.startswith("Later, judged by its output only: `ls docs/changes.md` failed")


def test_a_masked_exit_0_still_reads_the_test_failure() -> None:
    """``pytest | tail`` exits with tail's 0: the output still decides."""
    out = "FAILED tests/test_a.py::test_x - assert 1\n1 failed in 0.1s\nexit code 0"
    for command, ok in (("pytest -q 2>&1 | tail -5", False), ("pytest -q", True)):
        messages = [
            ai_tool_call("bash", {"command": command}, call_id="c1"),
            ToolMessage(out, tool_call_id="c1"),
        ]
        assert extract_facts(messages)["commands"][0]["ok"] is ok, command


# ------------------------------------------------ 2. failure lines stay verbatim

GO_ERROR = 'cmd/server/main.go:7:2: package "github.com/acme/kit/v2/log" is not in std'


def test_a_failure_line_with_double_quotes_reaches_the_model_verbatim() -> None:
    """The ledger rewrote ``"`` as ``'`` inside a failure line, so the error line the model saw
    was not the one the tool printed."""
    steps: list[tuple[str, Output]] = [("go build ./...", (f"{GO_ERROR}\n", 1))]
    ledger = _ledger(_agent_requests(steps))
    assert GO_ERROR in ledger, ledger
    (span,) = QUOTED_OUTPUT_RE.finditer(ledger)
    assert span.group("text").strip(" ") == GO_ERROR  # quoted, the quote cannot be closed early


# ------------------------------------------------ 3. a traceback keeps its exception line

_HOOKS = ("pluggy/_hooks", "pluggy/_manager", "pluggy/_callers", "_pytest/runner", "_pytest/main")
_CALLS = (
    "return self._hookexec(self.name, self._hookimpls.copy(), kwargs, firstresult)",
    "res = hook_impl.function(*args)",
    "reports = runtestprotocol(item, nextitem=nextitem, log=log)",
    "teardown.throw(exception)",
)


def _internal_error(attribute: str, line: int) -> list[str]:
    """A pytest ``INTERNALERROR`` traceback of 90 distinct frames, raised in a conftest hook."""
    out = ["INTERNALERROR> Traceback (most recent call last):"]
    for i in range(90):
        name = f"{_HOOKS[i % 5]}.py"
        where = f"hook_{chr(97 + i % 26)}{chr(97 + i // 26)}"
        out += [
            f'INTERNALERROR>   File "/opt/venv/lib/python3.11/site-packages/{name}", '
            f"line {50 + 37 * i}, in {where}",
            f"INTERNALERROR>     {_CALLS[i % 4]}  # {where}",
        ]
    return [
        *out,
        f'INTERNALERROR>   File "/workspace/app/tests/conftest.py", line {line}, in pytest_runtest_makereport',
        f"INTERNALERROR>     report.extra = item.funcargs['page'].{attribute}",
        f"INTERNALERROR> AttributeError: 'NoneType' object has no attribute '{attribute}'",
    ]


def test_each_internalerror_traceback_keeps_its_exception_line() -> None:
    """Context-mode's log reducer cut the final ``AttributeError`` line of a pytest
    ``INTERNALERROR`` traceback: the prefix hid where the traceback ended."""
    head = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.9, pytest-8.3.2, pluggy-1.5.0",
        "rootdir: /workspace/app",
        "collected 212 items",
        *(
            f"tests/test_mod_{i}.py ........................................  [{i * 4:3d}%]"
            for i in range(25)
        ),
    ]
    first = _internal_error("screenshot_path", 41)
    second = _internal_error("trace_path", 44)  # a second xdist worker crashed the same way
    worker = ["[gw1] node down: Not properly terminated", "replacing crashed worker gw1"]
    output = "\n".join([*head, *first, *worker, *second]) + "\n"
    processed = ContextModeProcessor().process(
        output, tool_name="bash", args={"command": "pytest -n 2"}
    )
    assert processed.action != "inline"
    assert first[-1] in processed.text and second[-1] in processed.text


# ------------------------------------------------ 4. folded user messages come back byte-exact

REQUEST = (
    "The release script breaks on these lines:\n"
    "\n"
    "    VERSION=$(git describe --tags)\n"
    "\tcp build/*.whl dist/\n"
    "\n"
    "```bash\n"
    'if [ -z "$VERSION" ]; then\n'
    '  echo "no tag"\n'
    "fi\n"
    "```\n"
    "\n"
    "  Keep the two-space indent in the echo."
)


def test_a_folded_multi_line_user_message_comes_back_byte_exact() -> None:
    """A folded multi-line user message came back re-indented by two spaces."""
    from langgraph.checkpoint.memory import InMemorySaver

    reads = [f"cat src/mod_{i}.py" for i in range(30)]
    script: list[AIMessage | str] = []
    for turn in range(3):  # the task, then the request, then "Go on.": ten reads each
        script += [ai_tool_call("bash", {"command": c}) for c in reads[turn * 10 : turn * 10 + 10]]
        script.append(f"Read ten files ({turn}).")

    @tool
    def bash(command: str) -> str:
        """Run a shell command in the repository."""
        return f"# {command}\n{SOURCE}"

    model = ScriptedChatModel(responses=script)
    agent = create_agent(
        model, tools=[bash], middleware=[LangctxMiddleware()], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "t"}}
    for text in ("Fix the release script.", REQUEST, "Go on."):
        agent.invoke({"messages": [("user", text)]}, config)
    sent = "\n".join(str(m.content) for m in model.calls[-1])
    assert "User requests (" in sent, "the request was not folded"
    assert REQUEST in sent
