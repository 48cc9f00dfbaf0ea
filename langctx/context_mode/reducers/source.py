"""Reducer for source files (plain, or numbered listings as ``cat -n`` prints): the outline."""

from __future__ import annotations

import re
from dataclasses import replace

from langctx.context_mode.outputs import OutputMeta, Reduction
from langctx.context_mode.reducers._layout import Candidate, clip, finish, select_body
from langctx.source_outline import (
    Listing,
    Outline,
    language_for_path,
    outline_source,
    split_listing,
)

_NOTE_LINES = 12
_DECL_CHARS = 110
_IMPORT_CHARS = 320
_PEEK_LINES = 15
_NOTE_PATH = re.compile(r"(?:\[File: |`cat -n` on |^File: |^Path: )([^\s\]`:]+\.\w+)")


def _first_line(meta: OutputMeta) -> int:
    offset = meta.args.get("offset") if meta.args else None
    if isinstance(offset, int) and not isinstance(offset, bool) and offset > 0:
        return offset
    view_range = meta.args.get("view_range") if meta.args else None
    if isinstance(view_range, list | tuple) and view_range and isinstance(view_range[0], int):
        return max(1, view_range[0])
    return 1


def _notes(notes: list[tuple[int, str]]) -> list[tuple[int, str]]:
    if len(notes) <= 4 * _NOTE_LINES:
        return notes
    return [*notes[: 2 * _NOTE_LINES], *notes[-2 * _NOTE_LINES :]]


def _path_in(notes: list[tuple[int, str]]) -> str | None:
    found = (_NOTE_PATH.search(note) for _, note in notes[:12])
    return next((m.group(1) for m in found if m), None)


def _candidates(listing: Listing, outline: Outline) -> list[Candidate]:
    """The viewer's notes, the imports line, the declarations (none: a peek at the start)."""
    # Pieces sit at 2*row+1 of their text row; the imports line at 2*row, just before the code.
    at = [2 * row + 1 for row in listing.rows]
    candidates = [
        Candidate(2 * row + 1, clip(note, 300), 0, row) for row, note in _notes(listing.notes)
    ]
    if outline.imports:
        imports = f"Imports ({len(outline.imports)}): {', '.join(outline.imports)}"
        candidates.append(Candidate(at[0] - 1 if at else 0, clip(imports, _IMPORT_CHARS), 2, 0))
    for order, decl in enumerate(outline.declarations):
        line = f"L{decl.line} {'  ' * decl.depth}{clip(decl.text, _DECL_CHARS)}"
        candidates.append(Candidate(at[decl.index], line, 1 + min(decl.depth, 2), order))
    if not outline.declarations:
        for i, code in enumerate(listing.code[:_PEEK_LINES]):
            candidates.append(Candidate(at[i], f"L{listing.numbers[i]} {clip(code, 160)}", 4, i))
    return candidates


def reduce_source(text: str, *, meta: OutputMeta, budget_tokens: int) -> Reduction:
    """Reduce a source file (or a numbered listing of one) to its outline."""
    listing = split_listing(text, first_line=_first_line(meta))
    if meta.path is None and (found := _path_in(listing.notes)):
        meta = replace(meta, path=found)
    language = language_for_path(meta.path)
    outline = outline_source(listing.code, language=language, numbers=listing.numbers)
    n_code, n_decl = len(listing.code), len(outline.declarations)
    summary = f"{language or 'unknown-language'} source · {n_code:,} lines · {len(text):,} chars"
    if listing.numbers and (listing.numbered or listing.numbers[0] != 1):
        summary += f" · file lines {min(listing.numbers)}–{max(listing.numbers)}"
    kept, note, unlisted = select_body(
        "source",
        meta,
        budget_tokens,
        summary,
        _candidates(listing, outline),
        facts_of=text,
        label="Also in the file",
        reserve=2,
    )
    declared = {2 * listing.rows[decl.index] + 1 for decl in outline.declarations}
    kept_decl = sum(1 for c in kept if c.line in declared)
    body = [summary, *(c.text for c in kept)]
    if kept_decl < n_decl:
        body.append(f"(+{n_decl - kept_decl:,} more declarations not listed)")
    body.extend(note)
    what = "file body" if n_decl else "file body (no declarations found)"
    removed = f"the {what}: {n_code:,} lines, outline of {kept_decl:,} declarations kept"
    return finish("source", meta, budget_tokens, body, removed, unlisted)
