"""Two kernels (double a into t, exp of t into c) and an orchestration body around them: the
programs of the task-graph tests (task ids, dependencies, the race policy)."""

from __future__ import annotations

import ptoc.language as pl

N = 32

KERNELS = f"""
import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def double(self, a: pl.Tensor[[{N}, {N}], pl.FP32], t: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
               ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        x = pl.load(a, [0, 0], [{N}, {N}])
        pl.store(pl.add(x, x), [0, 0], t)
        return t

    @pl.function(type=pl.FunctionType.InCore)
    def exp(self, t: pl.Tensor[[{N}, {N}], pl.FP32], c: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
            ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        x = pl.load(t, [0, 0], [{N}, {N}])
        pl.store(pl.exp(x), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{N}, {N}], pl.FP32], c: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
             ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        t = pl.create_tensor([{N}, {N}], dtype=pl.FP32)
"""


def program(body: str):
    lines = "".join(f"        {line}\n" for line in body.strip("\n").splitlines())
    return pl.parse_program(KERNELS + lines + "        return c\n", filename="tasks.py")
