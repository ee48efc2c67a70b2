"""Memory map: structure of the HTML page, conflicts, the 95 % flag, both planners, the CLI."""

import math
import re

import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.cli import main
from ptoc.dtypes import MemorySpace
from ptoc.passes import MemoryPlanner
from ptoc.pto import Instruction, walk
from ptoc.report import render_memory_map, write_memory_maps
from ptoc.report.memmap_model import SPACES, TileSpan, map_from_tiles

MAT, LEFT, VEC = MemorySpace.Mat, MemorySpace.Left, MemorySpace.Vec


def matmul_program(M=128, N=128, K=64):
    @pl.program
    class MM:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                   out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            lm = pl.load(a, [0, 0], [M, K], target_memory=pl.Mem.Mat)
            rm = pl.load(b, [0, 0], [K, N], target_memory=pl.Mem.Mat)
            c = pl.matmul(lm, rm)
            out = pl.store(c, [0, 0], out)
            return out

        @pl.function(type=pl.FunctionType.Orchestration)
        def main(self, a: pl.Tensor[[M, K], pl.FP32], b: pl.Tensor[[K, N], pl.FP32],
                 out: pl.Out[pl.Tensor[[M, N], pl.FP32]]) -> pl.Tensor[[M, N], pl.FP32]:
            out = self.kernel(a, b, out)
            return out
    return MM


def conflicts(html: str) -> int:
    return len(re.findall(r'<rect class="conflict"', html))


def panel_attr(html: str, space: str, attr: str) -> str:
    m = re.search(rf'<section class="panel" id="panel-{space}"[^>]*\b{attr}="([^"]*)"', html)
    assert m, f"panel {space} has no {attr}"
    return m.group(1)


def tile(name, space, addr, nbytes, start, end, storage=None):
    return TileSpan(name, space, addr, nbytes, start, end, storage=storage)


# -- conflicts are exactly the address AND lifetime overlaps ------------------------------

@pytest.mark.parametrize("b, expected", [
    (tile("b", VEC, 4096, 8192, 5, 12), 1),     # bytes and lifetime overlap
    (tile("b", VEC, 4096, 8192, 11, 20), 0),    # bytes overlap, lifetimes disjoint
    (tile("b", VEC, 8192, 4096, 5, 12), 0),     # lifetimes overlap, bytes disjoint (touching)
    (tile("b", VEC, 0, 8192, 2, 8), 0),         # same space/addr/size: one storage (alias)
    (tile("b", VEC, 0, 4096, 2, 8, storage="mem_vec_0"), 1),  # different storage declared
    (tile("b", MAT, 0, 8192, 2, 8), 0),         # other space
])
def test_conflict_exactly_when_bytes_and_lifetime_overlap(b, expected):
    a = tile("a", VEC, 0, 8192, 1, 10)
    mm = map_from_tiles("k", "a2a3", [a, b])
    html = render_memory_map(mm)
    assert conflicts(html) == expected == len(mm.conflicts)
    assert panel_attr(html, "Vec", "data-conflicts") == str(expected if b.space is VEC else 0)
    if expected:
        c = mm.conflicts[0]
        assert (c.lo, c.hi) == (b.addr, min(b.addr + b.nbytes, 8192))
        assert (c.start, c.end) == (max(1, b.start), min(10, b.end))
        assert html.count('class="buf conflicted"') == 2


def test_three_way_overlap_draws_each_pair():
    tiles = [tile("a", VEC, 0, 8192, 1, 10), tile("b", VEC, 4096, 8192, 2, 9),
             tile("c", VEC, 6144, 1024, 3, 4)]
    html = render_memory_map(map_from_tiles("k", "a2a3", tiles))
    assert conflicts(html) == 3


def test_views_of_one_storage_are_dashed_not_red():
    tiles = [tile("whole", VEC, 0, 8192, 1, 10, storage="mem_vec_0"),
             tile("row", VEC, 1024, 1024, 3, 5, storage="mem_vec_0")]
    mm = map_from_tiles("k", "a2a3", tiles)
    html = render_memory_map(mm)
    assert conflicts(html) == 0 and 'class="buf view"' in html


def test_aliases_with_overlapping_lifetimes_merge_into_one_rectangle_reuse_splits():
    tiles = [tile("init", LEFT, 0, 4096, 1, 6), tile("acc", LEFT, 0, 4096, 4, 9),
             tile("next", LEFT, 0, 4096, 12, 15)]
    mm = map_from_tiles("k", "a2a3", tiles)
    assert [b.names for b in mm.panel(LEFT).buffers] == [["init", "acc"], ["next"]]
    html = render_memory_map(mm)
    assert 'data-tiles="init acc"' in html and 'data-tiles="next"' in html


# -- the 95 % flag ---------------------------------------------------------------------------

@pytest.mark.parametrize("share, full", [(0.95, True), (1.0, True), (0.94, False)])
def test_usage_at_or_above_95_percent_is_flagged(share, full):
    from ptoc.backend import get_target
    cap = get_target("a2a3").capacity(LEFT)
    size = math.ceil(cap * share / 32) * 32
    mm = map_from_tiles("k", "a2a3", [tile("big", LEFT, 0, size, 1, 3)])
    html = render_memory_map(mm)
    assert panel_attr(html, "Left", "data-full") == str(full).lower()
    assert panel_attr(html, "Mat", "data-full") == "false"
    assert ('class="pill full"' in html.split('id="panel-Left"')[1].split("</section>")[0]) is full


# -- real compiles under both planners -------------------------------------------------------

@pytest.mark.parametrize("planner", [MemoryPlanner.PYPTO, MemoryPlanner.PTOAS])
def test_compiled_kernel_page_has_every_panel_and_every_tile(planner, tmp_path):
    compiled = ir.compile(matmul_program(), output_dir=tmp_path, memory_planner=planner,
                          dump_passes=False)
    [path] = write_memory_maps(compiled)
    assert path == tmp_path / "report" / "memmap_kernel.html"
    html = path.read_text()
    for space in SPACES:
        assert f'<section class="panel" id="panel-{space.value}"' in html
    assert html.count('<section class="panel"') == len(SPACES)
    drawn = {name for tiles in re.findall(r'data-tiles="([^"]*)"', html) for name in tiles.split()}
    module = compiled.pto_module("kernel")
    allocs = {op.result.name for op in walk(module.kernel("kernel").body)
              if isinstance(op, Instruction) and op.opcode == "pto.alloc_tile"}
    assert allocs and allocs <= drawn
    for space in (MemorySpace.Mat, MemorySpace.Left, MemorySpace.Right, MemorySpace.Acc):
        assert re.search(rf'id="panel-{space.value}".*?<g class="buf', html, re.S)
    assert conflicts(html) == 0
    # self-contained: no scripts, stylesheets, images or fonts fetched from anywhere
    assert not re.search(r"<script|<link|<img|@import|url\(", html)
    assert "http" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "Legend" in html and '<table class="totals">' in html
    assert f"planner {planner.name}" in html


def test_cli_memmap_renders_every_kernel_and_prints_paths(tmp_path, capsys):
    ir.compile(matmul_program(), output_dir=tmp_path, dump_passes=False)
    page = tmp_path / "report" / "memmap_kernel.html"
    assert main(["memmap", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == str(page)
    assert page.exists() and "panel-Acc" in page.read_text()


def test_cli_memmap_on_a_directory_without_pto_is_one_line_error(tmp_path, capsys):
    assert main(["memmap", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ptoc: error:") and "pto/*.pto" in err and err.count("\n") == 1


def slice_program():
    @pl.program
    class Slice:
        @pl.function(type=pl.FunctionType.InCore)
        def kernel(self, a: pl.Tensor[[32, 64], pl.FP32],
                   out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
            x = pl.load(a, [0, 0], [32, 64], target_memory=pl.Mem.Vec)
            s = pl.slice(x, [16, 64], [8, 0])
            e = pl.exp(s)
            out = pl.store(e, [0, 0], out)
            return out
    return Slice


def test_compile_writes_the_page_and_the_cli_redraws_it_with_the_saved_storage(tmp_path, capsys):
    """A Vec window (pl.slice) under the PYPTO planner shares bytes with its parent's
    storage: not a conflict, and ``ptoc memmap DIR`` knows it from report/allocations.json."""
    compiled = ir.compile(slice_program(), output_dir=tmp_path, dump_passes=False)
    page = tmp_path / "report" / "memmap_kernel.html"
    first = page.read_text()                     # written by the compile itself
    assert conflicts(first) == 0 and "storage mem_vec" in first
    assert compiled.pto_text["kernel"].count("pto.alloc_tile") == first.count('<g class="buf')
    assert main(["memmap", str(tmp_path)]) == 0
    assert page.read_text() == first.replace(" · planner PYPTO", "")
    (tmp_path / "report" / "allocations.json").unlink()   # PTO only: storage = exact range
    assert main(["memmap", str(tmp_path)]) == 0
    assert "storage Vec@" in page.read_text() and "storage mem_vec" not in page.read_text()
