"""Run in a fresh interpreter by ``test_state_roundtrip``: restore memories from JSON states.

Reads a JSON list of cases on stdin, each ``{"case": {...}, "state": {...}}``; for each, builds the
case's memory with :func:`LayeredChatMemory.from_state`, then feeds it the rest of the session
chunk by chunk. Prints one JSON list: per case, the projection after the restore and after every
chunk, as :func:`render` writes it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.unit_tests.test_state_roundtrip import memory_options, render, session

if __name__ == "__main__":
    out: list[list[str]] = []
    for job in json.load(sys.stdin):
        case: dict[str, Any] = job["case"]
        from langctx import LayeredChatMemory

        mem = LayeredChatMemory.from_state(job["state"], **memory_options(case))
        frames = [render(mem)]
        for chunk in session(case)[case["cut"] :]:
            chunk(mem)
            frames.append(render(mem))
        out.append(frames)
    print(json.dumps(out))
