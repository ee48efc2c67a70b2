"""Tuples that also read like PyPTO's mappings: a program's functions and a call's kwargs.

ptoc stores both as tuples (ordered, immutable, iterated as items). PyPTO code reads them
as mappings -- ``program.functions.values()``, ``call.kwargs["target_memory"]`` -- so these
tuple subclasses add the mapping methods without changing what iteration yields.
"""

from __future__ import annotations

from typing import Any


class KeyedTuple(tuple):
    """A tuple of items that each have a key; ``t["key"]`` finds an item's value by key.

    Integer indexes and slices keep tuple behaviour. Subclasses say how an item splits
    into key and value.
    """

    __slots__ = ()

    @staticmethod
    def key_of(item: Any) -> Any:  # pragma: no cover - always overridden
        raise NotImplementedError

    @staticmethod
    def value_of(item: Any) -> Any:  # pragma: no cover - always overridden
        raise NotImplementedError

    def _find(self, key: Any):
        key = getattr(key, "name", key)  # a GlobalVar / Function / Op names its entry
        for item in tuple.__iter__(self):
            if self.key_of(item) == key:
                return item
        raise KeyError(key)

    def __getitem__(self, index):
        if isinstance(index, (int, slice)):
            return tuple.__getitem__(self, index)
        return self.value_of(self._find(index))

    def __contains__(self, key: Any) -> bool:
        if tuple.__contains__(self, key):
            return True
        try:
            self._find(key)
        except (KeyError, TypeError):
            return False
        return True

    def get(self, key: Any, default: Any = None) -> Any:
        try:
            return self[key] if not isinstance(key, (int, slice)) else default
        except KeyError:
            return default

    def keys(self) -> list:
        return [self.key_of(i) for i in tuple.__iter__(self)]

    def values(self) -> list:
        return [self.value_of(i) for i in tuple.__iter__(self)]

    def items(self) -> list[tuple[Any, Any]]:
        return [(self.key_of(i), self.value_of(i)) for i in tuple.__iter__(self)]

    # iteration is tuple's own (no __iter__ here: a Python-level one costs a call each
    # time a pass loops over a call's kwargs or a program's functions)


class FunctionMap(KeyedTuple):
    """A program's functions: iterated as Functions; keyed by name (PyPTO: by GlobalVar)."""

    __slots__ = ()

    @staticmethod
    def key_of(item: Any) -> Any:
        from ptoc.ir.nodes import GlobalVar

        return GlobalVar(item.name)

    @staticmethod
    def value_of(item: Any) -> Any:
        return item

    def keys(self) -> list:
        """GlobalVars sorted by name, as PyPTO's map orders them (iteration keeps the
        program's order)."""
        return [self.key_of(fn) for fn in self._by_name()]

    def values(self) -> list:
        return list(self._by_name())

    def items(self) -> list[tuple[Any, Any]]:
        return [(self.key_of(fn), fn) for fn in self._by_name()]

    def _by_name(self) -> list:
        return sorted(tuple.__iter__(self), key=lambda fn: fn.name)

    def _find(self, key: Any):
        name = str(getattr(key, "name", key))
        for fn in tuple.__iter__(self):
            if fn.name == name:
                return fn
        raise KeyError(name)


class KwargPairs(KeyedTuple):
    """A call's keyword arguments: iterated as (name, value) pairs; ``kwargs["name"]`` works."""

    __slots__ = ()

    @staticmethod
    def key_of(item: Any) -> Any:
        return item[0]

    @staticmethod
    def value_of(item: Any) -> Any:
        return item[1]

    # ``dict(call.kwargs)`` (how every caller of ``OpDef.bind`` and many passes read them)
    # goes through ``keys`` and one ``[name]`` per key: both direct for plain names
    def keys(self) -> list:
        return [item[0] for item in tuple.__iter__(self)]

    def __getitem__(self, index):
        if type(index) is str:
            for key, value in tuple.__iter__(self):
                if key == index:
                    return value
            raise KeyError(index)
        return KeyedTuple.__getitem__(self, index)
