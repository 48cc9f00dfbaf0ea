"""Reducer for HTML, DOM dumps and accessibility snapshots: visible text, interactive elements."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from html.parser import HTMLParser

from langctx.context_mode.outputs import OutputMeta, Reduction
from langctx.context_mode.reducers._layout import Candidate, clip, finish, select_body
from langctx.context_mode.reducers.text import reduce_text

MAX_HTML_CHARS = 1_000_000
"""HTML beyond this many characters is not parsed (it stays in the full output)."""

_SKIP = frozenset({"script", "style", "noscript", "template", "svg", "canvas", "iframe", "object"})
_BLOCK = frozenset(
    "address article aside blockquote br dd details dialog div dl dt fieldset figcaption figure "
    "footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol p pre section summary table tbody "
    "td th thead tr ul title".split()
)
_INTERACTIVE_ROLES = frozenset(
    "link button textbox searchbox combobox checkbox radio switch slider tab menuitem option "
    "spinbutton".split()
)
_A11Y = re.compile(r"^\s*-\s+(\w+)(?:\s+\"((?:[^\"\\]|\\.)*)\")?(.*)$")
_A11Y_URL = re.compile(r"^\s*(?:-\s*)?/url:\s*(\S+)")  # not \s*-?\s*: quadratic on spaces
_SPACES = re.compile(r"\s+")
_LINK_CHARS = 160
_MARK = "\x00"  # around inline markup (links, images) while the page is assembled
_CONTROL = "\x01"  # starts a line holding a form control or a button


def _attr(attrs: dict[str, str | None], *names: str) -> str | None:
    for name in names:
        value = attrs.get(name)
        if value and value.strip():
            return _SPACES.sub(" ", value.strip())
    return None


def _squash(words: list[str]) -> str:
    return _SPACES.sub(" ", "".join(words)).strip()


class _Page(HTMLParser):
    """Collects visible text and interactive elements, in document order."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str | _Field] = []
        self.skip = 0
        self.in_head = False
        self.in_title = False
        self.labels: dict[str, str] = {}
        self.open_label: list[str] | None = None
        self.label_for: str | None = None
        self.open_option: list[str] | None = None
        # The open a, button, select and textarea: (index of their slot in parts, attrs, words).
        self.open: dict[str, tuple[int, dict[str, str | None], list[str]]] = {}
        self.elements = 0

    def handle_starttag(self, tag: str, attrs_list: list[tuple[str, str | None]]) -> None:
        attrs = dict(attrs_list)
        if tag in _SKIP:
            self.skip += 1
            return
        if self.skip:
            return
        if tag == "head":
            self.in_head = True
        elif tag == "title":
            self.in_title = True
            self.parts.append("\n# ")
        elif tag in _BLOCK:
            self.parts.append("\n")
        typ = attrs.get("type")
        if tag in ("a", "button", "select", "textarea"):
            self.open[tag] = (len(self.parts), attrs, [])
            self.parts.append("")
        elif tag == "input" and typ in ("submit", "button", "reset"):
            label = _attr(attrs, "value", "aria-label", "title")
            self._add(f"\n{_CONTROL}[button: {label or typ}]\n")
        elif tag == "input" and typ != "hidden":
            self._add(self._field("input", attrs))
        elif tag == "option" and "select" in self.open:
            self._close_option()  # an <option> ends the one before (its end tag is optional)
            self.open_option = []
        elif tag == "label":
            self.open_label = []
            self.label_for = _attr(attrs, "for")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.parts.append("#" * int(tag[1]) + " ")
        elif tag == "img" and (alt := _attr(attrs, "alt")):
            self._add(f"{_MARK}[image: {clip(alt, 100)}]{_MARK}")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIP:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag in ("option", "select"):
            self._close_option()
        if tag in self.open:
            index, attrs, words = self.open.pop(tag)
            self._add(self._element(tag, attrs, words), index)
        elif tag == "head":
            self.in_head = False
        elif tag == "title":
            self.in_title = False
        elif tag == "label" and self.open_label is not None:
            if self.label_for:
                self.labels[self.label_for] = _squash(self.open_label)
            self.open_label = None
        if tag in _BLOCK:
            self.parts.append("\n")

    def _close_option(self) -> None:
        if self.open_option is not None and "select" in self.open:
            self.open["select"][2].append(_squash(self.open_option))
        self.open_option = None

    def handle_data(self, data: str) -> None:
        if self.skip or (self.in_head and not self.in_title):
            return
        if self.open_option is not None:
            self.open_option.append(data)
            return
        if "select" in self.open or "textarea" in self.open:
            return
        if self.open_label is not None:
            self.open_label.append(data)
        element = self.open.get("a") or self.open.get("button")
        if element is not None:
            element[2].append(data)
        else:
            self.parts.append(data)

    def _add(self, part: str | _Field, index: int | None = None) -> None:
        """Add an interactive element, at its slot ``index`` if one was kept."""
        if index is None:
            self.parts.append(part)
        else:
            self.parts[index] = part
        self.elements += 1

    def _element(self, tag: str, attrs: dict[str, str | None], words: list[str]) -> str | _Field:
        """What a closed a, button, select or textarea shows; ``words``: its text or options."""
        if tag == "a":
            text, href = clip(_squash(words), 100) or "link", _attr(attrs, "href")
            if not href or href.startswith(("javascript:", "#")):
                return f"{_MARK}[link: {text}]{_MARK}"
            return f"{_MARK}[{text}]({clip(href, _LINK_CHARS)}){_MARK}"
        if tag == "button":
            label = _attr(attrs, "value", "aria-label", "title")
            text = _SPACES.sub(" ", " ".join(w for w in (label, *words) if w)).strip()
            return f"\n{_CONTROL}[button: {clip(text, 80) or '?'}]\n"
        if tag == "textarea":
            return self._field("textarea", attrs)
        shown = " | ".join(clip(o, 40) for o in words[:8] if o)
        if len(words) > 8:
            shown += f" | +{len(words) - 8} more"
        return self._field("select", attrs, f"options: {shown}" if shown else "")

    def _field(self, kind: str, attrs: dict[str, str | None], extra: str = "") -> _Field:
        label = _attr(attrs, "aria-label")
        if label is None and self.open_label is not None:
            label = _squash(self.open_label) or None
        before = [kind]
        if kind == "input" and (typ := attrs.get("type")) and typ != "text":
            before.append(f"type={typ}")
        if name := _attr(attrs, "name", "id"):
            before.append(f"name={clip(name, 60)}")
        placeholder = _attr(attrs, "placeholder")
        after = (f'placeholder="{clip(placeholder, 80)}"' if placeholder else "", extra)
        return _Field(tuple(before), label, attrs.get("id"), after)

    def render(self) -> list[tuple[int, str]]:
        """The page as ``(priority, line)``, ``<label for=...>`` labels filled in: headings, buttons
        and form controls first (0), text and links in page order after them (1)."""
        pieces = [
            part if isinstance(part, str) else f"\n{_CONTROL}{part.render(self.labels)}\n"
            for part in self.parts
        ]
        lines = []
        for raw in "".join(pieces).split("\n"):
            line = _SPACES.sub(" ", raw.replace(_MARK, " ").replace(_CONTROL, " ")).strip()
            if line and line != "#":
                lines.append((0 if _CONTROL in raw or line.startswith("#") else 1, line))
        return lines


@dataclass(frozen=True, slots=True)
class _Field:
    """An input, textarea or select, rendered once the ``<label for=...>`` labels are known."""

    before: tuple[str, ...]  # kind, type, name
    label: str | None
    element_id: str | None
    after: tuple[str, ...]  # placeholder, options

    def render(self, labels: dict[str, str]) -> str:
        label = self.label or (labels.get(self.element_id) if self.element_id else None)
        shown = f'label="{clip(label, 80)}"' if label else ""
        return "[" + " ".join(bit for bit in (*self.before, shown, *self.after) if bit) + "]"


def extract_page(html: str) -> tuple[list[str], int]:
    """Visible text (links inline) and interactive elements of HTML, and how many elements."""
    lines, elements = _extract(html)
    return [line for _, line in lines], elements


# A tag, declaration, processing instruction or marked section (not a comment) left unclosed.
_UNTERMINATED_TAG = re.compile(r"<(?=/?[A-Za-z]|\?|!\[|![A-Za-z])[^<>]*(?=<|\Z)")


def defuse_tags(html: str) -> str:
    """``html`` with every tag (or comment) left open before the next ``<`` written as text.

    HTMLParser rescans such a tag to the end for each later ``<``: quadratic on broken markup.
    """
    last_close = html.rfind("-->")
    cut = last_close + 3 if last_close >= 0 else 0  # a comment opened after it never closes
    html = html[:cut] + html[cut:].replace("<!--", "&lt;!--")
    return _UNTERMINATED_TAG.sub(lambda m: "&lt;" + m.group(0)[1:], html)


def _extract(html: str) -> tuple[list[tuple[int, str]], int]:
    page = _Page()
    page.feed(defuse_tags(html[:MAX_HTML_CHARS]))
    page.close()
    return page.render(), page.elements


def _a11y_lines(text: str) -> tuple[list[tuple[int, str]], int]:
    """``(priority, line)`` for the useful nodes of an accessibility snapshot."""
    out: list[tuple[int, str]] = []
    elements = 0
    for raw in text.split("\n"):
        url = _A11Y_URL.match(raw)
        if url and out:
            priority, last = out[-1]
            out[-1] = (priority, f"{last} ({clip(url.group(1), _LINK_CHARS)})")
            continue
        m = _A11Y.match(raw)
        if not m:
            if raw.strip() and not raw.strip().startswith("- /"):
                out.append((1, clip(raw.rstrip(), 200)))
            continue
        role, name, rest = m.groups()
        if role in ("generic", "none", "presentation", "group", "list", "rowgroup") and not name:
            continue
        elements += role in _INTERACTIVE_ROLES
        key = role in _INTERACTIVE_ROLES or role == "heading"
        if key or name or rest.strip(": "):
            out.append((0 if key else 1, clip(raw.rstrip(), 200)))
    return out, elements


def _collapse_repeats(lines: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """Show a line that repeats (a widget in every card) once, with ``(×N)``."""
    counts = Counter(line for _, line in lines)
    first: dict[str, int] = {}  # line -> priority of its first occurrence, in order
    for priority, line in lines:
        first.setdefault(line, priority)
    return [
        (p, f"{line} (×{counts[line]})" if counts[line] > 1 else line) for line, p in first.items()
    ]


def reduce_html(text: str, *, meta: OutputMeta, budget_tokens: int) -> Reduction:
    """Reduce HTML or an accessibility snapshot to text and interactive elements (else head, tail)."""
    is_page = text.lstrip().startswith("<")
    if is_page:
        try:
            weighted, elements = _extract(text)
        except (AssertionError, ValueError, IndexError):  # HTMLParser on badly broken markup
            weighted, elements = [], 0
    else:
        weighted, elements = _a11y_lines(text)
    if not weighted:
        return reduce_text(text, meta=meta, budget_tokens=budget_tokens, kind="html")
    weighted = _collapse_repeats(weighted)
    what = "HTML page" if is_page else "accessibility snapshot"
    summary = f"{what}: {len(weighted):,} text lines, {elements:,} interactive elements"
    candidates = [
        Candidate(i, clip(line, 400), priority, i) for i, (priority, line) in enumerate(weighted)
    ]
    page_text = "\n".join(line for _, line in weighted)
    kept, note, unlisted = select_body(
        "html",
        meta,
        budget_tokens,
        summary,
        candidates,
        facts_of=page_text,
        label="Also on the page",
    )
    body = [summary, *(c.text for c in kept)]
    removed = "markup, scripts and styles" if is_page else "unnamed container nodes"
    if cut := len(candidates) - len(kept):
        body.append(f"(+{cut:,} more text lines not shown)")
        removed += f", {cut:,} of {len(candidates):,} text lines"
    body.extend(note)
    if is_page and len(text) > MAX_HTML_CHARS:
        removed += f"; HTML past {MAX_HTML_CHARS:,} chars not parsed"
    return finish("html", meta, budget_tokens, body, removed, unlisted)
