"""Chat messages as a vision-language processor reads them: image parts' data URLs decoded to PIL images, text
that spells a vision marker broken up, and the markers' token ids (never sampled)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
from typing import Any


class MediaInputError(ValueError):
    """An image the episode showed cannot be read by the student; the message names the episode and turn."""


# The processor's own markers around and inside an image's tokens. Text that spells one (a file's content, a
# user's message) would be read as an image slot with no image behind it, so `render_prompt` breaks it up, and
# generation may not sample one (`vision_token_ids`).
VISION_TOKENS = ("<|vision_start|>", "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>")


def _plain(text: str) -> str:
    """`text` with every vision marker it spells broken up (`<|image_pad|>` -> `< |image_pad|>`)."""
    if "<|" not in text:
        return text
    for marker in VISION_TOKENS:
        text = text.replace(marker, "< " + marker[1:])
    return text


def vision_token_ids(tokenizer: Any) -> list[int]:
    """The ids of the vision markers a processor's tokenizer knows (never sampled by a vision student)."""
    tok = text_tokenizer(tokenizer)
    vocab = tok.get_vocab()
    return sorted(vocab[m] for m in VISION_TOKENS if m in vocab)


def is_processor(obj: Any) -> bool:
    """Whether `obj` is a vision-language processor (it has an image processor) rather than a text tokenizer."""
    return getattr(obj, "image_processor", None) is not None


def text_tokenizer(obj: Any) -> Any:
    """The text tokenizer of a processor, or the tokenizer itself."""
    return obj.tokenizer if is_processor(obj) else obj


def _url_name(url: str) -> str:
    data = url.partition(",")[2]
    try:
        raw = base64.b64decode(data)
    except ValueError:
        raw = data.encode()
    return f"[image: sha256:{hashlib.sha256(raw).hexdigest()[:16]}]"


def decode_image(url: str, where: str) -> Any:
    """A `data:image/...;base64,` URL as an RGB PIL image; MediaInputError names `where` when it is not one."""
    from PIL import Image, UnidentifiedImageError

    head, _, data = url.partition(",") if isinstance(url, str) else ("", "", "")
    if not head.startswith("data:image/") or not head.endswith(";base64"):
        raise MediaInputError(f"{where}: an image must be a data:image/...;base64 URL, got {str(url)[:40]!r}")
    try:
        img = Image.open(io.BytesIO(base64.b64decode(data, validate=True)))
        img.load()
    except UnidentifiedImageError:  # its own message names a BytesIO object's address
        raise MediaInputError(f"{where}: the image does not decode (not an image format Pillow recognises)") from None
    except Image.DecompressionBombError as e:
        raise MediaInputError(f"{where}: the image is too large to decode ({e})") from None
    except (binascii.Error, OSError) as e:
        raise MediaInputError(f"{where}: the image does not decode ({e})") from None
    return img.convert("RGB")


def decoded_messages(messages: list[dict[str, Any]], names: dict[str, str], where: str
             ) -> tuple[list[dict[str, Any]], list[str]]:
    out, shown = [], []
    for i, m in enumerate(messages):
        if isinstance(m.get("content"), str):
            m = {**m, "content": _plain(m["content"])}
        elif isinstance(m.get("content"), list):
            parts = []
            for p in m["content"]:
                if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str):
                    p = {**p, "text": _plain(p["text"])}
                elif isinstance(p, dict) and p.get("type") == "image":
                    url = p.get("image")
                    if isinstance(url, str):
                        name = names.get(url) or _url_name(url)
                        p = {"type": "image", "image": decode_image(url, f"{where}: {m.get('role')} message {i}, {name}")}
                    else:
                        name = "[image]"
                    shown.append(name)
                parts.append(p)
            m = {**m, "content": parts}
        out.append(m)
    return out, shown


def processor_messages(messages: list[dict[str, Any]], where: str = "messages") -> list[dict[str, Any]]:
    """`messages` as a processor's chat template reads them: each image part's data URL decoded to a PIL image (a
    MediaInputError naming `where`, the message and the image when it does not decode) and text spelling a
    vision marker broken up (`VISION_TOKENS`)."""
    return decoded_messages(messages, {}, where)[0]
