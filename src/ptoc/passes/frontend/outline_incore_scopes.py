"""OutlineIncoreScopes: every ``with pl.at(level=pl.Level.CORE_GROUP)`` region of an
orchestration (or opaque) function becomes an InCore kernel and a call to it; an opaque
parent that outlines a region becomes the Orchestration function. The scope's
``optimizations`` (``split`` / ``slot_num``) become the kernel's attrs. Parameters, outputs,
directions, names and the rewiring of later uses: ``outline_scopes``."""

from __future__ import annotations

from ptoc.dtypes import FunctionType, ScopeKind
from ptoc.ir.nodes import Program
from ptoc.language.scopes import OPTIMIZATION_ATTRS
from ptoc.passes.base import program_pass
from ptoc.passes.frontend.outline_scopes import OutlineSpec, ScopeOutliner
from ptoc.passes.manager import register_default_pass

SPEC = OutlineSpec(ScopeKind.InCore, func_type=lambda scope: FunctionType.InCore,
                   suffix=lambda scope: "incore", promotes_to=FunctionType.Orchestration,
                   function_attrs=lambda scope: {k: scope.attrs[k] for k in OPTIMIZATION_ATTRS
                                                 if k in scope.attrs})


@program_pass(name="OutlineIncoreScopes", required={"SSAForm"},
              produced={"SSAForm", "SplitIncoreOrch"},
              handles_while_loops=True)
def outline_incore_scopes(program: Program, ctx) -> Program:
    """Outline InCore regions into kernels (module docstring)."""
    return ScopeOutliner(program, SPEC, "OutlineIncoreScopes").run()


register_default_pass(outline_incore_scopes)
