"""The immutable workspace state: persistent tables with structural sharing and an incremental hash.

A state is a value. Every table is an `immutables.Map` (a HAMT), so a change to one record copies
only the few nodes on its path and every older state stays valid: a snapshot is just a reference.
The content hash is a sum, modulo 2**128, of one digest per (table, key, record), so a change
updates it in constant time and equal contents always give equal hashes. It is worked out only when
asked for (`State.acc`): a state carries how its hash follows from its parent's (`LazyHash`), since
validation makes hundreds of thousands of states and never reads their hashes.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Any, Iterator, Mapping, NamedTuple

import immutables

from workspace_sim.core.records import Record

_MOD = 1 << 128
EMPTY: immutables.Map = immutables.Map()


def entry_digest(table: str, key: str, record: Record) -> int:
    """The hash contribution of one stored record (remembered on the record, like its digest: a record is put
    and later taken out of the hash again, and mutants and baselines store the same records over and over)."""
    private = record.__pydantic_private__
    hit = private.get("_entry")  # type: ignore[union-attr]
    if hit is not None and hit[0] == table and hit[1] == key:
        return hit[2]
    value = _entry_digest(table, key, record)
    private["_entry"] = (table, key, value)  # type: ignore[index]
    return value


def _entry_digest(table: str, key: str, record: Record) -> int:
    h = hashlib.blake2b(digest_size=16)
    h.update(table.encode())
    h.update(b"\0")
    h.update(key.encode("utf-8", "surrogatepass"))
    h.update(b"\0")
    h.update(record.digest())
    return int.from_bytes(h.digest(), "big")


class LogNode(NamedTuple):
    """One cell of the persistent (shared-tail) event log."""

    event: Any
    prev: "LogNode | None"


class LazyHash:
    """A state's content hash before it is worked out: every record of `tables` (a built state), or the hash
    `base` (an int or another LazyHash) with `changes` ((table, key, old record or None, new record or None))
    applied. Worked out once, on first use, then kept as `value` (and what it was made from let go)."""

    __slots__ = ("base", "changes", "tables", "value")

    def __init__(self, base: "int | LazyHash | None", changes: tuple[tuple[str, str, Any, Any], ...] = (),
                 tables: Any = None) -> None:
        self.base, self.changes, self.tables, self.value = base, changes, tables, None

    def resolve(self) -> int:
        """The hash as an int (mod 2**128); iterative, so a long history cannot overflow the stack."""
        if self.value is not None:
            return self.value
        chain = []
        node: Any = self
        while type(node) is LazyHash and node.value is None:
            chain.append(node)
            node = node.base
        acc = 0 if node is None else (node if type(node) is int else node.value)
        for n in reversed(chain):  # oldest first: each node's value is its base's plus its own changes
            if n.tables is not None:
                acc = 0
                for tname, records in n.tables.items():
                    for key, rec in records.items():
                        acc += entry_digest(tname, key, rec)
            for tname, key, old, rec in n.changes:
                if old is not None:
                    acc -= entry_digest(tname, key, old)
                if rec is not None:
                    acc += entry_digest(tname, key, rec)
            acc %= _MOD
            n.value, n.base, n.changes, n.tables = acc, None, (), None
        return acc


class State(NamedTuple):
    """Everything that a snapshot captures: records, content hash, clock, counters and event log.

    A tuple, so it is immutable and cheap to build (one is made per call). `hashing` is the content hash
    as an int or a LazyHash still to be worked out; read it as `acc`.
    """

    tables: immutables.Map
    hashing: "int | LazyHash"
    now: datetime
    counters: immutables.Map
    log: LogNode | None = None
    log_len: int = 0

    @property
    def acc(self) -> int:
        """The content hash as an int: the sum mod 2**128 of every stored record's `entry_digest`."""
        h = self.hashing
        return h if type(h) is int else h.resolve()

    @property
    def content_hash(self) -> str:
        """Hex digest of the records alone: equal contents, equal hash, whatever the history."""
        return f"{self.acc:032x}"

    def table(self, name: str) -> Mapping[str, Record]:
        """The records of one table (read-only mapping; empty when the table is absent)."""
        return self.tables.get(name, EMPTY)

    def events(self) -> list[Any]:
        """The event log, oldest first."""
        out = []
        node = self.log
        while node is not None:
            out.append(node.event)
            node = node.prev
        out.reverse()
        return out

    def iter_records(self) -> Iterator[tuple[str, str, Record]]:
        """Every (table, key, record), tables and keys in sorted order."""
        for name in sorted(self.tables.keys()):
            table = self.tables[name]
            for key in sorted(table.keys()):
                yield name, key, table[key]

    def with_records(self, changes: Mapping[tuple[str, str], Record | None]) -> "State":
        """A new state with records put (value) or deleted (None); the hash follows incrementally."""
        tables = self.tables
        done = []
        for (tname, key), rec in changes.items():
            table = tables.get(tname, EMPTY)
            old = table.get(key)
            if old is not None and rec is None:
                table = table.delete(key)
            if rec is not None:
                table = table.set(key, rec)
            if old is not None or rec is not None:
                done.append((tname, key, old, rec))
            tables = tables.set(tname, table)
        return State(tables, LazyHash(self.hashing, tuple(done)), self.now, self.counters, self.log, self.log_len)


def build_state(tables: Mapping[str, Mapping[str, Record]], now: datetime) -> State:
    """A state from plain mappings of records, hashing everything once."""
    built = immutables.Map({tname: immutables.Map(records) for tname, records in tables.items()})
    return State(built, LazyHash(None, tables=built), now, EMPTY)
