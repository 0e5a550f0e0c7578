"""A photo's EXIF metadata beside the image in `read_media_file`: capture time, camera, orientation and GPS position
from a JPEG or PNG a spec ships; corrupt metadata reported field by field (what could be read, and what could not)
while the image is still served; a photo without EXIF, a GIF and a receipt scan carry no `exif`."""

from __future__ import annotations

import pytest
from media_samples import b64, photo, photo_with_exif_bytes, png
from PIL.TiffImagePlugin import IFDRational

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.media import media_parts

PARIS = {"latitude": 48.8584, "longitude": 2.2945, "altitude": 35.0}


def _read(raw: bytes, path: str = "/photos/site.jpg") -> tuple[dict, str]:
    ws = Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [
        {"path": path, "content": b64(raw), "encoding": "base64"}]}})
    r = ws.call("read_media_file", {"path": path})
    assert r.ok, r.text
    assert [p.kind for p in media_parts(r.data)] == ["image"]  # the image is served whatever its metadata
    return r.data, r.text


@pytest.mark.parametrize("fmt, path", [("JPEG", "/photos/site.jpg"), ("PNG", "/photos/site.png"),
                                       ("WEBP", "/photos/site.webp")])
def test_a_photos_exif_comes_beside_the_image(fmt: str, path: str) -> None:
    data, text = _read(photo(fmt), path)
    assert data["exif"] == {"captured": "2024-05-17T14:03:22+02:00", "make": "Canon", "model": "EOS R5",
                            "orientation": 6, "orientation_text": "shown rotated 90° clockwise", "gps": PARIS}
    assert ("EXIF: taken 2024-05-17T14:03:22+02:00; camera Canon EOS R5; orientation 6 (shown rotated 90° "
            "clockwise); GPS 48.858400, 2.294500, altitude 35 m") in text


def test_southern_and_western_positions_are_negative_and_missing_fields_are_left_out() -> None:
    data, text = _read(photo(gps=("S", (33, 52, 4.0), "W", (70, 30, 0), None), offset=None, make=None,
                             orientation=None))
    assert data["exif"] == {"captured": "2024-05-17T14:03:22", "model": "EOS R5",
                            "gps": {"latitude": -33.867778, "longitude": -70.5}}
    assert "camera EOS R5" in text and "orientation" not in text


def test_no_exif_means_no_exif_field() -> None:
    data, text = _read(png(), "/photos/plain.png")
    assert "exif" not in data and "EXIF" not in text


def test_a_corrupt_exif_block_is_reported_and_the_image_still_served() -> None:
    data, text = _read(photo_with_exif_bytes(b"MM\x00\x2a\x00\x00\x00\x08\xff\xff garbage"))
    (why,) = data["exif"]["unreadable"]
    assert why.startswith("the EXIF metadata (Corrupt EXIF data.") and set(data["exif"]) == {"unreadable"}
    assert "EXIF not readable: the EXIF metadata (Corrupt EXIF data." in text
    data, _ = _read(photo_with_exif_bytes(b"not a TIFF header at all"))
    assert data["exif"] == {"unreadable": ["the EXIF metadata (its 30 bytes hold no entry that can be read)"]}


def test_bad_fields_are_named_and_the_good_ones_kept() -> None:
    raw = photo(taken="yesterday", orientation=42,
                gps=("N", (IFDRational(1, 0), 1, 1), "X", (200, 0, 0), None))
    data, text = _read(raw)
    e = data["exif"]
    assert (e["make"], e["model"]) == ("Canon", "EOS R5") and "captured" not in e and "gps" not in e
    assert e["unreadable"] == [
        "capture time (DateTimeOriginal) ('yesterday' is not a date like 2024:05:17 14:03:22)",
        "orientation (42 is not 1-8)", "GPS latitude (nan is not a finite number)",
        "GPS longitude (reference 'X' is not E or W)"]
    assert "EXIF: camera Canon EOS R5\nEXIF not readable: capture time (DateTimeOriginal)" in text
