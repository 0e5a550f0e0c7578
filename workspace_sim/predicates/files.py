"""Predicates on file contents: text conditions, a JSON field, CSV cells and row counts."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import EvalContext, PredicateBase, PredicateResult, short
from .conditions import Condition, field_value


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


class FileContent(PredicateBase):
    """A file exists (or not) and its content meets the conditions."""

    kind: Literal["file"] = "file"
    path: str
    exists: bool = True
    content: Condition | None = None
    json_field: JsonField | None = None
    csv_cell: CsvCell | None = None
    csv_rows: Condition | None = Field(None, description="Condition on the number of data rows.")

    def evaluate(self, ctx: EvalContext) -> PredicateResult:
        f = ctx.final.table("files.files").get(self.path)
        if not self.exists:
            return self.result(f is None, f"no file at {self.path}", "it exists" if f is not None else "absent")
        parts = []
        if self.content:
            parts.append(f"content {self.content.describe()}")
        if self.json_field:
            parts.append(f"JSON {self.json_field.path} {self.json_field.value.describe()}")
        if self.csv_cell:
            parts.append(f"CSV column {self.csv_cell.column} {self.csv_cell.value.describe()}")
        if self.csv_rows:
            parts.append(f"CSV rows {self.csv_rows.describe()}")
        expected = f"file {self.path}" + (" with " + "; ".join(parts) if parts else "")
        if f is None:
            return self.result(False, expected, "the file does not exist")
        text = f.content if f.encoding == "utf-8" else ""
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
            rows = _csv_rows(text)
            if self.csv_rows is not None and not self.csv_rows.check(len(rows)):
                return self.result(False, expected, f"{len(rows)} rows")
            if self.csv_cell is not None:
                cell = self.csv_cell
                hits = [r for r in rows if all(c.check(r.get(k)) for k, c in cell.row.items())]
                vals = [r.get(cell.column) for r in hits]
                if not hits or not all(cell.value.check(v) for v in vals):
                    return self.result(False, expected, f"matching rows' {cell.column} = {short(vals)}")
        return self.result(True, expected, "as expected")


def _csv_rows(text: str) -> list[dict[str, Any]]:
    reader = csv.DictReader(io.StringIO(text))
    return [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in reader]
