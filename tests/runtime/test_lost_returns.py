"""An entry that returns a tensor it made itself (``pl.create_tensor``) instead of writing an
output parameter: ptoc hands back only the caller's tensors, so the run stops with an error
naming the tensor and the fix (it used to return None and drop what was written)."""

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.errors import RuntimeConfigError

N = 32

SOURCE = f"""
@pl.program
class Returns:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, a: pl.Tensor[[{N}, {N}], pl.FP32], t: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
             ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        t[:] = pl.add(a, a)
        return t

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{N}, {N}], pl.FP32]) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        t = pl.create_tensor([{N}, {N}], dtype=pl.FP32)
        t = self.fill(a, t)
        return t
"""


@pytest.mark.parametrize("call", ["call", "run"])
def test_returning_a_created_tensor_is_refused_not_dropped(call):
    compiled = ir.compile(pl.parse_program(SOURCE, filename="returns.py"), None)
    a = np.ones((N, N), np.float32)
    with pytest.raises(RuntimeConfigError, match="'main' returns tensor 't' .* none of its "
                                                  "parameters") as info:
        compiled(a) if call == "call" else compiled.run(a)
    assert "pl.Out" in str(info.value) and info.value.loc is not None
    assert info.value.loc.line == SOURCE.splitlines().index("        return t", 9) + 1


def test_returning_an_output_parameter_still_runs():
    compiled = ir.compile(pl.parse_program(SOURCE.replace(
        "def main(self, a: pl.Tensor[[32, 32], pl.FP32])",
        "def main(self, a: pl.Tensor[[32, 32], pl.FP32], t: pl.Out[pl.Tensor[[32, 32], pl.FP32]])"
    ).replace("        t = pl.create_tensor([32, 32], dtype=pl.FP32)\n", ""), filename="ok.py"), None)
    a = np.ones((N, N), np.float32)
    np.testing.assert_array_equal(compiled(a), a + a)
