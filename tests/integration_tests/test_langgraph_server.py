"""``graphs/coding_agent.py`` served by the LangGraph dev server, driven by the SDK client.

``langgraph dev`` (in-memory runtime, from ``langgraph.json``) runs in a subprocess on a free local
port, in a temporary folder of its own (two runs at once share no state); a thread runs the scripted session long enough to compact, its compaction entries are read
back through the API, and a second run on the thread continues from them.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from langctx.archive_repair import checked_batch
from langctx.stores.archive import archive_namespace, thread_entries

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).with_name("langgraph")

pytestmark = [
    pytest.mark.slow,  # a server process: ~10 s
    pytest.mark.skipif(
        not LANGGRAPH.exists() and os.environ.get("LANGCTX_REQUIRE_SERVER") != "1",
        reason="langgraph-cli[inmem] is not installed (it is in the test group)",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config_beside(folder: Path) -> Path:
    """The repository's ``langgraph.json`` with its relative paths made absolute, written to
    ``folder``: the server runs there, since the in-memory runtime keeps its state in the working
    directory's ``.langgraph_api/`` (in the tree, every run reloaded every earlier run's threads,
    and two runs at once shared them)."""
    spec = json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))

    def absolute(path: str) -> str:
        return str((ROOT / path).resolve()) if path.startswith(".") else path

    spec["dependencies"] = [absolute(d) for d in spec.get("dependencies", [])]
    spec["graphs"] = {name: absolute(target) for name, target in spec["graphs"].items()}
    if isinstance(spec.get("env"), str):
        spec["env"] = absolute(spec["env"])
    target = folder / "langgraph.json"
    target.write_text(json.dumps(spec), encoding="utf-8")
    return target


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    sandbox = tmp_path_factory.mktemp("sandbox")
    env = {
        **os.environ,
        "LANGCTX_BUDGET": "4000",
        "LANGCTX_TURNS": "30",
        "LANGCTX_SANDBOX": str(sandbox / "project"),
        "LANGSMITH_TRACING": "false",
        "LANGCHAIN_TRACING_V2": "false",
    }
    env.pop("OPENAI_API_KEY", None)
    log = (sandbox / "server.log").open("w")
    proc = subprocess.Popen(
        [
            str(LANGGRAPH),
            "dev",
            "--config",
            str(_config_beside(sandbox)),
            "--port",
            str(port),
            "--no-browser",
            "--no-reload",
            "--allow-blocking",
        ],
        cwd=sandbox,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, proc, sandbox / "server.log")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _wait_until_up(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    import httpx

    deadline = time.monotonic() + 120
    with httpx.Client(timeout=2) as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                pytest.fail(
                    f"langgraph dev exited with {proc.returncode}:\n{log.read_text()[-3000:]}"
                )
            try:
                if http.get(f"{url}/ok").status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
    pytest.fail(f"langgraph dev did not answer within 120 s:\n{log.read_text()[-3000:]}")


def test_a_served_thread_compacts_and_the_next_run_continues_from_its_entries(server: str) -> None:
    from langgraph_sdk import get_sync_client

    with get_sync_client(url=server) as client:
        _two_runs(client)


def _two_runs(client: Any) -> None:
    from langctx.cli.demo.script import DEMO_TASK

    thread = client.threads.create()
    tid = thread["thread_id"]
    config = {"recursion_limit": 200}
    first = client.runs.wait(
        tid,
        "coding_agent",
        input={"messages": [{"role": "user", "content": DEMO_TASK}]},
        config=config,
    )
    assert isinstance(first, dict) and first["messages"][-1]["content"].startswith("Fixed it")
    values = client.threads.get_state(tid)["values"]
    entries = _every_compaction(client, tid, values)  # the channel's, and the archived ones
    assert entries, "the first run should have compacted at a 4,000-token budget"
    assert all(e["v"] and e["kind"] == "compaction" for e in entries)
    assert values["messages"][0]["content"] == DEMO_TASK  # the task stays pinned in messages

    client.runs.wait(
        tid,
        "coding_agent",
        input={"messages": [{"role": "user", "content": "Run the tests once more."}]},
        config=config,
    )
    after = client.threads.get_state(tid)["values"]
    later = _every_compaction(client, tid, after)
    assert [e["id"] for e in later[: len(entries)]] == [e["id"] for e in entries]
    assert len(later) > len(entries)  # the second run compacted on top of the first's entries
    # the server gives the graph a store: the folded log is there, each batch once
    archived = [values["langctx"]["archive"], after["langctx"]["archive"]]
    assert archived[1]["messages"] > archived[0]["messages"] > 0
    assert len(_batches(client, tid)) == archived[1]["batches"]
    assert not after.get("langctx_archive")
    kept = {m["id"] for m in after["messages"]}
    cuts = [e["first_kept_id"] for e in after["langctx"]["compactions"] if e["trigger"] != "merge"]
    assert cuts and cuts[-1] in kept  # the latest cut is in the window the state keeps


def _batches(client: Any, tid: str) -> list[Any]:
    """The thread's archived batches in the server's store, oldest first."""
    items = client.store.search_items(list(archive_namespace(tid)), limit=1000)["items"]
    return sorted((checked_batch(i["value"]) for i in items), key=lambda b: b["seq"])


def _every_compaction(client: Any, tid: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """The thread's compaction entries: those archived in the server's store, then the channel's."""
    return thread_entries(_batches(client, tid), values.get("langctx"))[0]
