"""`coworkenv synth --generator llm --profile`: a real OpenAI-compatible server (tests/scripted_openai.py) rewords
each drawn request; a rewrite that loses a token the task turns on keeps the procedural wording."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from coworkenv.cli import app
from scripted_openai import Message, RecordedRequest, ScriptedOpenAI
from synth import load_spec
from synth.validate import validate_spec

runner = CliRunner()


def _reword(req: RecordedRequest) -> Message:
    text = req.messages[-1]["content"].split("Request:\n", 1)[1]
    return Message(json.dumps({"request": "Could you take care of this when you get a moment? " + text}))


def _lose_everything(req: RecordedRequest) -> Message:
    return Message(json.dumps({"request": "Please handle the usual thing."}))


def test_llm_rewords_a_profile_mix_and_keeps_it_valid(tmp_path: Path) -> None:
    with ScriptedOpenAI([_reword, _reword, _lose_everything]) as server:
        r = runner.invoke(app, ["synth", "--generator", "llm", "--profile", "claw-eval", "-n", "3", "-s", "4",
                                "-o", str(tmp_path), "--base-url", server.base_url, "--model", "m", "--json"])
        assert r.exit_code == 0, r.output
        asked = [q for q in server.requests if q.path.endswith("/chat/completions")]
    assert len(asked) == 3 and "Keep these exactly" in asked[0].messages[-1]["content"]
    specs = [load_spec(tmp_path / n) for n in json.loads(r.output.strip().splitlines()[-1])["written"]]
    worded = [s for s in specs if s.metadata.get("wording") == "llm"]
    assert len(worded) == 2 and all(s.request.startswith("Could you take care") for s in worded)
    assert all(s.metadata["procedural_request"] in s.request for s in worded)
    kept = [s for s in specs if s.metadata.get("wording") != "llm"]
    assert len(kept) == 1 and kept[0].request != "Please handle the usual thing."
    assert all(validate_spec(s).ok for s in specs)
