"""``pl.dynamic("N")``: a dimension whose extent is known only when the program runs.

The object a user creates at module level stands for one IR symbol (a ``DimVar``), made on
first use and shared by every annotation and program that names the same object, so two
kernels reading ``[N, 64]`` agree on ``N`` (as PyPTO's ``DynVar`` does). Python evaluates
annotations such as ``pl.Tensor[[N * 2, 64], pl.FP32]`` when a program class is defined;
arithmetic on the object is therefore allowed and means nothing (the parser reads the
source).
"""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.errors import PtocError
from ptoc.ir.nodes import DimVar
from ptoc.ir.types import ScalarType


class DynVar:
    """A ``pl.dynamic`` dimension (see the module docstring)."""

    def __init__(self, name: str):
        if not isinstance(name, str) or not name.isidentifier():
            raise PtocError(f"pl.dynamic name must be a Python identifier, got {name!r}",
                            hint='write N = pl.dynamic("N")')
        self.name = name
        self._var: DimVar | None = None

    @property
    def var(self) -> DimVar:
        """The IR symbol (made once, shared by every use of this object)."""
        if self._var is None:
            self._var = DimVar(self.name, ScalarType(DataType.INDEX))
        return self._var

    def unwrap(self) -> DimVar:
        """PyPTO's spelling of ``var``."""
        return self.var

    def __repr__(self) -> str:
        return f"DynVar({self.name!r})"

    def _annotation_arithmetic(self, *_args) -> "DynVar":
        return self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _annotation_arithmetic
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = _annotation_arithmetic


def dynamic(name: str) -> DynVar:
    """A dynamic dimension named ``name`` (PyPTO's ``pl.dynamic``)."""
    return DynVar(name)
