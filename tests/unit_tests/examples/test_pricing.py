"""The examples of `langctx.pricing`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.pricing import Latency, price_sheet


def test_price_sheet() -> None:
    assert price_sheet("anthropic").main.output == 15.0


def test_latency() -> None:
    assert Latency(fixed_s=0.4, input_per_s=8_000, output_per_s=80).seconds(8_000, 160) == 3.4
