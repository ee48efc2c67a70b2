"""Program-level parsing: ``@pl.program`` classes, module-level ``@pl.function``s,
``pl.parse(text)`` / ``pl.loads(path)`` (and the ``_program`` variants), decorators.

``@pl.program`` re-reads the class from its source file (kernels are parsed, never
executed) and folds constants captured from the defining scope. ``parse_program`` reads
DSL text, including what ``Program.as_python()`` prints and what PyPTO prints.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import os
from pathlib import Path
from typing import Any

from ptoc.errors import InvalidSyntaxError, ParseError, PtocError, SourceLoc
from ptoc.ir.nodes import Function, Program
from ptoc.language.context import DSL_MODULES, DslPath, ParseContext, constant_env
from ptoc.language.stmts import FunctionParser, wrap_errors


def parse_program(text: str, filename: str = "<string>") -> Program:
    """Parse DSL source text holding one ``@pl.program`` class into an ``ir.Program``."""
    result = parse(text, filename)
    if not isinstance(result, Program):
        raise ParseError(f"found @pl.function '{result.name}' but no @pl.program class",
                         result.loc, hint="use pl.parse() for a single function, or wrap it in "
                                          "a @pl.program class")
    return result


def parse(text: str, filename: str = "<string>") -> Program | Function:
    """Parse DSL text holding one ``@pl.program`` class or one ``@pl.function`` (PyPTO's
    ``pl.parse``): an ``ir.Program`` or an ``ir.Function``. ``pl`` needs no import line."""
    tree = _parse_source(text, filename)
    ctx = ParseContext(filename, {}, frozenset({"pl"}))
    ctx.dsl_aliases = _import_aliases(tree) or ctx.dsl_aliases
    _fold_module_constants(tree.body, ctx)
    items = [n for n in tree.body if isinstance(n, ast.ClassDef) and _is_program_class(n, ctx)
             or isinstance(n, ast.FunctionDef) and _is_decorated(n, ctx, "function")]
    if not items:
        raise ParseError("no @pl.program class or @pl.function found", SourceLoc(filename, 1, 0),
                         hint="decorate the kernel class with @pl.program")
    if len(items) > 1:
        raise ParseError(f"found {len(items)} @pl.program classes / @pl.function definitions; "
                         "pl.parse reads one", SourceLoc(filename, items[1].lineno, 0),
                         hint="put each program or function in its own text")
    if isinstance(items[0], ast.ClassDef):
        return parse_class(items[0], ctx)
    return parse_function(items[0], ctx)


def loads(path: str | os.PathLike) -> Program | Function:
    """``pl.parse`` of a file's text (PyPTO's ``pl.loads``); errors name the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as err:
        raise PtocError(f"cannot read {os.fspath(path)}: {err.strerror}",
                        hint="give the path of a .py file holding a @pl.program or "
                             "@pl.function") from None
    return parse(text, os.fspath(path))


def loads_program(path: str | os.PathLike) -> Program:
    """``pl.loads`` for a file that must hold a ``@pl.program``."""
    result = loads(path)
    if not isinstance(result, Program):
        raise ParseError(f"{os.fspath(path)} holds @pl.function '{result.name}', not a "
                         "@pl.program", result.loc, hint="use pl.loads() for a function")
    return result


def parse_function(node: ast.FunctionDef, ctx: ParseContext) -> Function:
    """A module-level ``@pl.function`` (no ``self``) as an ``ir.Function``."""
    outlined: list = []
    function = wrap_errors(ctx, node, FunctionParser(ctx, {}, outlined).function, node)
    if outlined:
        raise ctx.error(node, f"@pl.function '{node.name}' outside a @pl.program has pl.at "
                        "scopes, which become functions of their own",
                        hint="put it in a @pl.program class (or use @pl.jit)")
    return function


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
    declared: dict[str, Any] = {}
    for method in methods:
        if method.name in declared:
            raise ctx.error(method, f"function '{method.name}' is defined twice")
        parser = FunctionParser(ctx, declared)
        params, returns, _ = wrap_errors(ctx, method, parser.signature, method)
        declared[method.name] = ([(p.var.name, p.var.type) for p in params], returns)
    # A method without a return annotation returns what its body returns (as in PyPTO):
    # such methods are parsed before the methods that call them, so every call sees its
    # callee's type; the program keeps the source order.
    derived = {name for name, (_, returns) in declared.items() if not returns}
    parsed: dict[str, list] = {}
    for method in _callees_first(methods, derived):
        outlined: list = []
        function = wrap_errors(ctx, method, FunctionParser(ctx, declared, outlined).function,
                               method)
        parsed[method.name] = outlined + [function]
        if method.name in derived:
            declared[method.name] = (declared[method.name][0], function.return_types)
    return Program(node.name, tuple(f for m in methods for f in parsed[m.name]), ctx.loc(node))


def _callees_first(methods: list, derived: set[str]) -> list:
    """``methods`` in source order, except that an un-annotated method comes before the
    methods calling it (``self.name(...)``); a cycle keeps its source order."""
    by_name = {method.name: method for method in methods}
    callees = {method.name: [node.func.attr for node in ast.walk(method)
                             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                             and isinstance(node.func.value, ast.Name)
                             and node.func.value.id == "self" and node.func.attr in derived
                             and node.func.attr != method.name]
               for method in methods}
    order: list = []
    state: dict[str, str] = {}

    def visit(name: str) -> None:
        if state.get(name):
            return
        state[name] = "open"
        for callee in callees[name]:
            visit(callee)
        state[name] = "done"
        order.append(by_name[name])

    for method in methods:
        visit(method.name)
    return order


def program(cls=None, **_options):
    """Decorator: parse the decorated class's source into an ``ir.Program``."""
    if cls is None:
        return lambda c: _program_from_class(c, inspect.currentframe().f_back)
    return _program_from_class(cls, inspect.currentframe().f_back)


def function(fn=None, **_options):
    """Decorator. On a program method (first parameter ``self``) it only marks the method:
    the program parser reads it and its options from source. On a module-level function it
    parses the function into an ``ir.Function`` at once, as PyPTO does; a ``@pl.program``
    may then call it by name (it joins the program once)."""
    if fn is None:
        frame = inspect.currentframe().f_back
        return lambda f: _function_from_def(f, frame)
    return _function_from_def(fn, inspect.currentframe().f_back)


def inline(fn):
    """Decorator ``@pl.inline``: a helper spliced into every call site (PyPTO's). A
    module-level one becomes an Inline ``ir.Function`` at once, which a ``@pl.program``
    calls by name; the InlineFunctions pass expands it and leaves no function behind."""
    return _function_from_def(fn, inspect.currentframe().f_back)


def _function_from_def(fn, frame):
    code = getattr(fn, "__code__", None)
    if code is None or (code.co_argcount and code.co_varnames[0] == "self"):
        return fn
    lines = linecache.getlines(code.co_filename, frame.f_globals)
    if not lines:
        raise PtocError(f"cannot read the source of @pl.function '{fn.__name__}' (defined in "
                        f"{code.co_filename})",
                        hint="define kernels in a .py file, or pass source text to pl.parse")
    tree = _parse_source("".join(lines), code.co_filename)
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and n.name == fn.__name__ and code.co_firstlineno <= n.lineno
                 and min([d.lineno for d in n.decorator_list] + [n.lineno]) <= code.co_firstlineno),
                None)
    if node is None:
        raise PtocError(f"cannot find function '{fn.__name__}' in {code.co_filename}")
    namespace = dict(frame.f_globals)
    namespace.update(frame.f_locals)
    env, aliases = constant_env(namespace)
    return parse_function(node, ParseContext(code.co_filename, env, aliases or frozenset({"pl"})))


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
    ctx.externals = {k: v for k, v in namespace.items() if isinstance(v, Function)}
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
        raise InvalidSyntaxError(f"invalid Python syntax: {err.msg}",
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
    return _is_decorated(node, ctx, "program")


def _is_decorated(node: ast.ClassDef | ast.FunctionDef, ctx: ParseContext, name: str) -> bool:
    """Whether ``node`` carries ``@pl.<name>`` or ``@pl.<name>(...)``."""
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if isinstance(target, ast.Attribute) and target.attr == name and isinstance(
                target.value, ast.Name) and target.value.id in ctx.dsl_aliases:
            return True
    return False


def _is_docstring(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(
        node.value.value, str)
