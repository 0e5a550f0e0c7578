"""A thin JSON-answer client over the `openai` package: structured output with graceful fallback.

The real `openai` client does the HTTP work, including its bounded retries with exponential
backoff (honouring Retry-After) for 408/409/429/5xx and dropped connections. This module adds what
the generator needs on top: JSON-schema structured output, falling back to `json_object` and then
to a plain request when a server refuses the response_format, and every failure turned into an
`LLMError` whose message says what happened and where.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Sequence

import openai

from .errors import LLMError
from .settings import LLMSettings

ResponseFormat = Literal["json_schema", "json_object", "none"]
FORMATS: tuple[ResponseFormat, ...] = ("json_schema", "json_object", "none")


@dataclass(frozen=True)
class Usage:
    """Tokens a request used, as the server reported them (0 when it did not)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class Completion:
    """The assistant's answer: its text or its refusal, why it stopped, and what it cost."""

    text: str | None
    refusal: str | None
    finish_reason: str | None
    usage: Usage
    response_format: ResponseFormat


class ChatClient:
    """Asks an OpenAI-compatible endpoint for JSON answers; remembers which response_format works."""

    def __init__(self, settings: LLMSettings, response_format: ResponseFormat = "json_schema") -> None:
        """Create the underlying `openai.OpenAI` client from `settings` (no request is made yet)."""
        self.settings = settings
        self._format = FORMATS.index(response_format)
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            # Local servers often need no key, but the client insists on one.
            api_key=settings.api_key.get_secret_value() or "not-needed",
            timeout=settings.timeout,
            max_retries=settings.max_retries,
        )

    @property
    def response_format(self) -> ResponseFormat:
        """The response_format the next request will use."""
        return FORMATS[self._format]

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def __enter__(self) -> "ChatClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def complete_json(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any], name: str,
                      seed: int | None = None) -> Completion:
        """Ask for one JSON object matching `schema` (named `name`); raise LLMError on failure.

        `seed` (else the settings' seed) is passed on for servers that sample reproducibly.
        Tries JSON-schema structured output first; when the server answers 400/422 to a
        response_format it does not support, retries with `json_object`, then with none, and keeps
        the first that works for later calls. Refusals are returned, not raised.
        """
        refused: list[str] = []
        level = self._format
        while True:
            fmt = FORMATS[level]
            try:
                response = self._client.chat.completions.create(**self._request(messages, schema, name, fmt, seed))
            except openai.APIStatusError as exc:
                if exc.status_code in (400, 422) and fmt != "none":
                    refused.append(f"{fmt}: {_status_detail(exc)}")
                    level += 1
                    continue
                raise self._status_error(exc, refused) from None
            except openai.APITimeoutError:
                raise LLMError("timeout", f"no answer from {self.settings.base_url} within "
                               f"{self.settings.timeout:g}s (after {self.settings.max_retries} retries)") from None
            except openai.APIConnectionError as exc:
                raise LLMError("connection", f"cannot reach {self.settings.base_url} (after "
                               f"{self.settings.max_retries} retries): {_cause(exc)}") from None
            except (openai.OpenAIError, ValueError) as exc:
                raise LLMError("bad_response", f"the response from {self.settings.base_url} is not a chat "
                               f"completion: {type(exc).__name__}: {_short(str(exc))}") from None
            # Only a format the server answered is remembered: a 400 for another reason must not
            # downgrade every later request.
            self._format = level
            return self._completion(response, fmt)

    def _request(self, messages: Sequence[dict[str, Any]], schema: dict[str, Any], name: str,
                 fmt: ResponseFormat, seed: int | None) -> dict[str, Any]:
        s = self.settings
        request: dict[str, Any] = {"model": s.model, "messages": list(messages)}
        if fmt == "json_schema":
            # strict=False: pydantic schemas use optional fields and unions that strict mode forbids.
            request["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": name, "schema": schema, "strict": False}}
        elif fmt == "json_object":
            request["response_format"] = {"type": "json_object"}
        request.update(s.sampling(seed))
        return request

    def _completion(self, response: Any, fmt: ResponseFormat) -> Completion:
        where = self.settings.base_url
        choices = getattr(response, "choices", None)
        if not choices:
            raise LLMError("bad_response", f"the response from {where} has no choices")
        choice = choices[0]
        message = getattr(choice, "message", None)
        if message is None:
            raise LLMError("bad_response", f"the first choice from {where} has no message")
        u = getattr(response, "usage", None)
        usage = Usage(int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0))
        text, refusal, reason = message.content, getattr(message, "refusal", None), choice.finish_reason
        if refusal is None and not text and reason == "content_filter":
            refusal = "the server's content filter stopped the answer"
        if refusal is None and not text:
            if getattr(message, "tool_calls", None):
                raise LLMError("tool_calls", f"the model at {where} called tools instead of answering with JSON")
            raise LLMError("empty", f"the model at {where} returned an empty answer (finish_reason={reason})")
        return Completion(text, refusal, reason, usage, fmt)

    def _status_error(self, exc: openai.APIStatusError, refused: list[str]) -> LLMError:
        status = exc.status_code
        detail = _status_detail(exc)
        where = self.settings.base_url
        if status in (401, 403):
            return LLMError("auth", f"{where} rejected the API key (HTTP {status}): {detail}; set "
                            "--api-key or COWORKENV_OPENAI_API_KEY", status)
        if status == 404:
            return LLMError("not_found", f"{where} has no chat completions for model {self.settings.model!r} "
                            f"(HTTP 404): {detail}", status)
        retried = f" after {self.settings.max_retries} retries" if status in (408, 409, 429) or status >= 500 else ""
        tried = f" (response formats refused first: {'; '.join(refused)})" if refused else ""
        return LLMError("http", f"HTTP {status} from {where}{retried}: {detail}{tried}", status)


def _status_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            return _short(err["message"])
    return _short(exc.message)


def _cause(exc: BaseException) -> str:
    inner = exc.__cause__ or exc.__context__
    return _short(f"{type(inner).__name__}: {inner}" if inner else str(exc))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
