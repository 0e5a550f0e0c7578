"""The images an episode's tool results showed, as content parts of the transcript's tool messages.

A tool result that carries an image (`read_media_file`, a scanned PDF page) reaches a text channel as a
placeholder naming the file and its hash; the record's call events hold the bytes. `with_image_parts` turns each
placeholder in a tool message into a `{"type": "image"}` part (the text around it kept as text parts) and lists
the images in order as data URLs: the SFT export's format, as a Qwen2-VL-style processor and TRL's vision SFT
read it. `policy_view` puts each image into its part (`"image": <data URL>`), the live transcript a vision
policy is shown (the HF processor loads it, the OpenAI policy sends it as an image part).
"""

from __future__ import annotations

from typing import Any, Iterable

from workspace_sim.media import MediaPart, media_parts, placeholder


def call_images(events: Iterable[Any]) -> dict[str, MediaPart]:
    """The images the episode's successful calls returned (record event lines), by the placeholder that stands
    for each in the transcript."""
    return {placeholder(p): p for e in events if e.kind == "call" and e.ok
            for p in media_parts(e.result) if p.kind == "image"}


def with_image_parts(messages: list[dict[str, Any]], images: dict[str, MediaPart]
                     ) -> tuple[list[dict[str, Any]], list[str]]:
    """The messages with each tool result's image placeholders turned into `{"type": "image"}` content parts (the
    text around them kept as text parts), and the images in order as data URLs."""
    if not images:
        return messages, []
    found: list[str] = []
    out = []
    for m in messages:
        text = m.get("content")
        hits = [k for k in images if isinstance(text, str) and k in text] if m.get("role") == "tool" else []
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
            parts.append({"type": "image"})
            p = images[k]
            found.append(f"data:{p.mime_type};base64,{p.data}")
            rest = rest[i + len(k):]
        if rest.strip():
            parts.append({"type": "text", "text": rest})
        out.append({**m, "content": parts})
    return out, found


def embed_images(messages: list[dict[str, Any]], urls: list[str]) -> list[dict[str, Any]]:
    """The messages with the i-th `{"type": "image"}` part holding `urls[i]` under `image`."""
    it = iter(urls)
    out = []
    for m in messages:
        if isinstance(m.get("content"), list):
            m = {**m, "content": [{**p, "image": next(it)} if p.get("type") == "image" and "image" not in p else p
                                  for p in m["content"]]}
        out.append(m)
    return out


def policy_view(messages: list[dict[str, Any]], events: Iterable[Any]) -> list[dict[str, Any]]:
    """The transcript a vision policy sees: every image a tool result showed as an image part holding its data
    URL, in the tool message that showed it (text-only messages unchanged, copies of the originals)."""
    parts, urls = with_image_parts([dict(m) for m in messages], call_images(events))
    return embed_images(parts, urls)
