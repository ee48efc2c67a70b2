"""Task launches that name their task, and arrays of task ids.

``out, tid = pl.submit(self.k, x, out, deps=[t])`` launches the program function ``k`` as a
task and also returns the task's id; ``pl.spmd_submit(self.k, ..., core_num=n)`` launches
it on ``n`` blocks. ``deps`` are task ids (``as tid`` of a scope, a submit's id, an element
or the whole of a ``pl.array`` of ``pl.TASK_ID``) the task waits for, on top of what the
runtime infers. ``tids[i] = tid`` rebinds ``tids`` to the array with one element replaced.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ptoc.dtypes import DataType
from ptoc.ir.nodes import Expr, Submit
from ptoc.ir.types import ArrayType, ScalarType, TensorType, TupleType
from ptoc.language.scopes import refuse_unsupported_options, task_dependencies
from ptoc.ops import make_call

SUBMIT_FUNCS = ("submit", "spmd_submit")


@dataclass(frozen=True)
class NoDepArg:
    """``pl.no_dep(x)`` at a kernel-call argument: the launch neither waits on ``x``'s last
    writer nor becomes its writer (the call's ``arg_direction_overrides``)."""

    tensor: Expr


#: Scheduling hints that change timing only; ptoc's scheduler has no early resolution.
_TIMING_ONLY = ("allow_early_resolve",)


class TaskParser:
    """Mixin for the function parser (needs ``self.ctx``, ``self.expr``,
    ``self.call_arguments``, ``self.function_call_with``, ``self.hoist``)."""

    def submit_call(self, node: ast.Call, name: str) -> Submit:
        from ptoc.language.exprs import FunctionRef

        if not node.args or not isinstance(self.expr(node.args[0]), FunctionRef):
            raise self.ctx.error(node, f"pl.{name}(...) first argument must be a self.<kernel> "
                                 "method reference", hint="write pl.submit(self.kernel, args...)")
        callee = self.expr(node.args[0]).name
        refuse_unsupported_options(self.ctx, node, name)
        call, written = self.take_predicate(
            ast.copy_location(ast.Call(node.func, node.args[1:], node.keywords), node))
        args, kwargs = self.call_arguments(call)
        deps = task_dependencies(self, node, kwargs.pop("deps", []))
        predicate = None
        if written is not None:
            predicate = self.dispatch_predicate(node, f"pl.{name}", written)
            self.check_predicate_producer(node, f"pl.{name}", predicate, deps, True)
        attrs = dict(kwargs.pop("attrs", None) or {})
        if name == "spmd_submit":
            if "core_num" not in kwargs:
                raise self.ctx.error(node, "pl.spmd_submit needs core_num=N (the positional "
                                     "slots are the kernel's arguments)")
            core_num = kwargs.pop("core_num")
            attrs["core_num"] = self.hoist(node, core_num) if not isinstance(core_num, int) \
                else core_num
            if kwargs.pop("sync_start", False):
                attrs["sync_start"] = True
        for key in _TIMING_ONLY:
            kwargs.pop(key, None)
        if kwargs:
            raise self.ctx.error(node, f"pl.{name}() got unknown options: {', '.join(kwargs)}")
        base = self.function_call_with(node, callee, args, attrs)
        results = base.type.types if isinstance(base.type, TupleType) else (base.type,)
        ty = TupleType((*results, ScalarType(DataType.TASK_ID)))
        return Submit(base.op, base.args, (), ty, base.attrs, True, base.loc, deps=tuple(deps),
                      predicate=predicate)

    def submit_targets(self, node: ast.Assign, target: ast.Tuple | ast.List,
                       value_node: ast.AST, value) -> list[ast.expr] | None:
        """The names ``out, tid = pl.submit(...)`` binds, flat (kernel results, then the
        task id), checked as PyPTO's parser checks them: two targets, the result a name or
        a tuple of names (one per kernel result), the task id a name. None when the value
        is not a submit."""
        from ptoc.language.exprs import DslPath

        func = self.expr(value_node.func) if isinstance(value_node, ast.Call) else None
        if not (isinstance(func, DslPath) and func.dotted in SUBMIT_FUNCS):
            return None
        construct = f"pl.{func.dotted}"
        usage = f"write 'out, tid = {construct}(self.kernel, ...)'"
        if len(target.elts) != 2:
            raise self.ctx.error(node, f"{construct}(...) must be unpacked as exactly 2 targets "
                                 f"(result, task id), got {len(target.elts)}",
                                 hint=f"{usage}, or '(a, b), tid = ...' for a kernel with two "
                                      "results")
        result, task_id = target.elts
        if not isinstance(task_id, ast.Name):
            raise self.ctx.error(node, f"{construct}(...) task id target "
                                 f"'{ast.unparse(task_id)}' must be a plain name",
                                 hint=f"{usage}, then store it on its own line: "
                                      f"'{ast.unparse(task_id)} = tid'")
        names = list(result.elts) if isinstance(result, (ast.Tuple, ast.List)) else [result]
        for name in names:
            if not isinstance(name, ast.Name):
                raise self.ctx.error(node, f"{construct}(...) result target '{ast.unparse(name)}' "
                                     "must be a plain name (no nested tuples or subscripts)",
                                     hint=f"{usage}, or '(a, b), tid = ...'")
        results = len(value.type.types) - 1
        if results != len(names):
            raise self.ctx.error(node, f"{construct}(...) unpacks {len(names)} result value(s) "
                                 f"but kernel '{value.op.name}' returns {results}",
                                 hint="bind one name per kernel result: 'out, tid = ...' for one, "
                                      "'(a, b), tid = ...' for two")
        return [*names, task_id]

    def no_dep_arg(self, node: ast.Call) -> NoDepArg:
        args, kwargs = self.call_arguments(node)
        if len(args) != 1 or kwargs or not (isinstance(args[0], Expr)
                                            and isinstance(args[0].type, TensorType)):
            raise self.ctx.error(node, f"'{ast.unparse(node)}' is not pl.no_dep(tensor)",
                                 hint="wrap one tensor argument of a kernel call: "
                                      "self.kernel(pl.no_dep(x), ...)")
        return NoDepArg(args[0])

    def array_element(self, node: ast.Subscript, array):
        """``tids[i]``: one element of a ``pl.array``."""
        index = self.hoist(node, self.expr(node.slice))
        return make_call("array.get_element", (array, index), {}, loc=self.ctx.loc(node))

    def array_update(self, node: ast.Assign, target: ast.Subscript, value_node: ast.AST):
        """``tids[i] = value`` is ``tids = pl.array.update_element(tids, i, value)``."""
        array = self.expr(target.value)
        index = self.hoist(node, self.expr(target.slice))
        value = self.hoist(node, self.expr(value_node))
        call = make_call("array.update_element", (array, index, value), {},
                         loc=self.ctx.loc(node))
        return self.bind_value(node, target.value.id, call, None)


def is_array(value) -> bool:
    return isinstance(getattr(value, "type", None), ArrayType)
