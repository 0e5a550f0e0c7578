"""Chat completions with tool calling against any OpenAI-compatible endpoint, for policies and user simulators.

The real `openai` client does the HTTP work, including its bounded retries with exponential
backoff (honouring Retry-After) for 408/409/429/5xx and dropped connections. On top of that,
answers the client cannot use (a body that is not a chat completion, no choices) are retried here
with the same bound, and every failure that remains becomes an `LLMError` whose message names the
endpoint and what went wrong. Settings are the project's `LLMSettings` (explicit values, then
COWORKENV_OPENAI_* environment variables).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import openai

from synth.llm.errors import LLMError
from synth.llm.settings import LLMSettings

__all__ = ["ChatEndpoint", "LLMError", "LLMSettings"]


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ChatEndpoint:
    """One OpenAI-compatible endpoint and model; `complete` returns the first choice or raises LLMError."""

    def __init__(self, settings: LLMSettings, backoff: float = 0.5) -> None:
        self.settings = settings
        self.backoff = backoff
        self._client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key.get_secret_value() or
                                     "not-needed", timeout=settings.timeout, max_retries=settings.max_retries)

    def close(self) -> None:
        """Close the HTTP connections."""
        self._client.close()

    def preflight(self) -> None:
        """Check once, before a batch, that the endpoint answers and serves the model; LLMError says why not.

        Asks `GET /models` without retries: a refused connection, a rejected key or a model the
        endpoint does not list fails here with the reason, instead of every episode failing the same
        way. An endpoint without a model list (404/405) is given the benefit of the doubt.
        """
        s = self.settings
        where = s.base_url
        try:
            listed = [m.id for m in self._client.with_options(max_retries=0).models.list()]
        except openai.APIStatusError as e:
            if e.status_code in (404, 405, 501):
                return
            raise _status_error(e, where, s) from None
        except openai.APITimeoutError:
            raise LLMError("timeout", f"no answer from {where} within {s.timeout:g}s") from None
        except openai.APIConnectionError as e:
            raise LLMError("connection", f"cannot reach {where}: {_short(e.__cause__ or e)}") from None
        except (openai.OpenAIError, ValueError) as e:
            raise LLMError("bad_response", f"{where}/models did not answer like an OpenAI endpoint: "
                           f"{type(e).__name__}: {_short(e)}") from None
        if listed and s.model not in listed:
            shown = ", ".join(sorted(listed)[:10]) + (" ..." if len(listed) > 10 else "")
            raise LLMError("not_found", f"{where} does not serve model {s.model!r}; it serves: {shown}")

    def complete(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]] | None = None,
                 seed: int | None = None, **extra: Any) -> Any:
        """One chat completion (the first choice, with `.usage` of the response attached as `choice.usage`).

        `tools` are OpenAI function schemas (parallel tool calls are allowed when given); `seed`
        overrides the settings' seed; `extra` goes into the request as is (e.g. logprobs=True).
        """
        s = self.settings
        request: dict[str, Any] = {"model": s.model, "messages": list(messages), **extra}
        if tools:
            request["tools"] = list(tools)
            request["parallel_tool_calls"] = True
        request.update(s.sampling(seed))
        where = s.base_url
        last = ""
        for attempt in range(s.max_retries + 1):
            if attempt:
                time.sleep(min(self.backoff * 2 ** (attempt - 1), 8.0))
            try:
                response = self._client.chat.completions.create(**request)
            except openai.APIStatusError as e:
                raise _status_error(e, where, s) from None
            except openai.APITimeoutError:
                raise LLMError("timeout", f"no answer from {where} within {s.timeout:g}s (after {s.max_retries} "
                               "retries)") from None
            except openai.APIConnectionError as e:
                raise LLMError("connection", f"cannot reach {where} (after {s.max_retries} retries): "
                               f"{_short(e.__cause__ or e)}") from None
            except (openai.OpenAIError, ValueError) as e:  # a 200 whose body is not JSON: worth another try
                last = f"{type(e).__name__}: {_short(e)}"
                continue
            choices = getattr(response, "choices", None)
            if not choices or getattr(choices[0], "message", None) is None:
                last = "the response has no choices with a message"
                continue
            choice = choices[0]
            try:
                choice.usage = getattr(response, "usage", None)
            except (AttributeError, ValueError):  # pragma: no cover - frozen response models
                pass
            return choice
        raise LLMError("bad_response", f"the response from {where} is not a chat completion (after "
                       f"{s.max_retries + 1} tries): {last}")


def _status_error(e: openai.APIStatusError, where: str, s: LLMSettings) -> LLMError:
    status = e.status_code
    body = e.body
    detail = body.get("error", body).get("message") if isinstance(body, dict) and isinstance(
        body.get("error", body), dict) else None
    detail = _short(detail or e.message)
    if status in (401, 403):
        return LLMError("auth", f"{where} rejected the API key (HTTP {status}): {detail}", status)
    if status == 404:
        return LLMError("not_found", f"{where} has no chat completions for model {s.model!r} (HTTP 404): {detail}",
                        status)
    retried = f" after {s.max_retries} retries" if status in (408, 409, 429) or status >= 500 else ""
    return LLMError("http", f"HTTP {status} from {where}{retried}: {detail}", status)
