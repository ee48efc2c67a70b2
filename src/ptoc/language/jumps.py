"""``break`` / ``continue`` rewritten into structured control flow before a loop is parsed,
as PyPTO's CtrlFlowTransform does for kernels (the IR has no jumps; PTO's ``scf`` regions
cannot express them).

On the Python AST of one loop body (the jumps of nested loops are theirs):

* a jump sets a flag (``continue``: local to the trip; ``break``: carried, tested by the
  loop condition) and the statements after it in its list are dropped (they cannot run);
* after an ``if`` that may jump, the rest of the body runs under ``if not <flag>:``;
* a ``pl.range`` loop with a ``break`` becomes ``i = start; while i < stop and not brk:``
  with ``i = i + step`` after the guarded body (a ``continue`` still advances ``i``).

Only loops whose carries are implicit (Python ``while``, ``pl.range`` without
``init_values``) take jumps: there every carried name keeps the value it had when the loop
jumped, which is Python's meaning. Elsewhere a jump is a ParseError that says so.
"""

from __future__ import annotations

import ast

_JUMPS = (ast.Break, ast.Continue)


def find_jump(stmts: list[ast.stmt]) -> ast.stmt | None:
    """The first ``break``/``continue`` of this loop in ``stmts`` (not of nested loops)."""
    for s in stmts:
        if isinstance(s, _JUMPS):
            return s
        if isinstance(s, (ast.For, ast.While, ast.FunctionDef, ast.AsyncFunctionDef,
                          ast.ClassDef)):
            continue
        for field in ("body", "orelse"):
            inner = getattr(s, field, None)
            if isinstance(inner, list):
                found = find_jump(inner)
                if found is not None:
                    return found
    return None


def kinds(stmts: list[ast.stmt]) -> set[type]:
    """The jump statement classes of this loop in ``stmts``."""
    found: set[type] = set()
    for s in stmts:
        if isinstance(s, _JUMPS):
            found.add(type(s))
        elif not isinstance(s, (ast.For, ast.While)):
            for field in ("body", "orelse"):
                inner = getattr(s, field, None)
                if isinstance(inner, list):
                    found |= kinds(inner)
    return found


class _Guard:
    """Rewrites one body: jumps set flags, what follows a possible jump runs under a test."""

    def __init__(self, flags: dict[type, str], error):
        self.flags = flags          # ast.Break / ast.Continue -> flag name
        self.error = error          # (node, message) -> exception

    def body(self, stmts: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for i, s in enumerate(stmts):
            if isinstance(s, _JUMPS):
                out.append(_assign(self.flags[type(s)], ast.Constant(True), s))
                return out       # the rest of this list cannot run
            if find_jump([s]) is None:
                out.append(s)
                continue
            if not isinstance(s, ast.If):
                raise self.error(s, f"'{type(find_jump([s])).__name__.lower()}' inside a "
                                    f"'{type(s).__name__.lower()}' statement of a loop body")
            out.append(ast.copy_location(ast.If(s.test, self.body(s.body) or [ast.Pass()],
                                                self.body(s.orelse)), s))
            rest = self.body(stmts[i + 1:])
            if rest:
                out.append(ast.copy_location(ast.If(self.still_running(s), rest, []), s))
            return out
        return out

    def still_running(self, at: ast.AST) -> ast.expr:
        tests = [_not(name, at) for name in self.flags.values()]
        test = tests[0] if len(tests) == 1 else ast.BoolOp(ast.And(), tests)
        return ast.copy_location(test, at)


def lower_while(node: ast.While, error) -> tuple[list[ast.stmt], ast.While]:
    """``node`` without jumps: statements to run before it and the new loop."""
    found = kinds(node.body)
    if not found:
        return [], node
    flags, before = _flags(found, node)
    body = _Guard(flags, error).body(node.body)
    body = _trip_start(flags, node) + body
    test = node.test
    if ast.Break in flags:
        test = ast.copy_location(ast.BoolOp(ast.And(), [test, _not(flags[ast.Break], node)]),
                                 node)
    loop = ast.copy_location(ast.While(test, body or [ast.Pass()], []), node)
    return before, ast.fix_missing_locations(loop)


def lower_range(node: ast.For, bounds, error) -> tuple[list[ast.stmt], ast.stmt]:
    """A ``pl.range`` loop without jumps (``bounds``: its start, stop and step as AST); a
    loop with a ``break`` becomes a while loop over the loop variable."""
    found = kinds(node.body)
    if ast.Break not in found:
        flags, _ = _flags(found, node)
        body = _trip_start(flags, node) + _Guard(flags, error).body(node.body)
        loop = ast.For(node.target, node.iter, body, [], node.type_comment)
        return [], ast.fix_missing_locations(ast.copy_location(loop, node))
    start, stop, step = bounds
    if not (isinstance(step, ast.Constant) and isinstance(step.value, int) and step.value):
        raise error(node, "a 'break' needs a loop with a constant, non-zero step")
    iv = node.target.id
    stop_name = f"_stop_{_tag(node)}"
    compare = ast.Lt() if step.value > 0 else ast.Gt()
    test = ast.Compare(ast.Name(iv, ast.Load()), [compare], [ast.Name(stop_name, ast.Load())])
    loop = ast.copy_location(ast.While(ast.copy_location(test, node), node.body, []), node)
    before, lowered = lower_while(loop, error)
    brk = lowered.test.values[-1].operand.id      # the loop's break flag
    advance = _assign(iv, ast.BinOp(ast.Name(iv, ast.Load()), ast.Add(), step), node)
    lowered.body.append(ast.copy_location(ast.If(_not(brk, node), [advance], []), node))
    ast.fix_missing_locations(lowered)
    return [_assign(iv, start, node), _assign(stop_name, stop, node)] + before, lowered


def _tag(loop: ast.AST) -> str:
    """A suffix naming the loop by its position, so the names repeat from parse to parse."""
    return f"{loop.lineno}_{loop.col_offset}"


def _flags(found: set[type], at: ast.AST) -> tuple[dict[type, str], list[ast.stmt]]:
    flags = {kind: f"_{kind.__name__.lower()}_{_tag(at)}" for kind in (ast.Break, ast.Continue)
             if kind in found}
    before = [_assign(flags[ast.Break], ast.Constant(False), at)] if ast.Break in flags else []
    return flags, before


def _trip_start(flags: dict[type, str], at: ast.AST) -> list[ast.stmt]:
    return [_assign(flags[ast.Continue], ast.Constant(False), at)] \
        if ast.Continue in flags else []


def _assign(name: str, value: ast.expr, at: ast.AST) -> ast.stmt:
    node = ast.Assign([ast.Name(name, ast.Store())], value)
    return ast.fix_missing_locations(ast.copy_location(node, at))


def _not(name: str, at: ast.AST) -> ast.expr:
    return ast.fix_missing_locations(ast.copy_location(
        ast.UnaryOp(ast.Not(), ast.Name(name, ast.Load())), at))


__all__ = ["find_jump", "lower_range", "lower_while"]
