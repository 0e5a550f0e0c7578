"""Base class for every stored record: frozen pydantic models with a cached content digest."""

from __future__ import annotations

import hashlib
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, PrivateAttr


# what is remembered about a record's content besides its digest: its hash contribution (workspace_sim.core.state)
# and its size (workspace_sim.core.limits)
_CONTENT_CACHES = ("_entry", "_chars")


class Record(BaseModel):
    """An immutable row of a service table; change it with `evolve`, never in place."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    key_field: ClassVar[str] = "id"
    _digest: bytes | None = PrivateAttr(default=None)

    def digest(self) -> bytes:
        """A 16-byte digest of the record's canonical JSON, computed once and cached."""
        private = self.__pydantic_private__
        d = private.get("_digest")  # type: ignore[union-attr]
        if d is None:
            d = hashlib.blake2b(self.__pydantic_serializer__.to_json(self), digest_size=16).digest()
            private["_digest"] = d  # type: ignore[index]
        return d

    def record_key(self) -> str:
        """The record's primary key within its table."""
        return str(getattr(self, self.key_field))

    def diff_text(self) -> str | None:
        """Text whose line diff is shown when this record changes (files override it)."""
        return None

    def evolve(self, **changes: Any) -> "Record":
        """A copy with some fields replaced and validated again (records stay well-formed)."""
        data = dict(self.__dict__)
        data.update(changes)
        return type(self).model_validate(data)

    def model_copy(self, *, update: Any = None, deep: bool = False) -> Any:
        """pydantic's copy, less what is remembered about the content (digest, hash contribution, size) when
        `update` changes it."""
        copy = super().model_copy(update=update, deep=deep)
        private = copy.__pydantic_private__
        if update and private:
            for name in _CONTENT_CACHES:
                private.pop(name, None)
            private["_digest"] = None
        return copy

    def __eq__(self, other: object) -> bool:  # private cache must not affect equality
        return type(self) is type(other) and self.__dict__ == other.__dict__  # type: ignore[union-attr]

    __hash__ = None  # type: ignore[assignment]
