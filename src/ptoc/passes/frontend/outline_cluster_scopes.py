"""OutlineClusterScopes: ``with pl.cluster()`` regions become Group functions and
``pl.spmd`` regions not inside a cluster become Spmd functions, each replaced by a call.
The launch spec of an SPMD region (``core_num``, ``sync_start``) rides on the call's
attrs, not on the function: ``core_num`` may be a value of the caller
(``self.main_spmd_0(x, out, attrs={"core_num": n})``). A ``pl.spmd`` directly inside a
cluster keeps its region in the Group function (one dispatch). Runs after
OutlineIncoreScopes, so each region's body is already calls of kernels."""

from __future__ import annotations

import dataclasses

from ptoc.dtypes import FunctionType, ScopeKind
from ptoc.errors import PassError
from ptoc.ir.nodes import ConstInt, Program, ScopeStmt
from ptoc.ir.printer import flatten
from ptoc.ir.visitor import IRMutator
from ptoc.passes.base import program_pass
from ptoc.passes.frontend.outline_scopes import OutlineSpec, ScopeOutliner
from ptoc.passes.manager import register_default_pass


def launch_spec(scope: ScopeStmt) -> dict:
    """``core_num`` / ``sync_start`` of an SPMD region, as the dispatch's attrs."""
    if scope.core_num is None:
        return {}
    core_num = scope.core_num
    spec = {"core_num": core_num.value if isinstance(core_num, ConstInt) else core_num}
    if scope.attrs.get("sync_start"):
        spec["sync_start"] = True
    return spec


class _UnwrapSpmdInCluster(IRMutator):
    """``with pl.cluster(): with pl.spmd(n): body`` -> one cluster region carrying the launch
    spec (the Group function is dispatched on ``n`` blocks; marked ``spmd_unwrapped``)."""

    def mutate_scope_stmt(self, node: ScopeStmt):
        node = super().mutate_scope_stmt(node)
        inner = flatten(node.body)
        if node.kind is ScopeKind.Cluster and len(inner) == 1 and isinstance(inner[0], ScopeStmt) \
                and inner[0].kind is ScopeKind.Spmd and inner[0].task_id is None:
            spmd = inner[0]
            if spmd.predicate is not None:
                raise PassError("a pl.spmd(..., predicate=...) nested inside pl.cluster() is "
                                "unwrapped into the cluster's one task, so its dispatch "
                                "predicate would be lost", spmd.loc,
                                hint="use a standalone pl.spmd(..., predicate=...)")
            attrs = {**node.attrs, **{k: v for k, v in spmd.attrs.items() if k == "sync_start"}}
            return dataclasses.replace(node, body=spmd.body, attrs=attrs, core_num=spmd.core_num)
        return node


CLUSTER = OutlineSpec(ScopeKind.Cluster, func_type=lambda scope: FunctionType.Group,
                      suffix=lambda scope: "cluster", call_attrs=launch_spec,
                      function_attrs=lambda scope: ({"spmd_unwrapped": True}
                                                    if scope.core_num is not None else {}))
SPMD = OutlineSpec(ScopeKind.Spmd, func_type=lambda scope: FunctionType.Spmd,
                   suffix=lambda scope: "spmd", call_attrs=launch_spec)


@program_pass(name="OutlineClusterScopes", required={"SSAForm", "SplitIncoreOrch"},
              produced={"SSAForm", "ClusterOutlined"},
              handles_while_loops=True)
def outline_cluster_scopes(program: Program, ctx) -> Program:
    """Outline cluster regions into Group functions, then standalone SPMD regions into
    Spmd functions (module docstring)."""
    program = _UnwrapSpmdInCluster().mutate(program)
    program = ScopeOutliner(program, CLUSTER, "OutlineClusterScopes").run()
    return ScopeOutliner(program, SPMD, "OutlineClusterScopes").run()


register_default_pass(outline_cluster_scopes)
