"""Small mixed cube + vector programs shared by the tests of the mixed-kernel passes."""

from __future__ import annotations

import ptoc.language as pl
from ptoc.passes import PassContext

SIG = ("a: pl.Tensor[[64, 128], pl.BF16], b: pl.Tensor[[128, 128], pl.BF16], "
       "bias: pl.Tensor[[64, 128], pl.FP32], out: pl.Out[pl.Tensor[[64, 128], pl.FP32]]")
RET = "pl.Tensor[[64, 128], pl.FP32]"

#: The cube part of a matmul whose [64, 128] FP32 result stays in Acc as ``acc``.
CUBE = '''
        am: pl.Tile[[64, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(a, [0, 0], [64, 128], [64, 128], target_memory=pl.Mem.Mat)
        bm: pl.Tile[[128, 128], pl.BF16, pl.Mem.Mat] = pl.tile.load(b, [0, 0], [128, 128], [128, 128], target_memory=pl.Mem.Mat)
        al: pl.Tile[[64, 128], pl.BF16, pl.Mem.Left] = pl.tile.move(am, target_memory=pl.Mem.Left)
        br: pl.Tile[[128, 128], pl.BF16, pl.Mem.Right] = pl.tile.move(bm, target_memory=pl.Mem.Right)
        acc: pl.Tile[[64, 128], pl.FP32, pl.Mem.Acc] = pl.tile.matmul(al, br)'''


def function(name: str, body: str, *, kind: str = "InCore", attrs: str = "", sig: str = SIG,
             ret: str | None = RET) -> str:
    """One ``@pl.function`` of the test class (``body`` indented 8 spaces)."""
    extra = f", attrs={attrs}" if attrs else ""
    arrow = f" -> {ret}" if ret else ""
    return (f"    @pl.function(type=pl.FunctionType.{kind}{extra})\n"
            f"    def {name}(self, {sig}){arrow}:{body}\n")


def program(*functions: str):
    """A program of ``functions`` (parsed, so every Var is bound)."""
    return pl.parse_program("import ptoc.language as pl\n\n@pl.program\nclass P:\n"
                            + "".join(functions))


def run(pass_factory, prog, **ctx):
    with PassContext(**ctx):
        return pass_factory()(prog)
