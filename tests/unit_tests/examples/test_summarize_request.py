"""The examples of `langctx.summarize.request`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langchain_core.messages import HumanMessage

from langctx.summarize.request import SummaryRequest, request_digest


def test_request_digest() -> None:
    a = SummaryRequest(kind="turns", messages=[HumanMessage("fix it", id="h1")])
    b = SummaryRequest(kind="turns", messages=[HumanMessage("fix it now", id="h1")])
    assert (request_digest(a) == request_digest(a), request_digest(a) == request_digest(b)) == (
        True,
        False,
    )
