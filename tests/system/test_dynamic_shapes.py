"""pl.dynamic dimensions: one compile runs every size the kernel's windows fit, and a size
it cannot handle (a tail past the tensor, tensors that disagree, a size a compound
dimension cannot take) is an error naming the dimension and the numbers."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.codegen import generate_kernels
from ptoc.errors import PtocError
from ptoc.ir.dynamic import dynamic_dims
from ptoc.ir.nodes import DimVar

M = pl.dynamic("M")
ROWS = 16


@pl.program
class AddRows:
    @pl.function(type=pl.FunctionType.InCore)
    def add(self, a: pl.Tensor[[M, 64], pl.FP32], b: pl.Tensor[[M, 64], pl.FP32],
            out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        m = pl.tensor.dim(a, 0)
        for i, (o,) in pl.range(0, m, ROWS, init_values=(out,)):
            x = pl.load(a, [i, 0], [ROWS, 64])
            y = pl.load(b, [i, 0], [ROWS, 64])
            o2 = pl.store(pl.add(x, y), [i, 0], o)
            r = pl.yield_(o2)
        return r


@pl.program
class Doubled:
    @pl.function(type=pl.FunctionType.InCore)
    def copy(self, a: pl.Tensor[[M * 2, 64], pl.FP32],
             out: pl.Out[pl.Tensor[[M, 64], pl.FP32]]) -> pl.Tensor[[M, 64], pl.FP32]:
        x = pl.load(a, [0, 0], [ROWS, 64])
        o = pl.store(x, [0, 0], out)
        return o


@pytest.fixture(scope="module")
def add_rows():
    return ir.compile(AddRows)


def _run(compiled, m, seed=0):
    rng = np.random.default_rng(seed)
    a, b = (rng.standard_normal((m, 64)).astype(np.float32) for _ in range(2))
    out = np.zeros((m, 64), np.float32)
    compiled(a, b, out)
    return a, b, out


def test_one_symbol_per_dynamic_object_printed_as_a_declaration():
    fn = AddRows.get_function("add")
    (m,) = dynamic_dims(fn)
    assert isinstance(m, DimVar) and m is M.var
    text = AddRows.as_python()
    assert 'M = pl.dynamic("M")' in text
    reparsed = pl.parse_program(text)
    ir.assert_structural_equal(AddRows, reparsed)


def test_kernel_gets_one_trailing_index_argument_per_dynamic_dim():
    pto = generate_kernels(ir.compile(AddRows).program)["add"]
    assert "%arg3: index" in pto
    assert "shape = [%arg3, %c64_index]" in pto


@settings(max_examples=12, deadline=None)
@given(blocks=st.integers(1, 6), seed=st.integers(0, 3))
def test_one_compile_runs_every_whole_number_of_windows(add_rows, blocks, seed):
    a, b, out = _run(add_rows, blocks * ROWS, seed)
    np.testing.assert_array_equal(out, a + b)


@settings(max_examples=8, deadline=None)
@given(rows=st.integers(1, 100).filter(lambda r: r % ROWS))
def test_a_size_the_windows_do_not_fit_names_the_dim_and_the_numbers(add_rows, rows):
    with pytest.raises(PtocError, match=rf"M = {rows}:.*outside the view's extent {rows}"):
        _run(add_rows, rows)


def test_tensors_that_disagree_on_a_dim_name_both_sizes(add_rows):
    a = np.zeros((32, 64), np.float32)
    with pytest.raises(PtocError, match=r"M is 48 for argument 'b' dim 0 but 32 for "
                                        r"argument 'a' dim 0"):
        add_rows(a, np.zeros((48, 64), np.float32), np.zeros((32, 64), np.float32))
    with pytest.raises(PtocError, match=r"dim 1 is 64 \(static\) but the tensor passed has 32"):
        add_rows(a, a, np.zeros((32, 32), np.float32))


def test_a_compound_dim_is_solved_and_checked():
    compiled = ir.compile(Doubled)
    a = np.arange(32 * 64, dtype=np.float32).reshape(32, 64)
    out = np.zeros((16, 64), np.float32)
    compiled(a, out)
    np.testing.assert_array_equal(out, a[:16])
    with pytest.raises(PtocError, match=r"a multiple of 2"):
        compiled(np.zeros((31, 64), np.float32), out)
    with pytest.raises(PtocError, match=r"M \* 2 = 32 but the tensor passed has 30|"
                                        r"M is 15 for argument 'out'"):
        compiled(np.zeros((32, 64), np.float32), np.zeros((15, 64), np.float32))


T = pl.dynamic("T")


def _overhang_program(rows: int):
    @pl.program
    class Overhang:
        @pl.function(type=pl.FunctionType.InCore)
        def head(self, t: pl.Tensor[[4, 8], pl.FP32],
                 out: pl.Out[pl.Tensor[[rows, 8], pl.FP32]]) -> pl.Tensor[[rows, 8], pl.FP32]:
            x = pl.load(t, [0, 0], [rows, 8])
            o = pl.store(x, [0, 0], out)
            return o

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, t: pl.Tensor[[T, 8], pl.FP32],
                 out: pl.Out[pl.Tensor[[rows, 8], pl.FP32]]) -> pl.Tensor[[rows, 8], pl.FP32]:
            start = pl.tensor.dim(t, 0) - 2
            window = pl.slice(t, [4, 8], [start, 0])
            out = self.head(window, out)
            return out

    return ir.compile(Overhang)


def test_a_slice_may_overhang_the_last_rows_the_kernel_does_not_read():
    t = np.arange(5 * 8, dtype=np.float32).reshape(5, 8)
    out = np.zeros((2, 8), np.float32)
    _overhang_program(2)(t, out)      # rows 3..6 of a 5-row tensor; the kernel reads 3 and 4
    np.testing.assert_array_equal(out, t[3:5])
    with pytest.raises(PtocError, match=r"reaches element 23, but the bound tensor has only "
                                        r"16 elements"):
        _overhang_program(3)(t, np.zeros((3, 8), np.float32))   # row 5 does not exist


VALID = pl.dynamic("VALID")


@pl.program
class RowSumValid:
    @pl.function(type=pl.FunctionType.InCore)
    def rowsum(self, s: pl.Tensor[[16, 64], pl.FP32,
                                  pl.TensorView(valid_shape=[16, VALID], layout=pl.TensorLayout.ND)],
               n: pl.Scalar[pl.INDEX],
               out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        x = pl.load(s, [0, 0], [16, 64], valid_shape=[16, n])
        padded = pl.tile.fillpad(x, pad_value=pl.PadValue.zero)
        tmp = pl.create_tile([16, 64], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
        total = pl.row_sum(padded, tmp)
        o = pl.store(total, [0, 0], out)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], lens: pl.Tensor[[1], pl.INT64],
             out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
        n = pl.tensor.read(lens, [0])
        v = pl.slice(x, [16, 64], [0, 0], valid_shape=[16, n])
        out = self.rowsum(v, n, out)
        return out


@pytest.fixture(scope="module")
def row_sum_valid():
    return ir.compile(RowSumValid)


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 64))
def test_a_valid_shape_symbol_reaches_the_kernel_as_its_leading_argument(row_sum_valid, n):
    kernel = row_sum_valid.program.get_function("rowsum")
    assert kernel.params[0].var is VALID.var      # MaterializeValidShapeSymbols
    x = np.random.default_rng(n).standard_normal((16, 64)).astype(np.float32)
    out = np.zeros((16, 1), np.float32)
    row_sum_valid(x, np.array([n], np.int64), out)
    np.testing.assert_allclose(out[:, 0], x[:, :n].sum(axis=1), rtol=1e-5, atol=1e-5)


def _full_tile_row_max(col: int = 0, tensor_level: bool = False):
    """A row max (which padding would change) over a full-width tile loaded from column
    ``col`` of a tensor valid only over its first VALID columns, with no valid_shape given
    (``tensor_level``: the tensor-level pl.row_max of the whole tensor instead)."""
    width = 64 - col

    @pl.program
    class RowMaxValid:
        @pl.function(type=pl.FunctionType.InCore)
        def rowmax(self, s: pl.Tensor[[16, 64], pl.FP32,
                                      pl.TensorView(valid_shape=[16, VALID], layout=pl.TensorLayout.ND)],
                   out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
            if tensor_level:
                out[:] = pl.row_max(s)
            else:
                x = pl.load(s, [0, col], [16, width])
                tmp = pl.create_tile([16, width], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
                out = pl.store(pl.row_max(x, tmp), [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[16, 64], pl.FP32], lens: pl.Tensor[[1], pl.INT64],
                 out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]) -> pl.Tensor[[16, 1], pl.FP32]:
            n = pl.tensor.read(lens, [0])
            out = self.rowmax(pl.slice(x, [16, 64], [0, 0], valid_shape=[16, n]), out)
            return out

    return RowMaxValid


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 64))
def test_a_full_tile_load_of_a_partly_valid_tensor_is_valid_over_the_views_region(n):
    program = _full_tile_row_max()
    load = program.get_function("rowmax").body.stmts[0].value
    assert load.type.view.get("valid_shape") == (16, VALID.var)   # derived from the view
    x = np.random.default_rng(n).standard_normal((16, 64)).astype(np.float32)
    x[:, n:] = 1e6                                       # what a padding leak would show
    out = np.zeros((16, 1), np.float32)
    ir.compile(program)(x, np.array([n], np.int64), out)
    np.testing.assert_array_equal(out[:, 0], x[:, :n].max(axis=1))


@settings(max_examples=6, deadline=None)
@given(n=st.integers(1, 64))
def test_a_tensor_level_row_op_on_a_partly_valid_tensor_reads_only_the_valid_part(n):
    x = np.random.default_rng(n).standard_normal((16, 64)).astype(np.float32)
    x[:, n:] = 1e6
    out = np.zeros((16, 1), np.float32)
    ir.compile(_full_tile_row_max(tensor_level=True))(x, np.array([n], np.int64), out)
    np.testing.assert_array_equal(out[:, 0], x[:, :n].max(axis=1))


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 64))
def test_a_full_tile_load_past_offset_zero_is_valid_over_what_the_view_leaves(n):
    """Column 32 onwards of a tensor valid over its first n columns: valid over
    clamp(n - 32, 0, 32) columns, a run-time extent (was refused); a window holding no data
    (n <= 32) is an error at run time, never a row max of padding."""
    compiled = ir.compile(_full_tile_row_max(32))
    x = np.random.default_rng(n).standard_normal((16, 64)).astype(np.float32)
    x[:, n:] = 1e6
    out = np.zeros((16, 1), np.float32)
    if n <= 32:
        with pytest.raises(PtocError, match=r"valid shape 16x0 of 16x32: its window holds no data"):
            compiled(x, np.array([n], np.int64), out)
        return
    compiled(x, np.array([n], np.int64), out)
    np.testing.assert_array_equal(out[:, 0], x[:, 32:n].max(axis=1))


def _slice_of_a_valid_slice(offset: int):
    """Orchestration slices rows [offset, offset + 32) of a view valid over its first n
    rows and passes them to a kernel that learns their valid rows as VALID."""

    @pl.program
    class SliceOfAView:
        @pl.function(type=pl.FunctionType.InCore)
        def k(self, s: pl.Tensor[[32, 16], pl.FP32,
                                 pl.TensorView(valid_shape=[VALID, 16], layout=pl.TensorLayout.ND)],
              out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            out[:] = pl.add(s, 1.0)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, x: pl.Tensor[[64, 16], pl.FP32], n: pl.Scalar[pl.INDEX],
                 out: pl.Out[pl.Tensor[[32, 16], pl.FP32]]) -> pl.Tensor[[32, 16], pl.FP32]:
            v = pl.slice(x, [64, 16], [0, 0], valid_shape=[n, 16])
            out = self.k(pl.slice(v, [32, 16], [offset, 0]), out)
            return out

    return ir.compile(SliceOfAView)


@pytest.fixture(scope="module", params=[0, 16, 32])
def slice_of_a_valid_slice(request):
    return request.param, _slice_of_a_valid_slice(request.param)


@settings(max_examples=8, deadline=None)
@given(n=st.integers(1, 64))
def test_a_slice_of_a_partly_valid_slice_passes_the_composed_valid_rows(slice_of_a_valid_slice,
                                                                         n):
    """The kernel gets clamp(n - offset, 0, 32) rows (was: all 32, the rows past n computed
    and stored, no error); a window holding none of them is an error at run time."""
    offset, compiled = slice_of_a_valid_slice
    x = np.random.default_rng(n).standard_normal((64, 16)).astype(np.float32)
    out = np.full((32, 16), 7.0, np.float32)
    rows = max(0, min(n - offset, 32))
    if rows == 0:
        with pytest.raises(PtocError, match=r"valid shape 0x16 of 32x16: its window holds no data"):
            compiled(x, n, out)
        return
    result = compiled.run(x, n, out)
    assert result.races == []
    want = np.full((32, 16), 7.0, np.float32)
    want[:rows] = x[offset:offset + rows] + 1
    np.testing.assert_array_equal(out, want)


def test_overhanging_tasks_on_the_chip_replay_only_where_their_windows_fit():
    from ptoc.runtime import RunConfig

    t = np.arange(5 * 8, dtype=np.float32).reshape(5, 8)
    out = np.zeros((2, 8), np.float32)
    result = _overhang_program(2).run(t, out, config=RunConfig(chip=True))
    np.testing.assert_array_equal(out, t[3:5])
    assert result.races == []
    with pytest.raises(PtocError, match=r"reaches element 23, but the bound tensor has only "
                                        r"16 elements"):
        _overhang_program(3).run(t, np.zeros((3, 8), np.float32), config=RunConfig(chip=True))


@pl.program
class TwoWindows:
    @pl.function(type=pl.FunctionType.InCore)
    def head(self, t: pl.Tensor[[4, 8], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 8], pl.FP32]]) -> pl.Tensor[[3, 8], pl.FP32]:
        x = pl.load(t, [0, 0], [3, 8])
        o = pl.store(x, [0, 0], out)
        return o

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, t: pl.Tensor[[T, 8], pl.FP32],
             out: pl.Out[pl.Tensor[[3, 8], pl.FP32]]) -> pl.Tensor[[3, 8], pl.FP32]:
        for s in pl.range(0, 4, 3):          # rows 0..3, then 3..6 of a 5-row tensor
            window = pl.slice(t, [4, 8], [s, 0])
            out = self.head(window, out)
        return out


def test_an_identical_task_whose_region_overhangs_is_not_replayed_past_its_tensor():
    from ptoc.runtime import RunConfig

    t = np.arange(5 * 8, dtype=np.float32).reshape(5, 8)
    with pytest.raises(PtocError, match=r"bound tensor has only 16 elements"):
        ir.compile(TwoWindows).run(t, np.zeros((3, 8), np.float32),
                                   config=RunConfig(chip=True))
