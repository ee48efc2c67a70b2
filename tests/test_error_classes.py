"""Every ptoc error is also the builtin exception PyPTO raises in the same situation.

PyPTO code catches ``ValueError`` (a rejected program or option), ``TypeError`` (some op
argument checks) and ``RuntimeError`` (internal errors, the runtime); ptoc's errors must be
caught by the same clauses, or a PyPTO script that handles an expected error would crash.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import ptoc
import ptoc.language as pl
from ptoc import errors
from ptoc.errors import InternalError, ParseError, PtocError, TypeCheckError

BUILTINS = (ValueError, TypeError, RuntimeError, AttributeError, ImportError)
TOOLS = ("ptoc.tools.", "ptoc.cli", "ptoc.report.")  # command-line errors, never seen by PyPTO code


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def test_every_library_error_class_is_a_builtin_pypto_raises():
    for info in pkgutil.walk_packages(ptoc.__path__, "ptoc."):
        importlib.import_module(info.name)
    missing = [f"{c.__module__}.{c.__qualname__}" for c in _all_subclasses(PtocError)
               if c.__module__.startswith("ptoc.") and not c.__module__.startswith(TOOLS)
               and not issubclass(c, BUILTINS)]
    assert missing == []


def test_pypto_names_for_the_error_bases():
    assert errors.Error is PtocError
    assert issubclass(InternalError, RuntimeError) and issubclass(InternalError, PtocError)
    for name in ("ParserError", "ParserSyntaxError", "ParserTypeError", "UndefinedVariableError",
                 "InvalidOperationError", "UnsupportedFeatureError"):
        pypto_class = getattr(errors, name)
        assert issubclass(ParseError, pypto_class) and issubclass(TypeCheckError, pypto_class)


KERNEL = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[64, 64], pl.FP32]) -> pl.Tensor[[64, 64], pl.FP32]:
        {line}
        return x
"""


@pytest.mark.parametrize("line, cls, builtin", [
    ("t = pl.tile.exp(x)", TypeCheckError, TypeError),        # a tile op on a tensor
    ("t = pl.tile.exp(x)", TypeCheckError, ValueError),
    ("t = pl.tile.exp(x)", TypeCheckError, errors.ParserSyntaxError),
    ("t = undefined_name", ParseError, ValueError),
    ("t = undefined_name", ParseError, errors.UndefinedVariableError),
])
def test_errors_a_pypto_script_catches_by_builtin_class(line, cls, builtin):
    with pytest.raises(builtin) as info:
        pl.parse_program(KERNEL.format(line=line))
    assert isinstance(info.value, cls)


def test_invalid_python_is_a_syntax_error_as_in_pypto():
    # PyPTO's pl.parse lets Python's compile() fail: scripts catch SyntaxError
    text = "@pl.function\ndef f(x: pl.Tensor[[64], pl.FP32]) -> pl.Tensor[[64], pl.FP32]:\n    return x +\n"
    with pytest.raises(SyntaxError) as info:
        pl.parse(text)
    err = info.value
    assert isinstance(err, ParseError) and isinstance(err, ValueError)
    assert (err.lineno, err.filename) == (3, "<string>")
    assert str(err).startswith("<string>:3:") and "invalid Python syntax" in str(err)


def test_a_codegen_refusal_is_pypto_s_partial_codegen_error():
    # PyPTO's ir.compile raises PartialCodegenError (a RuntimeError) when codegen refuses a
    # kernel; ptoc's codegen refusals are that class too (and still ValueErrors)
    from ptoc import ir
    from ptoc.codegen.errors import CodegenError

    source = KERNEL.format(line="t = pl.load(x, [0, 0], [16, 64])\n        "
                                "w = pl.add(pl.slice(t, [8, 32], [0, 48]), 1.0)")
    with pytest.raises(errors.PartialCodegenError) as info:
        ir.compile(pl.parse_program(source))
    assert isinstance(info.value, CodegenError) and isinstance(info.value, RuntimeError)
    assert isinstance(info.value, ValueError) and info.value.files == {}
