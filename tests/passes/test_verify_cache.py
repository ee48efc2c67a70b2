"""Verification after every pass re-checks only what a pass changed: a function returned
as the same object, in a program whose signatures are unchanged, is not verified again;
a changed or newly broken function always is."""

from __future__ import annotations

import dataclasses

import pytest

from ptoc.errors import VerificationError
from ptoc.ir import verifier
from ptoc.ir.nodes import SeqStmts
from ptoc.passes import PassContext, PassManager, program_pass


@program_pass(name="Same")
def same(program, ctx):
    return program


@program_pass(name="Rebuilt")
def rebuilt(program, ctx):
    """A new function object with the same content (it must be verified again)."""
    fn = program.functions[0]
    return dataclasses.replace(program, functions=(dataclasses.replace(fn),) +
                               tuple(program.functions[1:]))


@program_pass(name="Breaks")
def breaks(program, ctx):
    fn = program.functions[0]
    body = SeqStmts(fn.body.stmts[1:])   # drops a definition: a use is now undefined
    return dataclasses.replace(program, functions=(dataclasses.replace(fn, body=body),) +
                               tuple(program.functions[1:]))


def checked(monkeypatch, tiny_program, passes) -> list[str]:
    names = []
    real = verifier._FunctionVerifier.run

    def run(self):
        names.append(self.fn.name)
        return real(self)

    monkeypatch.setattr(verifier._FunctionVerifier, "run", run)
    with PassContext():
        PassManager([p() for p in passes]).run_passes(tiny_program, write_report=False)
    return names


def test_untouched_functions_are_verified_once(monkeypatch, tiny_program):
    names = checked(monkeypatch, tiny_program, [same, same, same])
    assert len(names) == len(tiny_program.functions)


def test_a_rebuilt_function_is_verified_again(monkeypatch, tiny_program):
    names = checked(monkeypatch, tiny_program, [same, rebuilt, same])
    assert names.count(tiny_program.functions[0].name) == 2


def test_a_broken_function_after_an_unchanged_pass_is_caught(tiny_program):
    with PassContext(), pytest.raises(VerificationError, match="after pass Breaks"):
        PassManager([same(), breaks()]).run_passes(tiny_program, write_report=False)


CALLER = """
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[16, 16], pl.FP32],
               out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        t = pl.load(a, [0, 0], [16, 16])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 16], pl.FP32],
             out: pl.Out[pl.Tensor[[16, 16], pl.FP32]]) -> pl.Tensor[[16, 16], pl.FP32]:
        out = self.kernel(a, out)
        return out
"""


@program_pass(name="NewKernelParams")
def new_kernel_params(program, ctx):
    """The kernel's parameters as new objects (same content): its callers depend on them."""
    return dataclasses.replace(program, functions=tuple(
        dataclasses.replace(f, params=tuple(dataclasses.replace(p) for p in f.params))
        if f.name == "kernel" else f for f in program.functions))


@program_pass(name="RebuiltMain")
def rebuilt_main(program, ctx):
    """A new caller with the same parameter objects (in a new tuple): the kernel stays checked."""
    return dataclasses.replace(program, functions=tuple(
        dataclasses.replace(f, params=tuple(list(f.params))) if f.name == "main" else f
        for f in program.functions))


def test_a_changed_signature_reverifies_its_callers(monkeypatch):
    from ptoc.language import parse_program

    names = checked(monkeypatch, parse_program(CALLER), [same, new_kernel_params, same])
    assert names.count("main") == 2 and names.count("kernel") == 2


def test_a_rebuilt_caller_alone_is_verified_again(monkeypatch):
    from ptoc.language import parse_program

    names = checked(monkeypatch, parse_program(CALLER), [same, rebuilt_main])
    assert names.count("main") == 2 and names.count("kernel") == 1
