"""The codegen error type (its own module so every codegen module can raise it)."""

from __future__ import annotations

from ptoc.errors import PartialCodegenError


class CodegenError(PartialCodegenError, ValueError):
    """The IR cannot be lowered to PTO as it stands; the message names the op or variable and
    the location is the DSL statement, the hint says which pass or rewrite fixes it."""
