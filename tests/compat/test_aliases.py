"""The ``pypto`` import aliases: the same module objects as ptoc's, and nothing left after."""

from __future__ import annotations

import importlib
import sys

import pytest

import ptoc.backend
import ptoc.ir
import ptoc.jit
import ptoc.language
import ptoc.passes
import ptoc.runtime
from ptoc.compat import UnsupportedModuleError, pypto_aliases
from ptoc.errors import PtocError

ALIASED = [
    ("pypto.language", ptoc.language),
    ("pypto.ir", ptoc.ir),
    ("pypto.runtime", ptoc.runtime),
    ("pypto.backend", ptoc.backend),
    ("pypto.jit", ptoc.jit),
    ("pypto.passes", ptoc.passes),
    ("pypto.pypto_core.passes", ptoc.passes),
    ("pypto.pypto_core.ir", ptoc.ir),
    ("pypto.ir.pass_manager", ptoc.passes),
    ("pypto.ir.builder", importlib.import_module("ptoc.ir.builder")),
    ("pypto.runtime.runner", ptoc.runtime),
    ("pypto.backend.pto_backend", importlib.import_module("ptoc.errors")),
    ("pypto.language.parser.diagnostics.exceptions", importlib.import_module("ptoc.errors")),
]


@pytest.mark.parametrize("name, module", ALIASED, ids=[n for n, _ in ALIASED])
def test_pypto_module_is_the_ptoc_module(name, module):
    with pypto_aliases():
        assert importlib.import_module(name) is module


def test_from_imports_give_ptoc_objects():
    with pypto_aliases():
        from pypto import DataType, ir
        from pypto.backend import BackendType
        from pypto.ir.pass_manager import OptimizationStrategy, PassManager
        from pypto.runtime import RunConfig

        import pypto
        import pypto.language as pl
    assert ir is ptoc.ir and pl is ptoc.language and RunConfig is ptoc.runtime.RunConfig
    assert DataType is ptoc.language.DataType and pypto.DT_FP32 is pl.FP32
    assert BackendType.Ascend910B is ptoc.backend.BackendType.Ascend910B
    assert PassManager is ptoc.passes.PassManager
    assert OptimizationStrategy.Default is ptoc.passes.OptimizationStrategy.Default


def test_a_module_standing_for_a_package_takes_submodule_imports_and_is_left_as_it_was():
    """pypto.language.parser.diagnostics is ptoc.errors, a plain module: importing the
    'exceptions' module below it needs a package (was 'diagnostics is not a package'); the
    __path__ that makes it one is taken away again afterwards."""
    errors = importlib.import_module("ptoc.errors")
    with pypto_aliases():
        from pypto.language.parser.diagnostics.exceptions import ParserError  # noqa: F401
        import pypto.language.parser.diagnostics as diagnostics
    assert diagnostics is errors and not hasattr(errors, "__path__")


def test_aliases_are_gone_afterwards():
    before = set(vars(ptoc.ir))
    with pypto_aliases():
        import pypto.ir.pass_manager  # noqa: F401  (binds ptoc.ir.pass_manager while active)
        import pypto.pypto_core  # noqa: F401
    assert not [n for n in sys.modules if n == "pypto" or n.startswith("pypto.")]
    assert set(vars(ptoc.ir)) == before
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("pypto")


@pytest.mark.parametrize("name", ["pypto.language.distributed", "pypto.runtime.device_runner",
                                  "pypto.ir.no_such_module"])
def test_module_ptoc_lacks_is_an_import_error_that_says_so(name):
    with pypto_aliases(), pytest.raises(UnsupportedModuleError) as info:
        importlib.import_module(name)
    assert isinstance(info.value, ImportError) and isinstance(info.value, PtocError)
    assert name in str(info.value) and "fix:" in str(info.value)


def test_guarded_optional_import_keeps_working():
    with pypto_aliases():
        try:
            import pypto.language.distributed as pld  # noqa: F401
        except ImportError:
            pld = None
    assert pld is None


def test_an_already_imported_pypto_is_not_shadowed(monkeypatch):
    monkeypatch.setitem(sys.modules, "pypto", object())
    with pytest.raises(PtocError, match="already imported"):
        with pypto_aliases():
            pass


def test_missing_dsl_name_is_a_ptoc_error_and_an_attribute_error():
    with pytest.raises(PtocError, match="pl.no_such_thing"):
        ptoc.language.no_such_thing  # noqa: B018
    assert not hasattr(ptoc.language, "no_such_thing")
