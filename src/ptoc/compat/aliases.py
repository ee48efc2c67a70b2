"""The ``pypto.*`` -> ``ptoc.*`` module aliases, as a meta-path finder active only on demand.

``import pypto.language as pl`` inside ``pypto_aliases()`` binds the very module object
``ptoc.language`` (no copy, no second set of classes). A name not in the table resolves
through its parent: ``pypto.pypto_core.ir`` is the ``ir`` attribute of the module
``pypto.pypto_core`` stands for, and ``pypto.ir.builder`` is ``ptoc.ir.builder``. Modules of
PyPTO's that ptoc has no counterpart for raise ``UnsupportedModuleError`` (an
``ImportError``, so scripts that guard optional imports keep working).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.abc
import importlib.util
import sys
import types

from ptoc.errors import PtocError

ROOT = "pypto"

#: PyPTO module name -> the ptoc module it is. Children not listed resolve through their parent.
MODULE_ALIASES = {
    "pypto": "ptoc.compat.pypto_root",
    "pypto.pypto_core": "ptoc.compat.pypto_root",
    "pypto.language": "ptoc.language",
    "pypto.language.typing": "ptoc.language.surface",
    "pypto.language.parser": "ptoc.language",
    "pypto.language.parser.diagnostics": "ptoc.errors",
    "pypto.language.parser.diagnostics.exceptions": "ptoc.errors",
    "pypto.ir": "ptoc.ir",
    "pypto.ir.pass_manager": "ptoc.passes",
    "pypto.ir.instruments": "ptoc.passes.instruments",
    "pypto.ir.compile": "ptoc.runtime.compile",
    "pypto.ir.compiled_program": "ptoc.runtime.compiled",
    "pypto.passes": "ptoc.passes",
    "pypto.runtime": "ptoc.runtime",
    "pypto.runtime.runner": "ptoc.runtime",
    "pypto.runtime.worker": "ptoc.runtime.worker",
    "pypto.runtime.device_tensor": "ptoc.runtime.worker",
    "pypto.backend": "ptoc.backend",
    "pypto.backend.pto_backend": "ptoc.errors",
    "pypto.codegen": "ptoc.codegen",
    "pypto.jit": "ptoc.jit",
    "pypto.jit.specializer": "ptoc.jit.specialize",
}

_DISTRIBUTED = ("distributed (multi-chip, multi-rank) execution: ptoc simulates the AI Cores "
                "of one chip")
_DEVICE = "driving a real NPU device: ptoc runs programs on its simulator instead"

#: PyPTO modules ptoc deliberately has no counterpart for, and why.
UNSUPPORTED = {
    "pypto.language.distributed": _DISTRIBUTED,
    "pypto.ir.distributed_compiled_program": _DISTRIBUTED,
    "pypto.runtime.distributed_runner": _DISTRIBUTED,
    "pypto.runtime.device_runner": _DEVICE,
    "pypto.runtime.kernel_compiler": _DEVICE,
    "pypto.debug": "PyPTO's torch code generator for debugging",
}


class UnsupportedModuleError(PtocError, ModuleNotFoundError):
    """A PyPTO module ptoc has no counterpart for (also an ImportError, as Python raises)."""


def resolve(name: str) -> types.ModuleType:
    """The ptoc module that PyPTO's module ``name`` stands for (imported)."""
    for prefix, reason in UNSUPPORTED.items():
        if name == prefix or name.startswith(prefix + "."):
            raise UnsupportedModuleError(
                f"'import {name}': ptoc does not provide PyPTO's {prefix} ({reason})",
                hint="run this script with PyPTO on a device; ptoc covers pypto.language, "
                     "pypto.ir, pypto.runtime, pypto.jit, pypto.backend, pypto.passes")
    if name in MODULE_ALIASES:
        return importlib.import_module(MODULE_ALIASES[name])
    parent_name, _, child = name.rpartition(".")
    parent = resolve(parent_name)
    attr = getattr(parent, child, None)
    if isinstance(attr, types.ModuleType):
        return attr
    try:
        return importlib.import_module(f"{parent.__name__}.{child}")
    except ModuleNotFoundError:
        raise UnsupportedModuleError(
            f"'import {name}': ptoc has no counterpart of PyPTO's module {name} (it would be "
            f"{parent.__name__}.{child})",
            hint=f"import the names you need from {'.'.join(name.split('.')[:2])}, or run "
                 "this script with PyPTO") from None


class _AliasLoader(importlib.abc.Loader):
    """Hands the import system an existing ptoc module instead of executing anything."""

    def __init__(self, module: types.ModuleType):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module) -> None:
        return None


class PyptoAliasFinder(importlib.abc.MetaPathFinder):
    """Answers every ``pypto`` / ``pypto.*`` import with the ptoc module it stands for.

    It remembers the attributes the import system sets on ptoc modules while binding
    submodules (``ptoc.ir.pass_manager`` for ``import pypto.ir.pass_manager``) so that
    ``uninstall`` can take them away again.
    """

    def __init__(self):
        self.added_attributes: list[tuple[types.ModuleType, str]] = []

    def find_spec(self, fullname, path=None, target=None):
        if fullname != ROOT and not fullname.startswith(ROOT + "."):
            return None
        module = resolve(fullname)
        parent_name, _, child = fullname.rpartition(".")
        if parent_name:
            parent = resolve(parent_name)
            if not hasattr(parent, child):
                self.added_attributes.append((parent, child))
        # A plain ptoc module that stands for a PyPTO package with aliased children
        # (pypto.language.parser.diagnostics is ptoc.errors) must look like a package, or
        # Python refuses to import 'diagnostics.exceptions' below it ('not a package').
        is_package = any(name.startswith(fullname + ".") for name in MODULE_ALIASES)
        if is_package and not hasattr(module, "__path__"):
            self.added_attributes.append((module, "__path__"))
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module),
                                               is_package=is_package)

    def uninstall(self) -> None:
        """Remove the finder, the ``pypto*`` entries of ``sys.modules`` and added attributes."""
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        for name in [n for n in sys.modules if n == ROOT or n.startswith(ROOT + ".")]:
            del sys.modules[name]
        for module, attr in self.added_attributes:
            if attr in vars(module):
                delattr(module, attr)
        self.added_attributes.clear()


@contextlib.contextmanager
def pypto_aliases():
    """Within the block, ``import pypto...`` resolves to ptoc; afterwards nothing is left."""
    if any(n == ROOT or n.startswith(ROOT + ".") for n in sys.modules):
        raise PtocError("a module named 'pypto' is already imported in this process, so ptoc "
                        "cannot stand in for it",
                        hint="run the script in a fresh process with `ptoc pypto FILE`")
    finder = PyptoAliasFinder()
    sys.meta_path.insert(0, finder)
    try:
        yield finder
    finally:
        finder.uninstall()
