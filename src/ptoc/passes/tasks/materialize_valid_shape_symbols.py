"""MaterializeValidShapeSymbols (PyPTO's last pass): a ``pl.dynamic`` symbol that a kernel
parameter's ``pl.TensorView(valid_shape=[...])`` names, and that no tensor parameter's
physical shape binds, becomes a leading ``Scalar[INDEX]`` parameter of the kernel; every
call passes the extent the argument's own valid_shape has at that position.

Why: a precompiled kernel recovers its physical dimensions from the tensors it is given,
but a tensor carries no valid extent, so the value has to arrive as an argument. Leading
placement keeps the printed signature parseable (a later annotation names the symbol, and
the symbol itself is the parameter, so every annotation naming it binds at once).

Binding is positional and never inverted: the declared slot must name the symbol bare;
``valid_shape=[Q, VALID * 2]`` is refused (a wrong extent reads or writes the wrong
region). A symbol two parameters' valid_shapes name must be given one value: every call
checks that its arguments' extents at those slots are the same expression (the same
constant, or the same run-time scalar), as PyPTO does, and otherwise is refused naming
both (binding it from the first slot alone would silently drop the other extent).
"""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import ArgDirection, DataType, FunctionType
from ptoc.errors import PassError
from ptoc.ir.dynamic import dynamic_dims, shape_dim_vars
from ptoc.ir.equality import structural_equal
from ptoc.ir.printer import format_node
from ptoc.ir.nodes import Call, ConstInt, DimVar, Function, Param, Program
from ptoc.ir.types import TensorType
from ptoc.ir.visitor import IRMutator
from ptoc.passes.base import program_pass
from ptoc.passes.manager import register_default_pass

#: device kernels whose signatures the runtime fills (PyPTO: InCore / AIC / AIV / Spmd)
_KERNELS = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV, FunctionType.Spmd)


def valid_shape_slots(fn: Function) -> dict[DimVar, list[tuple[int, int]]]:
    """Symbol -> the (parameter index, axis) of every ``valid_shape`` slot that names it,
    for the symbols the kernel cannot bind itself."""
    physical = set(dynamic_dims(fn))
    declared = {p.var for p in fn.params}
    slots: dict[DimVar, list[tuple[int, int]]] = {}
    for index, param in enumerate(fn.params):
        ty = param.var.type
        valid = ty.view.valid_shape if isinstance(ty, TensorType) and ty.view else None
        for axis, dim in enumerate(valid or ()):
            for symbol in shape_dim_vars((dim,)):
                if symbol in physical or symbol in declared:
                    continue
                if dim is not symbol:
                    raise PassError(
                        f"kernel '{fn.name}' parameter '{param.var.name}' has valid_shape "
                        f"axis {axis} = an expression of {symbol.name}; the extent passed "
                        f"cannot be inverted to {symbol.name}", fn.loc,
                        hint=f"name {symbol.name} bare in some valid_shape, or pass the "
                             "extent as a pl.Scalar[pl.INDEX] parameter")
                slots.setdefault(symbol, []).append((index, axis))
    return slots


class _CallSites(IRMutator):
    """Prepends each materialised symbol's value to the calls of its kernel."""

    def __init__(self, slots: dict[str, dict[DimVar, list[tuple[int, int]]]], program: Program):
        super().__init__()
        self.slots = slots
        self.kernels = {fn.name: fn for fn in program.functions}

    def mutate_call(self, node: Call):
        node = super().mutate_call(node)
        slots = self.slots.get(node.op) if node.is_function else None
        if not slots:
            return node
        values = tuple(self.agreed(node, symbol, where) for symbol, where in slots.items())
        attrs = dict(node.attrs)
        if "arg_directions" in attrs:
            attrs["arg_directions"] = (ArgDirection.Scalar,) * len(values) \
                + tuple(attrs["arg_directions"])
        return dataclasses.replace(node, args=values + tuple(node.args), attrs=attrs)

    def agreed(self, call: Call, symbol: DimVar, slots: list[tuple[int, int]]):
        """The one extent the call gives ``symbol`` at every slot naming it."""
        first = self.extent(call, symbol, *slots[0])
        for index, axis in slots[1:]:
            other = self.extent(call, symbol, index, axis)
            if not structural_equal(first, other):
                params = self.kernels[call.op].params
                names = [params[i].var.name for i, _ in (slots[0], (index, axis))]
                raise PassError(
                    f"call of '{call.op}': pl.dynamic symbol {symbol.name} is the valid_shape "
                    f"of parameter '{names[0]}' axis {slots[0][1]} and of '{names[1]}' axis "
                    f"{axis}, but the arguments give it different extents "
                    f"({format_node(first)} and {format_node(other)})", call.loc,
                    hint="pass arguments whose valid_shape agrees at those positions (the same "
                         "scalar or constant), or give the parameters different symbols")
        return first

    def extent(self, call: Call, symbol: DimVar, index: int, axis: int):
        arg = call.args[index]
        ty = arg.type
        if not isinstance(ty, TensorType):
            raise PassError(f"call of '{call.op}': argument {index} is not a tensor, so it has "
                            f"no valid extent for {symbol.name}", call.loc)
        dim = ty.valid_shape[axis]
        return ConstInt(dim, DataType.INDEX) if isinstance(dim, int) else dim


@program_pass(name="MaterializeValidShapeSymbols", handles_while_loops=True)
def materialize_valid_shape_symbols(program: Program, ctx) -> Program:
    """Leading INDEX parameters for valid_shape-only symbols, fed at every call site."""
    slots = {fn.name: valid_shape_slots(fn) for fn in program.functions
             if fn.func_type in _KERNELS}
    slots = {name: s for name, s in slots.items() if s}
    if not slots:
        return program
    functions = []
    for fn in _CallSites(slots, program).mutate(program).functions:
        added = slots.get(fn.name)
        if added:
            fn = dataclasses.replace(fn, params=tuple(Param(s) for s in added) + fn.params)
        functions.append(fn)
    return dataclasses.replace(program, functions=tuple(functions))


register_default_pass(materialize_valid_shape_symbols)

__all__ = ["materialize_valid_shape_symbols", "valid_shape_slots"]
