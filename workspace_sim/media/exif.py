"""A photo's EXIF metadata (JPEG, PNG, WebP), read with Pillow: when it was taken, the camera's make and model,
the orientation, and where (GPS latitude, longitude and altitude) where the file holds them.

Corrupt metadata never fails the read: what could be read is reported and every field (or block) that could not is
named in `unreadable` with the reason. The read is a pure function of the bytes, so each distinct photo's metadata
is read once per process (`memo.Memo`).
"""

from __future__ import annotations

import io
import math
import re
import warnings
from typing import Any

from workspace_sim.media.memo import Memo

_READ = Memo(size=512)
_EXIF_IFD, _GPS_IFD = 0x8769, 0x8825
_MAKE, _MODEL, _ORIENTATION, _DATETIME = 271, 272, 274, 306
_ORIGINAL, _OFFSET_ORIGINAL = 36867, 36881
ORIENTATIONS = {1: "upright", 2: "mirrored left to right", 3: "upside down: shown rotated 180°",
                4: "mirrored top to bottom", 5: "transposed: mirrored and turned", 6: "shown rotated 90° clockwise",
                7: "transverse: mirrored and turned", 8: "shown rotated 90° counter-clockwise"}
_STAMP = re.compile(r"(\d{4}):(\d{2}):(\d{2})[ T](\d{2}):(\d{2}):(\d{2})")
_OFFSET = re.compile(r"[+-]\d{2}:\d{2}")


def read_exif(raw: bytes, path: str) -> dict[str, Any] | None:
    """The photo's EXIF facts: {captured?, make?, model?, orientation?, orientation_text?, gps?: {latitude,
    longitude, altitude?}, unreadable?: [what could not be read and why]}; None when the file has no EXIF."""
    return _READ.get(raw, "exif", lambda: _read(raw, path))


def _text(v: Any) -> str | None:
    if isinstance(v, bytes):
        v = v.decode("utf-8", "replace")
    if not isinstance(v, str):
        return None
    v = v.replace("\x00", "").strip()
    return v or None


def _read(raw: bytes, path: str) -> dict[str, Any] | None:
    from PIL import Image

    out: dict[str, Any] = {}
    bad: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            im = Image.open(io.BytesIO(raw))
            if not im.info.get("exif") and not im.getexif():
                return None
            ex = im.getexif()
            sub = _ifd(ex, _EXIF_IFD, "the Exif block", bad)
            gps = _ifd(ex, _GPS_IFD, "the GPS block", bad)
        except Exception as e:  # Pillow raises many kinds on broken metadata
            return {"unreadable": [f"the EXIF metadata ({type(e).__name__}: {e})"]}
    _captured(sub, ex, out, bad)
    for tag, key in ((_MAKE, "make"), (_MODEL, "model")):
        if tag in ex:
            v = _text(ex[tag])
            if v is None:
                bad.append(f"{key} ({ex[tag]!r:.40} is not text)")
            else:
                out[key] = v[:200]
    if _ORIENTATION in ex:
        o = ex[_ORIENTATION]
        if isinstance(o, int) and o in ORIENTATIONS:
            out["orientation"], out["orientation_text"] = o, ORIENTATIONS[o]
        else:
            bad.append(f"orientation ({o!r:.40} is not 1-8)")
    if gps:
        _gps(gps, out, bad)
    bad += [f"the EXIF metadata ({str(w.message).strip()[:160]})" for w in caught if "PIL" in (w.filename or "")]
    if not ex and not bad:
        bad.append(f"the EXIF metadata (its {len(im.info.get('exif') or b''):,} bytes hold no entry that can be read)")
    if bad:
        out["unreadable"] = list(dict.fromkeys(bad))
    return out


def _ifd(ex: Any, tag: int, name: str, bad: list[str]) -> dict[int, Any]:
    if tag not in ex:
        return {}
    try:
        return dict(ex.get_ifd(tag))
    except Exception as e:
        bad.append(f"{name} ({type(e).__name__}: {e})")
        return {}


def _captured(sub: dict[int, Any], ex: Any, out: dict[str, Any], bad: list[str]) -> None:
    """DateTimeOriginal (else the file's DateTime) as ISO text, with OffsetTimeOriginal where given."""
    tag, v = (_ORIGINAL, sub[_ORIGINAL]) if _ORIGINAL in sub else (_DATETIME, ex.get(_DATETIME))
    if v is None:
        return
    name = "capture time (DateTimeOriginal)" if tag == _ORIGINAL else "capture time (DateTime)"
    m = _STAMP.fullmatch(_text(v) or "")
    if m is None:
        bad.append(f"{name} ({v!r:.40} is not a date like 2024:05:17 14:03:22)")
        return
    y, mo, d, h, mi, s = map(int, m.groups())
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h < 24 and mi < 60 and s < 61):
        bad.append(f"{name} ({v!r:.40} is not a real date and time)")
        return
    iso = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}"
    off = _text(sub.get(_OFFSET_ORIGINAL)) if tag == _ORIGINAL else None
    out["captured"] = iso + (off if off and _OFFSET.fullmatch(off) else "")
    if tag == _DATETIME:
        out["captured_from"] = "DateTime"


def _number(v: Any) -> float:
    f = float(v)  # an IFDRational with a zero denominator is nan
    if not math.isfinite(f):
        raise ValueError(f"{v!r} is not a finite number")
    return f


def _degrees(v: Any, ref: Any, refs: str, limit: float) -> float:
    parts = [_number(x) for x in v] if isinstance(v, (tuple, list)) else [_number(v)]
    if not 1 <= len(parts) <= 3:
        raise ValueError(f"{v!r} is not degrees, minutes, seconds")
    deg = sum(p / 60 ** i for i, p in enumerate(parts))
    r = _text(ref)
    if r is not None and r not in tuple(refs):
        raise ValueError(f"reference {ref!r:.20} is not {refs[0]} or {refs[1]}")
    deg = -deg if r == refs[1] else deg
    if abs(deg) > limit:
        raise ValueError(f"{deg:g} is past ±{limit:g}")
    return round(deg, 6)


def _gps(gps: dict[int, Any], out: dict[str, Any], bad: list[str]) -> None:
    pos: dict[str, float] = {}
    for key, tag, refs, limit in (("latitude", 2, "NS", 90.0), ("longitude", 4, "EW", 180.0)):
        if tag not in gps:
            continue
        try:
            pos[key] = _degrees(gps[tag], gps.get(tag - 1), refs, limit)
        except (TypeError, ValueError, ZeroDivisionError) as e:
            bad.append(f"GPS {key} ({e})")
    if 6 in gps:
        try:
            below = gps.get(5) in (1, b"\x01")
            pos["altitude"] = round(-_number(gps[6]) if below else _number(gps[6]), 2)
        except (TypeError, ValueError, ZeroDivisionError) as e:
            bad.append(f"GPS altitude ({e})")
    if "latitude" in pos and "longitude" in pos:
        out["gps"] = pos
    elif pos:
        bad.append("GPS position (only " + " and ".join(k for k in pos) + " is given)")


def describe_exif(e: dict[str, Any]) -> str:
    """The facts as one line for a text channel, then a line naming what could not be read."""
    bits = []
    if "captured" in e:
        bits.append(f"taken {e['captured']}" + (" (file time; no DateTimeOriginal)" if e.get("captured_from") else ""))
    cam = " ".join(x for x in (e.get("make"), e.get("model")) if x)
    if cam:
        bits.append(f"camera {cam}")
    if "orientation" in e:
        bits.append(f"orientation {e['orientation']} ({e['orientation_text']})")
    if "gps" in e:
        g = e["gps"]
        bits.append(f"GPS {g['latitude']:.6f}, {g['longitude']:.6f}" + (
            f", altitude {g['altitude']:g} m" if "altitude" in g else ""))
    out = "EXIF: " + ("; ".join(bits) if bits else "no capture time, camera, orientation or GPS position")
    if e.get("unreadable"):
        out += "\nEXIF not readable: " + "; ".join(e["unreadable"])
    return out
