"""A mixed kernel: the cube's matmul and the vector units' bias add in ONE scope.

``pl.split(pl.SplitMode.UP_DOWN)`` marks the scope as mixed: ptoc splits it into an AIC
function (load, matmul, push the accumulator) and an AIV function (pop its half of the rows,
add the bias, store), joined by a cross-core pipe, and runs them as one simulated core
group (one AIC and two AIVs) so the units overlap.

Run: python examples/06_mixed_kernel.py
"""

import tempfile

import numpy as np

import ptoc.language as pl
from ptoc import ir

M, K, N = 128, 256, 128


@pl.program
class MixedMatmulBias:
    @pl.function
    def main(self, a: pl.Tensor[[M, K], pl.FP16], b: pl.Tensor[[K, N], pl.FP16],
             bias: pl.Tensor[[M, N], pl.FP32], out: pl.Out[pl.Tensor[[M, N], pl.FP32]]):
        with pl.at(level=pl.Level.CORE_GROUP, optimizations=[pl.split(pl.SplitMode.UP_DOWN)],
                   name_hint="mixed_up_down"):
            acc = pl.matmul(a, b, out_dtype=pl.FP32)      # cube (AIC)
            out[:] = pl.add(acc, bias)                    # vector (AIV), rows halved per lane
        return out


def example_inputs():
    """Inputs for `ptoc run examples/06_mixed_kernel.py` (outputs included, in order)."""
    rng = np.random.default_rng(0)
    return (rng.standard_normal((M, K)).astype(np.float16),
            rng.standard_normal((K, N)).astype(np.float16),
            rng.standard_normal((M, N)).astype(np.float32), np.zeros((M, N), np.float32))


def golden(inputs):
    """The numpy reference `ptoc run` compares against."""
    a, b = (inputs[k].astype(np.float32) for k in ("a", "b"))
    return {"out": a @ b + inputs["bias"]}


def main(output_dir=None) -> float:
    a, b, bias, out = example_inputs()
    compiled = ir.compile(MixedMatmulBias, output_dir or tempfile.mkdtemp(prefix="ptoc_ex06_"))
    result = compiled.run(a, b, bias, out)
    error = float(np.abs(out - golden({"a": a, "b": b, "bias": bias})["out"]).max())
    assert error < 1e-3 and not result.races
    group = result.runs[0].sim
    print(f"max error {error:.2e}; kernels {sorted(compiled.pto_text)}; core group wall "
          f"{group.wall_cycles:.0f} cycles ({', '.join(group.cores)})")
    return error


if __name__ == "__main__":
    main()
