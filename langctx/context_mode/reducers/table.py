"""Reducer for tables (CSV/TSV, markdown, psql and MySQL results): columns and the first rows."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from collections.abc import Sequence
from itertools import islice
from typing import NamedTuple

from langctx.context_mode.outputs import OutputMeta, Reduction
from langctx.context_mode.reducers._layout import Candidate, clip, finish, names_line, select_body
from langctx.context_mode.reducers.log import reduce_log

MAX_ROWS = 50
"""Rows shown at most."""

_CELL_CHARS = 80
_ROW_CHARS = 600
_HEADER_CELL = re.compile(r"^\s*\"?[A-Za-z_][\w .\-()/#%]{0,63}\"?\s*$")
# no two \s* side by side (\s*\|?\s* splits a run of spaces every way: quadratic on one)
_MD_SEP = re.compile(r"^\s*(?:\|\s*)?:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+(?:\|\s*)?$")
_PSQL_SEP = re.compile(r"^\s*-{3,}(?:\+-{3,})+\s*$")
_BOX_SEP = re.compile(r"^\s*\+(?:-{3,}\+)+\s*$")


def sniff_delimiter(lines: Sequence[str], *, header: re.Pattern[str] = _HEADER_CELL) -> str | None:
    """The delimiter of CSV-like lines (``,``, tab, ``;`` or ``|``), or ``None`` if not a table.

    Every cell of the first row must match ``header``, and 80% of the rows have as many cells.
    """
    sample = [line for line in lines[:40] if line.strip()]
    if len(sample) < 3:
        return None
    for delimiter in (",", "\t", ";", "|"):
        try:
            rows = list(csv.reader(sample, delimiter=delimiter))
        except csv.Error:
            continue
        widths = Counter(len(row) for row in rows)
        width, hits = widths.most_common(1)[0]
        if width < 2 or hits < 0.8 * len(rows) or len(rows[0]) != width:
            continue
        if all(header.match(cell) for cell in rows[0]):
            return delimiter
    return None


def _row_text(cells: Sequence[str], delimiter: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="").writerow(
        [clip(cell, _CELL_CHARS) for cell in cells]
    )
    return clip(buffer.getvalue(), _ROW_CHARS, squeeze=False)


class _Table(NamedTuple):
    names: list[str]  # column names
    shown: list[str]  # header lines, then the first rows
    total: int  # data rows
    trailer: list[str]  # lines after the table (a psql row count)
    what: str
    n_header: int


def _delimited(text: str, delimiter: str) -> _Table | None:
    """A CSV/TSV text (None: it does not parse)."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    try:
        header = next(reader, None)
        if not header:
            return None
        rows = [_row_text(row, delimiter) for row in islice(filter(None, reader), MAX_ROWS)]
        total = len(rows) + sum(1 for row in reader if row)
        shown = [_row_text(header, delimiter), *rows]
    except csv.Error:
        return None
    what = {",": "CSV", "\t": "TSV"}.get(delimiter, f"delimited by {delimiter!r}")
    return _Table(header, shown, total, [], what, 1)


def _line_table(lines: list[str]) -> _Table | None:
    """A markdown table or a psql/MySQL query result (None: no separator line found)."""
    head = lines[:6]
    sep_at = next(
        (i for i, line in enumerate(head) if _MD_SEP.match(line) or _PSQL_SEP.match(line)), None
    )
    style = (
        "markdown table" if sep_at is not None and _MD_SEP.match(lines[sep_at]) else "query result"
    )
    if sep_at is None:
        box = [i for i, line in enumerate(head) if _BOX_SEP.match(line)]
        if len(box) < 2:
            return None
        sep_at = box[1]
    header_line = lines[sep_at - 1] if sep_at > 0 else ""
    names = [cell.strip() for cell in header_line.strip().strip("|").split("|") if cell.strip()]
    body = lines[sep_at + 1 :]
    ends = (i for i, line in enumerate(body) if "|" not in line or _BOX_SEP.match(line))
    total = next(ends, len(body))  # the rows run to the first line that is not one
    rows = [clip(line.rstrip(), _ROW_CHARS, squeeze=False) for line in body[: min(total, MAX_ROWS)]]
    trailer = [clip(t, 300) for t in body[total : total + 5] if t.strip()]
    header = [clip(line.rstrip(), _ROW_CHARS, squeeze=False) for line in lines[: sep_at + 1]]
    return _Table(names, [*header, *rows], total, trailer, style, len(header))


def reduce_table(text: str, *, meta: OutputMeta, budget_tokens: int) -> Reduction:
    """Reduce a table to its column names and first rows (the log reduction if not a table)."""
    stripped = text.strip("\n")
    lines = stripped.split("\n", 200)[:200]
    table = None
    if any(_MD_SEP.match(x) or _PSQL_SEP.match(x) or _BOX_SEP.match(x) for x in lines[:6]):
        table = _line_table(stripped.split("\n"))
    if table is None and (delimiter := sniff_delimiter(lines)) is not None:
        table = _delimited(stripped, delimiter)
    if table is None:
        return reduce_log(text, meta=meta, budget_tokens=budget_tokens)
    names, shown, total, trailer, what, n_header = table
    summary = f"{what}: {len(names)} columns × {total:,} rows"
    base = len(shown) + 1
    candidates = [
        Candidate(0, names_line("Columns", [name.strip() for name in names]), 0, 0),
        *(Candidate(i + 1, line, 0 if i < n_header else 1, i) for i, line in enumerate(shown)),
        *(Candidate(base + j, line, 0, j) for j, line in enumerate(trailer)),
    ]
    kept, note, unlisted = select_body(
        "table", meta, budget_tokens, summary, candidates, facts_of=text, label="Also in the table"
    )
    rows_kept = sum(1 for c in kept if c.priority == 1)
    more = total - rows_kept
    removed = f"{more:,} of {total:,} rows (kept the columns and the first {rows_kept:,})"
    texts = [c.text for c in kept]
    if more > 0:  # before the trailer's first line (a psql row count), else at the end
        at = next((k for k, c in enumerate(kept) if c.line == base), len(kept))
        texts.insert(at, f"… {more:,} more rows not shown")
    return finish("table", meta, budget_tokens, [summary, *texts, *note], removed, unlisted)
