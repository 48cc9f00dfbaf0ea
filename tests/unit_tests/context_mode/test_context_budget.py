"""``context_budget``: inline outputs sized to the budget of the context they go into."""

from __future__ import annotations

import pytest

from langctx import ConfigError
from langctx.context_mode.config import INLINE_SHARE, ContextModeConfig
from langctx.context_mode.processor import ContextModeProcessor

LOG = "\n".join(f"tests/test_mod_{i}.py::test_case PASSED [{i % 100}%]" for i in range(60))


def test_the_budget_caps_inline_outputs_at_an_eighth() -> None:
    assert INLINE_SHARE == 0.125
    assert ContextModeConfig(context_budget=8000).max_inline_tokens == 1000
    assert ContextModeConfig(context_budget=32_000).max_inline_tokens == 1500  # default binds
    assert ContextModeConfig(context_budget=8000, max_inline_tokens=600).max_inline_tokens == 600
    assert ContextModeConfig(context_budget=8000, max_inline_tokens=5000).max_inline_tokens == 1000


def test_an_output_under_the_default_is_reduced_under_a_small_budget() -> None:
    plain, sized = ContextModeProcessor(), ContextModeProcessor(context_budget=8000)
    tokens = plain.count_tokens(LOG)
    assert 1000 < tokens <= 1500  # inline by default, over an eighth of 8k
    assert plain.process(LOG).action == "inline"
    out = sized.process(LOG)
    assert out.action != "inline" and out.tokens <= 1000


@pytest.mark.parametrize("bad", [0, -8000, True, 8000.0, "8k"])
def test_a_budget_that_is_not_a_positive_int_is_refused(bad: object) -> None:
    with pytest.raises(ConfigError, match="context_budget must be a positive int"):
        ContextModeConfig(context_budget=bad)  # type: ignore[arg-type]


def test_a_budget_too_small_for_a_reference_names_the_budget() -> None:
    with pytest.raises(ConfigError, match=r"context_budget=1500 caps .* at least 1656"):
        ContextModeProcessor(context_budget=1500)
    assert (
        ContextModeProcessor(context_budget=1500, references=False).config.max_inline_tokens == 187
    )


def test_the_middleware_takes_the_budget_as_a_keyword() -> None:
    from langctx import ContextModeMiddleware

    assert ContextModeMiddleware(context_budget=8000).processor.config.max_inline_tokens == 1000
