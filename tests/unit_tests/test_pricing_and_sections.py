"""Price sheets, the replay's modeled cost, merging sectioned summaries without a model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langctx import LayeredChatMemory
from langctx.cli.demo.session import coding_session, iter_turns
from langctx.cli.replay import replay_session
from langctx.errors import ConfigError
from langctx.pricing import PRICE_SHEETS, Usage, price_sheet
from langctx.summarize.sections import merge_sections, parse_sections
from langctx.testing import ScriptedChatModel


def test_a_sheet_file_round_trips_and_bad_ones_fail_clearly(tmp_path: Path) -> None:
    path = tmp_path / "sheet.json"
    path.write_text(json.dumps(PRICE_SHEETS["openai"].to_dict()))
    assert price_sheet(path) == PRICE_SHEETS["openai"]
    with pytest.raises(ConfigError, match="unknown price sheet"):
        price_sheet("azure")
    path.write_text('{"main": {"input": 1}}')
    with pytest.raises(ConfigError, match="needs 'main'"):
        price_sheet(path)
    path.write_text('{"main": {"input": -1, "cached_input": 0, "cache_write": 0, "output": 0}}')
    with pytest.raises(ConfigError, match="price input must be between 0 and"):
        price_sheet(path)


def test_cache_reads_cost_a_tenth_and_writes_more_under_anthropic() -> None:
    sheet = PRICE_SHEETS["anthropic"]
    read = sheet.main.cost(Usage(cached_input=1_000_000))
    write = sheet.main.cost(Usage(uncached_input=1_000_000))
    assert read == pytest.approx(0.1 * sheet.main.input)
    assert write == pytest.approx(1.25 * sheet.main.input)
    # a summarizer call is never read back: its input is billed as plain input
    assert sheet.summarizer.cost(Usage(uncached_input=1_000_000), cache_writes=False) == 1.0


def test_replay_models_the_cost_with_and_without_langctx() -> None:
    messages = [*coding_session(0), *[m for t in iter_turns(60) for m in t]]
    report = replay_session(messages, max_tokens=4000)
    cost = report.cost("anthropic")
    assert cost["with_langctx"] < cost["without_langctx"] and 0 < cost["saved"] < 1
    assert cost["main"]["cached"] == report.cacheable_tokens
    assert cost["main"]["output"] == sum(c.output_tokens for c in report.calls) > 0
    assert cost["compaction_s"] == 0.0  # the local summarizer calls no model
    assert report.to_dict("openai")["cost"]["prices"] == "openai"
    model = ScriptedChatModel(responses=["Goal:\n- fix the parser"], cycle=True)
    blocking = replay_session(
        messages,
        max_tokens=4000,
        summarizer=model,
        summary_threshold_tokens=0,
        background_summaries=False,
    )
    c = blocking.cost("anthropic")
    assert c["blocking_summarizer_calls"] == len(model.calls) > 0 and c["compaction_s"] > 0
    assert c["summarizer"]["input"] > 0 and c["summarizer"]["output"] > 0


def test_sectioned_summaries_parse_in_the_forms_models_write() -> None:
    text = "## Goal\nFix it\n**Current status:** tests fail\nFiles modified: a.py\n- b.py"
    assert parse_sections(text) == {
        "Goal": ["Fix it"],
        "Current status": ["tests fail"],
        "Files modified": ["a.py", "b.py"],
    }
    assert parse_sections("I fixed the parser.\nGoal: x") is None
    assert parse_sections("Note: the parser\nGoal: x") is None  # prose before any section


def test_a_merge_unites_lists_keeps_the_newest_status_and_needs_a_model_when_too_long() -> None:
    old = "Goal:\n- fix\nCurrent status:\n- red\nImportant constraints:\n- no new deps\nNext step:\n- a"
    new = "Goal:\n- fix\nCurrent status:\n- green\nImportant constraints:\n- keep the API\nNext step:\n- b"
    merged = merge_sections([old, new], max_tokens=200, count=len)
    assert merged is not None
    sections = parse_sections(merged)
    assert sections == {
        "Goal": ["fix"],
        "Current status": ["green"],
        "Important constraints": ["no new deps", "keep the API"],
        "Next step": ["b"],
    }
    assert merge_sections([old, new], max_tokens=20, count=len) is None
    assert merge_sections([old, "Fixed it."], max_tokens=200, count=len) is None
    # observed files are the only items a merge sheds to fit
    a = "Goal:\n- fix\nFiles observed:\n- " + "\n- ".join(f"src/m{i}.py" for i in range(20))
    out = merge_sections([a, "Goal:\n- fix\nNext step:\n- run"], max_tokens=80, count=len)
    assert out is not None and "src/m19.py" in out and "src/m0.py" not in out


def test_merges_of_sectioned_model_summaries_make_no_model_call() -> None:
    model = ScriptedChatModel(
        responses=["Goal:\n- fix the parser\nNext step:\n- rerun"], cycle=True
    )
    mem = LayeredChatMemory(
        max_tokens=3000, summarizer=model, summary_threshold_tokens=0, background_summaries=False
    )
    mem.add_messages(coding_session(0))
    for turn in iter_turns(150):
        mem.add_messages(turn)
    merges = [e for e in mem.compactions if e["trigger"] == "merge"]
    folds = [e for e in mem.compactions if e["trigger"] != "merge"]
    assert merges and all(e["quality"] == "merged" for e in merges)
    assert len(model.calls) == len(folds)  # one call per fold, none per merge


def test_summaries_stay_within_their_share_of_the_budget() -> None:
    mem = LayeredChatMemory(max_tokens=20_000, summary_share=0.03)
    mem.add_messages(coding_session(0))
    cap = mem.config.summary_share_tokens
    for turn in iter_turns(400):
        mem.add_messages(turn)
        total = sum(e["summary_tokens"] for e in mem.summaries)
        assert total <= cap or len(mem.summaries) <= 2
    assert len({e["level"] for e in mem.compactions}) > 1


async def test_a_scripted_model_sleeps_its_latency_sync_and_async(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import asyncio
    import time

    from langchain_core.messages import HumanMessage

    slept: list[tuple[str, float]] = []
    monkeypatch.setattr(time, "sleep", lambda s: slept.append(("sync", s)))
    real_sleep = asyncio.sleep

    async def fake_sleep(s: float) -> None:
        slept.append(("async", s))
        await real_sleep(0)

    monkeypatch.setattr(asyncio, "sleep", fake_sleep)
    seen: list[tuple[int, str]] = []

    def latency(messages: list, answer: object) -> float:
        seen.append((len(messages), str(getattr(answer, "content", ""))))
        return 0.25

    model = ScriptedChatModel(responses=["one", "two"], latency=latency)
    assert model.invoke([HumanMessage("hi")]).content == "one"
    assert (await model.ainvoke([HumanMessage("a"), HumanMessage("b")])).content == "two"
    assert seen == [(1, "one"), (2, "two")]
    assert slept == [("sync", 0.25), ("async", 0.25)]  # asyncio.sleep: the loop keeps running
    assert ScriptedChatModel(responses=["x"], latency=0.5)._delay([], None) == 0.5  # type: ignore[arg-type]
