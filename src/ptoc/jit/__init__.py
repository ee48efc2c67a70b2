"""ptoc.jit: ``@pl.jit`` specialisation and its content-hashed compile cache."""

from ptoc.jit.cache import cache_key, compile_options, key_inputs
from ptoc.jit.decorator import JITFunction, jit
