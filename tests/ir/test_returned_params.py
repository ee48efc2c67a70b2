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
    real = aliases._returned_roots
    monkeypatch.setattr(aliases, "_returned_roots",
                        lambda fn, roots, prog=None: walks.append(fn.body) or real(fn, roots, prog))
    rewritten = dataclasses.replace(program, functions=(inner, dataclasses.replace(outer)))
    assert returned_params(inner, program) == [1] and returned_params(inner, rewritten) == [1]
    assert returned_params(inner) == [1] and walks == [inner.body]
    lone = dataclasses.replace(program, functions=(outer,))
    assert returned_params(outer, program) == [1] and returned_params(outer, lone) == [None]
    assert walks.count(outer.body) == 2


def test_the_returned_only_walk_agrees_with_the_full_alias_walk():
    """returned_params walks only the links (statements), not reads inside expressions and
    types: for every function of a program with loops, branches, views, tuple results and
    calls, the answer is the full TensorAliases walk's."""
    from ptoc.ir.aliases import _returned_roots, tensor_aliases

    program = pl.parse_program(SRC_JOINS)
    for fn in program.functions:
        roots = {p.var: i for i, p in enumerate(fn.params)}
        for prog in (None, program):
            full = tensor_aliases(fn.body, roots, prog)
            fast = _returned_roots(fn, roots, prog)
            assert fast.returned == full.returned, fn.name
            assert fast.calls_functions <= full.calls_functions


SRC_JOINS = """
import ptoc.language as pl

@pl.program
class Q:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[32, 16], pl.FP32],
          y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        for i, (acc,) in pl.range(0, 2, 1, init_values=(y,)):
            t = pl.load(x, [i * 16, 0], [16, 16])
            if i == 0:
                z = pl.store(t, [i * 16, 0], acc)
                r = pl.yield_(z)
            else:
                r = pl.yield_(acc)
            acc2 = pl.yield_(r)
        return acc2

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[32, 16], pl.FP32],
             y: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
        v = pl.slice(y, [16, 16], [0, 0])
        w = self.k(x, y)
        u = w
        return u
"""
