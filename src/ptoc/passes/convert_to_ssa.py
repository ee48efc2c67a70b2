"""ConvertToSSA: PyPTO's pass that puts a program into SSA form, which ptoc's parser already
does (every assignment makes a new variable; rebound names in loops and branches become
iter args and phi results). Here it certifies the property: it verifies the program (SSA,
types, loop attributes) and returns it unchanged, or raises the VerificationError that
names the variable defined twice.
"""

from __future__ import annotations

from ptoc.ir.nodes import Program
from ptoc.ir.verifier import verify
from ptoc.passes.base import program_pass


@program_pass(name="ConvertToSSA", produced={"SSAForm"}, handles_while_loops=True)
def convert_to_ssa(program: Program, ctx) -> Program:
    """The program itself, once verified to be in SSA form."""
    verify(program)
    return program


__all__ = ["convert_to_ssa"]
