"""The legacy chat-history adapter for real: long sessions on SQLite, resumed in a new process.

A 200-turn scripted coding session (tool calls, giant outputs) and a 200-turn
``RunnableWithMessageHistory`` chat run on one SQLite file in two real processes; the second
rebuilds exactly the first one's projection and keeps compacting within the budget, with no orphan
tool messages. langchain-core's own history tests, vendored in ``tests/upstream``, run there once
(in the ordinary pytest run) against ``LangctxChatMessageHistory``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import messages_from_dict

from langctx.cli.demo.session import iter_turns
from langctx.history import SQLiteChatHistoryStore
from tests._helpers import assert_pairs_intact

ROOT = Path(__file__).resolve().parents[2]
BUDGET = 6000
TURNS = 200


CHILD = """
import json, sys
from langchain_core.messages import HumanMessage, SystemMessage, messages_to_dict
from langchain_core.runnables.history import RunnableWithMessageHistory
import warnings
warnings.filterwarnings("ignore", "RunnableWithMessageHistory is deprecated", DeprecationWarning)
from langctx.cli.demo.session import SYSTEM_PROMPT, TASK, iter_turns
from langctx.history import SQLiteChatHistoryStore
from langctx.testing import ScriptedChatModel
from tests._helpers import assert_pairs_intact

path, lo, hi, budget, total = sys.argv[1], *map(int, sys.argv[2:6])
out = {}
with SQLiteChatHistoryStore.from_conn_string(path, max_tokens=budget) as store:
    # 1. a coding agent's log written through add_messages: tool calls, giant outputs
    coding = store.get_history("coding")
    out["coding_before"] = messages_to_dict(coding.messages)
    if lo == 0:
        coding.add_messages([SystemMessage(SYSTEM_PROMPT, id="sys"), HumanMessage(TASK, id="task")])
    for turn in list(iter_turns(total))[lo:hi]:
        coding.add_messages(turn)
        assert coding.memory.context_tokens() <= budget
        ctx = coding.messages
        assert ctx[0].type == "system" and ctx[1].content == TASK
        assert_pairs_intact(ctx)
    out["coding_after"] = messages_to_dict(coding.messages)
    out["coding_full"] = len(coding.full_messages)

    # 2. a chat through RunnableWithMessageHistory
    model = ScriptedChatModel(
        responses=[lambda msgs: f"reply {len(msgs)}: " + "words " * 60], cycle=True, usage=True
    )
    chain = RunnableWithMessageHistory(model, store.get_history)
    chat = store.get_history("chat")
    out["chat_before"] = messages_to_dict(chat.messages)
    for i in range(lo, hi):
        before = chat.messages
        chain.invoke([HumanMessage(f"question {i}: " + "context " * 60)],
                     {"configurable": {"session_id": "chat"}})
        assert model.calls[-1][:-1] == before  # the model was shown the projection
        assert chat.memory.context_tokens() <= budget
    out["chat_after"] = messages_to_dict(chat.messages)
    out["chat_full"] = len(chat.full_messages)
    out["compactions"] = [len(coding.memory.compactions), len(chat.memory.compactions)]
print(json.dumps(out))
"""


def run_child(path: Path, lo: int, hi: int) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", CHILD, str(path), *map(str, (lo, hi, BUDGET, TURNS))],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1200,
    )
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr[-4000:]
    return json.loads(proc.stdout)


@pytest.mark.slow
def test_long_sessions_on_sqlite_resume_in_a_new_process(tmp_path: Path) -> None:
    db = tmp_path / "history.db"
    first = run_child(db, 0, TURNS // 2)
    assert first["coding_before"] == [] and first["chat_before"] == []
    assert all(n > 0 for n in first["compactions"])

    second = run_child(db, TURNS // 2, TURNS)
    assert second["coding_before"] == first["coding_after"]  # exactly the same projection
    assert second["chat_before"] == first["chat_after"]
    assert second["compactions"][0] > first["compactions"][0]  # and it keeps compacting
    assert second["compactions"][1] > first["compactions"][1]

    expected_coding = 2 + sum(len(t) for t in iter_turns(TURNS))
    assert second["coding_full"] == expected_coding
    assert second["chat_full"] == 2 * TURNS

    # the parent, a third process, sees what the second left, and the log is complete
    with SQLiteChatHistoryStore.from_conn_string(str(db), max_tokens=BUDGET) as store:
        coding, chat = store.get_history("coding"), store.get_history("chat")
        assert coding.messages == messages_from_dict(second["coding_after"])
        assert chat.messages == messages_from_dict(second["chat_after"])
        assert_pairs_intact(coding.messages)
        assert [m.id for m in coding.full_messages[2:]] == [
            m.id for turn in iter_turns(TURNS) for m in turn
        ]
        rows = store.conn.execute(
            "SELECT session_id, COUNT(*) FROM langctx_history_messages GROUP BY session_id"
        ).fetchall()
        assert dict(rows) == {"coding": expected_coding, "chat": 2 * TURNS}
