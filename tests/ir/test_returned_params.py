"""returned_params remembers its answer per function and per program context: following the
program's calls can give another answer than looking at the function alone, and an answer
handed out can be changed by the caller without changing the next one."""

from __future__ import annotations

import dataclasses

import ptoc.language as pl
from ptoc.ir.aliases import returned_params

SRC = """
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def inner(self, x: pl.Tensor[[16], pl.FP32],
              y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        t = pl.load(x, [0], [16])
        y = pl.store(t, [0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def outer(self, x: pl.Tensor[[16], pl.FP32],
              y: pl.Out[pl.Tensor[[16], pl.FP32]]) -> pl.Tensor[[16], pl.FP32]:
        r = self.inner(x, y)
        return r
"""


def test_the_answer_depends_on_the_program_it_is_asked_in():
    program = pl.parse_program(SRC)
    outer = program.get_function("outer")
    alone = returned_params(outer)
    followed = returned_params(outer, program)
    assert followed == [1]                      # the call returns its second argument
    assert alone == [None]                      # without the program the call is opaque
    assert returned_params(outer) == alone and returned_params(outer, program) == followed
    other = dataclasses.replace(program, functions=(outer,))   # no callee to follow
    assert returned_params(outer, other) == [None]


def test_a_caller_may_change_the_list_it_got():
    program = pl.parse_program(SRC)
    inner = program.get_function("inner")
    first = returned_params(inner)
    first.append("mine")
    assert returned_params(inner) == [1]


def test_a_function_that_calls_no_function_is_walked_once_for_every_program(monkeypatch):
    """A kernel's answer cannot depend on the program when it calls no function: the task
    passes ask about unchanged kernels while they rewrite the orchestration (a new program
    each time) and must not walk the kernel again; a caller's answer still follows the
    program."""
    from ptoc.ir import aliases

    program = pl.parse_program(SRC)
    inner, outer = program.get_function("inner"), program.get_function("outer")
    walks = []
    real = aliases.tensor_aliases
    monkeypatch.setattr(aliases, "tensor_aliases",
                        lambda body, roots, prog=None: walks.append(body) or real(body, roots, prog))
    rewritten = dataclasses.replace(program, functions=(inner, dataclasses.replace(outer)))
    assert returned_params(inner, program) == [1] and returned_params(inner, rewritten) == [1]
    assert returned_params(inner) == [1] and walks == [inner.body]
    lone = dataclasses.replace(program, functions=(outer,))
    assert returned_params(outer, program) == [1] and returned_params(outer, lone) == [None]
    assert walks.count(outer.body) == 2
