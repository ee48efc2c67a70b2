"""ptoc: a pure-Python tile compiler for Ascend-class AI Cores with a simulated AI Core."""

__version__ = "0.1.0"
