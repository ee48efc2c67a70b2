"""The module ``import pypto`` (and ``pypto.pypto_core``) gives under ``ptoc pypto``.

Names only: PyPTO's top-level submodules and dtype constants, bound to ptoc's own objects.
"""

from ptoc import backend, codegen, ir, jit, language, passes, runtime
from ptoc.dtypes import DataType
from ptoc.errors import PtocError as Error
from ptoc.messages import LogLevel, get_log_level, set_log_level

#: a package, so that ``import pypto.language`` finds ``pypto`` can hold submodules
__path__: list[str] = []

globals().update({f"DT_{dtype.name}": dtype for dtype in DataType})

__all__ = ["DataType", "Error", "LogLevel", "backend", "get_log_level", "set_log_level", "codegen", "ir", "jit", "language", "passes",
           "runtime", *(f"DT_{dtype.name}" for dtype in DataType)]
