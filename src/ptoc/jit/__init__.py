"""ptoc.jit: ``@pl.jit`` specialisation and its content-hashed compile cache."""

from ptoc.jit.cache import cache_key, resolve_options
from ptoc.jit.decorator import JITFunction, jit
