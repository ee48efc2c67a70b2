"""Integer index expressions as linear forms: ``c0 + c1*a1 + c2*a2 ...``.

A slice window ``x[i*32:(i+1)*32]`` has a constant size only after algebra: ``stop - start``
is ``(i+1)*32 - i*32``, which is ``32`` once both ends are expanded into sums of multiples of
the same atoms. Atoms are variables and, for anything that is not ``+``, ``-``, unary ``-`` or
a product with a constant (``i // 2``, ``i * j``, a call), the sub-expression itself compared
structurally, so ``(i // 2) * 8 : (i // 2) * 8 + 8`` folds too. A variable bound to an index
expression (``r0 = i * 64``) is expanded through ``definitions`` when the caller knows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ptoc.ir.equality import structural_equal
from ptoc.ir.nodes import BinOp, ConstInt, Expr, UnaryOp, Var


class LinearForm:
    """``constant + sum(coef * atom)``; atoms are kept once each (structural equality)."""

    def __init__(self, constant: int = 0, terms: list[tuple[Expr, int]] | None = None):
        self.constant = constant
        self.terms = terms or []

    def scaled(self, factor: int) -> LinearForm:
        return LinearForm(self.constant * factor, [(a, c * factor) for a, c in self.terms])

    def plus(self, other: LinearForm) -> LinearForm:
        terms = list(self.terms)
        for atom, coef in other.terms:
            for k, (known, have) in enumerate(terms):
                if known is atom or structural_equal(known, atom):
                    terms[k] = (known, have + coef)
                    break
            else:
                terms.append((atom, coef))
        return LinearForm(self.constant + other.constant, [(a, c) for a, c in terms if c])

    @property
    def is_constant(self) -> bool:
        return not self.terms


def linear_form(value: Any, definitions: Mapping[Var, Expr] = {}) -> LinearForm | None:
    """``value`` (an int or an integer index Expr) as a linear form; None for a float or bool.
    ``definitions``: variables to expand into the expressions they are bound to."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return LinearForm(value)
    if isinstance(value, ConstInt):
        return LinearForm(value.value)
    if not isinstance(value, Expr) or not _is_integer(value):
        return None
    if isinstance(value, Var) and value in definitions:
        return linear_form(definitions[value], definitions)
    if isinstance(value, UnaryOp) and value.op == "-":
        inner = linear_form(value.operand, definitions)
        return inner.scaled(-1) if inner is not None else None
    if isinstance(value, BinOp) and value.op in ("+", "-", "*"):
        lhs, rhs = linear_form(value.lhs, definitions), linear_form(value.rhs, definitions)
        if lhs is not None and rhs is not None:
            if value.op == "+":
                return lhs.plus(rhs)
            if value.op == "-":
                return lhs.plus(rhs.scaled(-1))
            if rhs.is_constant:
                return lhs.scaled(rhs.constant)
            if lhs.is_constant:
                return rhs.scaled(lhs.constant)
    return LinearForm(0, [(value, 1)])


def constant_difference(stop: Any, start: Any,
                        definitions: Mapping[Var, Expr] = {}) -> int | None:
    """``stop - start`` when it folds to an integer constant, else None."""
    hi, lo = linear_form(stop, definitions), linear_form(start, definitions)
    if hi is None or lo is None:
        return None
    diff = hi.plus(lo.scaled(-1))
    return diff.constant if diff.is_constant else None


def _is_integer(value: Expr) -> bool:
    dtype = getattr(value.type, "dtype", None)
    return dtype is not None and dtype.is_int
