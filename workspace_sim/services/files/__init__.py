"""Files: a virtual folder tree with text and binary files; nothing here touches the real disk.

`tree.py` holds the records (files, folders) and the text tools; `media.py` the tools for media files: images
and audio served as MCP image/audio content, PDFs by page (text layer, or page images for scans), spreadsheets by
sheet and range (xlsx read and written, csv read), docx/pptx as text (docx written). Media kinds, MIME types and
size limits are in `workspace_sim.media`.
"""

from __future__ import annotations

from workspace_sim.services.files import media_tools  # noqa: F401  (registers the media tools on SERVICE)
from workspace_sim.services.files.tools import FILES, FOLDERS, File, Folder, SERVICE

__all__ = ["SERVICE", "FILES", "FOLDERS", "File", "Folder"]
