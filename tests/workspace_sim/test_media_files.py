"""Media files in the files service: images and audio as media parts, PDFs (text and scans), sheets, documents,
the limits that refuse bombs and corrupt files, predicates over xlsx and docx outputs, and records that keep
the bytes once."""

from __future__ import annotations

import base64
import json

import pytest
from media_samples import b64, jpeg, pdf_bomb, png, png_header_only, pptx, scanned_pdf, text_pdf, wav, zip_bomb_xlsx
from support import call_error

from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.core.blobs import BlobStore
from workspace_sim.media import LIMITS, media_parts, placeholder
from workspace_sim.predicates import FileContent, evaluate_states


def _bin(path: str, raw: bytes) -> dict:
    return {"path": path, "content": b64(raw), "encoding": "base64"}


@pytest.fixture
def ws() -> Workspace:
    return Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [
        _bin("/img/receipt.png", png()), _bin("/img/photo.jpg", jpeg()), _bin("/img/broken.png", png()[:40]),
        _bin("/img/huge.png", png_header_only(20_000, 10_000)), _bin("/img/fake.png", b"GIF89a not really"),
        _bin("/audio/memo.wav", wav()), _bin("/docs/letter.pdf", text_pdf(["Dear Dana,", "Total due: 1,234.50 EUR"])),
        _bin("/docs/scan.pdf", scanned_pdf(jpeg())), _bin("/docs/bomb.pdf", pdf_bomb()),
        _bin("/sheets/bomb.xlsx", zip_bomb_xlsx()), _bin("/docs/deck.pptx", pptx([["Q3 review", "Revenue up 4%"], ["Next"]])),
        {"path": "/sheets/q1.csv", "content": "region,amount\nnorth,10\nsouth,5\n"},
        {"path": "/docs/notes.md", "content": "hello\n"},
    ]}})


def test_an_image_is_a_media_part_with_its_bytes_and_mime_type(ws: Workspace) -> None:
    r = ws.call("read_media_file", {"path": "/img/receipt.png"})
    assert r.ok and r.data["width"] == 40 and r.data["height"] == 20
    (part,) = media_parts(r.data)
    assert part.kind == "image" and part.mime_type == "image/png" and base64.b64decode(part.data) == png()
    assert part.data is ws.table("files.files")["/img/receipt.png"].content  # the stored string, not a copy
    assert placeholder(part) in r.text and "receipt.png" in r.text and "image/png" in r.text
    assert media_parts(ws.call("read_media_file", {"path": "/img/photo.jpg"}).data)[0].mime_type == "image/jpeg"


def test_audio_is_a_media_part(ws: Workspace) -> None:
    r = ws.call("read_media_file", {"path": "/audio/memo.wav"})
    assert r.ok and r.data["seconds"] == 0.25
    assert [(p.kind, p.mime_type) for p in media_parts(r.data)] == [("audio", "audio/wav")]


@pytest.mark.parametrize("path,words", [
    ("/img/broken.png", "corrupt or truncated"), ("/img/huge.png", "more pixels than allowed"),
    ("/img/fake.png", "not a readable image"), ("/docs/letter.pdf", "read it with read_pdf"),
    ("/docs/notes.md", "read it with read_text_file"),
])
def test_bad_images_are_refused_with_the_reason_and_nothing_changes(ws: Workspace, path: str, words: str) -> None:
    before = ws.content_hash
    assert words in call_error(ws, "read_media_file", {"path": path})
    assert ws.content_hash == before


def test_binary_files_name_the_tool_that_reads_them(ws: Workspace) -> None:
    assert "read_media_file" in call_error(ws, "read_text_file", {"path": "/img/receipt.png"})
    assert "read_sheet" in call_error(ws, "read_text_file", {"path": "/sheets/bomb.xlsx"})
    assert "read_document" in call_error(ws, "read_text_file", {"path": "/docs/deck.pptx"})


def test_a_pdf_gives_its_text_layer_or_its_scanned_page_images(ws: Workspace) -> None:
    r = ws.call("read_pdf", {"path": "/docs/letter.pdf"})
    assert r.ok and r.data["pages"] == 1 and "Total due: 1,234.50 EUR" in r.data["read"][0]["text"]
    assert "media" not in r.data
    s = ws.call("read_pdf", {"path": "/docs/scan.pdf"})
    assert s.ok and s.data["read"][0]["scanned"] is True
    (part,) = media_parts(s.data)
    assert part.mime_type == "image/jpeg" and base64.b64decode(part.data) == jpeg()
    assert "scanned" in s.text and placeholder(part) in s.text
    assert "not in /docs/letter.pdf, which has pages 1-1" in call_error(ws, "read_pdf", {"path": "/docs/letter.pdf", "pages": [2]})


def test_a_pdf_bomb_and_a_zip_bomb_are_refused(ws: Workspace) -> None:
    before = ws.content_hash
    assert "PDF bomb" in call_error(ws, "read_pdf", {"path": "/docs/bomb.pdf"})
    assert "zip bomb" in call_error(ws, "read_sheet", {"path": "/sheets/bomb.xlsx"})
    assert ws.content_hash == before


def test_sheets_are_written_and_read_by_sheet_and_range(ws: Workspace) -> None:
    w = ws.call("write_sheet", {"path": "/sheets/out.xlsx", "rows": [["item", "cost"], ["lunch", 12.5]], "start": "B2"})
    assert w.ok and w.data["created"] is True
    assert ws.call("write_sheet", {"path": "/sheets/out.xlsx", "rows": [[99]], "sheet": "Totals"}).ok
    r = ws.call("read_sheet", {"path": "/sheets/out.xlsx", "range": "B2:C3"})
    assert r.data["rows"] == [["item", "cost"], ["lunch", 12.5]] and r.data["sheets"] == ["Sheet1", "Totals"]
    assert ws.call("read_sheet", {"path": "/sheets/out.xlsx", "sheet": "Totals", "range": "A1"}).data["rows"] == [[99]]
    assert "3: lunch | 12.5" in r.text
    assert ws.call("read_sheet", {"path": "/sheets/q1.csv", "range": "B2:B3"}).data["rows"] == [["10"], ["5"]]
    assert "no sheet 'Nope'" in call_error(ws, "read_sheet", {"path": "/sheets/out.xlsx", "sheet": "Nope"})
    assert "A1 notation" in call_error(ws, "read_sheet", {"path": "/sheets/out.xlsx", "range": "nowhere"})
    assert "for other text use write_file" in call_error(ws, "write_sheet", {"path": "/sheets/x.md", "rows": [[1]]})
    assert f"at most {LIMITS.sheet_cells_per_read:,}" in call_error(ws, "read_sheet", {"path": "/sheets/out.xlsx", "range": "A1:Z9999"})


def test_write_sheet_writes_a_csv_file_as_one_sheet(ws: Workspace) -> None:
    w = ws.call("write_sheet", {"path": "/sheets/q1.csv", "rows": [["total", 15.0, True]], "start": "A4"})
    assert w.ok and w.data["sheet"] == "q1.csv" and w.data["created"] is False
    f = ws.table("files.files")["/sheets/q1.csv"]
    assert f.is_text and f.mime_type == "text/csv"
    assert f.content == "region,amount,\nnorth,10,\nsouth,5,\ntotal,15,TRUE\n"  # other cells kept, padded
    assert ws.call("read_sheet", {"path": "/sheets/q1.csv", "range": "A4:C4"}).data["rows"] == [["total", "15", "TRUE"]]
    assert ws.call("write_sheet", {"path": "/sheets/q1.csv", "rows": [[None], ["7"]], "start": "B2"}).ok
    assert ws.table("files.files")["/sheets/q1.csv"].content.splitlines()[1:3] == ["north,,", "south,7,"]
    new = ws.call("write_sheet", {"path": "/sheets/new.csv", "rows": [["a", "b, c"], [1, 2.5]], "sheet": "new.csv"})
    assert new.ok and new.data["created"] and ws.table("files.files")["/sheets/new.csv"].content == 'a,"b, c"\n1,2.5\n'
    assert "one sheet ('q1.csv')" in call_error(ws, "write_sheet", {"path": "/sheets/q1.csv", "rows": [[1]],
                                                                     "sheet": "Totals"})
    assert "not a cell in A1 notation" in call_error(ws, "write_sheet", {"path": "/sheets/q1.csv", "rows": [[1]],
                                                                          "start": "nowhere"})


def _sheet_bytes() -> bytes:
    ws = Workspace.create(WorkspaceConfig(services=["files"]), {})
    ws.call("write_sheet", {"path": "/t.xlsx", "rows": [["a", 1, True, None]]})
    ws.call("write_document", {"path": "/t.docx", "paragraphs": ["x"], "title": "T"})
    files = ws.table("files.files")
    return base64.b64decode(files["/t.xlsx"].content) + base64.b64decode(files["/t.docx"].content)


def test_written_office_files_are_byte_identical_run_to_run() -> None:
    assert _sheet_bytes() == _sheet_bytes()


def test_documents_are_read_as_text_and_written(ws: Workspace) -> None:
    assert "--- slide 1 ---\nQ3 review\nRevenue up 4%" in ws.call("read_document", {"path": "/docs/deck.pptx"}).text
    assert ws.call("write_document", {"path": "/docs/reply.docx", "paragraphs": ["Approved.", "Dana"], "title": "Re"}).ok
    assert ws.call("read_document", {"path": "/docs/reply.docx"}).data["text"] == "Re\nApproved.\nDana"


def test_predicates_read_xlsx_cells_and_document_text(ws: Workspace) -> None:
    initial = ws.snapshot()
    ws.call("write_sheet", {"path": "/sheets/out.xlsx", "rows": [["total", 42.5]], "sheet": "Sum"})
    ws.call("write_document", {"path": "/docs/reply.docx", "paragraphs": ["Approved for 42.50"]})
    preds = [FileContent(path="/sheets/out.xlsx", sheet_cell={"sheet": "Sum", "cell": "B1", "value": 42.5}),
             FileContent(path="/sheets/out.xlsx", sheet_cell={"sheet": "Sum", "cell": "B1", "value": 40}),
             FileContent(path="/docs/reply.docx", document_text={"contains": "42.50"}),
             FileContent(path="/sheets/q1.csv", sheet_cell={"cell": "B2", "value": "10"}),
             FileContent(path="/sheets/bomb.xlsx", sheet_cell={"cell": "A1", "value": 1})]
    ev = evaluate_states(preds, initial, ws.snapshot(), ws.config.user)
    assert [r.passed for r in ev.results] == [True, False, True, True, False]
    assert "B1 = 42.5" in ev.results[1].observed and "zip bomb" in ev.results[4].observed


def test_media_past_the_size_limit_is_refused_at_load() -> None:
    big = b"\x89PNG" + b"\x00" * (LIMITS.image_bytes + 1)
    with pytest.raises(Exception, match="may be at most 10,485,760 bytes"):
        Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [_bin("/big.png", big)]}})


def test_records_keep_an_image_once_however_often_it_is_read(ws: Workspace) -> None:
    big = png(600, 400, (1, 2, 3))
    import random
    from PIL import Image
    import io

    rnd = random.Random(0)
    im = Image.frombytes("RGB", (120, 120), bytes(rnd.randrange(256) for _ in range(120 * 120 * 3)))
    buf = io.BytesIO()
    im.save(buf, "PNG")
    noisy = buf.getvalue()  # incompressible, so its base64 is long enough to become a blob
    w = Workspace.create(WorkspaceConfig(services=["files"]), {"files": {"files": [_bin("/n.png", noisy), _bin("/b.png", big)]}})
    store, lines = BlobStore(), []
    for _ in range(3):
        ev = w.call("read_media_file", {"path": "/n.png"}).event
        obj, new = store.externalize(ev.to_json())
        lines += [json.dumps(x) for x in [*new, obj]]
    text = "\n".join(lines)
    assert text.count(b64(noisy)) == 1 and text.count('"$blob"') == 3
