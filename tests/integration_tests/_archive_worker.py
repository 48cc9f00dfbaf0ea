"""Run in a NEW process by the archive-mode resume tests: reopen an archived thread, keep going.

Usage: ``python -m tests.integration_tests._archive_worker JOBS_JSON``: a list of jobs, each with
``uri`` (checkpointer), ``store_uri``, ``thread_id``, ``kind`` ("middleware" | "node"), ``delta``,
``budget``, ``seed``, ``first`` (turns already run), ``total`` and ``first_user`` (the next user
turn's number). Prints one JSON line: per job, the projection rebuilt from the checkpoint and the
archive, the update it would write, the model inputs of the rest of the session, the full log at
the end and the sizes of the live state and of the channel.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from langctx.state_memory import view_state
from langctx.stores.archive import full_log
from langctx.stores.checkpoints import open_checkpointer
from langctx.testing import ScriptedChatModel
from tests.integration_tests._archive_agents import build, dicts, drive, open_store, script


def main(job: dict[str, Any]) -> dict[str, Any]:
    responses, outputs = script(job["total"], seed=job["seed"], start=job["first"])
    model = ScriptedChatModel(responses=responses)
    cfg = {"configurable": {"thread_id": job["thread_id"]}, "recursion_limit": 5000}
    with open_checkpointer(job["uri"]) as saver, open_store(job["store_uri"]) as store:
        graph, settings = build(
            job["kind"],
            model,
            outputs,
            budget=job["budget"],
            archive=True if job["kind"] == "node" else store,
            checkpointer=saver,
            store=store,
            delta=job["delta"],
        )
        state = graph.get_state(cfg).values
        view = view_state(state, settings, thread_id=job["thread_id"])
        view.compact_if_due()  # what the next model call would do first
        projection = dicts(view.projection())
        pending = view.update()
        out = drive(lambda x: graph.invoke(x, cfg), model, None, first_user=job["first_user"])
        log = full_log(store, job["thread_id"], out)
    return {
        "projection": projection,
        "pending_update": pending,
        "calls": [dicts(c) for c in model.calls],
        "full_log": dicts(log),
        "live": len(out["messages"]),
        "compactions_in_channel": len(out["langctx"]["compactions"]),
        "archived_messages": out["langctx"]["archive"]["messages"],
    }


if __name__ == "__main__":
    print(json.dumps([main(job) for job in json.loads(sys.argv[1])]))
