"""Price sheets (per million tokens, with prompt caching) and a latency model of model calls.

Example:
    >>> usage = Usage(cached_input=90_000, uncached_input=10_000, output=2_000)
    >>> [round(price_sheet(name).main.cost(usage), 4) for name in ("anthropic", "openai")]
    [0.0945, 0.0437]
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from langctx.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens of one or more model calls, split the way providers bill them."""

    cached_input: int = 0
    """Input read from the provider's prompt cache."""
    uncached_input: int = 0
    """Input not in the cache (written to it where the provider caches)."""
    output: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.cached_input + other.cached_input,
            self.uncached_input + other.uncached_input,
            self.output + other.output,
        )

    @property
    def input(self) -> int:
        """All input tokens."""
        return self.cached_input + self.uncached_input

    @property
    def cached_share(self) -> float:
        """Share of the input read from the cache (0.0 without input)."""
        return self.cached_input / self.input if self.input else 0.0


MAX_PRICE = 1_000_000.0
"""The highest price a sheet takes, in dollars per million tokens (list prices are under 1,000)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPrices:
    """Dollars per million tokens of one model."""

    input: float
    """Uncached input that is not written to a cache."""
    cached_input: float
    """Input read from the cache."""
    cache_write: float
    """Uncached input written to the cache (``input`` where writes cost nothing extra)."""
    output: float

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                msg = (
                    f"price {f.name} must be a number (dollars per million tokens), got {value!r}."
                )
                raise ConfigError(msg)
            if not 0 <= value <= MAX_PRICE:  # (NaN fails too)
                msg = f"price {f.name} must be between 0 and {MAX_PRICE:,.0f} dollars per million tokens, got {value!r}."
                raise ConfigError(msg)
            object.__setattr__(self, f.name, float(value))

    def cost(self, usage: Usage, *, cache_writes: bool = True) -> float:
        """Dollars for ``usage``; ``cache_writes=False`` bills uncached input as plain input."""
        uncached = self.cache_write if cache_writes else self.input
        return (
            usage.cached_input * self.cached_input
            + usage.uncached_input * uncached
            + usage.output * self.output
        ) / 1_000_000


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceSheet:
    """Prices of a main model and of the summarizer beside it."""

    name: str
    main: ModelPrices
    summarizer: ModelPrices
    source: str = ""
    """Where the numbers come from (model names and the date they were read)."""

    def __post_init__(self) -> None:
        for name in ("main", "summarizer"):
            if not isinstance(getattr(self, name), ModelPrices):
                msg = f"PriceSheet.{name} must be a ModelPrices, got {type(getattr(self, name)).__name__}."
                raise ConfigError(msg)

    def cost(self, main: Usage, summarizer: Usage) -> float:
        """Dollars for the main model's requests (cached) and the summarizer's (uncached)."""
        return self.main.cost(main) + self.summarizer.cost(summarizer, cache_writes=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (what :func:`price_sheet` reads from a file)."""
        return asdict(self)


PRICE_SHEETS: dict[str, PriceSheet] = {
    "anthropic": PriceSheet(
        name="anthropic",
        main=ModelPrices(input=3.0, cached_input=0.30, cache_write=3.75, output=15.0),
        summarizer=ModelPrices(input=1.0, cached_input=0.10, cache_write=1.25, output=5.0),
        source=(
            "Claude Sonnet 4.5 (main) and Claude Haiku 4.5 (summarizer) list prices per million "
            "tokens: cache reads 0.1x input, 5-minute cache writes 1.25x input"
        ),
    ),
    "openai": PriceSheet(
        name="openai",
        main=ModelPrices(input=1.25, cached_input=0.125, cache_write=1.25, output=10.0),
        summarizer=ModelPrices(input=0.25, cached_input=0.025, cache_write=0.25, output=2.0),
        source=(
            "GPT-5 (main) and GPT-5 mini (summarizer) list prices per million tokens: cached "
            "input 0.1x input, cache writes free"
        ),
    ),
}
"""The built-in sheets, by name."""


def price_sheet(spec: str | Path | PriceSheet) -> PriceSheet:
    """A sheet by name (``anthropic``, ``openai``), from a JSON file, or as given; else ConfigError."""
    if isinstance(spec, PriceSheet):
        return spec
    key = str(spec)
    if key in PRICE_SHEETS:
        return PRICE_SHEETS[key]
    path = Path(key)
    if not path.suffix and not path.exists():
        msg = f"unknown price sheet {key!r}; use one of {sorted(PRICE_SHEETS)} or a JSON file."
        raise ConfigError(msg)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        msg = f"cannot read the price sheet {key!r}: {exc}; give a JSON file like `langctx.pricing.PRICE_SHEETS['anthropic'].to_dict()`."
        raise ConfigError(msg) from exc
    try:
        return PriceSheet(
            name=str(data.get("name") or path.stem),
            main=_prices(data["main"]),
            summarizer=_prices(data.get("summarizer", data["main"])),
            source=str(data.get("source", "")),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        fields_ = ", ".join(f.name for f in fields(ModelPrices))
        msg = (
            f"the price sheet {key!r} needs 'main' (and optionally 'summarizer') with {fields_} "
            "in dollars per million tokens."
        )
        raise ConfigError(msg) from exc


def _prices(raw: Any) -> ModelPrices:
    return ModelPrices(**{f.name: raw[f.name] for f in fields(ModelPrices)})


@dataclass(frozen=True, slots=True, kw_only=True)
class Latency:
    """Seconds one model call takes: a fixed time plus input and output at a provider's speed."""

    fixed_s: float
    input_per_s: float
    """Input tokens processed per second (prefill)."""
    output_per_s: float
    """Output tokens generated per second."""

    def seconds(self, input_tokens: int, output_tokens: int) -> float:
        """Modeled duration of one call."""
        return round(
            self.fixed_s + input_tokens / self.input_per_s + output_tokens / self.output_per_s, 6
        )


SUMMARIZER_LATENCY = Latency(fixed_s=0.4, input_per_s=8_000, output_per_s=80)
"""A cheap summarizer model's call: 0.4 s, 8k input tokens/s, 80 output tokens/s."""
