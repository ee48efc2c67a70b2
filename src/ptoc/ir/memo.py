"""A memo keyed by object identity, for facts about immutable IR nodes.

IR nodes never change once built, and passes hand the nodes they do not rewrite on to the
next pass, so a fact computed about a node (a function holds no while loop, a call's type
agrees with the op registry) stays true for as long as that very object exists. Keying by
``id`` avoids hashing large frozen dataclasses field by field; each entry keeps its object
alive, so an id is never reused while its entry is here. The memo is bounded: when full it
starts over (a miss only costs the recomputation).
"""

from __future__ import annotations

from typing import Any

MISSING = object()


class IdentityMemo:
    """``memo.get(obj)`` -> the value stored for this very object, else ``MISSING``."""

    def __init__(self, limit: int):
        self.limit = limit
        self._entries: dict[int, tuple[Any, Any]] = {}

    def get(self, obj) -> Any:
        entry = self._entries.get(id(obj))
        return entry[1] if entry is not None and entry[0] is obj else MISSING

    def put(self, obj, value) -> None:
        if len(self._entries) >= self.limit:
            self._entries.clear()
        self._entries[id(obj)] = (obj, value)

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
