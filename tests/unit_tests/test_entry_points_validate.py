"""Every entry point validates what it reads (issue 41, item 6): a checkpoint blob of the wrong
shape, a ``--db`` that is not SQLite, price sheets and budgets out of bounds: one line (exit 2)
or a ConfigError at construction, never a traceback."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path
from typing import Any

import ormsgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, MessagesState, StateGraph

from langctx import ConfigError, MemoryConfig
from langctx.cli.main import main
from langctx.config_checks import MAX_BUDGET_TOKENS
from langctx.pricing import MAX_PRICE, ModelPrices, PriceSheet, price_sheet


def _thread_db(path: Path) -> Path:
    graph = StateGraph(MessagesState)
    graph.add_node("n", lambda s: {"messages": [AIMessage("ok")]})
    graph.add_edge(START, "n")
    graph.add_edge("n", END)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        graph.compile(checkpointer=saver).invoke(
            {"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t1"}}
        )
    return path


def _one_line(capsys: pytest.CaptureFixture[str], code: int) -> str:
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("blob", [7, None, "x", [], -(2**63), 1.5, True, {"channel_values": 3}])
def test_inspect_a_checkpoint_blob_of_the_wrong_shape_is_one_line(
    blob: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A blob that decodes to a msgpack int, nil, string or array ended in AttributeError."""
    path = _thread_db(tmp_path / "c.sqlite")
    with sqlite3.connect(path) as con:
        con.execute(
            "UPDATE checkpoints SET checkpoint = ?, type = 'msgpack'", (ormsgpack.packb(blob),)
        )
    line = _one_line(capsys, main(["inspect", "--db", str(path), "--thread", "t1"]))
    assert "cannot be decoded" in line and "--checkpoint ID" in line


@pytest.mark.parametrize(
    "content", [b"hello, not sqlite" * 100, b"\x00" * 4096, b"SQLite format 3\x00" + b"\xff" * 200]
)
def test_demo_on_a_file_that_is_not_sqlite_is_one_line(
    content: bytes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``demo --db`` on a non-SQLite file printed 29 lines ending in sqlite3.DatabaseError."""
    bad = tmp_path / "notes.db"
    bad.write_bytes(content)
    line = _one_line(capsys, main(["demo", "--db", str(bad), "--turns", "2"]))
    assert "is not a SQLite database" in line
    assert bad.read_bytes() == content  # left as it was


def test_demo_on_a_directory_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "is a directory" in _one_line(capsys, main(["demo", "--db", str(tmp_path)]))


BAD_PRICES = [-1, -0.01, math.nan, math.inf, -math.inf, 1e300, MAX_PRICE * 2, "3", None, True, [1]]


@pytest.mark.parametrize("bad", BAD_PRICES, ids=repr)
def test_a_price_out_of_bounds_is_refused_at_construction(bad: Any) -> None:
    """Negative, NaN, infinite, huge or string prices were accepted, some crashing later."""
    good = {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0}
    for field in good:
        with pytest.raises(ConfigError, match=f"price {field} must be"):
            ModelPrices(**{**good, field: bad})
    with pytest.raises(ConfigError):
        PriceSheet(name="x", main={**good, "input": bad}, summarizer=ModelPrices(**good))  # type: ignore[arg-type]


def test_a_price_sheet_file_with_bad_prices_is_a_config_error(tmp_path: Path) -> None:
    sheet = tmp_path / "p.json"
    sheet.write_text('{"main": {"input": NaN, "cached_input": 0, "cache_write": 0, "output": 1}}')
    with pytest.raises(ConfigError, match="price input must be"):
        price_sheet(sheet)
    with pytest.raises(ConfigError):
        MemoryConfig(cache_prices=str(sheet))


@pytest.mark.parametrize(
    "options",
    [
        {"max_tokens": 10**12},
        {"max_context_tokens": 10**12},
        {"max_context_tokens": ("tokens", 10**12)},
        {"context_window": 10**12},
        {"context_window": MAX_BUDGET_TOKENS + 1},
        {"reserve_tokens": 10**12, "context_window": 200_000},
    ],
    ids=repr,
)
def test_a_budget_over_the_ceiling_is_refused_at_construction(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError, match=f"at most {MAX_BUDGET_TOKENS:,} tokens"):
        MemoryConfig(**options)


def test_the_ceiling_itself_is_accepted() -> None:
    assert MemoryConfig(context_window=MAX_BUDGET_TOKENS).context_window == MAX_BUDGET_TOKENS
    assert MemoryConfig(max_tokens=MAX_BUDGET_TOKENS).max_tokens_resolved == MAX_BUDGET_TOKENS


# ---------------------------------------------------------------- properties

ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.tuples(st.sampled_from(["tokens", "fraction", "x"]), st.one_of(st.integers(), st.floats())),
)


@settings(max_examples=300, deadline=None)
@given(
    field=st.sampled_from(["max_tokens", "context_window", "keep_recent_tokens", "reserve_tokens"]),
    value=ANY_VALUE,
)
def test_any_token_size_is_accepted_within_bounds_or_refused_with_a_config_error(
    field: str, value: Any
) -> None:
    try:
        config = MemoryConfig(**{field: value})
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    resolved = {
        "max_tokens": config.max_tokens_resolved,
        "context_window": config.context_window,
        "keep_recent_tokens": config.keep_recent_tokens_resolved,
        "reserve_tokens": config.reserve_tokens_resolved,
    }[field]
    assert resolved is None or (isinstance(resolved, int) and 0 <= resolved <= MAX_BUDGET_TOKENS)


@settings(max_examples=300, deadline=None)
@given(value=ANY_VALUE)
def test_any_price_is_a_finite_bounded_float_or_a_config_error(value: Any) -> None:
    try:
        prices = ModelPrices(input=value, cached_input=0, cache_write=0, output=0)
    except ConfigError as exc:
        assert "\n" not in str(exc)
        return
    assert isinstance(prices.input, float) and 0 <= prices.input <= MAX_PRICE


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    blob=st.recursive(
        st.one_of(
            st.none(),
            st.booleans(),
            st.integers(-(2**63), 2**63 - 1),
            st.text(max_size=5),
            st.binary(max_size=5),
        ),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=8,
    )
)
def test_inspect_on_any_decoded_checkpoint_is_a_page_or_one_line(
    blob: Any, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _thread_db(tmp_path_factory.mktemp("db") / "c.sqlite")
    with sqlite3.connect(path) as con:
        con.execute(
            "UPDATE checkpoints SET checkpoint = ?, type = 'msgpack'", (ormsgpack.packb(blob),)
        )
    capsys.readouterr()
    code = main(["inspect", "--db", str(path), "--thread", "t1", "--json"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert code == 0 or (code == 2 and len(err.strip().splitlines()) == 1), err


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(content=st.binary(min_size=1, max_size=300))
def test_demo_on_any_existing_file_that_is_not_sqlite_is_one_line(
    content: bytes, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path_factory.mktemp("db") / "x.db"
    bad.write_bytes(b"not sqlite:" + content)
    capsys.readouterr()
    line = _one_line(capsys, main(["demo", "--db", str(bad), "--turns", "1"]))
    assert "is not a SQLite database" in line
