"""``ptoc demo``: compile an embedded program and show what ptoc does with it."""

from __future__ import annotations

DEMO_SOURCE = '''
import ptoc.language as pl

M, K, N = 64, 64, 64

@pl.program
class DemoMatmul:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
               c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        am = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
        bm = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(am, target_memory=pl.Mem.Left), pl.move(bm, target_memory=pl.Mem.Right))
        c = pl.store(acc, [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
             c: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
        c = self.kernel(a, b, c)
        return c
'''


def run(args) -> int:
    from ptoc.language import parse_program

    program = parse_program(DEMO_SOURCE, filename="<demo>")
    print(program.as_python())
    return 0


def register(sub) -> None:
    parser = sub.add_parser("demo", help="compile (and, once available, simulate) the built-in demo")
    parser.set_defaults(handler=run)
