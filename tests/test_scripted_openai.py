"""The scripted OpenAI-compatible server, exercised through the real `openai` client over real HTTP."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import openai
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from scripted_openai import (
    Body, Disconnect, HTTPError, InvalidBody, Message, RecordedRequest, ScriptedOpenAI, ToolCall, ToolCalls,
    scripted_openai,  # noqa: F401 - the fixture
)

USER = [{"role": "user", "content": "hello"}]


def client(server: ScriptedOpenAI, retries: int = 0, key: str = "test-key") -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=key, max_retries=retries, timeout=10)


def test_models_and_message_round_trip(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(Message("hi there"))
    c = client(scripted_openai)
    assert [m.id for m in c.models.list()] == ["scripted-model"]
    r = c.chat.completions.create(model="m1", messages=USER, temperature=0.5)
    assert r.choices[0].message.content == "hi there"
    assert r.choices[0].finish_reason == "stop"
    assert r.model == "m1"
    assert r.usage is not None and r.usage.completion_tokens > 0 and r.usage.prompt_tokens > 0
    sent = scripted_openai.completion_requests[-1]
    assert sent.body["temperature"] == 0.5 and sent.messages == USER
    assert sent.headers["authorization"] == "Bearer test-key"


def test_request_records_tools_tool_choice_and_response_format(scripted_openai: ScriptedOpenAI) -> None:
    tool = {"type": "function", "function": {"name": "f", "description": "d",
                                             "parameters": {"type": "object", "properties": {}}}}
    fmt = {"type": "json_schema", "json_schema": {"name": "s", "schema": {"type": "object"}, "strict": False}}
    scripted_openai.push(Message("{}"))
    client(scripted_openai).chat.completions.create(model="m", messages=USER, tools=[tool], tool_choice="required",
                                                    response_format=fmt)
    req = scripted_openai.completion_requests[0]
    assert req.tools == [tool] and req.tool_choice == "required" and req.response_format == fmt


def test_tool_calls_keep_malformed_arguments_verbatim(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(ToolCalls([ToolCall("read_text_file", '{"path": "/a'), ToolCall("list_directory", "{}", "c9")]))
    msg = client(scripted_openai).chat.completions.create(model="m", messages=USER).choices[0].message
    assert msg.tool_calls is not None and len(msg.tool_calls) == 2
    assert msg.tool_calls[0].function.name == "read_text_file"
    assert msg.tool_calls[0].function.arguments == '{"path": "/a'
    assert msg.tool_calls[1].id == "c9"
    assert msg.content is None


def test_refusal_is_delivered(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(Message(refusal="I can't help with that."))
    msg = client(scripted_openai).chat.completions.create(model="m", messages=USER).choices[0].message
    assert msg.refusal == "I can't help with that." and msg.content is None


def test_rate_limit_with_retry_after_is_retried_by_the_client(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(HTTPError(429, "slow down", retry_after=0.05), HTTPError(503, retry_after_ms=20), Message("ok"))
    start = time.monotonic()
    r = client(scripted_openai, retries=2).chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == "ok"
    assert time.monotonic() - start >= 0.07  # the client waited as told
    reqs = scripted_openai.completion_requests
    assert len(reqs) == 3
    assert [r.headers.get("x-stainless-retry-count") for r in reqs] == ["0", "1", "2"]


def test_http_error_without_retries_reaches_the_caller(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(HTTPError(500, "boom"))
    with pytest.raises(openai.InternalServerError) as info:
        client(scripted_openai).chat.completions.create(model="m", messages=USER)
    assert info.value.status_code == 500 and "boom" in str(info.value)


def test_invalid_body_and_disconnect(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(InvalidBody(), Disconnect())
    c = client(scripted_openai)
    with pytest.raises(ValueError):  # the client cannot decode the truncated JSON body
        c.chat.completions.create(model="m", messages=USER)
    with pytest.raises(openai.APIConnectionError):
        c.chat.completions.create(model="m", messages=USER)


def test_disconnect_is_retried_by_the_client(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(Disconnect(), Message("after the drop"))
    r = client(scripted_openai, retries=1).chat.completions.create(model="m", messages=USER)
    assert r.choices[0].message.content == "after the drop"


def test_raw_json_body(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.push(Body({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []}))
    r = client(scripted_openai).chat.completions.create(model="m", messages=USER)
    assert r.choices == []


def test_function_responder_sees_the_request(scripted_openai: ScriptedOpenAI) -> None:
    def echo(req: RecordedRequest) -> Message:
        return Message(f"you said {req.messages[-1]['content']} to {req.body['model']}")

    scripted_openai.push(echo, echo)
    c = client(scripted_openai)
    assert c.chat.completions.create(model="a", messages=USER).choices[0].message.content == "you said hello to a"
    again = [{"role": "user", "content": "bye"}]
    assert c.chat.completions.create(model="b", messages=again).choices[0].message.content == "you said bye to b"


def test_exhausted_script_says_so(scripted_openai: ScriptedOpenAI) -> None:
    with pytest.raises(openai.BadRequestError, match="script exhausted"):
        client(scripted_openai).chat.completions.create(model="m", messages=USER)


def test_default_answers_after_the_script() -> None:
    with ScriptedOpenAI([Message("first")], default=Message("again")) as server:
        c = client(server)
        texts = [c.chat.completions.create(model="m", messages=USER).choices[0].message.content for _ in range(3)]
    assert texts == ["first", "again", "again"]


def test_rejected_response_format_does_not_consume_the_script() -> None:
    with ScriptedOpenAI([Message("{}")], reject_response_formats={"json_schema"}) as server:
        c = client(server)
        fmt = {"type": "json_schema", "json_schema": {"name": "s", "schema": {}}}
        with pytest.raises(openai.BadRequestError, match="json_schema"):
            c.chat.completions.create(model="m", messages=USER, response_format=fmt)
        assert server.remaining == 1
        r = c.chat.completions.create(model="m", messages=USER, response_format={"type": "json_object"})
        assert r.choices[0].message.content == "{}" and server.remaining == 0


def test_api_key_is_enforced_when_configured() -> None:
    with ScriptedOpenAI([Message("ok")], api_key="right") as server:
        with pytest.raises(openai.AuthenticationError):
            client(server, key="wrong").chat.completions.create(model="m", messages=USER)
        assert client(server, key="right").chat.completions.create(model="m", messages=USER).choices[0].message.content == "ok"


def test_malformed_requests_and_unknown_routes_get_clear_errors(scripted_openai: ScriptedOpenAI) -> None:
    base = scripted_openai.base_url
    r = httpx.post(f"{base}/chat/completions", content=b"not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "messages" in r.json()["error"]["message"]
    r = httpx.post(f"{base}/embeddings", json={"input": "x"})
    assert r.status_code == 404 and "no route" in r.json()["error"]["message"]
    assert scripted_openai.requests[0].raw == b"not json" and scripted_openai.requests[0].body is None


def test_closed_server_releases_its_port() -> None:
    server = ScriptedOpenAI().start()
    url = server.base_url
    server.close()
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{url}/models", timeout=2)


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ScriptedOpenAI]:
    with ScriptedOpenAI() as server:
        yield server


_clients: dict[int, openai.OpenAI] = {}


def shared_client(server: ScriptedOpenAI) -> openai.OpenAI:
    return _clients.setdefault(server.port, client(server))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.text(max_size=200), args=st.text(max_size=100))
def test_any_text_arrives_unchanged(shared_server: ScriptedOpenAI, content: str, args: str) -> None:
    shared_server.push(Message(content), ToolCalls([ToolCall("f", args)]))
    c = shared_client(shared_server)
    msgs = [{"role": "user", "content": content}]
    assert c.chat.completions.create(model="m", messages=msgs).choices[0].message.content == content
    assert json.loads(shared_server.completion_requests[-1].raw)["messages"] == msgs
    call = c.chat.completions.create(model="m", messages=msgs).choices[0].message.tool_calls
    assert call is not None and call[0].function.arguments == args
