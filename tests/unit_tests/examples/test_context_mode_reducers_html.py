"""The examples of `langctx.context_mode.reducers.html`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.context_mode.outputs import OutputMeta
from langctx.context_mode.reducers.html import defuse_tags, extract_page, reduce_html


def test_extract_page() -> None:
    assert extract_page("<p>Hi <a href='/a'>there</a></p><button>Go</button>") == (
        ["Hi [there](/a)", "[button: Go]"],
        2,
    )


def test_defuse_tags() -> None:
    assert (defuse_tags("<p>ok</p><a href='x<b>b</b>"), defuse_tags("<!-- a --><p>ok<!-- b")) == (
        "<p>ok</p>&lt;a href='x<b>b</b>",
        "<!-- a --><p>ok&lt;!-- b",
    )


def test_reduce_html() -> None:
    page = (
        '<h1>Login</h1><label for="e">Email</label><input id="e" name="email">'
        "<script>var x=1;</script>" + "<p>Terms apply.</p>" * 300
    )
    r = reduce_html(page, meta=OutputMeta(original_tokens=2500), budget_tokens=300)
    assert r.text.splitlines()[2:6] == [
        "# Login",
        "Email",
        '[input name=email label="Email"]',
        "Terms apply. (×300)",
    ]
