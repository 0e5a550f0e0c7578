"""The `openai` policy: any OpenAI-compatible chat-completions endpoint with tool calling.

The transcript (Hugging Face format, dict arguments) is sent in OpenAI's format (arguments as
JSON text, every call with an id); the tools are the registry's OpenAI schemas in their strict
form (`strict: true`, every argument required, `null` for an optional one left out; see
`workspace_sim.core.registry.strict_schema`), which OpenAI models decode exactly and other
OpenAI-compatible servers read as ordinary schemas; parallel tool calls are allowed. Images a tool
result returned are sent as `image_url` parts (data URLs), by default in a user message after the turn's
tool results, since OpenAI's tool messages hold text only; audio clips as `input_audio` parts when asked. Tool calls come back with their raw argument
text, which the runner parses: malformed JSON or an unknown tool goes back to the model as a tool error. HTTP errors are retried
with backoff by the client; what still fails ends the episode with `policy_error`, never a crash.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from workspace_sim.core.registry import strict_openai_tool

from workspace_sim.record import PolicyInfo
from ..llm import ChatEndpoint, LLMError, LLMSettings
from ..turns import AgentTurn, EpisodeContext, PolicyCall, TurnTokens

_TOKEN_ID = re.compile(r"^token_id:(\d+)$")


ImageMode = Literal["user", "tool", "off"]
IMAGE_MODES = ("user", "tool", "off")
IMAGES_FOLLOW = "The images the tool results above returned, in order:"
MEDIA_FOLLOW = "The images and audio clips the tool results above returned, in order:"
IMAGE_BELOW = "[image {n}: attached in the next user message]"
AUDIO_BELOW = "[audio {n}: attached in the next user message]"
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav", "audio/mpeg": "mp3", "audio/mp3": "mp3"}


def _image_url(part: dict[str, Any]) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": part["image"]}}


def _input_audio(part: dict[str, Any]) -> dict[str, Any]:
    head, _, data = part["audio"].partition(";base64,")
    return {"type": "input_audio", "input_audio": {"data": data, "format": _AUDIO_FORMATS.get(head[5:], "wav")}}


def _sent(p: dict[str, Any], images: ImageMode, audio: ImageMode) -> tuple[ImageMode, dict[str, Any]] | None:
    """How a media part is sent (its mode and OpenAI part), or None when it is shown as text."""
    if p.get("type") == "image" and isinstance(p.get("image"), str) and images != "off":
        return images, _image_url(p)
    if p.get("type") == "audio" and isinstance(p.get("audio"), str) and audio != "off":
        return audio, _input_audio(p)
    return None


def _tool_content(content: list[dict[str, Any]], images: ImageMode, seen: int, audio: ImageMode = "off"
                  ) -> tuple[Any, list[dict[str, Any]]]:
    """A tool message's parts as OpenAI content, and the media parts that must follow in a user message."""
    sent = [_sent(p, images, audio) for p in content]
    follow: list[dict[str, Any]] = []

    def below(p: dict[str, Any], part: dict[str, Any]) -> str:
        follow.append(part)
        return (IMAGE_BELOW if p["type"] == "image" else AUDIO_BELOW).format(n=seen + len(follow))

    if images == "tool" or any(x and x[0] == "tool" for x in sent):  # parts kept in the tool message
        return [x[1] if x and x[0] == "tool" else {"type": "text", "text": below(p, x[1]) if x else p.get("text", "")}
                for p, x in zip(content, sent)], follow
    text = []
    for p, x in zip(content, sent):
        if x:
            text.append(below(p, x[1]))
        elif p.get("type") == "image" and images == "off":
            text.append("[image not shown: images are off]")
        elif p.get("type") in ("text", "audio"):
            text.append(p.get("text", ""))
    return "\n".join(text), follow


def to_openai_messages(messages: list[dict[str, Any]], images: ImageMode = "user", audio: ImageMode = "off"
                       ) -> list[dict[str, Any]]:
    """HF chat messages as OpenAI chat messages: tool-call arguments as JSON text, ids filled in.

    A tool message whose content is a list of parts with images (what a policy that `sees_images` is shown)
    becomes, with `images` "user" (the default, what OpenAI accepts: a tool message holds text only), its text
    with a note per image, and the images follow as `image_url` parts of one user message after that turn's
    tool results; with "tool" the image parts stay in the tool message (servers such as vLLM read them); with
    "off" each image is a note and nothing is sent. Audio parts (what a policy that `hears_audio` is shown)
    follow `audio` the same way as `input_audio` parts (wav or mp3); "off", the default, shows the clip's
    placeholder text.
    """
    out: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        head = IMAGES_FOLLOW if all(p["type"] == "image_url" for p in pending) else MEDIA_FOLLOW
        out.append({"role": "user", "content": [{"type": "text", "text": head}, *pending]})

    for i, m in enumerate(messages):
        if pending and m["role"] != "tool":
            flush()
            pending = []  # the notes number the media of the user message that follows
        content = m.get("content")
        if m["role"] == "tool" and isinstance(content, list):
            content, follow = _tool_content(content, images, len(pending), audio)
            pending += follow
        msg: dict[str, Any] = {"role": m["role"], "content": content}
        if m.get("tool_calls"):
            msg["tool_calls"] = [
                {"id": c.get("id") or f"call_{i}_{j}", "type": "function",
                 "function": {"name": c["function"]["name"],
                              "arguments": json.dumps(c["function"].get("arguments") or {}, ensure_ascii=False)}}
                for j, c in enumerate(m["tool_calls"])]
        if m["role"] == "tool":
            msg["tool_call_id"] = m.get("tool_call_id") or ""
        out.append(msg)
    if pending:
        flush()
    return out


class OpenAIPolicy:
    """A model behind an OpenAI-compatible endpoint; settings from `LLMSettings` (model, URL, key, temperature).

    `images` says how the images tool results returned are sent (`to_openai_messages`; "user" by default),
    `audio` how their audio clips are ("off" by default: the placeholder text; "user" or "tool" for an
    audio-capable model, as `input_audio` parts).
    With `logprobs`, the request asks for log-probs; servers that return token ids as
    `token_id:N` strings (vLLM's `return_tokens_as_token_ids`) get them recorded per turn.
    """

    def __init__(self, settings: LLMSettings, logprobs: bool = False, backoff: float = 0.5,
                 images: ImageMode = "user", audio: ImageMode = "off") -> None:
        for name, mode in (("images", images), ("audio", audio)):
            if mode not in IMAGE_MODES:
                raise ValueError(f"{name} must be one of {', '.join(IMAGE_MODES)}, got {mode!r}")
        self.settings = settings
        self.images: ImageMode = images
        self.audio: ImageMode = audio
        self.sees_images = images != "off"
        self.hears_audio = audio != "off"
        self.logprobs = logprobs
        self.endpoint = ChatEndpoint(settings, backoff=backoff)
        self._seed: int | None = None
        self._strict: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None  # (offered, strict form)

    def strict_tools(self, tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The offered tools in strict form (converted once per episode's tool list)."""
        if self._strict is None or self._strict[0] != tools:
            self._strict = (tools, [strict_openai_tool(t) for t in tools])
        return self._strict[1]

    def preflight(self) -> None:
        """Check the endpoint answers and serves the model before a batch (LLMError says why not)."""
        self.endpoint.preflight()

    def info(self) -> PolicyInfo:
        """`openai:MODEL` with the endpoint and sampling settings (never the key)."""
        s = self.settings
        return PolicyInfo(name=f"openai:{s.model}", settings={
            "base_url": s.base_url, "model": s.model, "temperature": s.temperature, "max_tokens": s.max_tokens,
            "seed": s.seed, "logprobs": self.logprobs, "images": self.images,
            **({"audio": self.audio} if self.hears_audio else {})})

    def start(self, context: EpisodeContext) -> None:
        """Use the episode's seed unless the settings fix one."""
        self._seed = self.settings.seed if self.settings.seed is not None else context.seed

    def act(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> AgentTurn:
        """One completion turned into text and tool calls (raw argument text kept for the runner to check)."""
        extra = {"logprobs": True} if self.logprobs else {}
        try:
            choice = self.endpoint.complete(to_openai_messages(messages, self.images, self.audio), self.strict_tools(tools), seed=self._seed, **extra)
        except LLMError as e:
            return AgentTurn(error=f"the model endpoint failed: {e.message}")
        msg = choice.message
        calls = []
        for c in getattr(msg, "tool_calls", None) or []:
            fn = getattr(c, "function", None)
            if fn is None:  # a custom (non-function) tool call: answer it as unknown
                calls.append(PolicyCall(str(getattr(c, "type", "custom")), "{}", getattr(c, "id", None)))
                continue
            calls.append(PolicyCall(fn.name or "", fn.arguments if fn.arguments is not None else "{}", c.id))
        content = msg.content if msg.content is not None else getattr(msg, "refusal", None)
        return AgentTurn(content=content, calls=calls, tokens=self._tokens(choice),
                         truncated=choice.finish_reason == "length" and not calls)

    def _tokens(self, choice: Any) -> TurnTokens | None:
        lp = getattr(choice, "logprobs", None)
        content = getattr(lp, "content", None) if lp is not None else None
        if not content:
            return None
        ids = []
        for t in content:
            m = _TOKEN_ID.match(getattr(t, "token", "") or "")
            if m is None:
                return None  # log-probs without token ids cannot be aligned to a tokenizer
            ids.append(int(m.group(1)))
        return TurnTokens(completion_ids=ids, logprobs=[float(t.logprob) for t in content])
