"""The images and audio clips an episode's tool results showed, as content parts of the transcript's tool messages.

A tool result that carries media (`read_media_file`, a scanned PDF page, a voicemail) reaches a text channel as a
placeholder naming the file and its hash; the record's call events hold the bytes. `with_media_parts` turns each
placeholder in a tool message into a content part and lists the media in order as data URLs: the SFT export's
format, as a Qwen2-VL-style processor and TRL's vision SFT read it (`{"type": "image"}` parts and `images`), and as
an audio model's chat template reads it (`{"type": "audio", "text": <placeholder>}` parts and `audios`, the
Qwen2-Audio layout). An audio part keeps its placeholder as `text`, so a template that knows no audio (a vision or
text student's) still writes what a text channel shows. `policy_view` puts each item into its part (`"image"` or
`"audio"`: a data URL), the live transcript a policy that `sees_images` or `hears_audio` is shown.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from workspace_sim.media import MediaPart, media_parts, placeholder

KINDS: tuple[str, ...] = ("image", "audio")


@dataclass
class MediaLists:
    """The data URLs of the media parts of a transcript, in order, by kind."""

    images: list[str] = field(default_factory=list)
    audios: list[str] = field(default_factory=list)

    def of(self, kind: str) -> list[str]:
        """The list for `kind` ("image" or "audio")."""
        return self.images if kind == "image" else self.audios


def call_media(events: Iterable[Any], kinds: Sequence[str] = KINDS) -> dict[str, MediaPart]:
    """The media of `kinds` the episode's successful calls returned (record event lines), by the placeholder
    that stands for each in the transcript."""
    return {placeholder(p): p for e in events if e.kind == "call" and e.ok
            for p in media_parts(e.result) if p.kind in kinds}


def call_images(events: Iterable[Any]) -> dict[str, MediaPart]:
    """The images the episode's successful calls returned, by their placeholders (`call_media` for images)."""
    return call_media(events, ("image",))


def _part(p: MediaPart, key: str) -> dict[str, Any]:
    return {"type": "image"} if p.kind == "image" else {"type": "audio", "text": key}


def with_media_parts(messages: list[dict[str, Any]], media: dict[str, MediaPart]
                     ) -> tuple[list[dict[str, Any]], MediaLists]:
    """The messages with each tool result's media placeholders turned into content parts (`{"type": "image"}`,
    `{"type": "audio", "text": <placeholder>}`; the text around them kept as text parts), and the media in order
    as data URLs by kind."""
    found = MediaLists()
    if not media:
        return messages, found
    out = []
    for m in messages:
        text = m.get("content")
        hits = [k for k in media if isinstance(text, str) and k in text] if m.get("role") == "tool" else []
        if not hits:
            out.append(m)
            continue
        parts: list[dict[str, Any]] = []
        rest = text
        while True:
            at = [(rest.find(k), k) for k in hits if k in rest]
            if not at:
                break
            i, k = min(at)
            if rest[:i].strip():
                parts.append({"type": "text", "text": rest[:i]})
            p = media[k]
            parts.append(_part(p, k))
            found.of(p.kind).append(f"data:{p.mime_type};base64,{p.data}")
            rest = rest[i + len(k):]
        if rest.strip():
            parts.append({"type": "text", "text": rest})
        out.append({**m, "content": parts})
    return out, found


def with_image_parts(messages: list[dict[str, Any]], images: dict[str, MediaPart]
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    """`with_media_parts` for images alone: the messages with image parts, and the images' data URLs in order."""
    out, found = with_media_parts(messages, {k: p for k, p in images.items() if p.kind == "image"})
    return out, found.images


def embed_media(messages: list[dict[str, Any]], found: MediaLists) -> list[dict[str, Any]]:
    """The messages with the i-th image part holding `found.images[i]` under `image` and the i-th audio part
    `found.audios[i]` under `audio`."""
    its = {"image": iter(found.images), "audio": iter(found.audios)}
    out = []
    for m in messages:
        if isinstance(m.get("content"), list):
            m = {**m, "content": [{**p, p["type"]: next(its[p["type"]])}
                                  if p.get("type") in its and p["type"] not in p else p for p in m["content"]]}
        out.append(m)
    return out


def embed_images(messages: list[dict[str, Any]], urls: list[str]) -> list[dict[str, Any]]:
    """The messages with the i-th `{"type": "image"}` part holding `urls[i]` under `image`."""
    return embed_media(messages, MediaLists(images=list(urls)))


def policy_view(messages: list[dict[str, Any]], events: Iterable[Any], kinds: Sequence[str] = ("image",)
                ) -> list[dict[str, Any]]:
    """The transcript a policy that sees media is shown: every item of `kinds` a tool result showed as a part
    holding its data URL, in the tool message that showed it (other messages unchanged, copies of the
    originals)."""
    parts, found = with_media_parts([dict(m) for m in messages], call_media(events, kinds))
    return embed_media(parts, found)


def text_content(content: Any) -> Any:
    """A message's content as a text student reads it: a list of parts joined into one string (text parts and an
    audio part's placeholder as written, each image as `[image]`); a string or None as it is."""
    if not isinstance(content, list):
        return content
    return "".join("[image]" if isinstance(p, dict) and p.get("type") == "image" else
                   str(p.get("text", "")) if isinstance(p, dict) else "" for p in content)


def as_text_example(example: dict[str, Any]) -> dict[str, Any]:
    """An SFT example for a text-only student: every list content flattened (`text_content`), `images` and
    `audios` left out; the example itself when it has no media."""
    if not any(isinstance(m.get("content"), list) for m in example.get("messages", []) if isinstance(m, dict)):
        return {k: v for k, v in example.items() if k not in ("images", "audios")}
    return {**{k: v for k, v in example.items() if k not in ("images", "audios")},
            "messages": [{**m, "content": text_content(m.get("content"))} if isinstance(m, dict) else m
                         for m in example["messages"]]}
