"""IR properties that passes require, produce and invalidate.

A property is a fact about a whole program ("every tile has a MemRef") that a later pass
may rely on. Passes declare them so the PassManager can reject a pipeline whose order is
wrong before it produces garbage, naming the pass that needed the fact and the pass that
broke it. Where a cheap checker is registered for a property, it is also used to confirm
the fact on the actual IR (standalone pass calls and after a pass claims to produce it).
"""

from __future__ import annotations

import enum
from typing import Callable, Iterable

from ptoc.errors import PassError
from ptoc.ir.memo import IdentityMemo


class IRProperty(enum.Enum):
    """Facts about a program, in roughly the order the default pipeline establishes them."""

    InlineFunctionsEliminated = "InlineFunctionsEliminated"  # no Inline function is left
    SSAForm = "SSAForm"                        # every Var assigned once; loops carry iter-args
    UseAfterDef = "UseAfterDef"                # every use follows its definition (ir.verify)
    TypeChecked = "TypeChecked"                # types agree with the op registry (ir.verify)
    TileOpsOnly = "TileOpsOnly"                # InCore bodies use tile-level ops only
    L0Tiled = "L0Tiled"                        # matmuls fit L0 (AutoTileMatmulL0 ran)
    MemoryInferred = "MemoryInferred"          # every tile has a concrete memory space
    PipelineLoopsLowered = "PipelineLoopsLowered"  # no pl.pipeline loop is left unreplicated
    IOOrderCanonical = "IOOrderCanonical"      # loads first, stores last in pipeline bodies
    MemRefsAssigned = "MemRefsAssigned"        # every tile carries a MemRef
    MemoryReused = "MemoryReused"              # MemRefs coalesced by lifetime
    AddressesAllocated = "AddressesAllocated"  # every MemRef has a byte offset in its space
    SplitIncoreOrch = "SplitIncoreOrch"        # no InCore scope is left in an orchestration body
    ClusterOutlined = "ClusterOutlined"        # no Cluster / standalone Spmd scope is left
    HierarchyOutlined = "HierarchyOutlined"    # no Hierarchy scope is left
    CallDirectionsResolved = "CallDirectionsResolved"  # every task call has arg_directions
    RuntimeScopesMaterialized = "RuntimeScopesMaterialized"  # orchestration scopes are explicit
    IterArgCarryClassified = "IterArgCarryClassified"  # orchestration carries are classified


#: properties the IR verifier (``ptoc.ir.verify``) decides together, in one walk
IR_VERIFIER_PROPERTIES = frozenset({IRProperty.SSAForm, IRProperty.UseAfterDef,
                                    IRProperty.TypeChecked})

PropertySet = frozenset  # frozenset[IRProperty]; an alias so signatures read well


#: value and name -> member (every pass object built converts its declarations; walking
#: the enum per name cost half a millisecond per compile)
_BY_NAME: dict[str, IRProperty] = {**{p.name: p for p in IRProperty},
                                   **{p.value: p for p in IRProperty}}


def to_property(value: IRProperty | str) -> IRProperty:
    """Accept an ``IRProperty`` or its name; reject anything else with the valid names."""
    if isinstance(value, IRProperty):
        return value
    if isinstance(value, str) and value in _BY_NAME:
        return _BY_NAME[value]
    valid = ", ".join(p.value for p in IRProperty)
    raise PassError(
        f"unknown IR property {value!r}",
        hint=f"use one of {valid} (add new ones to ptoc.passes.properties.IRProperty)",
    )


def to_property_set(values: Iterable[IRProperty | str] | IRProperty | str | None) -> frozenset[IRProperty]:
    """Normalise a declaration (one property, a string, an iterable or None) to a frozenset."""
    if values is None:
        return frozenset()
    if type(values) is frozenset and all(type(v) is IRProperty for v in values):
        return values   # already normalised (a pass factory converts its declarations once)
    if isinstance(values, (IRProperty, str)):
        values = (values,)
    return frozenset(to_property(v) for v in values)


def format_properties(props: Iterable[IRProperty]) -> str:
    """Sorted, comma-separated names, for messages."""
    names = sorted(p.value for p in props)
    return ", ".join(names) if names else "(none)"


# ---- optional checkers -------------------------------------------------------------------

PropertyChecker = Callable[[object], bool]
_CHECKERS: dict[IRProperty, PropertyChecker] = {}


def register_property_checker(prop: IRProperty | str, checker: PropertyChecker) -> None:
    """Register ``checker(program) -> bool`` that says whether ``prop`` holds on real IR.

    Checkers must be cheap and side-effect free: they run before standalone pass calls and
    after every pass that claims to produce the property (verification level BASIC or more).
    """
    _CHECKERS[to_property(prop)] = checker


def unregister_property_checker(prop: IRProperty | str) -> None:
    _CHECKERS.pop(to_property(prop), None)


def has_checker(prop: IRProperty) -> bool:
    return prop in _CHECKERS


def checked_properties() -> frozenset[IRProperty]:
    """Properties a registered checker decides."""
    return frozenset(_CHECKERS)


def check_property(prop: IRProperty, program) -> bool | None:
    """True/False from the registered checker, or None when no checker is known."""
    checker = _CHECKERS.get(prop)
    if checker is None:
        return None
    return bool(checker(program))


# ---- built-in checkers for properties that are plain facts about tile types ------------------

def _function_vars(fn, *, ring_tiles_exempt: bool = False) -> list:
    """Every variable bound in ``fn``: params and definitions (without the tiles popped from
    cross-core pipes when ``ring_tiles_exempt``), in one explicit walk."""
    from ptoc.ir.nodes import AssignStmt, ForStmt, IfStmt, SeqStmts, WhileStmt
    from ptoc.passes.init_mem_ref import is_ring_tile

    found = [p.var for p in fn.params]
    stack = [fn.body]
    while stack:
        stmt = stack.pop()
        kind = type(stmt)
        if kind is SeqStmts:
            stack.extend(reversed(stmt.stmts))
        elif kind is AssignStmt:
            if not (ring_tiles_exempt and is_ring_tile(stmt.value)):
                found.append(stmt.var)
        elif kind is ForStmt or kind is WhileStmt:
            found.extend(stmt.iter_args)
            found.extend(stmt.return_vars)
            stack.append(stmt.body)
        elif kind is IfStmt:
            found.extend(stmt.return_vars)
            if stmt.else_body is not None:
                stack.append(stmt.else_body)
            stack.append(stmt.then_body)
    return found


def _kernel_tiles_hold(program, holds, memo, *, ring_tiles_exempt: bool = False) -> bool:
    """``holds(tile_type)`` for every tile bound in a kernel function (InCore/AIC/AIV). A
    function (immutable) once seen to hold is remembered in ``memo``: passes return most
    functions unchanged, and the check runs after each pass producing the property."""
    from ptoc.dtypes import FunctionType
    from ptoc.ir.types import TileType

    kernels = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV)
    for fn in program.functions:
        if fn.func_type not in kernels or memo.get(fn) is True:
            continue
        for v in _function_vars(fn, ring_tiles_exempt=ring_tiles_exempt):
            if isinstance(v.type, TileType) and not holds(v.type):
                return False
        memo.put(fn, True)
    return True


_HAVE_SPACE = IdentityMemo(256)
_HAVE_MEMREF = IdentityMemo(256)


def tiles_have_memory_space(program) -> bool:
    """MemoryInferred: every tile in a kernel function has a memory space."""
    return _kernel_tiles_hold(program, lambda t: t.memory_space is not None, _HAVE_SPACE)


def tiles_have_memref(program) -> bool:
    """MemRefsAssigned: every tile in a kernel function carries a MemRef (but a tile popped
    from a cross-core pipe, which lives in the pipe's ring)."""
    return _kernel_tiles_hold(program, lambda t: t.memref is not None, _HAVE_MEMREF,
                              ring_tiles_exempt=True)


register_property_checker(IRProperty.MemoryInferred, tiles_have_memory_space)
register_property_checker(IRProperty.MemRefsAssigned, tiles_have_memref)
