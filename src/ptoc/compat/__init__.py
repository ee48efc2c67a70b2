"""ptoc.compat: run unmodified PyPTO code on ptoc (``ptoc pypto FILE``).

Only module-name aliases and API conventions live here, never compiler logic: ``import
pypto.language`` gives ``ptoc.language`` itself, so a behaviour a PyPTO name needs is added
to the real ptoc package and the alias points at it. The aliases are installed only while
``run_path``/``run_module`` run a script; ptoc never installs a top-level ``pypto``.
"""

from ptoc.compat.aliases import MODULE_ALIASES, PyptoAliasFinder, UnsupportedModuleError, pypto_aliases
from ptoc.compat.run import run_module, run_path

__all__ = ["MODULE_ALIASES", "PyptoAliasFinder", "UnsupportedModuleError", "pypto_aliases",
           "run_module", "run_path"]
