"""Reads of never-written GM (``ptoc.sim.unwritten``): a ``pl.create_tensor`` without
``init_value=`` holds garbage on a device, so a read of bytes nothing wrote first is reported
(``RunResult.unwritten``, an ``UnwrittenReadWarning``) with the tensor, the byte and element
range and the reading op; tensors the caller passes and ``init_value=`` tensors are defined."""

from __future__ import annotations

import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import DataType
from ptoc.errors import UnwrittenReadWarning
from ptoc.runtime import RunConfig
from ptoc.sim.global_memory import GlobalMemory
from ptoc.sim.instr import Access
from ptoc.sim.unwritten import DefinedBytes
from ptoc.testing import GoldenMismatch, PTOTestCase, TensorSpec
from task_programs import program

N = 32


def _program(rows_written: int, *, init: bool = False, read_out_first: bool = False):
    """``t = create_tensor``; ``fill`` writes ``rows_written`` rows of t (reading t first when
    ``read_out_first``); ``exp`` reads all of t into the output."""

    @pl.program
    class Prog:
        @pl.function(type=pl.FunctionType.InCore)
        def fill(self, a: pl.Tensor[[N, N], pl.FP32], t: pl.Out[pl.Tensor[[N, N], pl.FP32]]
                 ) -> pl.Tensor[[N, N], pl.FP32]:
            x = pl.load(a, [0, 0], [rows_written, N], target_memory=pl.Mem.Vec)
            if read_out_first:
                old = pl.load(t, [0, 0], [rows_written, N], target_memory=pl.Mem.Vec)
                x = pl.add(x, old)
            pl.store(pl.add(x, x), [0, 0], t)
            return t

        @pl.function(type=pl.FunctionType.InCore)
        def exp(self, t: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]
                ) -> pl.Tensor[[N, N], pl.FP32]:
            x = pl.load(t, [0, 0], [N, N], target_memory=pl.Mem.Vec)
            pl.store(pl.exp(x), [0, 0], c)
            return c

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[N, N], pl.FP32], c: pl.Out[pl.Tensor[[N, N], pl.FP32]]
                 ) -> pl.Tensor[[N, N], pl.FP32]:
            if init:
                t = pl.create_tensor([N, N], dtype=pl.FP32, init_value=0.0)
            else:
                t = pl.create_tensor([N, N], dtype=pl.FP32)
            t = self.fill(a, t)
            c = self.exp(t, c)
            return c

    return Prog


def _run(program, **config):
    compiled = ir.compile(program, None)
    a = np.ones((N, N), np.float32)
    c = np.zeros((N, N), np.float32)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compiled.run(a, c, config=RunConfig(**config))
    return result, [w for w in caught if issubclass(w.category, UnwrittenReadWarning)]


@pytest.mark.parametrize("chip", [False, True])
def test_a_partly_written_tensor_read_whole_reports_the_unwritten_rows(chip):
    result, caught = _run(_program(16), chip=chip)
    (read,) = result.unwritten
    assert read.tensor == "t" and (read.lo, read.hi) == (16 * N * 4, N * N * 4)
    assert read.unwritten == 16 * N * 4
    assert read.elements == f"elements [{16 * N}, {N * N}) ([16, 0] .. [31, 31])"
    assert read.reader == "pto.tload" and read.task.startswith("exp#1 at ")
    assert "exp.pto line" in read.where and "pl.create_tensor without init_value=" in read.origin
    assert len(caught) == 1 and "init_value=" in str(caught[0].message)
    assert "'t' elements [512, 1024)" in str(caught[0].message)


def test_a_fully_written_tensor_reports_nothing():
    result, caught = _run(_program(N))
    assert result.unwritten == [] and caught == []


def test_init_value_makes_the_tensor_defined():
    result, caught = _run(_program(16, init=True))
    assert result.unwritten == [] and caught == []


def test_a_kernel_reading_its_out_parameter_before_storing_is_reported():
    result, _ = _run(_program(N, read_out_first=True))
    (read,) = result.unwritten
    assert read.task.startswith("fill#0") and (read.lo, read.hi) == (0, N * N * 4)


@pl.program
class Entry:
    @pl.function(type=pl.FunctionType.InCore)
    def acc(self, a: pl.Tensor[[N, N], pl.FP32], o: pl.Out[pl.Tensor[[N, N], pl.FP32]]
            ) -> pl.Tensor[[N, N], pl.FP32]:
        x = pl.load(a, [0, 0], [N, N], target_memory=pl.Mem.Vec)
        y = pl.load(o, [0, 0], [N, N], target_memory=pl.Mem.Vec)
        pl.store(pl.add(x, y), [0, 0], o)
        return o


def test_an_entry_out_parameter_holds_what_the_host_passed():
    """As PyPTO's runtime uploads every host tensor argument (an inputs-only call's outputs
    are zero-filled host tensors), an entry's Out parameter is defined."""
    compiled = ir.compile(Entry, None)
    a = np.ones((N, N), np.float32)
    o = np.full((N, N), 2.0, np.float32)
    result = compiled.run(a, o)
    assert result.unwritten == [] and np.all(o == 3.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnwrittenReadWarning)
        assert np.all(compiled(a) == 1.0)


def test_inputs_only_calls_warn_too():
    compiled = ir.compile(_program(16), None)
    with pytest.warns(UnwrittenReadWarning, match="reads 't' elements"):
        compiled(np.ones((N, N), np.float32))


# -- the bitmap against a model ----------------------------------------------------------

ROWS, COLS = 12, 20
_window = st.tuples(st.integers(0, ROWS - 1), st.integers(1, ROWS), st.integers(0, COLS - 1),
                    st.integers(1, COLS))


def _region(tensor, window):
    r0, r, c0, c = window
    r, c = min(r, ROWS - r0), min(c, COLS - c0)
    return tensor.slice((r0, c0), (r, c)), (slice(r0, r0 + r), slice(c0, c0 + c))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _window), min_size=1, max_size=8),
       st.sampled_from([DataType.FP32, DataType.FP16]))
def test_written_bytes_match_a_bitmap_model(steps, dtype):
    """Random writes and reads of 2-D windows (strided: rows of a wider tensor): each read
    is reported exactly when the model has an unwritten element in it, with the bounding
    byte range and the count of the unwritten bytes."""
    gm = GlobalMemory()
    tensor = gm.alloc("t", (ROWS, COLS), dtype)
    defined = DefinedBytes()
    defined.undefined(tensor, "test")
    model = np.zeros((ROWS, COLS), bool)
    item = dtype.nbytes
    expected = []
    for write, window in steps:
        region, index = _region(tensor, window)
        if write:
            defined.host_write(region)
            model[index] = True
            continue
        defined.host_read(region, f"read{len(expected)}", None)
        holes = np.zeros_like(model)
        holes[index] = ~model[index]
        if holes.any():
            flat = np.flatnonzero(holes)
            expected.append((flat.min() * item, (flat.max() + 1) * item,
                             holes.sum() * item))
        else:
            expected.append(None)
    found = {read.reader: (read.lo, read.hi, read.unwritten) for read in defined.reads}
    assert [found.get(f"read{i}") for i in range(len(expected))] == expected


# -- reads by the orchestration and the dispatch point -----------------------------------

@pytest.mark.parametrize("body,reported", [
    ("n = pl.tensor.read(g, [1, 2])\nc = self.double(a, c)", True),
    ("pl.tensor.write(g, [1, 2], 5)\nn = pl.tensor.read(g, [1, 2])\nc = self.double(a, c)",
     False),
    ("c, t = pl.submit(self.double, a, c, predicate=(g[1, 2] > 0))", True),
])
@pytest.mark.parametrize("chip", [False, True])
def test_host_and_dispatch_point_reads(body, reported, chip):
    compiled = ir.compile(program("g = pl.create_tensor([4, 8], dtype=pl.INT32)\n" + body),
                          None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = compiled.run(np.ones((N, N), np.float32), np.zeros((N, N), np.float32),
                              config=RunConfig(chip=chip))
    if not reported:
        assert result.unwritten == []
        return
    (read,) = result.unwritten
    assert read.tensor == "g" and (read.lo, read.hi) == ((8 + 2) * 4, (8 + 3) * 4)
    assert read.elements == "elements [10, 11) ([1, 2] .. [1, 2])" and read.task == "host"
    assert "tasks.py" in read.where



@pytest.mark.parametrize("g_init,row,readers", [
    ("", 1, ["pl.assemble"]),                     # the source g was never written
    (", init_value=1", 1, []),                    # row 1 of h is the assembled window
    (", init_value=1", 0, ["pl.read"]),            # row 0 of h is not
])
def test_an_orchestration_assemble_reads_its_source_and_defines_its_window(g_init, row,
                                                                          readers):
    body = (f"g = pl.create_tensor([1, 8], dtype=pl.INT32{g_init})\n"
            "h = pl.create_tensor([4, 8], dtype=pl.INT32)\n"
            "h = pl.assemble(h, g, [1, 0])\n"
            f"n = pl.tensor.read(h, [{row}, 2])\n"
            "c = self.double(a, c)")
    compiled = ir.compile(program(body), None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnwrittenReadWarning)
        result = compiled.run(np.ones((N, N), np.float32), np.zeros((N, N), np.float32))
    assert [read.reader for read in result.unwritten] == readers
    assert all(read.task == "host" for read in result.unwritten)

ACCUMULATE = f"""
import ptoc.language as pl

@pl.program
class Acc:
    @pl.function(type=pl.FunctionType.InCore)
    def update(self, a: pl.Tensor[[{N}, {N}], pl.FP32], t: pl.InOut[pl.Tensor[[{N}, {N}], pl.FP32]],
               first: pl.Scalar[pl.BOOL]) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        x = pl.load(a, [0, 0], [{N}, {N}], target_memory=pl.Mem.Vec)
        old = pl.load(t, [0, 0], [{N}, {N}], target_memory=pl.Mem.Vec)
        if first:
            t = pl.store(x, [0, 0], t)
        else:
            t = pl.store(pl.add(x, old), [0, 0], t)
        return t

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{N}, {N}], pl.FP32], c: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
             ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        t = pl.create_tensor([{N}, {N}], dtype=pl.FP32)
        t = self.update(a, t, {{first}})
        t = self.update(a, t, False)
        c = self.update(t, c, True)
        return c
"""


@pytest.mark.filterwarnings("ignore::ptoc.errors.UnwrittenReadWarning")
@pytest.mark.parametrize("first,reported", [(True, False), (False, True)])
def test_a_load_whose_tile_is_never_used_is_not_reported(first, reported):
    """The accumulator pattern: the kernel loads its accumulator on every call but uses it
    only when it is not the first — the garbage loaded by the first call is never used."""
    compiled = ir.compile(pl.parse_program(ACCUMULATE.format(first=first)), None)
    result = compiled.run(np.ones((N, N), np.float32), np.zeros((N, N), np.float32))
    assert [r.task.split(" ")[0] for r in result.unwritten] == (["update#0"] if reported
                                                               else [])


def _ins(name, reads=(), writes=()):
    return SimpleNamespace(name=name, reads=list(reads), writes=list(writes), file="k.pto",
                           line=1, loc=None)


@pytest.mark.parametrize("rewrite,reported", [
    # column 0 of rows 0..15 of a 32-wide FP32 tile: its bounding bytes [0, 1924) contain
    # the loaded rows 0..7 [0, 1024) but it writes only 16 of their 256 elements
    (Access("Vec", 0, 15 * 128 + 4), True),
    (Access("Vec", 0, 1024), False),        # the same window again: the garbage is gone
])
def test_a_tile_access_whose_bounding_bytes_contain_the_load_does_not_hide_a_use(rewrite,
                                                                               reported):
    """Tile accesses are bounding byte ranges (a window of a wider tile has gaps), so a
    write whose range contains the loaded bytes need not overwrite them: a later read of the
    loaded tile still uses the garbage and is reported."""
    tensor = GlobalMemory().alloc("t", (8, 32), DataType.FP32)
    defined = DefinedBytes()
    defined.undefined(tensor, "test")
    load = _ins("pto.tload", [Access("GM %t", 0, 1024)], [Access("Vec", 0, 1024)])
    fill = _ins("pto.texpands", writes=[rewrite])
    use = _ins("pto.tadd", [Access("Vec", 4, 8)], [Access("Vec", 4096, 4100)])
    defined.task("k#0", [(0, 1, load), (1, 2, fill), (2, 3, use)],
                 defined.tracked([tensor]))
    assert [read.reader for read in defined.reads] == (["pto.tload"] if reported else [])


class HalfWritten(PTOTestCase):
    """The golden is what ptoc computes from its zero-filled GM: only the unwritten read
    fails the case."""

    def define_tensors(self):
        return [TensorSpec("a", [N, N], DataType.FP32),
                TensorSpec("c", [N, N], DataType.FP32, is_output=True)]

    def get_program(self):
        return _program(16)

    def compute_expected(self, t, params=None):
        half = np.zeros((N, N), np.float32)
        half[:16] = 2 * t["a"][:16]
        t["c"][:] = np.exp(half)


@pytest.mark.filterwarnings("ignore::ptoc.errors.UnwrittenReadWarning")
def test_a_system_test_case_fails_on_an_unwritten_read(tmp_path):
    with pytest.raises(GoldenMismatch, match=r"read of never-written GM: .* reads 't' elements"):
        HalfWritten().run(tmp_path)


BANDS = f"""
import ptoc.language as pl

@pl.program
class Bands:
    @pl.function(type=pl.FunctionType.InCore)
    def band(self, a: pl.Tensor[[8, {N}], pl.FP32], t: pl.Out[pl.Tensor[[8, {N}], pl.FP32]]
             ) -> pl.Tensor[[8, {N}], pl.FP32]:
        x = pl.load(a, [0, 0], [8, {N}], target_memory=pl.Mem.Vec)
        t = pl.store(pl.add(x, x), [0, 0], t)
        return t

    @pl.function(type=pl.FunctionType.InCore)
    def exp(self, t: pl.Tensor[[{N}, {N}], pl.FP32], c: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
            ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        x = pl.load(t, [0, 0], [{N}, {N}], target_memory=pl.Mem.Vec)
        c = pl.store(pl.exp(x), [0, 0], c)
        return c

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, a: pl.Tensor[[{N}, {N}], pl.FP32], c: pl.Out[pl.Tensor[[{N}, {N}], pl.FP32]]
             ) -> pl.Tensor[[{N}, {N}], pl.FP32]:
        t = pl.create_tensor([{N}, {N}], dtype=pl.FP32)
        for i in pl.range({{bands}}):
            av = pl.slice(a, [8, {N}], [i * 8, 0])
            tv = pl.slice(t, [8, {N}], [i * 8, 0])
            tv = self.band(av, tv)
        c = self.exp(t, c)
        return c
"""


@pytest.mark.filterwarnings("ignore::ptoc.errors.UnwrittenReadWarning")
@pytest.mark.parametrize("chip", [False, True])
@pytest.mark.parametrize("bands", [4, 3])
def test_identical_tasks_on_bands_define_what_they_write(chip, bands):
    """One kernel on each band of t (the chip replays identical tasks on their own
    regions): the bands written are defined, the rest is reported."""
    compiled = ir.compile(pl.parse_program(BANDS.format(bands=bands)), None)
    result = compiled.run(np.ones((N, N), np.float32), np.zeros((N, N), np.float32),
                          config=RunConfig(chip=chip))
    assert not chip or result.chip.reused == bands - 1     # the replayed tasks
    if bands == 4:
        assert result.unwritten == []
    else:
        (read,) = result.unwritten
        assert (read.lo, read.hi) == (24 * N * 4, N * N * 4)
