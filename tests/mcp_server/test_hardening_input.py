"""One input-decoding path: lone surrogates, raw invalid UTF-8, NaN/Infinity and deep nesting are refused
with the request's id on every HTTP entry (fast path on and off, handshake-era sessions), the admin API
and the direct runner; the episode's end still evaluates and records; record writing never fails."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_server.demo import environment
from mcp_server.http import build_app
from mcp_server.hub import EpisodeHub
from mcp_server.jsoncheck import JsonProblem, decode_arguments, parse_client_json, safe_dumps
from workspace_sim.record import read_record_file

TOKEN = "input-admin-token-0123456789"
VERSION = "2026-07-28"
ENVELOPE = {"io.modelcontextprotocol/protocolVersion": VERSION, "io.modelcontextprotocol/clientInfo":
            {"name": "test", "version": "0"}, "io.modelcontextprotocol/clientCapabilities": {}}
AUTH = {"Authorization": f"Bearer {TOKEN}"}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream",
           "mcp-protocol-version": VERSION, "mcp-method": "tools/call", "mcp-name": "read_text_file"}


def body(rid: int, path_json: bytes) -> bytes:
    return (b'{"jsonrpc":"2.0","id":' + str(rid).encode() + b',"method":"tools/call","params":{"name":"read_text_file",'
            b'"arguments":{"path":' + path_json + b'},"_meta":' + json.dumps(ENVELOPE).encode() + b"}}")


HOSTILE = [
    (b'"/reports/q1.csv \\ud800"', "lone UTF-16 surrogate"),
    (b'"/reports/q1.csv \xed\xa0\x80"', "not UTF-8"),
    (b"NaN", "NaN"),
    (b"-Infinity", "Infinity"),
    (b"[" * 100 + b"]" * 100, "nested deeper"),
]


@pytest.mark.parametrize("fast", [True, False])
def test_hostile_sessionless_calls_are_refused_with_their_id_and_the_end_still_records(tmp_path: Path,
                                                                                     fast: bool) -> None:
    async def main() -> None:
        hub = EpisodeHub(environment(), None, tmp_path, fast_path=fast)
        async with hub.run():
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=build_app(hub, TOKEN)),
                                          base_url="http://127.0.0.1:1") as c:
                assert (await c.post("/admin/episodes", json={"episode_id": "e1"}, headers=AUTH)).status_code == 201
                for i, (arg, why) in enumerate(HOSTILE, start=10):
                    r = await c.post("/episodes/e1/mcp", content=body(i, arg), headers=HEADERS)
                    assert r.status_code == 400, r.text
                    answer = r.json()
                    assert answer["id"] == i and answer["error"]["code"] == -32600, answer
                    assert why in answer["error"]["message"]
                ok = await c.post("/episodes/e1/mcp", content=body(99, b'"/reports/q1.csv"'), headers=HEADERS)
                assert ok.status_code == 200 and ok.json()["id"] == 99
                end = await c.post("/admin/episodes/e1/end", json={"final_answer": "done \u2713"}, headers=AUTH)
                assert end.status_code == 200, end.text
                assert (await c.get("/admin/episodes/e1", headers=AUTH)).status_code == 410
        rec = read_record_file(next(tmp_path.glob("*.jsonl")))
        assert rec.segments[-1].final is not None and len(rec.segments[-1].events) == 1

    anyio.run(main)


def test_the_admin_api_refuses_nan_and_surrogates_with_400(tmp_path: Path) -> None:
    async def main() -> None:
        hub = EpisodeHub(environment(), None, tmp_path)
        async with hub.run():
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=build_app(hub, TOKEN)),
                                          base_url="http://127.0.0.1:1") as c:
                await c.post("/admin/episodes", json={"episode_id": "e2"}, headers=AUTH)
                for raw in (b'{"seconds": NaN}', b'{"seconds": Infinity}'):
                    r = await c.post("/admin/episodes/e2/clock", content=raw, headers=AUTH)
                    assert r.status_code == 400 and "NaN or Infinity" in r.text, r.text
                r = await c.post("/admin/episodes/e2/end", content=b'{"final_answer": "x \\udc00"}', headers=AUTH)
                assert r.status_code == 400 and "surrogate" in r.text
                r = await c.post("/admin/episodes/e2/end", content=b'{"final_answer": "x"}', headers=AUTH)
                assert r.status_code == 200, r.text

    anyio.run(main)


def test_the_runner_decodes_arguments_on_the_same_path() -> None:
    for text in ('{"query": "invoice \\ud800"}', '{"n": NaN}', "[" * 100 + "]" * 100):
        with pytest.raises(JsonProblem):
            decode_arguments(text)
    assert decode_arguments("  ") == {}
    assert decode_arguments('{"query": "invoice"}') == {"query": "invoice"}


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.floats() | st.integers() | st.text(alphabet=st.characters()),
                    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4),
                    max_leaves=20))
def test_safe_dumps_always_writes_standard_utf8_json(value: Any) -> None:
    text = safe_dumps(value)
    text.encode("utf-8")  # never a lone surrogate
    back = parse_client_json(text.encode("utf-8"), max_depth=10_000)  # never NaN or Infinity
    if "NaN" not in text and "Infinity" not in text and "\\\\ud" not in text.lower():
        assert back == value or (isinstance(value, float) and math.isnan(value))


def test_a_policy_sending_a_surrogate_or_nan_gets_a_tool_error_and_every_record_is_written(tmp_path: Path) -> None:
    from episode_helpers import Scripted, multi_turn_spec
    from trainers.episodes.runner import run_episode
    from trainers.episodes.turns import AgentTurn, PolicyCall
    from workspace_sim.record import RecordStream, read_records, write_records

    policy = Scripted([
        AgentTurn(calls=[PolicyCall("list_directory", '{"path": "/drafts \\ud800"}', "c1"),
                         PolicyCall("list_directory", '{"path": "/drafts", "depth": NaN}', "c2")]),
        AgentTurn(content="Stopping here \ud800."),  # a lone surrogate in the final answer itself
    ])
    rec = run_episode(multi_turn_spec(), policy)
    tool_msgs = [m for m in rec.final.messages if m.role == "tool"]
    assert "lone UTF-16 surrogate" in tool_msgs[0].content and "NaN" in tool_msgs[1].content
    good = run_episode(multi_turn_spec(), Scripted([AgentTurn(content="Done.")]), seed=1)
    stream = RecordStream(tmp_path / "streamed.jsonl")
    stream.add(rec)  # the bad one first: the good one after it is still written
    stream.add(good)
    stream.close()
    out = write_records([rec, good], tmp_path / "batch.jsonl")
    for path in (tmp_path / "streamed.jsonl", out):
        text = path.read_text(encoding="utf-8")
        assert "NaN," not in text and "\\\\ud800" in text  # escaped as text, not lost
        back = read_records(path)
        assert [r.episode_id for r in back] == [rec.episode_id, good.episode_id] and all(r.complete for r in back)


CALL = {"name": "read_text_file", "arguments": {"path": "/reports/q1.csv"}, "_meta": ENVELOPE}
BAD_ENVELOPES = [  # (request, JSON-RPC code, words of the message)
    ({"jsonrpc": "2.0", "id": 21, "method": "tools/call", "params": ["read_text_file", {"path": "/x"}]}, -32602,
     "params must be an object of named parameters, got a list"),
    ({"jsonrpc": "2.0", "id": "l-22", "method": "tools/list", "params": [1]}, -32602, "got a list"),
    ({"jsonrpc": "2.0", "id": 23, "method": "tools/call", "params": "read_text_file"}, -32602, "got a string"),
    ({"jsonrpc": "1.0", "id": 24, "method": "tools/call", "params": CALL}, -32600, '"jsonrpc" must be "2.0" (got "1.0")'),
    ({"id": "v-25", "method": "tools/call", "params": CALL}, -32600, '"jsonrpc" must be "2.0" (it is missing)'),
    ({"jsonrpc": "2.0", "id": 26, "method": 7, "params": CALL}, -32600, "method must be a string"),
]


@pytest.mark.parametrize("fast", [True, False])
def test_a_wrong_envelope_is_answered_with_its_code_and_the_requests_id(tmp_path: Path, fast: bool) -> None:
    """Issue 37 finding 10 (c): params given as a list answered -32600 (not -32602, invalid params) and
    `"jsonrpc": "1.0"` answered -32600 with a null id; now both carry the request's id, over the fast path,
    the SDK path and a request without the protocol-version header alike; the episode goes on."""
    plain = {"content-type": "application/json", "accept": "application/json, text/event-stream"}

    async def main() -> None:
        hub = EpisodeHub(environment(), None, tmp_path, fast_path=fast)
        async with hub.run():
            async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app=build_app(hub, TOKEN)),
                                          base_url="http://127.0.0.1:1") as c:
                assert (await c.post("/admin/episodes", json={"episode_id": "e1"}, headers=AUTH)).status_code == 201
                for headers in (HEADERS, plain):
                    for request, code, words in BAD_ENVELOPES:
                        r = await c.post("/episodes/e1/mcp", content=json.dumps(request), headers=headers)
                        assert r.status_code == 400, r.text
                        answer = r.json()
                        assert answer["id"] == request["id"] and answer["error"]["code"] == code, answer
                        assert words in answer["error"]["message"], answer
                ok = await c.post("/episodes/e1/mcp", content=body(99, b'"/reports/q1.csv"'), headers=HEADERS)
                assert ok.status_code == 200 and ok.json()["id"] == 99 and "result" in ok.json()
                assert (await c.post("/admin/episodes/e1/end", json={"final_answer": "done"},
                                     headers=AUTH)).status_code == 200
        rec = read_record_file(next(tmp_path.glob("*.jsonl")))
        assert len(rec.segments[-1].events) == 1  # only the good call reached the workspace

    anyio.run(main)
