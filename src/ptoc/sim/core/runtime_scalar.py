"""Scalars whose value exists only while the kernel runs (an element read by ``pto.tgetval``).

Why: the scalar unit builds the whole instruction stream before anything executes, so a value
read out of a tile is not known while the stream is built. It is represented by a
``RuntimeScalar`` that the reading instruction fills in when it executes; arithmetic on it
stays deferred, and the vector ops that take it as an operand read it when they start. Using
one for control flow or an address would need the data at build time, and is an error.
"""

from __future__ import annotations

from typing import Callable


class RuntimeScalar:
    """A scalar computed when the program runs: a cell set by a read, or arithmetic on one."""

    def __init__(self, compute: Callable[[], object] | None = None, what: str = "a tile element"):
        self._compute = compute
        self._value = None
        self.what = what

    def set(self, value) -> None:
        self._value = value

    @property
    def value(self):
        if self._compute is not None:
            return self._compute()
        if self._value is None:
            raise RuntimeError(f"{self.what} was used before the instruction reading it ran")
        return self._value


def resolve(value):
    """A plain number for ``value``, evaluating a ``RuntimeScalar``."""
    return value.value if isinstance(value, RuntimeScalar) else value


def lift(fn: Callable, args: tuple, what: str) -> RuntimeScalar:
    """``fn(*args)`` deferred until run time (some argument is a ``RuntimeScalar``)."""
    return RuntimeScalar(lambda: fn(*(resolve(a) for a in args)), what)
