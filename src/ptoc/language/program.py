"""Program-level parsing: ``@pl.program`` classes, ``pl.parse_program(text)``, decorators.

``@pl.program`` re-reads the class from its source file (kernels are parsed, never
executed) and folds constants captured from the defining scope. ``parse_program`` reads
DSL text, including what ``Program.as_python()`` prints and what PyPTO prints.
"""

from __future__ import annotations

import ast
import inspect
import linecache
from typing import Any

from ptoc.errors import ParseError, PtocError, SourceLoc
from ptoc.ir.nodes import Program
from ptoc.language.context import DSL_MODULES, DslPath, ParseContext, constant_env
from ptoc.language.stmts import FunctionParser, wrap_errors


def parse_program(text: str, filename: str = "<string>") -> Program:
    """Parse DSL source text holding one ``@pl.program`` class into an ``ir.Program``."""
    tree = _parse_source(text, filename)
    ctx = ParseContext(filename, {}, frozenset({"pl"}))
    ctx.dsl_aliases = _import_aliases(tree) or ctx.dsl_aliases
    _fold_module_constants(tree.body, ctx)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and _is_program_class(n, ctx)]
    if not classes:
        raise ParseError("no @pl.program class found", SourceLoc(filename, 1, 0),
                         hint="decorate the kernel class with @pl.program")
    if len(classes) > 1:
        raise ParseError(f"found {len(classes)} @pl.program classes; parse_program reads one",
                         SourceLoc(filename, classes[1].lineno, 0),
                         hint="put each program in its own text")
    return parse_class(classes[0], ctx)


def parse_class(node: ast.ClassDef, ctx: ParseContext) -> Program:
    """Parse the methods of a ``@pl.program`` class: all signatures first, then the bodies."""
    body = [n for n in node.body if not _is_docstring(n)]
    _fold_module_constants([n for n in body if isinstance(n, (ast.Assign, ast.AnnAssign))], ctx)
    methods = []
    for item in body:
        if isinstance(item, ast.FunctionDef):
            methods.append(item)
        elif not isinstance(item, (ast.Assign, ast.AnnAssign, ast.Pass)):
            raise ctx.error(item, "a @pl.program class holds only @pl.function methods and "
                            "constants")
    if not methods:
        raise ctx.error(node, f"program '{node.name}' has no functions",
                        hint="add a @pl.function(type=pl.FunctionType.InCore) method")
    signatures: dict[str, Any] = {}
    for method in methods:
        if method.name in signatures:
            raise ctx.error(method, f"function '{method.name}' is defined twice")
        parser = FunctionParser(ctx, signatures)
        params, returns, _ = wrap_errors(ctx, method, parser.signature, method)
        signatures[method.name] = ([(p.var.name, p.var.type) for p in params], returns)
    functions: list = []
    for method in methods:
        outlined: list = []
        parsed = wrap_errors(ctx, method, FunctionParser(ctx, signatures, outlined).function, method)
        functions.extend(outlined)
        functions.append(parsed)
    return Program(node.name, tuple(functions), ctx.loc(node))


def program(cls=None, **_options):
    """Decorator: parse the decorated class's source into an ``ir.Program``."""
    if cls is None:
        return lambda c: _program_from_class(c, inspect.currentframe().f_back)
    return _program_from_class(cls, inspect.currentframe().f_back)


def function(fn=None, **_options):
    """Decorator marking a program method; the program parser reads its options from source."""
    if fn is None:
        return lambda f: f
    return fn


def _program_from_class(cls: type, frame) -> Program:
    filename = frame.f_code.co_filename
    lines = linecache.getlines(filename, frame.f_globals)
    if not lines:
        raise PtocError(f"cannot read the source of @pl.program class '{cls.__name__}' "
                        f"(defined in {filename})",
                        hint="define kernels in a .py file, or pass source text to "
                             "pl.parse_program(text)")
    tree = _parse_source("".join(lines), filename)
    node = _find_class(tree, cls.__name__, frame.f_lineno)
    if node is None:
        raise PtocError(f"cannot find class '{cls.__name__}' in {filename}")
    namespace = dict(frame.f_globals)
    namespace.update(frame.f_locals)
    env, aliases = constant_env(namespace)
    class_env, _ = constant_env({k: v for k, v in vars(cls).items() if not k.startswith("__")})
    env.update(class_env)
    ctx = ParseContext(filename, env, aliases or frozenset({"pl"}))
    return parse_class(node, ctx)


def _find_class(tree: ast.Module, name: str, line: int) -> ast.ClassDef | None:
    candidates = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == name]
    for node in candidates:
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        if first <= line <= (node.end_lineno or node.lineno):
            return node
    return candidates[0] if len(candidates) == 1 else None


def _parse_source(text: str, filename: str) -> ast.Module:
    try:
        return ast.parse(text, filename=filename)
    except SyntaxError as err:
        raise ParseError(f"invalid Python syntax: {err.msg}",
                         SourceLoc(filename, err.lineno or 0, (err.offset or 1) - 1)) from None


def _import_aliases(tree: ast.Module) -> frozenset[str]:
    aliases = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in DSL_MODULES:
                    aliases.add(alias.asname or alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module in ("ptoc", "pypto"):
            for alias in node.names:
                if alias.name == "language":
                    aliases.add(alias.asname or "language")
    return frozenset(aliases)


def _fold_module_constants(body: list[ast.stmt], ctx: ParseContext) -> None:
    """Record constant assignments (``M, K = 64, 128``) so kernels can fold them."""
    evaluator = FunctionParser(ctx, {})
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value_node = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value_node = node.target, node.value
        else:
            continue
        try:
            value = evaluator.expr(value_node)
        except PtocError:
            continue
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        values = value if isinstance(target, ast.Tuple) else [value]
        if not isinstance(values, (list, tuple)) or len(values) != len(names):
            continue
        for name, v in zip(names, values):
            if isinstance(name, ast.Name) and not isinstance(v, DslPath):
                ctx.env[name.id] = v


def _is_program_class(node: ast.ClassDef, ctx: ParseContext) -> bool:
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == "program" and isinstance(
                target.value, ast.Name) and target.value.id in ctx.dsl_aliases:
            return True
    return False


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
        node.value.value, str)
