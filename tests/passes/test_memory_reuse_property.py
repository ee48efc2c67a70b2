"""Property: after MemoryReuse + AllocateMemoryAddr, tiles that are live at the same time
never share bytes, every address is 32-byte aligned, and the space is not exceeded.

Programs are random straight-line Vec kernels (loads, exp, add, stores; optional stage
tags on loads). Liveness is recomputed here independently: a tile lives from its defining
statement to its last read, and two tiles conflict when those spans overlap strictly
(an op may write its result over an operand it reads for the last time).
"""

from __future__ import annotations

import os
import sys

from hypothesis import HealthCheck, given, settings, strategies as st

from ptoc.dtypes import MemorySpace
from ptoc.ir.types import TileType

sys.path.insert(0, os.path.dirname(__file__))
from _memory_programs import program, run_memory_passes  # noqa: E402
from ptoc.passes.memref_rewrite import defined_vars, memref_of  # noqa: E402

ROWS = (8, 16, 32, 64)


@st.composite
def kernels(draw):
    n = draw(st.integers(2, 10))
    tiles: list[tuple[str, int, list[str], str | None]] = []   # name, rows, reads, tag
    for i in range(n):
        kind = draw(st.sampled_from(("load", "exp", "add"))) if tiles else "load"
        if kind == "load":
            rows = draw(st.sampled_from(ROWS))
            tag = draw(st.sampled_from((None, None, "0:0", "0:1", "0:2")))
            tiles.append((f"t{i}", rows, [], tag))
            continue
        src = draw(st.sampled_from(tiles))
        if kind == "exp":
            tiles.append((f"t{i}", src[1], [src[0]], None))
        else:
            same = [t for t in tiles if t[1] == src[1]]
            other = draw(st.sampled_from(same))
            tiles.append((f"t{i}", src[1], [src[0], other[0]], None))
    stored = draw(st.lists(st.sampled_from([t[0] for t in tiles]), min_size=1, max_size=4,
                           unique=True))
    return tiles, stored


def _source(tiles, stored):
    rows_of = {name: rows for name, rows, _, _ in tiles}
    shapes = sorted({rows_of[s] for s in stored})
    params = ["x: pl.Tensor[[64, 64], pl.FP32]"]
    params += [f"out{r}: pl.Out[pl.Tensor[[{r}, 64], pl.FP32]]" for r in shapes]
    lines = []
    for name, rows, reads, tag in tiles:
        ty = f"pl.Tile[[{rows}, 64], pl.FP32, pl.Mem.Vec]"
        if not reads:
            attrs = f', attrs={{"pipeline_membership": "{tag}"}}' if tag else ""
            lines.append(f"{name}: {ty} = pl.tile.load(x, [0, 0], [{rows}, 64], [{rows}, 64], "
                         f"target_memory=pl.Mem.Vec{attrs})")
        elif len(reads) == 1:
            lines.append(f"{name}: {ty} = pl.tile.exp({reads[0]})")
        else:
            lines.append(f"{name}: {ty} = pl.tile.add({reads[0]}, {reads[1]})")
    version = {r: f"out{r}" for r in shapes}
    for k, name in enumerate(stored):
        r = rows_of[name]
        lines.append(f"s{k}: pl.Tensor[[{r}, 64], pl.FP32] = pl.tile.store({name}, [0, 0], "
                     f"{version[r]})")
        version[r] = f"s{k}"
    r0 = shapes[0]
    lines.append(f"return {version[r0]}")
    return program(", ".join(params), f"pl.Tensor[[{r0}, 64], pl.FP32]", lines)


def _spans(tiles, stored):
    """Independent liveness: (def, last read) per tile in statement numbers."""
    spans = {}
    for i, (name, _, reads, _) in enumerate(tiles):
        spans[name] = [i, i]
        for r in reads:
            spans[r][1] = max(spans[r][1], i)
    for k, name in enumerate(stored):
        spans[name][1] = max(spans[name][1], len(tiles) + k)
    return spans


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kernels())
def test_co_live_tiles_never_share_bytes(case):
    tiles, stored = case
    out = run_memory_passes(_source(tiles, stored))
    fn = out.get_function("kernel")
    placed = {}
    for v in defined_vars(fn):
        m = memref_of(v)
        if isinstance(v.type, TileType) and m is not None:
            placed[v.name] = (m.offset.value, m.size)
    cap = 188416
    for name, (addr, size) in placed.items():
        assert addr % 32 == 0 and addr + size <= cap
    spans = _spans(tiles, stored)
    names = list(spans)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (da, ua), (db, ub) = spans[a], spans[b]
            if ua <= db or ub <= da:
                continue
            (pa, sa), (pb, sb) = placed[a], placed[b]
            assert pa + sa <= pb or pb + sb <= pa, f"{a} and {b} are co-live but overlap"
    assert MemorySpace.Vec.value == "Vec"
