"""The small program several compat tests compile: ``c = a + b`` on [16, 64] FP32."""

ADD = '''
import ptoc.language as pl

@pl.program
class Add:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
            c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        x = pl.load(a, [0, 0], [16, 64])
        y = pl.load(b, [0, 0], [16, 64])
        c = pl.store(pl.add(x, y), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[16, 64], pl.FP32], b: pl.Tensor[[16, 64], pl.FP32],
             c: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        c = self.add(a, b, c)
        return c
'''
