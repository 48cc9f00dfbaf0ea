"""The examples of `langctx.context_mode.plan`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.plan import ProcessedOutput, is_free
from langctx.context_mode.references import new_meta


def test_is_free() -> None:
    meta = new_meta(ref_id="ctx_0123abcd", thread_id="t", data=b"x", source="str")
    assert (is_free(meta, None), is_free(meta, meta), is_free(meta, {**meta, "sha256": "0"})) == (
        True,
        True,
        False,
    )


def test_processed_output_stamp() -> None:
    assert ProcessedOutput(text="x", action="inline").stamp()["action"] == "inline"
