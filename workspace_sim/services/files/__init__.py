"""Files: a virtual folder tree with text and binary files; nothing here touches the real disk.

`records.py` holds the records (files, folders), the start-data check and `SERVICE` with its table handles;
`tools.py` the text tools; `media_tools.py` (a second tool module) the tools for media files: images and audio
served as MCP image/audio content (a clip with its stored transcript), audio transcribed as text, PDFs by page (text layer, or page images for scans), spreadsheets by sheet and
range (xlsx read and written, csv read), docx/pptx as text (docx written). Media kinds, MIME types and size limits
are in `workspace_sim.media`. The service's tool list is made here, from both tool modules, in the order tool lists
show.
"""

from __future__ import annotations

from . import media_tools, tools
from .records import FILES, FOLDERS, SERVICE, File, Folder

SERVICE.add_tools(
    tools.read_text_file, tools.read_multiple_files, tools.write_file, tools.edit_file, tools.create_directory,
    tools.list_directory, tools.directory_tree, tools.move_file, tools.delete_file, tools.search_files, tools.grep,
    tools.get_file_info,
    media_tools.read_media_file, media_tools.transcribe_audio, media_tools.read_pdf, media_tools.read_sheet, media_tools.write_sheet,
    media_tools.read_document, media_tools.write_document,
)

__all__ = ["SERVICE", "FILES", "FOLDERS", "File", "Folder"]
