"""Databases: Notion-style typed databases, each a property schema (title, text, number, select, multi_select,
date, person, checkbox, relation) and rows (pages) whose values are checked against it; rows are queried with
filters and sorts, created and updated. A world event's row `patch` merges the given values into the row's, checked
against the schema like `update_row`'s (`records._world_write`). Predicates reach rows through the generic record
predicates, e.g. `record_exists` on `databases.rows` with `where: {database: expenses, values.Amount: 12.5}`.
"""

from __future__ import annotations

from .records import DATABASES, ROWS, SERVICE, Database, Property, Row
from .tools import list_databases, get_database, query_database, create_row, update_row

SERVICE.add_tools(
    list_databases, get_database, query_database, create_row, update_row,
)

__all__ = ["SERVICE", "DATABASES", "ROWS", "Database", "Property", "Row"]
