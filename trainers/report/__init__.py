"""HTML reports of episode batches: an index with success per capability, and a page per episode."""

from .html import ReportError, write_report

__all__ = ["ReportError", "write_report"]
