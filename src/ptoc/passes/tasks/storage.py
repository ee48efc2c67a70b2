"""Where in GM a tensor value of an orchestration function lives: root buffer + window.

``BufferRoots`` says which buffer a value names, treating a ``pl.slice`` view as a buffer of
its own (the runtime tracks a view by its own descriptor). Deciding whether two task
arguments can touch the same bytes needs more: the *storage root* (the parameter or
``pl.create_tensor`` result that owns the bytes, through any chain of views) and the window
of it a value covers. A window is a box (one ``[lo, hi)`` per dimension, in the root's
coordinates) when every slice on the way is a constant window of the same rank without a
``valid_shape``; otherwise the location is the whole root, possibly touched anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir.nodes import AssignStmt, Call, ConstInt, Function, ListExpr, Program, Var
from ptoc.ir.types import TensorType
from ptoc.ir.visitor import IRVisitor
from ptoc.passes.tasks.buffer_roots import BufferRoots

#: a value that may live in more storage locations than this is not followed (PyPTO caps
#: its control-flow alternatives too)
MAX_ALTERNATIVES = 8

Box = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Location:
    """Bytes of ``root``: the ``box`` window, or anywhere in it when ``box`` is None."""

    root: Var
    box: Box | None

    def overlaps(self, other: "Location") -> bool:
        if self.root is not other.root:
            return False
        if self.box is None or other.box is None or len(self.box) != len(other.box):
            return True
        return all(lo < o_hi and o_lo < hi for (lo, hi), (o_lo, o_hi) in zip(self.box, other.box))


def overlap(a: tuple[Location, ...], b: tuple[Location, ...]) -> bool:
    return any(x.overlaps(y) for x in a for y in b)


class StorageMap:
    """The storage locations of the tensor values of one function."""

    def __init__(self, program: Program, function: Function):
        self.roots = BufferRoots(program, function)
        self.slices: dict[Var, Call] = {}
        self.untracked: set[Var] = set()    # pl.create_tensor(..., manual_dep=True) roots
        _Slices(self.slices, self.untracked).visit(function.body)

    def locations(self, value) -> tuple[Location, ...] | None:
        """Every location ``value`` may name; None when that set is not known."""
        if not isinstance(value, Var) or not self.roots.is_complete(value):
            return None
        found: list[Location] = []
        for root in self.roots.roots(value):
            located = self._root_location(root, depth=0)
            if located is None:
                return None
            found.extend(located)
        unique = tuple(dict.fromkeys(found))
        return unique if len(unique) <= MAX_ALTERNATIVES else None

    def _root_location(self, root: Var, depth: int) -> tuple[Location, ...] | None:
        view = self.slices.get(root)
        if view is None:
            return (Location(root, _whole(root.type)),)
        parents = self.locations(view.args[0]) if depth < 16 else None
        if parents is None:
            return None
        window = _window(view)
        return tuple(Location(p.root, _inside(p.box, window)) for p in parents)


class _Slices(IRVisitor):
    def __init__(self, slices: dict[Var, Call], untracked: set[Var]):
        super().__init__()
        self.slices = slices
        self.untracked = untracked

    def visit_assign_stmt(self, stmt: AssignStmt) -> None:
        if isinstance(stmt.value, Call) and stmt.value.op == "tensor.slice":
            self.slices[stmt.var] = stmt.value
        if isinstance(stmt.value, Call) and stmt.value.op == "tensor.create" \
                and dict(stmt.value.kwargs).get("manual_dep"):
            self.untracked.add(stmt.var)
        super().visit_assign_stmt(stmt)


def _whole(ty) -> Box | None:
    if isinstance(ty, TensorType) and all(isinstance(d, int) for d in ty.shape):
        return tuple((0, d) for d in ty.shape)
    return None


def _constants(expr) -> tuple[int, ...] | None:
    if isinstance(expr, ListExpr) and all(isinstance(i, ConstInt) for i in expr.items):
        return tuple(i.value for i in expr.items)
    return None


def _window(view: Call) -> Box | None:
    """The constant ``[offset, offset + shape)`` window of a slice without a valid_shape."""
    has_valid = (len(view.args) > 3 and view.args[3] is not None) \
        or any(k == "valid_shape" and v is not None for k, v in view.kwargs)
    shape = _constants(view.args[1]) if len(view.args) > 1 else None
    offset = _constants(view.args[2]) if len(view.args) > 2 else None
    if has_valid or shape is None or offset is None or len(shape) != len(offset):
        return None
    return tuple((o, o + s) for o, s in zip(offset, shape))


def _inside(parent: Box | None, window: Box | None) -> Box | None:
    """``window`` (relative to a view whose own window is ``parent``) in root coordinates."""
    if parent is None or window is None or len(parent) != len(window):
        return None
    return tuple((p_lo + lo, p_lo + hi) for (p_lo, _), (lo, hi) in zip(parent, window))
