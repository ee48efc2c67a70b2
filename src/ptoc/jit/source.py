"""Reading a ``@pl.jit`` function's source: its AST (with file line numbers), its constants,
and the jit sub-functions and module-level @pl.inline / @pl.function helpers it can call
by name.

The AST is read once; what the body can see (module globals, closure cells, default
arguments) is read at every call, as Python would, so a changed constant is folded with
its new value (and the compile cache key, made from the folded program, changes with it).
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any, Callable

from ptoc.errors import PtocError
from ptoc.ir.nodes import Function
from ptoc.language.context import constant_env


@dataclass(frozen=True)
class FunctionSource:
    """A parsed function definition; ``fn`` gives what its body can see."""

    node: ast.FunctionDef
    filename: str
    fn: Callable

    def namespace(self) -> dict:
        """The names the body sees now: module globals, then closure cells."""
        fn = self.fn
        names = dict(fn.__globals__)
        if fn.__closure__:
            names.update({name: cell.cell_contents for name, cell in
                          zip(fn.__code__.co_freevars, fn.__closure__) if _filled(cell)})
        return names


def read_source(fn: Callable) -> FunctionSource:
    """The function's definition as an AST whose line numbers match its file."""
    try:
        lines, first = inspect.getsourcelines(fn)
    except (OSError, TypeError):
        raise PtocError(f"cannot read the source of @pl.jit function '{fn.__name__}'",
                        hint="define jit kernels in a .py file (not in a REPL or exec'd string)"
                        ) from None
    text = textwrap.dedent("".join(lines))
    tree = ast.parse(text)
    ast.increment_lineno(tree, first - 1)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise PtocError(f"@pl.jit expects a function, got {type(node).__name__}")
    return FunctionSource(node, fn.__code__.co_filename, fn)


def _filled(cell) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def environment(source: FunctionSource) -> tuple[dict[str, Any], frozenset[str], dict[str, Any],
                                                dict[str, Function]]:
    """Foldable constants, DSL aliases, the jit functions visible from the function (which
    of them it may call depends on its kind: ``ptoc.jit.specialize``) and the module-level
    ``@pl.inline`` / ``@pl.function`` functions (``ir.Function``) it may call by name."""
    from ptoc.jit.decorator import JITFunction

    namespace = source.namespace()
    env, aliases = constant_env(namespace)
    callees = {name: value for name, value in namespace.items() if isinstance(value, JITFunction)}
    externals = {name: value for name, value in namespace.items() if isinstance(value, Function)}
    return env, aliases or frozenset({"pl"}), callees, externals
