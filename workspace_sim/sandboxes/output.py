"""Bounded capture of a command's output: the start and the end are kept, the middle is counted."""

from __future__ import annotations


class BoundedOutput:
    """Collects a byte stream in constant memory: the first and last `limit // 2` bytes are kept.

    `text()` decodes what was kept and, when bytes were dropped, says how many in a note placed
    where they were, so the model knows the output is incomplete.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def write(self, data: bytes) -> None:
        """Add a chunk of output."""
        self.total += len(data)
        room = self.limit // 2 - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
        if data:
            self._tail += data
            keep = self.limit - self.limit // 2
            if len(self._tail) > 2 * keep:
                del self._tail[:-keep]

    @property
    def truncated(self) -> bool:
        """Whether some output was left out."""
        return self.total > self.limit

    def text(self) -> str:
        """The kept output as text (invalid UTF-8 replaced), with a note where bytes were left out."""
        keep = self.limit - self.limit // 2
        tail = bytes(self._tail[-keep:]) if self.truncated else bytes(self._tail)
        if not self.truncated:
            return (bytes(self._head) + tail).decode("utf-8", "replace")
        dropped = self.total - len(self._head) - len(tail)
        note = f"\n[... {dropped} bytes of output left out (limit {self.limit}) ...]\n"
        return bytes(self._head).decode("utf-8", "replace") + note + tail.decode("utf-8", "replace")
