"""Modified files reach the model by their whole paths (issue 40, item 9, shape 5).

Held-out sessions under a deep home directory got ``Files modified so far (under
/home/<user>/): projects/…``: a prefix said once, no whole path in the request, while the model
calls its tools with whole paths. A coding session under ``/home/alice/projects/acme/service``
edits files with ``edit_file``, ``write_file`` and shell ``sed -i`` (absolute, and relative after
``cd``) through ``create_agent`` + ``LangctxMiddleware`` at its defaults; every request after a
fold must name each modified file whole, or count it in "… and N earlier files".
"""

from __future__ import annotations

import re

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import tool

from langctx.middleware import LangctxMiddleware
from langctx.testing import ScriptedChatModel, ai_tool_call

HOME = "/home/alice/projects/acme/service"
AREAS = ("api/handlers", "billing/invoices", "storage/postgres", "auth/tokens")
SOURCE = "\n".join(f"    def step_{i}(self, value):  # returns the value {i}" for i in range(40))


def _path(i: int) -> str:
    return f"{HOME}/src/acme/service/{AREAS[i % len(AREAS)]}/module_{i:02d}.py"


def _edit(i: int) -> AIMessage:
    """The i-th modification, by one of four kinds of call."""
    path, cid = _path(i), f"e{i}"
    if i % 4 == 0:
        return ai_tool_call("edit_file", {"path": path, "old": "a", "new": "b"}, call_id=cid)
    if i % 4 == 1:
        return ai_tool_call("write_file", {"path": path, "content": "x = 1\n"}, call_id=cid)
    if i % 4 == 2:
        command = f"sed -i 's/DEBUG = True/DEBUG = False/' {path}"
        return ai_tool_call("bash", {"command": command}, call_id=cid)
    relative = path.removeprefix(HOME + "/")
    command = f"cd {HOME} && sed -i 's/old_name/new_name/g' {relative}"
    return ai_tool_call("bash", {"command": command}, call_id=cid)


def _requests(budget: int, edits: int) -> list[list[BaseMessage]]:
    """Run the session at ``budget`` tokens; every main-model request, in order."""
    responses: list[AIMessage | str] = []
    for i in range(edits):
        read = f"{HOME}/src/acme/service/{AREAS[i % len(AREAS)]}/reader_{i:02d}.py"
        responses += [ai_tool_call("read_file", {"path": read}, call_id=f"r{i}"), _edit(i)]
    responses.append("Done.")

    @tool
    def read_file(path: str) -> str:
        """Read a file."""
        return f"# {path}\nclass Reader:\n{SOURCE}"

    @tool
    def edit_file(path: str, old: str, new: str) -> str:
        """Replace text in a file."""
        return f"Edited {path}."

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file."""
        return f"Wrote {len(content)} bytes to {path}."

    @tool
    def bash(command: str) -> str:
        """Run a shell command."""
        return ""

    model = ScriptedChatModel(responses=responses)
    agent = create_agent(
        model,
        tools=[read_file, edit_file, write_file, bash],
        middleware=[LangctxMiddleware(max_tokens=budget)],
    )
    agent.invoke({"messages": [("user", "Rename old_name to new_name across the service.")]})
    return model.calls


def _text(messages: list[BaseMessage]) -> str:
    parts = [str(m.content) for m in messages]
    parts += [str(tc["args"]) for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls]
    return "\n".join(parts)


def _whole(path: str, text: str) -> bool:
    return re.search(r"(?<![\w./-])" + re.escape(path) + r"(?![\w/-]|\.\w)", text) is not None


def _earlier(text: str) -> int:
    m = re.search(r"Files modified so far \([^\n]*?… and (\d+) earlier files", text)
    return int(m.group(1)) if m else 0


@pytest.mark.parametrize(("budget", "edits", "elided"), [(3_000, 60, True), (8_000, 24, False)])
def test_every_modified_file_is_named_whole_after_a_fold(
    budget: int, edits: int, elided: bool
) -> None:
    requests = _requests(budget, edits)
    folded = [r for r in requests if "<langctx:facts>" in _text(r)]
    assert len(folded) > edits // 2, "the session must fold early"
    counted = 0
    for n, request in enumerate(requests):
        if request not in folded:
            continue
        text = _text(request)
        calls = {tc["id"] for m in request if isinstance(m, AIMessage) for tc in m.tool_calls}
        done = [_path(i) for i in range(min(edits, n // 2))]  # request n follows edit n//2 - 1
        # a file whose call is still in the request is named by that call (`cd` + relative)
        missing = [p for i, p in enumerate(done) if f"e{i}" not in calls and not _whole(p, text)]
        assert "(under " not in text, text[text.index("(under ") :][:200]
        # none lost: the oldest only, each counted in "… and N earlier files"
        assert missing == done[: len(missing)] and len(missing) <= _earlier(text), (n, missing[:2])
        counted = max(counted, _earlier(text))
    assert bool(counted) is elided  # 3k bounds the ledger by eliding; 8k names every file whole
