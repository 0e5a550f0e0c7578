"""Images: checked with Pillow (format, pixel count before decoding, a full decode) before they are served.

The check is a pure function of the bytes, so each distinct image is decoded once per process (`memo.Memo`).
"""

from __future__ import annotations

import io
import warnings

from workspace_sim.media.limits import LIMITS, Limits, MediaError
from workspace_sim.media.memo import Memo

_CHECKED = Memo(size=512)

_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}


def inspect_image(raw: bytes, path: str, limits: Limits = LIMITS) -> tuple[str, int, int]:
    """The (MIME type, width, height) of an image, after checking it decodes and is within the pixel limit."""
    return _CHECKED.get(raw, limits, lambda: _inspect(raw, path, limits))


def _inspect(raw: bytes, path: str, limits: Limits) -> tuple[str, int, int]:
    from PIL import Image

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # Pillow's "Corrupt EXIF data": exif.py reports it
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(raw))
            fmt, (w, h) = im.format, im.size
            if w * h > limits.image_pixels:
                raise MediaError(f"{path} is {w}x{h} = {w * h:,} pixels; at most {limits.image_pixels:,} are allowed")
            if fmt not in _FORMATS:
                raise MediaError(f"{path} is a {fmt} image; PNG, JPEG, GIF and WebP can be served")
            im.load()
    except MediaError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        raise MediaError(f"{path} has more pixels than allowed (at most {limits.image_pixels:,}): {e}") from None
    except Exception as e:  # Pillow raises OSError, SyntaxError, ValueError... for broken files
        raise MediaError(f"{path} is not a readable image (corrupt or truncated: {e})") from None
    return _FORMATS[fmt], w, h
