"""PyPTO's row broadcast of tensor-level arithmetic: ``pl.sub(x, v)`` with ``x`` [M, N] and
``v`` [M, 1] subtracts ``v`` from each row of ``x`` (PyPTO's ConvertTensorToTileOps lowers
it to ``row_expand_sub``). The parser spells it ``pl.tensor.row_expand_<op>`` at once, so
every later stage sees the one op that means it.

An [M, 1] left operand is swapped for ``add`` and ``mul``; for ``sub`` and ``div`` it is
refused (PyPTO would lower ``v - x`` as ``x - v``, and refuses ``v / x``).
"""

from __future__ import annotations

from ptoc.errors import TypeCheckError
from ptoc.ir.nodes import ConstInt, Expr
from ptoc.ir.types import TensorType

OPS = ("add", "sub", "mul", "div")


def _is_one(dim) -> bool:
    return dim == 1 if isinstance(dim, int) else isinstance(dim, ConstInt) and dim.value == 1


def _column(ty) -> bool | None:
    """True for an [M, 1] tensor, False for another 2-D one, None for anything else."""
    if not isinstance(ty, TensorType) or len(ty.shape) != 2:
        return None
    return _is_one(ty.shape[1])


def row_broadcast(name: str, args: list, kwargs: dict, loc) -> tuple[str, list]:
    """The op and operands ``pl.<name>(*args)`` stands for: ``tensor.row_expand_<op>`` when
    exactly one operand of a tensor add/sub/mul/div is an [M, 1] column, else unchanged."""
    op = name.removeprefix("tensor.")
    if op not in OPS or len(args) != 2 or kwargs \
            or not all(isinstance(a, Expr) for a in args):
        return name, args
    lhs, rhs = (_column(a.type) for a in args)
    if lhs is None or rhs is None or lhs == rhs:
        return name, args
    if rhs:
        return f"tensor.row_expand_{op}", args
    if op in ("add", "mul"):
        return f"tensor.row_expand_{op}", args[::-1]
    x, v = (list(a.type.shape) for a in args)
    raise TypeCheckError(
        f"pl.{op} of an [M, 1] tensor {x} and a wider one {v}: PyPTO broadcasts only a right "
        f"operand across the rows for {op}", loc,
        hint=("write pl.neg(pl.row_expand_sub(rhs, lhs))" if op == "sub" else
              "write pl.row_expand_mul(pl.recip(rhs), lhs)"))
