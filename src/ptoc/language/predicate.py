"""``predicate=(t[i] > 0)``: the dispatch predicate of ``pl.submit``, ``pl.spmd_submit`` and
``pl.spmd`` (PyPTO's tasks/03-tuning).

Why matched from the source, never parsed as an expression: in this position ``t[i] > 0`` is
a spec handed to the scheduler, which reads the element when the task's dependencies are met
and skips the task when the comparison is false. Parsed as an ordinary expression it would be
a ``tensor.read`` in the orchestration — a read that waits for ``t``'s producer, the stall the
predicate exists to avoid. The runtime compares one element with one constant, so only
``tensor[indices] OP int-literal`` (either order; ``==`` ``!=`` ``>`` ``<`` ``>=`` ``<=``) is
accepted; ``pl.tensor.read(t, [i, j]) > 0`` (how the IR prints it) is the same spec.

The predicate is stored as ``BinOp(op, tensor.read(t, [indices]), ConstInt)`` in the order
written, so printing and re-parsing gives the same IR. Where the parser can prove that the
operand's producer (a submit's result, or a name a ``with pl.spmd(...) as tid`` region binds)
is not among the task's ``deps=``, the launch is refused, as PyPTO refuses it: the scheduler
would read the element before its producer wrote it.
"""

from __future__ import annotations

import ast

from ptoc.dtypes import DataType, ScopeKind
from ptoc.ir.nodes import BinOp, ConstInt, Expr, Var
from ptoc.ir.types import ArrayType, ScalarType, TensorType
from ptoc.ops.checks import describe_type

_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Gt: ">", ast.Lt: "<", ast.GtE: ">=", ast.LtE: "<="}
#: what the runtime reads: one signed integer element (it sign-extends what it reads)
_OPERAND_DTYPES = (DataType.INT8, DataType.INT16, DataType.INT32, DataType.INT64)
#: what a non-IR operand is, in the user's words (a program function, a pl.* name)
_PYTHON_VALUE = {"FunctionRef": "a function of the program", "DslPath": "a pl.* name"}
_HINT = ("write predicate=(t[i0, ...] > 0): one tensor element against an integer literal; "
         "reduce anything richer to one gate value in a prior kernel and predicate on that")


class PredicateParser:
    """Mixin for the function parser (needs ``self.ctx``, ``self.expr``,
    ``self.dispatch_call``, ``self.open_scopes`` and ``self.task_producers``)."""

    open_scopes: list
    task_producers: dict

    def take_predicate(self, call: ast.Call) -> tuple[ast.Call, ast.expr | None]:
        """``call`` without its ``predicate=`` keyword, and that keyword's value (None)."""
        found = next((k for k in call.keywords if k.arg == "predicate"), None)
        if found is None:
            return call, None
        rest = [k for k in call.keywords if k is not found]
        return ast.copy_location(ast.Call(call.func, call.args, rest), call), found.value

    def dispatch_predicate(self, node: ast.AST, construct: str, value: ast.expr) -> BinOp:
        """The predicate IR of ``predicate=<value>`` on ``construct`` (``pl.submit``, ...)."""
        if ScopeKind.Cluster in self.open_scopes:
            raise self.ctx.error(node, f"`{construct}(..., predicate=(...))` cannot be nested "
                                 "inside `pl.cluster()`: a launch inside a cluster becomes part "
                                 "of the cluster's one task, so the dispatch predicate would be "
                                 "lost", hint=f"use a standalone `{construct}(..., predicate=...)`")
        if not isinstance(value, ast.Compare):
            raise self.ctx.error(value, f"'{construct}' predicate must be a single comparison "
                                 f"(==, !=, >, <, >=, <=); got '{ast.unparse(value)}'", hint=_HINT)
        if len(value.ops) != 1:
            raise self.ctx.error(value, f"'{construct}' predicate '{ast.unparse(value)}': Only "
                                 "simple comparisons supported (the runtime evaluates one)",
                                 hint=_HINT)
        op = _OPS.get(type(value.ops[0]))
        if op is None:
            raise self.ctx.error(value, f"'{construct}' predicate '{ast.unparse(value)}': "
                                 "Unsupported comparison operator", hint=_HINT)
        left, right = value.left, value.comparators[0]
        if _literal(right) is not None and _literal(left) is None:
            read, target, read_first = left, _literal(right), True
        elif _literal(left) is not None and _literal(right) is None:
            read, target, read_first = right, _literal(left), False
        else:
            read = target = read_first = None
        element = self._predicate_read(read) if read is not None else None
        if element is None:
            raise self.ctx.error(value, f"'{construct}' predicate '{ast.unparse(value)}' must "
                                 "compare one tensor element (e.g. t[i]) against an integer "
                                 "literal; the runtime evaluates a single element-vs-constant "
                                 "comparison", hint=_HINT)
        if not -2 ** 63 <= target < 2 ** 63:
            raise self.ctx.error(value, f"'{construct}' predicate '{ast.unparse(value)}': the "
                                 f"literal {target} does not fit the 64-bit constant the runtime "
                                 "compares against", hint="compare against a literal in "
                                 "[-2**63, 2**63); the element is sign-extended to 64 bits")
        const = ConstInt(target)
        lhs, rhs = (element, const) if read_first else (const, element)
        return BinOp(op, lhs, rhs)

    def _predicate_read(self, node: ast.expr) -> Expr | None:
        """``t[i, j]`` or ``pl.tensor.read(t, [i, j])`` as ``tensor.read``; None for any other
        expression. Refuses a read ``tensor.read`` could not make (the element's type, its
        indices)."""
        if isinstance(node, ast.Subscript):
            tensor_node = node.value
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        elif isinstance(node, ast.Call) and self._names_read(node.func) and len(node.args) == 2 \
                and not node.keywords:
            tensor_node, listed = node.args
            items = listed.elts if isinstance(listed, (ast.List, ast.Tuple)) else [listed]
        else:
            return None
        tensor = self.expr(tensor_node)
        if not (isinstance(tensor, Var) and isinstance(tensor.type, TensorType)):
            got = describe_type(tensor.type) if isinstance(tensor, Expr) else \
                _PYTHON_VALUE.get(type(tensor).__name__, f"a Python {type(tensor).__name__}")
            raise self.ctx.error(node, f"predicate operand '{ast.unparse(tensor_node)}' must be "
                                 f"a tensor variable, got {got}", hint=_HINT)
        dtype = tensor.type.dtype
        if dtype not in _OPERAND_DTYPES:
            raise self.ctx.error(node, f"predicate operand '{tensor.name}' must be a signed "
                                 f"8/16/32/64-bit integer tensor, got {dtype.value}: the runtime "
                                 "sign-extends the value it reads, so an unsigned operand could "
                                 "compare as negative and silently invert the dispatch decision",
                                 hint="store the gate value in an INT32 tensor")
        rank = len(tensor.type.shape)
        if len(items) != rank:
            raise self.ctx.error(node, f"predicate needs {rank} index(es) to locate a single "
                                 f"element of the rank-{rank} tensor '{tensor.name}', got "
                                 f"{len(items)}", hint=_HINT)
        indices = [self._predicate_index(node, item) for item in items]
        return self.dispatch_call(node, "tensor.read", [tensor, indices], {}, None)

    def _names_read(self, func: ast.expr) -> bool:
        from ptoc.language.exprs import DslPath

        path = self.expr(func)
        return isinstance(path, DslPath) and path.dotted in ("tensor.read", "read")

    def _predicate_index(self, node: ast.AST, item: ast.expr):
        if isinstance(item, ast.Slice):
            raise self.ctx.error(node, f"predicate index '{ast.unparse(item)}' is a window; the "
                                 "predicate reads one element", hint=_HINT)
        index = self.expr(item)
        if isinstance(index, bool) or not isinstance(index, (int, Expr)) or isinstance(
                index, Expr) and not (isinstance(index.type, ScalarType)
                                      and index.type.dtype.is_int):
            raise self.ctx.error(node, f"predicate indices must be integer scalars, got "
                                 f"'{ast.unparse(item)}'", hint=_HINT)
        if isinstance(index, int) and index < 0:
            raise self.ctx.error(node, f"predicate index must be non-negative, got {index}",
                                 hint="index from the start of each dimension")
        return index

    def check_predicate_producer(self, node: ast.AST, construct: str, predicate: BinOp,
                                 deps, deps_accepted: bool) -> None:
        """Refuse a predicate whose operand was produced by a task this launch provably does
        not wait for (see the module doc); an operand of unknown origin, or a TASK_ID array
        among ``deps``, proves nothing."""
        read = predicate.lhs if isinstance(predicate.rhs, ConstInt) else predicate.rhs
        operand = read.args[0]
        producer = self.task_producers.get(operand)
        if producer is None or any(isinstance(d.type, ArrayType) for d in deps) \
                or any(d is producer for d in deps):
            return
        why = ("without it the scheduler may evaluate the predicate before the producing task "
               "has written the tensor")
        hint = (f"add the producer to the dependency list: deps=[{producer.name}]; {why}"
                if deps_accepted else
                f"this form does not accept deps=; capture the task id instead: "
                f"'with pl.spmd(n, deps=[{producer.name}], predicate=...) as tid:'; {why}")
        raise self.ctx.error(node, f"'{construct}' predicate reads '{operand.name}', which is "
                             f"produced by the task bound to '{producer.name}', but "
                             f"'{producer.name}' is not in deps=", hint=hint)

    def record_producers(self, results, task_id: Var) -> None:
        """``results`` (Vars) are written by the task ``task_id`` names."""
        for var in results:
            if isinstance(var, Var):
                self.task_producers[var] = task_id


def _literal(node: ast.expr) -> int | None:
    """The value of an integer literal (``3``, ``-5``, ``+5``), else None."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        sign = -1 if isinstance(node.op, ast.USub) else 1
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, int) \
            and not isinstance(node.value, bool):
        return sign * node.value
    return None
