"""A spec ships a photo with EXIF (base64 in its start files); over MCP, through the SDK's own client,
`read_media_file` returns the image content and, beside it, the capture time, camera, orientation and GPS position
(structured `exif` and a line of the text part), and the reference that reads them passes the spec's check."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client
from media_samples import b64, photo, photo_with_exif_bytes

from mcp_server import Episode, build_server
from synth.spec import parse_spec


def _spec() -> Any:
    files = [{"path": "/site/roof.jpg", "content": b64(photo()), "encoding": "base64"},
             {"path": "/site/broken.jpg", "content": b64(photo_with_exif_bytes(b"MM\x00\x2a\x00\x00\x00\x08\xff\xff")),
              "encoding": "base64"}]
    return parse_spec({
        "version": "1", "id": "photo-exif", "title": "When was the roof photographed",
        "capabilities": ["media_evidence"],
        "difficulty": "easy", "expected_horizon": 2, "services": ["files"], "now": "2024-06-03T09:00:00+00:00",
        "world": {"organisation": {"name": "Acme", "domain": "acme.example"},
                  "people": [{"name": "Ann Lee", "email": "ann@acme.example", "role": "user"}]},
        "user": "ann@acme.example", "request": "When and with what camera was /site/roof.jpg taken?",
        "initial": {"files": {"files": files}},
        "predicates": [{"kind": "answer", "condition": {"contains": "2024-05-17"}}],
        "reference": {"steps": [{"kind": "call", "tool": "read_media_file", "args": {"path": "/site/roof.jpg"}}],
                      "final_answer": "It was taken on 2024-05-17 at 14:03 with a Canon EOS R5."}})


def _calls(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
    async def go() -> list[Any]:
        async with Client(build_server(Episode(_spec()))) as c:
            return [await c.call_tool(name, args) for name, args in calls]

    return anyio.run(go)


def test_a_shipped_photos_exif_comes_over_mcp_beside_the_image() -> None:
    roof, broken = _calls(("read_media_file", {"path": "/site/roof.jpg"}),
                          ("read_media_file", {"path": "/site/broken.jpg"}))
    assert not roof.is_error and [c.type for c in roof.content] == ["text", "image"]
    exif = roof.structured_content["exif"]
    assert exif["captured"] == "2024-05-17T14:03:22+02:00" and (exif["make"], exif["model"]) == ("Canon", "EOS R5")
    assert exif["orientation"] == 6 and exif["gps"] == {"latitude": 48.8584, "longitude": 2.2945, "altitude": 35.0}
    assert "EXIF: taken 2024-05-17T14:03:22+02:00; camera Canon EOS R5" in roof.content[0].text
    assert not broken.is_error and [c.type for c in broken.content] == ["text", "image"]
    assert "EXIF not readable: the EXIF metadata (Corrupt EXIF data." in broken.content[0].text


def test_the_spec_loads_and_its_reference_that_reads_the_exif_passes() -> None:
    from synth.validate import validate_spec

    report = validate_spec(_spec(), mutants=False)
    assert report.stats["reference_score"] == 1.0 and report.stats["do_nothing_score"] == 0.0
    assert not [f for f in report.feedback if f.check in ("schema", "references", "reference")], report.feedback
