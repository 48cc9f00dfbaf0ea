"""What the HTML report tests render: a checkpoint database written by a real LangGraph run.

:func:`write_thread_db` runs a scripted coding session through ``StateGraph`` + ``LangctxNode`` on
a ``SqliteSaver`` with a small budget, so the thread has compactions, merges and in-place edits
and one checkpoint per step. One tool output is hostile HTML (:data:`HOSTILE`): the pages must
show it as text. :class:`Page` parses a page (or a browser's DOM dump);
:func:`assert_self_contained` checks that nothing in it points outside it.
"""

from __future__ import annotations

from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph

from langctx.langgraph import LangctxNode, LangctxState, route_after_memory

HOSTILE = (
    '<script>document.title="pwned"</script><img src="https://example.invalid/x.png">'
    '<a href="http://example.invalid/">click</a>'
)
"""A tool output that would load and run things if it were not escaped."""
SESSIONS = Path(__file__).resolve().parent / "fixtures" / "sessions"
PI = SESSIONS / "pi" / "before-compaction-head.jsonl"

LINK_ATTRIBUTES = {"src", "href", "xlink:href", "action", "formaction", "srcset", "poster", "data"}


class Page(HTMLParser):
    """The tags, attributes and text of a page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: Counter[str] = Counter()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.title: str | None = None
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        self.elements.append((tag, dict(attrs)))
        self._in = tag

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in == "title" and self.title is None:  # the page's, before any SVG's
            self.title = data

    def having(self, tag: str, cls: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == tag and cls in (a.get("class") or "").split()]


def assert_self_contained(page: str) -> Page:
    """No attribute or style refers to anything outside the page; only our own script runs."""
    parsed = Page(page)
    for tag, attrs in parsed.elements:
        links = {k: v for k, v in attrs.items() if k in LINK_ATTRIBUTES}
        assert all((v or "").startswith("#") for v in links.values()), (tag, links)
        for value in attrs.values():
            assert "://" not in (value or "") or tag == "div", (tag, attrs)  # data-chart: numbers
    assert "url(" not in page and "@import" not in page
    assert parsed.tags["script"] == 1 and parsed.tags["img"] == 0 and parsed.tags["iframe"] == 0
    assert parsed.tags["link"] == 0 and parsed.tags["a"] == 0
    return parsed


THREAD = "fix-parser"
BUDGET = 2000


def write_thread_db(path: Path, *, turns: int = 16, budget: int = BUDGET) -> Path:
    """A SQLite checkpoint file with one thread (:data:`THREAD`) of ``turns`` tool calls."""
    node = LangctxNode(max_tokens=budget)
    step = {"i": 0}

    def model(state: LangctxState) -> dict[str, Any]:
        i = step["i"]
        step["i"] += 1
        if i >= turns:
            return {"messages": [AIMessage("The parser is fixed.", id=f"a{i}")]}
        path = f"src/parser_{i}.py"
        call = {"id": f"c{i}", "name": "read_file", "args": {"path": path}, "type": "tool_call"}
        return {"messages": [AIMessage(f"Reading {path}.", id=f"a{i}", tool_calls=[call])]}

    def tools(state: LangctxState) -> dict[str, Any]:
        last = state["messages"][-1]
        i = int(str(last.id)[1:])
        body = HOSTILE if i == 1 else f"def parse_{i}(text):\n    return text.split()\n" * 30
        if i % 5 == 4:
            body = "FAILED tests/test_parser.py::test_split - AssertionError\n" + body * 3
        return {"messages": [ToolMessage(body, tool_call_id=f"c{i}", id=f"t{i}", name="read_file")]}

    def after_model(state: LangctxState) -> str:
        last = state["messages"][-1]
        return "tools" if getattr(last, "tool_calls", None) else END

    builder = StateGraph(LangctxState)
    builder.add_node("memory", node)
    builder.add_node("model", model)
    builder.add_node("tools", tools)
    builder.add_edge(START, "memory")
    builder.add_conditional_edges("memory", route_after_memory("model"), ["model", END])
    builder.add_conditional_edges("model", after_model, ["tools", END])
    builder.add_edge("tools", "memory")
    with SqliteSaver.from_conn_string(str(path)) as saver:
        graph = builder.compile(checkpointer=saver)
        task = HumanMessage("Fix the parser in src/. Do not edit the tests.")
        config: RunnableConfig = {
            "configurable": {"thread_id": THREAD},
            "recursion_limit": 10 * turns + 10,
        }
        graph.invoke(
            LangctxState(messages=[SystemMessage("You are a coding agent."), task]), config
        )
    return path
