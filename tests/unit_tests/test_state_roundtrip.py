"""``from_state(to_state())`` in a fresh interpreter renders, and goes on rendering, the live bytes.

Random sessions (the demo's tool turns, parallel calls, thinking blocks, user follow-ups, a manual
``/compact``, model summaries that finish early, late or never) at 4k, 8k and 32k: the live memory
is saved with ``to_state()`` through JSON at a random point, a fresh interpreter restores it,
and both are fed the rest of the session; every projection, serialized, must be byte-identical.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, messages_to_dict

from langctx import LayeredChatMemory
from langctx.cli.demo.session import coding_session
from langctx.engine import background
from langctx.summarize import SummaryRequest

ROOT = Path(__file__).resolve().parents[2]
Chunk = Callable[[LayeredChatMemory], None]


def summarize(request: SummaryRequest) -> str:
    """A model summary of the whole input; by its input it answers at once, late, or never (it
    fails: the entry keeps its local summary)."""
    first = request.messages[0].id if request.messages else "-"
    kind = sum(map(ord, str(first))) % 3
    if kind == 2:
        raise RuntimeError("provider down")
    if kind == 1 and threading.current_thread() is not threading.main_thread():
        time.sleep(0.05)  # in the background: the next fold waits for it
    return (
        "Goal:\n- fix the parser\nCurrent status:\n"
        f"- {len(request.messages)} messages from {first}, {len(request.summaries)} summaries"
    )


def memory_options(case: dict[str, Any]) -> dict[str, Any]:
    return {
        "max_tokens": case["budget"],
        "summarizer": summarize,
        "summary_threshold_tokens": 0,
    }


def _thinking(m: AIMessage, n: int) -> AIMessage:
    blocks = [
        {"type": "thinking", "thinking": f"Plan step {n}.", "signature": f"sig-{n}"},
        {"type": "text", "text": m.text or "Working."},
    ]
    return m.model_copy(update={"content": blocks})


def session(case: dict[str, Any]) -> list[Chunk]:
    """The case's session as chunks, each a call on the memory (deterministic in ``case``)."""
    rng = random.Random(case["seed"])
    messages: list[BaseMessage] = coding_session(case["turns"], seed=case["seed"])
    chunks: list[Chunk] = []
    i, n = 0, 0
    while i < len(messages):
        size = rng.randint(1, 6)
        part = list(messages[i : i + size])
        i += size
        for k, m in enumerate(part):
            if isinstance(m, AIMessage) and rng.random() < case["thinking"]:
                part[k] = _thinking(m, n)
        if rng.random() < 0.06:  # the user follows up
            part.append(HumanMessage(f"Also keep the CLI working ({n}).", id=f"follow-{n}"))
        chunks.append(lambda mem, part=part: mem.add_messages(part))
        if n == case["compact_at"]:
            chunks.append(lambda mem: mem.compact("keep the parser notes"))
        n += 1
    return chunks


def render(mem: LayeredChatMemory) -> str:
    return json.dumps(messages_to_dict(mem.build_context()), sort_keys=True, ensure_ascii=False)


CASES = [
    {
        "budget": budget,
        "seed": seed,
        "turns": 90,
        "thinking": [0.0, 0.3][seed % 2],
        "compact_at": 12 + 7 * seed,
        "cut": 20 + 9 * seed,
    }
    for budget in (4000, 8000, 32000)
    for seed in range(3)
]


def test_a_restored_memory_renders_the_live_bytes_in_a_fresh_interpreter() -> None:
    lives, jobs = [], []
    qualities: set[str] = set()
    failed = 0
    for case in CASES:
        background.clear()
        chunks = session(case)
        mem = LayeredChatMemory(**memory_options(case))
        for chunk in chunks[: case["cut"]]:
            chunk(mem)
        state = json.loads(json.dumps(mem.to_state()))
        jobs.append({"case": case, "state": state})
        frames = [render(mem)]
        for chunk in chunks[case["cut"] :]:
            chunk(mem)
            frames.append(render(mem))
        lives.append(frames)
        qualities.update(e["quality"] for e in mem.compactions)
        failed += sum(r["action"] == "summarizer_fallback" for r in mem.eviction_log)
    assert {"mechanical", "model"} <= qualities and failed > 0  # early, late and never happened
    proc = subprocess.run(
        [sys.executable, "-m", "tests.unit_tests._roundtrip_worker"],
        input=json.dumps(jobs),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    restored = json.loads(proc.stdout)
    for case, live, again in zip(CASES, lives, restored, strict=True):
        assert len(live) == len(again)
        for step, (a, b) in enumerate(zip(live, again, strict=True)):
            assert a == b, f"{case}: differs {step} chunks after the restore"
