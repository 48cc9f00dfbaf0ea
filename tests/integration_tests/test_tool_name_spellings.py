"""The recorded sessions with every tool renamed as other agents spell it give the same facts.

Each session of ``../shared/data/trajectories`` is replayed with its tool names (the AI
messages' calls and the tool messages' ``name``) passed through each spelling of
``tests._tool_spellings.SPELLINGS``: an MCP prefix (``mcp__workspace__read``), Goose's
``developer__``, a dotted namespace, camelCase, PascalCase and kebab-case. The files read and
modified and the commands must equal those of the original names.

Measured on the 38 sessions x 6 spellings: before the names were normalised 66 of 228 renamed
sessions gave the same facts (2 of 38 with a prefix, the sessions that name no file and run
no command); with the normaliser and the rules, all 228.
"""

from __future__ import annotations

import pytest

from langctx.facts import Facts, extract_facts
from tests._tool_spellings import SPELLINGS, respell
from tests._trajectories import DATA_DIR, Session, iter_sessions, require_data_dir

pytestmark = pytest.mark.trajectories

SESSIONS = list(iter_sessions())
PARAMS = [pytest.param(s, id=f"{s.source}/{s.id}") for s in SESSIONS] or [
    pytest.param(None, id=f"no-data-at-{DATA_DIR}")
]


def summary(facts: Facts) -> tuple[list[str], list[str], list[str]]:
    return (
        sorted(facts["read_files"]),
        sorted(facts["modified_files"]),
        [command["command"] for command in facts["commands"]],
    )


@pytest.mark.parametrize("session", PARAMS)
def test_every_spelling_gives_the_same_facts(session: Session | None) -> None:
    require_data_dir()
    assert session is not None
    messages = session.messages()
    base = extract_facts(messages)
    for spelling, spell in SPELLINGS.items():
        renamed = extract_facts(respell(messages, spell))
        assert summary(renamed) == summary(base), spelling
        exits = [command["exit_code"] for command in renamed["commands"]]
        assert exits == [command["exit_code"] for command in base["commands"]], spelling


def test_the_sessions_exercise_the_spellings() -> None:
    """The comparison means something: the sessions name files and run commands."""
    require_data_dir()
    facts = [extract_facts(session.messages()) for session in SESSIONS]
    assert sum(1 for f in facts if f["read_files"]) >= 20
    assert sum(1 for f in facts if f["modified_files"]) >= 30
    assert sum(1 for f in facts if f["commands"]) >= 25
