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


# bodies of the task-graph tests: two launches in a manual scope (deps= formatted in)
MANUAL_SUBMIT = """
with pl.manual_scope():
    t, first = pl.submit(self.double, a, t)
    c, second = pl.submit(self.exp, t, c{deps})
"""

# the write-after-read the runtime never infers: exp reads t, then double overwrites it
WAR = """
t = self.double(a, t)
with pl.at(level=pl.Level.CORE_GROUP) as reader:
    x = pl.load(t, [0, 0], [{N}, {N}])
    pl.store(pl.exp(x), [0, 0], c)
with pl.at(level=pl.Level.CORE_GROUP{deps}):
    y = pl.load(a, [0, 0], [{N}, {N}])
    pl.store(pl.mul(y, 0.0), [0, 0], t)
"""

# a TASK_ID array fence between two phases (gate / deps formatted in)
PHASES = """
with pl.manual_scope():
    tids = pl.array.create(4, pl.TASK_ID)
    for b in pl.parallel(4):
        t, tid = pl.submit(self.double, a, t)
        tids[b] = tid
    {gate}
    for b in pl.parallel(4):
        c, tid = pl.submit(self.exp, t, c{deps})
"""
