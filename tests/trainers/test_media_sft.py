"""SFT export of an episode that looked at an image: the placeholder becomes a `{"type": "image"}` content part and
the example lists the image, in order, as a data URL; text-only episodes are exported as before."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import Any

from media_samples import b64, png

from trainers.export.sft import to_hf
from workspace_sim.record import PolicyInfo
from trainers.training.episode import EpisodeRecorder
from workspace_sim import Workspace, WorkspaceConfig
from workspace_sim.predicates import evaluate, parse_predicates


@dataclass
class ReceiptEnvironment:
    """Look at a receipt image and write its total into /out/total.txt."""

    id: str = "receipt-0"
    capabilities: list[str] = field(default_factory=lambda: ["files.media"])
    tool_names: list[str] = field(default_factory=lambda: ["read_media_file", "write_file"])

    def task_text(self) -> str:
        return "Write the receipt's total into /out/total.txt."

    def build_workspace(self) -> Workspace:
        return Workspace.create(WorkspaceConfig(services=["files"]), {"files": {
            "files": [{"path": "/in/receipt.png", "content": b64(png(20, 10)), "encoding": "base64"}],
            "folders": [{"path": "/out"}]}})

    def evaluate(self, workspace: Workspace, final_answer: str | None = None) -> Any:
        return evaluate(parse_predicates([{"kind": "file", "path": "/out/total.txt", "content": {"contains": "12.50"}}]),
                        workspace, final_answer)


def test_an_image_result_becomes_an_image_part_and_an_images_entry() -> None:
    rec = EpisodeRecorder(ReceiptEnvironment(), "e0", PolicyInfo(name="teacher"))
    rec.turn(None, [("read_media_file", {"path": "/in/receipt.png"})])
    rec.turn(None, [("write_file", {"path": "/out/total.txt", "content": "12.50\n"})])
    rec.turn("The total is 12.50.")
    ex = to_hf(rec.finish("answered"))
    tool_msgs = [m for m in ex["messages"] if m["role"] == "tool"]
    parts = tool_msgs[0]["content"]
    assert isinstance(parts, list) and parts[0] == {"type": "image"}
    assert parts[1]["type"] == "text" and "20x10 px" in parts[1]["text"]
    assert isinstance(tool_msgs[1]["content"], str)  # the write's result stays text
    (url,) = ex["images"]
    assert url.startswith("data:image/png;base64,") and base64.b64decode(url.split(",", 1)[1]) == png(20, 10)
    assert sum(1 for m in ex["messages"] for p in (m.get("content") if isinstance(m.get("content"), list) else [])
               if p == {"type": "image"}) == len(ex["images"])
