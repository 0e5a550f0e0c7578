"""The default sandbox image, built without any registry from a static busybox binary.

The root file system is made in memory: busybox with one symbolic link per applet in /bin, an
/etc/passwd naming the sandbox user (1000) and nobody (65534), /tmp and /work, and nothing else.
It is imported with the engine's `import` (no base image, no network), then checked by running
a container from it. Debian's `busybox-static` package provides a suitable binary.
"""

from __future__ import annotations

import io
import os
import shutil
import struct
import subprocess
import tarfile
from typing import Any

from workspace_sim.sandboxes.engine import client
from workspace_sim.sandboxes.settings import DEFAULT_IMAGE

_CANDIDATES = ("/bin/busybox", "/usr/bin/busybox")
_PASSWD = ("root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/tmp:/bin/sh\n"
           "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n")
_GROUP = "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n"
_MTIME = 946684800  # fixed times keep the root file system's bytes reproducible


class ImageBuildError(RuntimeError):
    """The image could not be built; the message says what to fix."""


def find_busybox(path: str | None = None) -> str:
    """The busybox binary to use: `path`, else the first static one found on this machine."""
    options = [path] if path else [shutil.which("busybox") or "", *_CANDIDATES]
    for candidate in options:
        if candidate and os.path.isfile(candidate):
            if not is_static_elf(candidate):
                if path:
                    raise ImageBuildError(f"{candidate} is dynamically linked; give a static busybox "
                                          "(Debian: apt-get install busybox-static)")
                continue
            return candidate
    raise ImageBuildError("no static busybox found; install one (Debian: apt-get install busybox-static) "
                          "or pass its path")


def is_static_elf(path: str) -> bool:
    """Whether `path` is an ELF executable without a program interpreter (runs with no libraries)."""
    with open(path, "rb") as f:
        head = f.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit ELF only
            return False
        endian = "<" if head[5] == 1 else ">"
        phoff, = struct.unpack(endian + "Q", head[32:40])
        phentsize, phnum = struct.unpack(endian + "HH", head[54:58])
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, = struct.unpack(endian + "I", f.read(4))
            if p_type == 3:  # PT_INTERP
                return False
    return True


def applets(busybox: str) -> list[str]:
    """The applet names a busybox binary provides."""
    try:
        out = subprocess.run([busybox, "--list"], capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise ImageBuildError(f"cannot run {busybox} --list: {e}") from None
    names = sorted({n.strip() for n in out.split() if n.strip() and "/" not in n and n != "busybox"})
    if "sh" not in names or "tar" not in names:
        raise ImageBuildError(f"{busybox} lacks the sh or tar applet, which the sandbox needs")
    return names


def rootfs(busybox: str) -> bytes:
    """The image's root file system as a tar."""
    buf = io.BytesIO()

    def add(name: str, kind: bytes, mode: int, data: bytes = b"", link: str = "", uid: int = 0) -> None:
        info = tarfile.TarInfo(name)
        info.type, info.mode, info.mtime, info.uid, info.gid = kind, mode, _MTIME, uid, uid
        info.linkname = link
        info.size = len(data) if kind == tarfile.REGTYPE else 0
        tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)

    with open(busybox, "rb") as f:
        binary = f.read()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for d in ("bin", "etc", "dev", "proc", "sys", "root", "usr", "usr/bin"):
            add(d, tarfile.DIRTYPE, 0o755)
        add("tmp", tarfile.DIRTYPE, 0o1777)
        add("work", tarfile.DIRTYPE, 0o755, uid=1000)
        add("bin/busybox", tarfile.REGTYPE, 0o755, binary)
        for name in applets(busybox):
            add(f"bin/{name}", tarfile.SYMTYPE, 0o777, link="busybox")
        add("etc/passwd", tarfile.REGTYPE, 0o644, _PASSWD.encode())
        add("etc/group", tarfile.REGTYPE, 0o644, _GROUP.encode())
    return buf.getvalue()


def build_image(tag: str = DEFAULT_IMAGE, busybox: str | None = None, host: str | None = None) -> dict[str, Any]:
    """Build (or rebuild) the default sandbox image and check that it runs; returns a summary."""
    path = find_busybox(busybox)
    data = rootfs(path)
    repo, _, version = tag.rpartition(":") if ":" in tag.split("/")[-1] else (tag, "", "latest")
    c = client(host)
    changes = ['ENV PATH=/usr/local/bin:/usr/bin:/bin', 'CMD ["/bin/sh"]', "LABEL coworkenv.image=default"]
    try:
        c.api.import_image_from_data(data, repository=repo, tag=version, changes=changes)
        output = c.containers.run(tag, ["sh", "-c", "echo ok; tar --help >/dev/null 2>&1; id -u"],
                                  user="1000:1000", network_mode="none", remove=True)
    except Exception as e:
        raise ImageBuildError(f"building {tag} failed: {type(e).__name__}: {e}") from None
    if not output.decode().startswith("ok"):
        raise ImageBuildError(f"the new image {tag} does not run a shell: {output[:200]!r}")
    image = c.images.get(tag)
    return {"tag": tag, "id": image.id, "busybox": path, "bytes": len(data)}
