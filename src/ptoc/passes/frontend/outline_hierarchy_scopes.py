"""OutlineHierarchyScopes: every ``with pl.at(level=L, role=R)`` region at a level other
than CORE_GROUP becomes an Opaque function carrying ``level`` (and ``role``), named
``<function>_<level>[_<role>]_<n>``; nested hierarchy regions are outlined first. The
parent keeps its type. InCore regions inside stay for OutlineIncoreScopes."""

from __future__ import annotations

from ptoc.dtypes import FunctionType, Level, Role, ScopeKind
from ptoc.ir.nodes import Program, ScopeStmt
from ptoc.passes.base import program_pass
from ptoc.passes.frontend.outline_scopes import OutlineSpec, ScopeOutliner
from ptoc.passes.manager import register_default_pass

_LEVEL = {Level.CORE_GROUP: "core_group", Level.CHIP_DIE: "chip_die", Level.CHIP: "chip",
          Level.HOST: "host", Level.CLUSTER: "cluster0", Level.AIC: "aic", Level.AIV: "aiv"}
_ROLE = {Role.Orchestrator: "orch", Role.Worker: "worker"}


def _suffix(scope: ScopeStmt) -> str:
    role = scope.attrs.get("role")
    return _LEVEL[scope.attrs["level"]] + (f"_{_ROLE[role]}" if role is not None else "")


def _attrs(scope: ScopeStmt) -> dict:
    return {k: scope.attrs[k].value for k in ("level", "role") if k in scope.attrs}


SPEC = OutlineSpec(ScopeKind.Hierarchy, func_type=lambda scope: FunctionType.Opaque,
                   suffix=_suffix, inner_first=True, function_attrs=_attrs)


@program_pass(name="OutlineHierarchyScopes", required={"SSAForm"},
              produced={"SSAForm", "HierarchyOutlined"},
              handles_while_loops=True)
def outline_hierarchy_scopes(program: Program, ctx) -> Program:
    """Outline hierarchy regions into level/role functions (module docstring)."""
    return ScopeOutliner(program, SPEC, "OutlineHierarchyScopes").run()


register_default_pass(outline_hierarchy_scopes)
