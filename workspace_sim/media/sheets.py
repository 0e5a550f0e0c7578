"""Spreadsheets: xlsx read and written with openpyxl (checked against zip bombs first), CSV read and written as one
sheet.

Ranges are A1 notation ('B2:D10', 'A:C', '3:5', a single cell 'C7'). Values come back as JSON values: numbers,
text, booleans, dates as ISO text, a formula as its text ('=SUM(B2:B9)', not computed). Writing keeps the other
sheets and cells of an existing workbook and gives the same bytes for the same workbook and cells. Both are
pure functions of the bytes, so each distinct workbook is decoded once per process (`memo.Memo`): validation
replays the same reads and writes many times.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from workspace_sim.media.limits import LIMITS, Limits, MediaError, open_zip, repack_zip
from workspace_sim.media.memo import Memo

Cell = str | int | float | bool | None
FIXED_TIME = datetime(2000, 1, 1)  # document properties of written workbooks: bytes never depend on the clock
_SNAPSHOTS = Memo(size=128)  # bytes -> every sheet's cells as JSON values
_WRITES = Memo(size=256)  # (bytes, sheet, start, rows) -> the workbook written
_LOADED = Memo(size=64)  # bytes -> the parsed workbook, pickled
_SNAPSHOT_CELLS = 200_000  # a workbook with more stored cells is read straight from openpyxl, never kept


def _bounds(rng: str | None, path: str) -> tuple[int | None, int | None, int | None, int | None]:
    from openpyxl.utils.cell import range_boundaries

    if not rng:
        return None, None, None, None
    try:
        return range_boundaries(rng.strip().upper())
    except (ValueError, TypeError):
        raise MediaError(f"range {rng!r} is not A1 notation (e.g. A1:C10, B:B, 2:5 or C7) for {path}") from None


def _json(v: Any) -> Cell:
    if isinstance(v, (datetime, date, time)):
        return v.isoformat()
    if v is None or isinstance(v, (str, int, float, bool)):
        return v
    return str(v)


def _load(raw: bytes, path: str, limits: Limits):  # noqa: ANN202 - an openpyxl workbook
    """A fresh openpyxl workbook of `raw`: parsed once per distinct bytes and kept pickled (unpickling is ~12x
    cheaper than parsing the styles again), so every caller gets its own copy to change."""
    import pickle  # on first use: the files service imports this module at every start

    return pickle.loads(_LOADED.get(raw, limits, lambda: pickle.dumps(_parse(raw, path, limits))))


def _parse(raw: bytes, path: str, limits: Limits):  # noqa: ANN202 - an openpyxl workbook
    import openpyxl

    open_zip(raw, path, limits).close()
    try:
        return openpyxl.load_workbook(io.BytesIO(raw), data_only=False)
    except Exception as e:
        raise MediaError(f"{path} is not a readable xlsx workbook ({type(e).__name__}: {e})") from None


@dataclass(frozen=True)
class _Sheet:
    """A sheet as openpyxl loaded it: its used area and the values of the cells it stores."""

    max_row: int
    max_col: int
    values: dict[tuple[int, int], Cell]


def _snapshot(raw: bytes, path: str, limits: Limits) -> tuple[list[str], dict[str, _Sheet]] | None:
    """Every sheet's cells (None when the workbook stores too many cells to keep)."""
    wb = _load(raw, path, limits)
    sheets, total = {}, 0
    for ws in wb.worksheets:
        cells = getattr(ws, "_cells", None)  # openpyxl's store of the cells the file holds: {(row, col): Cell}
        if cells is None:
            return None
        total += len(cells)
        if total > _SNAPSHOT_CELLS:
            return None
        sheets[ws.title] = _Sheet(ws.max_row, ws.max_column, {k: _json(c.value) for k, c in cells.items()
                                                              if c.value is not None})
    return list(wb.sheetnames), sheets


def read_xlsx(raw: bytes, path: str, sheet: str | None = None, rng: str | None = None,
              limits: Limits = LIMITS) -> dict[str, Any]:
    """A range of one sheet (the first when none is named): {sheets, sheet, range, rows}."""
    snap = _SNAPSHOTS.get(raw, limits, lambda: _snapshot(raw, path, limits))
    if snap is None:
        return _read_loaded(_load(raw, path, limits), path, sheet, rng, limits)
    names, sheets = snap
    name = sheet if sheet is not None else names[0]
    if name not in names:
        raise MediaError(f"{path} has no sheet {name!r}; its sheets are {', '.join(map(repr, names))}")
    if name not in sheets:  # a chartsheet: no cells to keep
        return _read_loaded(_load(raw, path, limits), path, sheet, rng, limits)
    ws = sheets[name]
    c1, r1, c2, r2 = _area(rng, path, ws.max_row, ws.max_col, limits)
    get = ws.values.get
    rows = [[get((r, c)) for c in range(c1, c2 + 1)] for r in range(r1, r2 + 1)]
    return {"sheets": list(names), "sheet": name, "range": _a1(c1, r1, c2, r2), "rows": rows}


def _area(rng: str | None, path: str, max_row: int, max_col: int, limits: Limits) -> tuple[int, int, int, int]:
    c1, r1, c2, r2 = _bounds(rng, path)
    c1, r1 = c1 or 1, r1 or 1
    c2, r2 = c2 or max(max_col, c1), r2 or max(max_row, r1)
    if (c2 - c1 + 1) * (r2 - r1 + 1) > limits.sheet_cells_per_read:
        raise MediaError(f"range of {(c2 - c1 + 1) * (r2 - r1 + 1):,} cells; at most {limits.sheet_cells_per_read:,} "
                         f"per read (give a smaller range)")
    return c1, r1, c2, r2


def _read_loaded(wb: Any, path: str, sheet: str | None, rng: str | None, limits: Limits) -> dict[str, Any]:
    names = wb.sheetnames
    name = sheet if sheet is not None else names[0]
    if name not in names:
        raise MediaError(f"{path} has no sheet {name!r}; its sheets are {', '.join(map(repr, names))}")
    ws = wb[name]
    c1, r1, c2, r2 = _area(rng, path, ws.max_row, ws.max_column, limits)
    rows = [[_json(c) for c in row] for row in ws.iter_rows(min_row=r1, max_row=r2, min_col=c1, max_col=c2,
                                                            values_only=True)]
    return {"sheets": names, "sheet": name, "range": _a1(c1, r1, c2, r2), "rows": rows}


def read_csv(text: str, path: str, rng: str | None = None, limits: Limits = LIMITS) -> dict[str, Any]:
    """A range of a CSV file read as one sheet named after the file (cells are text)."""
    table = list(csv.reader(io.StringIO(text)))
    width = max((len(r) for r in table), default=0)
    c1, r1, c2, r2 = _bounds(rng, path)
    c1, r1 = c1 or 1, r1 or 1
    c2, r2 = c2 or max(width, c1), r2 or max(len(table), r1)
    if (c2 - c1 + 1) * (r2 - r1 + 1) > limits.sheet_cells_per_read:
        raise MediaError(f"range of {(c2 - c1 + 1) * (r2 - r1 + 1):,} cells; at most {limits.sheet_cells_per_read:,} per read")
    rows = []
    for r in range(r1, r2 + 1):
        row = table[r - 1] if r <= len(table) else []
        rows.append([row[c - 1] if c <= len(row) else None for c in range(c1, c2 + 1)])
    name = path.rsplit("/", 1)[-1]
    return {"sheets": [name], "sheet": name, "range": _a1(c1, r1, c2, r2), "rows": rows}


def write_csv(text: str | None, path: str, start: str, rows: list[list[Cell]], limits: Limits = LIMITS) -> str:
    """The CSV text `text` (a new file when None) with `rows` written from cell `start`, as one sheet: other cells
    are kept, the table grows to fit and every row is padded to the widest; a cell is written as text (null
    empties it, true/false as TRUE/FALSE, a whole float without '.0'). Lines end as the file's did (\n if new)."""
    cells = sum(len(r) for r in rows)
    if cells > limits.sheet_cells_per_write:
        raise MediaError(f"{cells:,} cells to write; at most {limits.sheet_cells_per_write:,} per write")
    col0, row0 = _start_cell(start)
    table = list(csv.reader(io.StringIO(text))) if text else []
    for i, row in enumerate(rows):
        while len(table) < row0 + i:
            table.append([])
        line = table[row0 + i - 1]
        for j, v in enumerate(row):
            while len(line) < col0 + j:
                line.append("")
            line[col0 + j - 1] = csv_cell_text(v)
    width = max((len(r) for r in table), default=0)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n" if text and "\r\n" in text else "\n").writerows(
        r + [""] * (width - len(r)) for r in table)
    return buf.getvalue()


def csv_cell_text(v: Cell) -> str:
    """A cell value as a CSV file holds it: "" for null, TRUE/FALSE, a whole float without '.0', else its text."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _start_cell(start: str) -> tuple[int, int]:
    """The (column, row) of a cell in A1 notation, from 1."""
    from openpyxl.utils.cell import coordinate_from_string, column_index_from_string
    from openpyxl.utils.exceptions import CellCoordinatesException

    try:
        col_letter, row0 = coordinate_from_string(start.strip().upper())
        return column_index_from_string(col_letter), row0
    except (ValueError, TypeError, AttributeError, CellCoordinatesException):
        raise MediaError(f"start {start!r} is not a cell in A1 notation (e.g. B2)") from None


def _a1(c1: int, r1: int, c2: int, r2: int) -> str:
    from openpyxl.utils.cell import get_column_letter

    return f"{get_column_letter(c1)}{r1}:{get_column_letter(c2)}{r2}"


def write_xlsx(raw: bytes | None, path: str, sheet: str, start: str, rows: list[list[Cell]],
               limits: Limits = LIMITS) -> bytes:
    """The workbook `raw` (a new one when None) with `rows` written from cell `start` of `sheet` (made if absent)."""
    try:
        # a float by its repr: -0.0 == 0.0 (and hashes alike) but writes other bytes
        key = (raw is None, sheet, start, tuple(tuple((type(v).__name__, repr(v) if isinstance(v, float) else v)
                                                      for v in row) for row in rows), limits)
        hash(key)
    except TypeError:  # a value no cell can hold: the write itself says what is wrong
        return _write(raw, path, sheet, start, rows, limits)
    return _WRITES.get(raw or b"", key, lambda: _write(raw, path, sheet, start, rows, limits))


def _write(raw: bytes | None, path: str, sheet: str, start: str, rows: list[list[Cell]], limits: Limits) -> bytes:
    import openpyxl

    cells = sum(len(r) for r in rows)
    if cells > limits.sheet_cells_per_write:
        raise MediaError(f"{cells:,} cells to write; at most {limits.sheet_cells_per_write:,} per write")
    if not sheet or len(sheet) > 31 or any(ch in sheet for ch in "[]:*?/\\"):
        raise MediaError(f"sheet name {sheet!r} must be 1-31 characters without any of [ ] : * ? / \\")
    col0, row0 = _start_cell(start)
    if raw is None:
        wb = openpyxl.Workbook()
        wb.active.title = sheet
    else:
        wb = _load(raw, path, limits)
    ws = wb[sheet] if sheet in wb.sheetnames else wb.create_sheet(sheet)
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            if isinstance(v, str) and len(v) > 32_767:
                raise MediaError(f"rows[{i}][{j}] has {len(v):,} characters; a cell holds at most 32,767")
            ws.cell(row=row0 + i, column=col0 + j, value=v)
    wb.properties.created = wb.properties.modified = FIXED_TIME
    wb.properties.creator = wb.properties.lastModifiedBy = "coworkenv"
    buf = io.BytesIO()
    wb.save(buf)
    return repack_zip(buf.getvalue())


def cell_value(raw: bytes, path: str, sheet: str | None, cell: str, limits: Limits = LIMITS) -> Cell:
    """One cell's value ('B4' of `sheet`, or of the first sheet)."""
    got = read_xlsx(raw, path, sheet, cell, limits)
    return got["rows"][0][0] if got["rows"] and got["rows"][0] else None
