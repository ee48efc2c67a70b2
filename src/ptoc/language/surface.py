"""Runtime stand-ins for DSL names that Python evaluates while defining a kernel.

Kernels are parsed from source, never executed, but Python still evaluates decorators
and (without ``from __future__ import annotations``) parameter annotations when a
``@pl.program`` class body runs. These objects make that evaluation harmless; the real
meaning of every name comes from the AST parser. Calling a kernel-only function from
plain Python raises a PtocError that says so.
"""

from __future__ import annotations

from ptoc.errors import PtocError


class TypeMarker:
    """``pl.Tensor[...]``, ``pl.Tile[...]``, ... evaluate to one of these (never inspected)."""

    def __init__(self, name: str, items=None):
        self._name = name
        self._items = items

    def __getitem__(self, items) -> "TypeMarker":
        return TypeMarker(self._name, items)

    def __call__(self, *args, **kwargs) -> "TypeMarker":
        return TypeMarker(self._name, (args, kwargs))

    def __repr__(self) -> str:
        return f"pl.{self._name}"


TYPE_NAMES = ("Tensor", "Tile", "Scalar", "Out", "InOut", "Ptr", "MemRef", "TileView", "Tuple",
              "Array", "TensorView")
Tensor, Tile, Scalar, Out, InOut, Ptr, MemRef, TileView, Tuple, Array, TensorView = (
    TypeMarker(n) for n in TYPE_NAMES)


def kernel_only(name: str):
    """A function that exists only inside kernels; calling it from Python explains why not."""

    def call(*_args, **_kwargs):
        raise PtocError(
            f"pl.{name}(...) was called from plain Python; it is only meaningful inside a "
            "@pl.program / @pl.function kernel, which ptoc parses instead of executing",
            hint="put the call inside a kernel body")

    call.__name__ = name
    call.__qualname__ = name
    return call


class OpNamespace:
    """``pl.tile`` / ``pl.tensor``: attribute access yields kernel-only stand-ins."""

    def __init__(self, prefix: str, names: list[str]):
        self._prefix = prefix
        for name in names:
            setattr(self, name, kernel_only(f"{prefix}.{name}"))

    def __repr__(self) -> str:
        return f"pl.{self._prefix}"
