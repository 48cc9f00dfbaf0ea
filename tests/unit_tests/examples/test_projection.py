"""The examples of `langctx.projection`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.projection import render_facts


def test_render_facts() -> None:
    shop = {
        "constraints": ["Keep Python 3.9.", "Never push."],
        "modified_files": ["/w/shop/src/cart.py", "/w/shop/src/pay.py"],
        "read_files": ["/w/shop/README.md"],
    }
    # grows past 40 for modified files
    assert (
        str(render_facts(shop, max_tokens=40, count=len))
        == "User constraints so far (the 1 most recent of 2):\n- Never push.\nFiles modified so far: /w/shop/src/cart.py, /w/shop/src/pay.py"
    )
