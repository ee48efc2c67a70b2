"""StampTfreeSplit (PyPTO pass 24): every ``system.tfree_to_*`` carries the ``split`` (and
pipe ``id``) of the ``tile.tpop_from_*`` whose tile it releases, so codegen reads them off
the free itself.

Checked while stamping (user errors, raised with a fix): the freed tile must come from a pop
of the matching direction (``tfree_to_aic`` releases ``tpop_from_aic`` results), and an
explicit ``id`` on the free must equal the pop's.
"""

from __future__ import annotations


from ptoc.ir.nodes import replace
from ptoc.dtypes import FunctionType
from ptoc.errors import PassError
from ptoc.ir.nodes import AssignStmt, Call, Function, Var
from ptoc.ir.visitor import IRMutator, IRVisitor
from ptoc.passes.base import function_pass
from ptoc.passes.manager import register_default_pass

PAIRS = {"system.tfree_to_aic": "tile.tpop_from_aic", "system.tfree_to_aiv": "tile.tpop_from_aiv"}


@function_pass(name="StampTfreeSplit", required=("SSAForm",),
               func_types=(FunctionType.AIC, FunctionType.AIV),
               handles_while_loops=True)
def stamp_tfree_split(fn: Function, ctx) -> Function:
    """Copy each pop's split and id onto the free of its tile (module docstring)."""
    pops: dict[Var, Call] = {}
    frees = 0

    class _Pops(IRVisitor):
        def visit_assign_stmt(self, node: AssignStmt) -> None:
            if isinstance(node.value, Call) and node.value.op in PAIRS.values():
                pops[node.var] = node.value
            super().visit_assign_stmt(node)

        def visit_call(self, node: Call) -> None:
            nonlocal frees
            frees += node.op in PAIRS
            super().visit_call(node)

    _Pops().visit(fn.body)
    if not frees:
        return fn    # nothing to stamp (the rewrite below touches frees only)

    class _Stamp(IRMutator):
        def mutate_call(self, node: Call):
            node = super().mutate_call(node)
            if node.op not in PAIRS:
                return node
            tile = node.args[0] if node.args else None
            pop = pops.get(tile) if isinstance(tile, Var) else None
            if pop is None or pop.op != PAIRS[node.op]:
                raise PassError(f"pl.{node.op} of '{getattr(tile, 'name', tile)}' in "
                                f"'{fn.name}': that tile is not a {PAIRS[node.op]} result",
                                node.loc, hint="free each popped tile with the free of its "
                                               "direction (tfree_to_aic for tpop_from_aic)")
            ident = node.kwarg("id")
            if ident is not None and pop.kwarg("id") is not None and ident != pop.kwarg("id"):
                raise PassError(f"pl.{node.op} of '{tile.name}' says id={ident} but the tile "
                                f"was popped from pipe id={pop.kwarg('id')}", node.loc,
                                hint=f"write id={pop.kwarg('id')} or leave it out")
            kwargs = dict(node.kwargs)
            kwargs.pop("split", None)
            if pop.kwarg("split", 0):     # 0 is the op's default, which calls never store
                kwargs["split"] = pop.kwarg("split")
            if pop.kwarg("id") is not None:
                kwargs["id"] = pop.kwarg("id")
            stamped = tuple(kwargs.items())
            return node if stamped == node.kwargs else replace(node, kwargs=stamped)

    body = _Stamp().mutate(fn.body)
    return fn if body is fn.body else replace(fn, body=body)


register_default_pass(stamp_tfree_split)
