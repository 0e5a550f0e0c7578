"""The records of the files service, its folders and files (text, or binary in base64), and its declared tables.

A record's path is a normalised absolute path (`workspace_sim.text.paths`); '/' is implicit, never a folder
record. A file's size and MIME type are derived from its content and name, and checked against the media size
limits (`workspace_sim.media.limits`). An audio file may carry its transcript (plain text, or WebVTT whose cues time
each segment: `workspace_sim.media.transcripts`), which `transcribe_audio` and `read_media_file` return; only audio
files carry one.
"""

from __future__ import annotations

import base64
import mimetypes
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

from pydantic import Field, model_validator

from workspace_sim.core.errors import InvalidArgument
from workspace_sim.core.records import Record
from workspace_sim.core.registry import Service
from workspace_sim.media.limits import MediaError, check_size, media_class, mime_for_path
from workspace_sim.media.transcripts import parse_transcript
from workspace_sim.text.paths import parent, resolve


@lru_cache(maxsize=8192)
def _path_problem(path: str) -> str:
    """Why a stored record's path is not a normalised absolute path ('' when it is); cached, paths repeat."""
    try:
        normal = resolve(path)
    except InvalidArgument as e:
        return e.message
    return "" if path == normal else f"path {path!r} is not a normalised absolute path"


class File(Record):
    """A file: text (utf-8) or binary (base64 in `content`)."""

    key_field = "path"
    path: str = Field(description="Absolute, normalised path of the file, e.g. /reports/q1.csv; the record's key.")
    content: str = Field("", description="The file's text (utf-8), or its bytes in base64 when encoding is base64.")
    encoding: Literal["utf-8", "base64"] = Field("utf-8", description="How content holds the bytes: utf-8 text or base64.")
    size: int = Field(0, description="Size of the content in bytes; derived from content, any value given is replaced.")
    mime_type: str = Field("", description="MIME type, e.g. text/csv or application/pdf; guessed from the name when empty.")
    created: datetime | None = Field(None, description="When the file was created; the workspace's start when omitted.")
    modified: datetime | None = Field(None, description="When the file was last written; its creation time when omitted.")
    transcript: str | None = Field(None, exclude_if=lambda v: v is None, description=(  # absent: the bytes as before
        "Audio files only: what is said in the clip, for agents that cannot listen (transcribe_audio and "
        "read_media_file return it). Plain text, or WebVTT (text starting with WEBVTT) whose cues give each "
        "segment's start and end. A world change that replaces the clip's content should replace this too."))

    @model_validator(mode="after")
    def _derive(self) -> "File":
        problem = _path_problem(self.path)
        if problem:
            raise ValueError(problem)
        raw = base64.b64decode(self.content, validate=True) if self.encoding == "base64" else self.content.encode()
        object.__setattr__(self, "size", len(raw))
        if not self.mime_type:
            guess = mime_for_path(self.path) or _guess_mime(self.path.rsplit("/", 1)[-1].rpartition(".")[2].lower())
            object.__setattr__(self, "mime_type", guess or ("text/plain" if self.encoding == "utf-8" else "application/octet-stream"))
        try:
            check_size(self.path, self.mime_type, len(raw))
            if self.transcript is not None:
                if media_class(self.mime_type) != "audio" or self.encoding != "base64":
                    raise MediaError(f"{self.path} is {self.mime_type}, not an audio file: only audio files carry a "
                                     "transcript")
                parse_transcript(self.transcript, self.path)
        except MediaError as e:
            raise ValueError(str(e)) from None
        return self

    @property
    def is_text(self) -> bool:
        return self.encoding == "utf-8"

    def diff_text(self) -> str | None:
        return self.content if self.is_text else None


@lru_cache(maxsize=256)
def _guess_mime(extension: str) -> str | None:
    return mimetypes.guess_type(f"x.{extension}")[0] if extension else None


class Folder(Record):
    """A folder of the tree ('/' is implicit)."""

    key_field = "path"
    path: str = Field(description="Absolute, normalised path of the folder, e.g. /reports; the record's key (never '/').")
    created: datetime | None = Field(None, description="When the folder was created; the workspace's start when omitted.")

    @model_validator(mode="after")
    def _normal(self) -> "Folder":
        problem = _path_problem(self.path) or ("the root '/' is implicit, not a folder record" if self.path == "/" else "")
        if problem:
            raise ValueError(problem)
        return self


def _prepare(tables: dict[str, dict[str, Record]], config: Any) -> None:
    """Give files and folders times and create every missing parent folder."""
    files, folders = tables.get(FILES), tables.get(FOLDERS)
    if files is None or folders is None:
        return
    for path, f in list(files.items()):
        if f.created is None or f.modified is None:
            files[path] = f.evolve(created=f.created or config.now, modified=f.modified or f.created or config.now)
    for path in list(files) + list(folders):
        p = parent(path)
        while p != "/" and p not in folders:
            folders[p] = Folder(path=p, created=config.now)
            p = parent(p)
    for path, d in list(folders.items()):
        if d.created is None:
            folders[path] = d.evolve(created=config.now)
        if path in files:
            raise ValueError(f"{path} is both a file and a folder")


SERVICE = Service("files", {"files": File, "folders": Folder}, title="Files", prepare=_prepare)
FILES, FOLDERS = SERVICE.table("files"), SERVICE.table("folders")
