"""Media over MCP through the SDK's own client: an image read is ImageContent with its MIME type and bytes, audio is
AudioContent, the text part is the placeholder the text channels see, and the structured copy carries no bytes."""

from __future__ import annotations

import base64
from typing import Any

import anyio
from mcp import Client
from media_samples import b64, jpeg, png, scanned_pdf, wav

from mcp_server import Episode, PythonEnvironment, build_server
from workspace_sim import Workspace, WorkspaceConfig


def _env() -> PythonEnvironment:
    def factory() -> Workspace:
        files = [{"path": p, "content": b64(raw), "encoding": "base64"} for p, raw in
                 [("/r/receipt.png", png(30, 30)), ("/r/memo.wav", wav()), ("/r/scan.pdf", scanned_pdf(jpeg()))]]
        return Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": files}})

    return PythonEnvironment("media", "Media", "Look at the receipt.", factory, [])


def _call(name: str, args: dict[str, Any]) -> tuple[Any, Episode]:
    ep = Episode(_env())

    async def go() -> Any:
        async with Client(build_server(ep)) as c:
            return await c.call_tool(name, args)

    return anyio.run(go), ep


def test_reading_a_png_returns_image_content_with_its_mime_type_and_bytes() -> None:
    result, ep = _call("read_media_file", {"path": "/r/receipt.png"})
    assert not result.is_error
    text, image = result.content
    assert image.type == "image" and image.mime_type == "image/png" and base64.b64decode(image.data) == png(30, 30)
    assert text.type == "text" and "[image: receipt.png (image/png," in text.text
    assert "data" not in result.structured_content["media"][0]  # the bytes travel once, as the image
    assert result.structured_content["width"] == 30


def test_audio_is_audio_content_and_a_scan_is_page_images() -> None:
    result, _ = _call("read_media_file", {"path": "/r/memo.wav"})
    assert [(c.type, getattr(c, "mime_type", None)) for c in result.content] == [("text", None), ("audio", "audio/wav")]
    assert base64.b64decode(result.content[1].data) == wav()
    scan, _ = _call("read_pdf", {"path": "/r/scan.pdf"})
    assert [c.type for c in scan.content] == ["text", "image"] and scan.content[1].mime_type == "image/jpeg"


def test_a_refused_media_read_is_an_error_without_media() -> None:
    result, _ = _call("read_media_file", {"path": "/r/missing.png"})
    assert result.is_error and [c.type for c in result.content] == ["text"]
