"""Predicates on file contents: text conditions, a JSON field, CSV cells and row counts (of a CSV file or an xlsx
sheet), an xlsx cell, a docx or pptx document's text, by path or glob. A check reads every format its file can
have, or fails saying it cannot (a text condition on a binary file), never quietly seeing nothing."""

from __future__ import annotations

import csv
import fnmatch
import io
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from workspace_sim.predicates.base import EvalContext, PredicateBase, PredicateResult, short
from workspace_sim.predicates.conditions import Condition, field_value


class JsonField(BaseModel):
    """A value inside a JSON file, addressed by a dotted path ('totals.0.amount')."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    path: str
    value: Condition


class CsvCell(BaseModel):
    """A cell of a CSV file: the `column` of the row(s) whose cells match `row`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    row: dict[str, Condition] = Field(default_factory=dict)
    column: str
    value: Condition


class CsvRows(BaseModel):
    """The data rows of a CSV file whose cells meet `where` (column -> condition), counted by `count`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    where: dict[str, Condition] = Field(default_factory=dict, description="Conditions on the row's cells.")
    count: Condition = Field(description="Condition on how many rows match, e.g. {gte: 3}.")

    def describe(self) -> str:
        conds = ", ".join(f"{k} {c.describe()}" for k, c in self.where.items())
        return (f"rows with {conds}: " if conds else "rows: ") + f"count {self.count.describe()}"


class SheetCell(BaseModel):
    """A cell of an xlsx workbook (or of a CSV file read as one sheet): by A1 address (`cell`), or looked up as the
    cell in the column whose header is `column` on the one row whose cells meet `row_where`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    sheet: str | None = Field(None, description="Sheet name; the first sheet when not given.")
    cell: str | None = Field(None, description="The cell, e.g. B4 (or give row_where and column).")
    row_where: dict[str, Condition] | None = Field(None, min_length=1, description=(
        "Instead of cell: the row whose cells meet these conditions (header -> condition, e.g. {Supplier: Acme}); "
        "exactly one data row must match."))
    column: str | None = Field(None, description="With row_where: the header of the column to read, e.g. Invoiced.")
    header_row: int = Field(1, ge=1, description="With row_where: the row holding the headers (data rows follow it).")
    value: Condition

    @model_validator(mode="after")
    def _addressed(self) -> "SheetCell":
        if (self.cell is None) == (self.row_where is None):
            raise ValueError("give exactly one of cell (an A1 address) or row_where with column (a lookup)")
        if (self.row_where is None) != (self.column is None):
            raise ValueError("row_where and column go together: the column to read on the row found")
        return self

    def where(self) -> str:
        """Where the cell is, in words."""
        at = f"{self.sheet}!" if self.sheet else ""
        if self.cell is not None:
            return f"cell {at}{self.cell}"
        conds = ", ".join(f"{k} {c.describe()}" for k, c in (self.row_where or {}).items())
        return f"cell {at}[{self.column}] on the row where {conds}"


class FileContent(PredicateBase):
    """A file exists (or not) and its content meets the conditions; by exact `path`, or by `path_glob` with
    `matching` one (exactly one file matches and meets them), any (some file does) or all (every one does)."""

    kind: Literal["file"] = "file"
    path: str | None = Field(None, description="The file's path.")
    path_glob: str | None = Field(None, description=(
        "A pattern locating the file instead of `path` ('*' within a folder name, '**' across folders, '?', "
        "[abc]), e.g. '/reports/*summary*.md'."))
    matching: Literal["one", "any", "all"] = Field("one", description=(
        "With path_glob: 'one' (exactly one file matches, and it meets the conditions), 'any' (some matching file "
        "meets them), 'all' (there is a match and every matching file meets them)."))
    exists: bool = True
    content: Condition | None = None
    json_field: JsonField | None = None
    csv_cell: CsvCell | None = None
    csv_rows: CsvRows | Condition | None = Field(None, description=(
        "Condition on the number of data rows, or {where: {column: condition}, count: condition} counting "
        "the rows that meet `where`; of a CSV file or an xlsx workbook's sheet (`sheet`)."))
    sheet: str | None = Field(None, description=(
        "The sheet of an xlsx workbook that csv_cell and csv_rows read (its first row the header); the first sheet "
        "when not given. A CSV file is one sheet."))
    sheet_cell: SheetCell | None = Field(None, description="A cell of an xlsx workbook (or CSV) and its condition.")
    document_text: Condition | None = Field(None, description="Condition on a docx or pptx document's text.")

    @model_validator(mode="before")
    @classmethod
    def _rows(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("csv_rows"), dict) and "where" in data["csv_rows"]:
            data = {**data, "csv_rows": CsvRows.model_validate(data["csv_rows"])}
        return data

    @model_validator(mode="after")
    def _located(self) -> "FileContent":
        if (self.path is None) == (self.path_glob is None):
            raise ValueError("give exactly one of path or path_glob")
        if self.path_glob is not None and not self.path_glob.startswith("/"):
            raise ValueError(f"path_glob must be absolute (start with /), got {self.path_glob!r}")
        return self

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        files = ctx.final.table("files.files")
        if self.path is not None:
            return self._one(files.get(self.path), self.path)
        pattern = self.path_glob or ""
        paths = [p for p in sorted(files.keys()) if glob_match(pattern, p)]
        where = f"files matching {pattern}"
        if not self.exists:
            return self.result(not paths, f"no file matching {pattern}",
                               f"{len(paths)} match ({', '.join(paths[:5])})" if paths else "none match")
        results = [self._one(files[p], p) for p in paths]
        ok_paths = [p for p, r in zip(paths, results) if r.passed]
        head = {"one": "exactly one of the", "any": "some of the", "all": "every one of the"}[self.matching]
        expected = f"{head} {where}" + (" with " + results[0].expected.split(" with ", 1)[1]
                                         if results and " with " in results[0].expected else "")
        if not paths:
            return self.result(False, expected, "no file matches")
        if self.matching == "one":
            ok = len(paths) == 1 and results[0].passed
            observed = (results[0].observed if len(paths) == 1
                        else f"{len(paths)} files match ({', '.join(paths[:5])}), not exactly one")
        elif self.matching == "any":
            ok = bool(ok_paths)
            observed = f"{len(ok_paths)} of {len(paths)} matching files pass" + (
                f" ({', '.join(ok_paths[:5])})" if ok_paths else f"; {paths[0]}: {results[0].observed}")
        else:
            bad = [(p, r) for p, r in zip(paths, results) if not r.passed]
            ok = not bad
            observed = f"{len(ok_paths)} of {len(paths)} matching files pass" + (
                f"; {bad[0][0]}: {bad[0][1].observed}" if bad else "")
        return self.result(ok, expected, observed)

    def _one(self, f: Any, path: str) -> PredicateResult:
        if not self.exists:
            return self.result(f is None, f"no file at {path}", "it exists" if f is not None else "absent")
        parts = []
        if self.content:
            parts.append(f"content {self.content.describe()}")
        if self.json_field:
            parts.append(f"JSON {self.json_field.path} {self.json_field.value.describe()}")
        if self.csv_cell:
            parts.append(f"CSV column {self.csv_cell.column} {self.csv_cell.value.describe()}")
        if self.csv_rows:
            parts.append(f"CSV {self.csv_rows.describe()}" if isinstance(self.csv_rows, CsvRows)
                         else f"CSV rows {self.csv_rows.describe()}")
        if self.sheet_cell:
            parts.append(f"{self.sheet_cell.where()} {self.sheet_cell.value.describe()}")
        if self.document_text:
            parts.append(f"document text {self.document_text.describe()}")
        expected = f"file {path}" + (" with " + "; ".join(parts) if parts else "")
        if f is None:
            return self.result(False, expected, "the file does not exist")
        media = _media_checks(self, f, expected)
        if media is not None:
            return media
        text = f.content if f.encoding == "utf-8" else None
        if text is None and (self.content is not None or self.json_field is not None):
            return self.result(False, expected, f"cannot be read as text: {path} is {f.mime_type} (binary); content "
                                                "and json_field read text files (document_text, sheet_cell or "
                                                "csv_rows read documents and workbooks)")
        if self.content is not None and not self.content.check(text):
            return self.result(False, expected, f"content {short(text)}")
        if self.json_field is not None:
            try:
                doc = json.loads(text)
            except ValueError as e:
                return self.result(False, expected, f"not valid JSON ({e})")
            v = field_value(doc, self.json_field.path)
            if not self.json_field.value.check(v):
                return self.result(False, expected, f"{self.json_field.path} = {short(v)}")
        if self.csv_cell is not None or self.csv_rows is not None:
            rows = _csv_rows(text) if text is not None else _sheet_rows(f, self.sheet)
            if isinstance(rows, str):
                return self.result(False, expected, f"cannot be read as rows: {rows}")
            if isinstance(self.csv_rows, CsvRows):
                hits = [r for r in rows if all(c.check(r.get(k)) for k, c in self.csv_rows.where.items())]
                if not self.csv_rows.count.check(len(hits)):
                    return self.result(False, expected, f"{len(hits)} of {len(rows)} rows match")
            elif self.csv_rows is not None and not self.csv_rows.check(len(rows)):
                return self.result(False, expected, f"{len(rows)} rows")
            if self.csv_cell is not None:
                cell = self.csv_cell
                hits = [r for r in rows if all(c.check(r.get(k)) for k, c in cell.row.items())]
                vals = [r.get(cell.column) for r in hits]
                if not hits or not all(cell.value.check(v) for v in vals):
                    return self.result(False, expected, f"matching rows' {cell.column} = {short(vals)}")
        return self.result(True, expected, "as expected")


def glob_match(pattern: str, path: str) -> bool:
    """Whether `path` matches `pattern`: '**' crosses folders, '*' and '?' stay within one name, [abc] sets."""
    pat_parts, path_parts = pattern.strip("/").split("/"), path.strip("/").split("/")

    def walk(i: int, j: int) -> bool:
        if i == len(pat_parts):
            return j == len(path_parts)
        if pat_parts[i] == "**":
            return any(walk(i + 1, k) for k in range(j, len(path_parts) + 1))
        return j < len(path_parts) and fnmatch.fnmatchcase(path_parts[j], pat_parts[i]) and walk(i + 1, j + 1)

    return walk(0, 0)


def _csv_rows(text: str) -> list[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in reader]


def _sheet_rows(f: Any, sheet: str | None) -> list[dict[str, Any]] | str:
    """The data rows of an xlsx workbook's sheet (the first row its header), each cell as text as a CSV file
    holds it (an empty cell ""), read by the reader read_sheet uses; or why they cannot be read."""
    import base64

    from workspace_sim.media import MediaError
    from workspace_sim.media.limits import XLSX
    from workspace_sim.media.sheets import csv_cell_text, read_xlsx

    if f.mime_type != XLSX:
        return (f"{f.path} is {f.mime_type} (binary); csv_rows and csv_cell read CSV files and xlsx workbooks")
    try:
        table = read_xlsx(base64.b64decode(f.content), f.path, sheet)["rows"]
    except MediaError as e:
        return str(e)
    if not table:
        return []
    text = [[csv_cell_text(v).strip() for v in row] for row in table]  # as write_sheet writes a CSV cell
    return [dict(zip(text[0], row)) for row, raw in zip(text[1:], table[1:]) if any(v is not None for v in raw)]


def _media_checks(p: FileContent, f: Any, expected: str) -> PredicateResult | None:
    """The failing result of a sheet-cell or document-text check, or None when they pass (or are not asked)."""
    import base64

    from workspace_sim.media import MediaError
    from workspace_sim.media.documents import document_text
    from workspace_sim.media.limits import XLSX
    from workspace_sim.media.sheets import cell_value, read_csv, read_xlsx

    raw = base64.b64decode(f.content) if f.encoding == "base64" else f.content.encode()
    try:
        if p.sheet_cell is not None and p.sheet_cell.cell is not None:
            c = p.sheet_cell
            v = (read_csv(f.content, f.path, c.cell)["rows"][0][0] if f.encoding == "utf-8"
                 else cell_value(raw, f.path, c.sheet, c.cell))
            if not c.value.check(v):
                return p.result(False, expected, f"cell {c.cell} = {short(v)}")
        elif p.sheet_cell is not None:
            if f.encoding == "utf-8":
                table = read_csv(f.content, f.path)["rows"]
            elif f.mime_type == XLSX:
                table = read_xlsx(raw, f.path, p.sheet_cell.sheet)["rows"]
            else:
                return p.result(False, expected, f"cannot be read: {f.path} is {f.mime_type} (binary); sheet_cell "
                                                 "reads xlsx workbooks and CSV files")
            address, v = lookup_cell(table, p.sheet_cell)
            if not p.sheet_cell.value.check(v):
                return p.result(False, expected, f"cell {address} = {short(v)}")
        if p.document_text is not None:
            text = document_text(raw, f.path, f.mime_type)
            if not p.document_text.check(text):
                return p.result(False, expected, f"document text {short(text)}")
    except MediaError as e:
        return p.result(False, expected, f"cannot be read: {e}")
    except LookupError as e:
        return p.result(False, expected, str(e.args[0]))
    return None


def lookup_cell(table: list[list[Any]], c: SheetCell) -> tuple[str, Any]:
    """The (A1 address, value) of the cell `c` looks up in a sheet's rows: the column headed `c.column` on the one
    data row meeting `c.row_where`; LookupError saying which header is missing or repeated, or how many rows match."""
    from openpyxl.utils.cell import get_column_letter as letter

    h = c.header_row
    if len(table) < h:
        raise LookupError(f"no header row {h}: the sheet has {len(table)} rows")
    headers = ["" if v is None else str(v).strip() for v in table[h - 1]]

    def col(name: str) -> int:
        at = [i for i, x in enumerate(headers) if x == name.strip()]
        if not at:
            shown = ", ".join(repr(x) for x in headers if x)
            raise LookupError(f"no column headed {name!r} in row {h} (its headers: {shown or 'none'})")
        if len(at) > 1:
            raise LookupError(f"column header {name!r} is ambiguous: columns "
                              f"{', '.join(letter(i + 1) for i in at)} of row {h} are headed so")
        return at[0]

    keys = {col(k): cond for k, cond in (c.row_where or {}).items()}
    target = col(c.column or "")
    hits = [h + 1 + n for n, row in enumerate(table[h:]) if any(v is not None and v != "" for v in row)
            and all(cond.check(row[i] if i < len(row) else None) for i, cond in keys.items())]
    where = ", ".join(f"{k} {cond.describe()}" for k, cond in (c.row_where or {}).items())
    if not hits:
        raise LookupError(f"no row where {where}")
    if len(hits) > 1:
        raise LookupError(f"{len(hits)} rows match where {where} (rows {', '.join(map(str, hits[:10]))}); the "
                          "lookup needs exactly one")
    row = table[hits[0] - 1]
    return f"{letter(target + 1)}{hits[0]}", row[target] if target < len(row) else None
