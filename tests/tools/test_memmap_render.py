"""Memory map rendered by a real headless Chromium: every panel is drawn where the layout
says, tiles are painted in their panel, and the conflict red appears only where a conflict is.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it). Outside CI the test is
skipped when Chromium is absent; in CI (``CI`` set) it must run.
"""

import os
import shutil
import struct
import subprocess
import zlib

import numpy as np
import pytest

import ptoc.language as pl
from ptoc import ir
from ptoc.dtypes import MemorySpace
from ptoc.report import render_memory_map, write_memory_maps
from ptoc.report.memmap_html import (
    CONFLICT_RED, PANEL_BAR_H, SPACE_COLOURS, page_size, panel_box,
)
from ptoc.report.memmap_model import SPACES, TileSpan, map_from_tiles

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--force-device-scale-factor=1")


def chromium() -> str:
    exe = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium")
                                       else None)
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed in CI (.ci/run installs Debian's package)")
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    return exe


def screenshot(html_path, tmp_path):
    png = tmp_path / "shot.png"
    width, height = page_size()
    cmd = [chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
           f"--screenshot={png}", f"--window-size={width},{height}", html_path.as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
    assert png.exists(), f"chromium wrote no screenshot (rc {proc.returncode}): {proc.stderr[-800:]}"
    return read_png(png.read_bytes())


def read_png(data: bytes):
    """An (height, width, 3) uint8 array of an 8-bit RGB/RGBA non-interlaced PNG (zlib only)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, [], None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8)
    raw = raw.reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.uint8)
    for y in range(height):
        ftype, line = raw[y, 0], raw[y, 1:]
        if ftype == 0:
            cur = line.copy()
        elif ftype == 1:     # Sub: running sum per channel along the row
            cur = (np.cumsum(line.reshape(width, bpp), axis=0, dtype=np.uint64) % 256)
            cur = cur.astype(np.uint8).reshape(stride)
        elif ftype == 2:     # Up
            cur = line + prev
        else:                # Average / Paeth: each byte needs its left neighbour
            cur, src, up = bytearray(stride), line.tobytes(), prev.tobytes()
            for x in range(stride):
                a = cur[x - bpp] if x >= bpp else 0
                b = up[x]
                if ftype == 3:
                    cur[x] = (src[x] + ((a + b) >> 1)) & 255
                    continue
                c = up[x - bpp] if x >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                cur[x] = (src[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            cur = np.frombuffer(bytes(cur), dtype=np.uint8)
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)[:, :, :3]


def rgb(colour: str):
    return np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=np.int16)


def count(image, box, colour, tol=10) -> int:
    """Pixels of ``colour`` (each channel within ``tol``) inside box (left, top, w, h)."""
    left, top, w, h = box
    region = image[top:top + h, left:left + w].astype(np.int16)
    return int(np.all(np.abs(region - rgb(colour)) <= tol, axis=-1).sum())


def bar(index):
    left, top, w, _ = panel_box(index)
    return (left, top, w, PANEL_BAR_H)


def plot(index):
    left, top, w, h = panel_box(index)
    return (left, top + PANEL_BAR_H, w, h - PANEL_BAR_H)


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


def test_compiled_map_draws_every_panel_in_chromium(tmp_path):
    compiled = ir.compile(matmul_program(), output_dir=tmp_path / "out", dump_passes=False)
    [page] = write_memory_maps(compiled)
    rows = screenshot(page, tmp_path)
    assert rows.shape[1::-1] == page_size()
    for index, space in enumerate(SPACES):
        colour = SPACE_COLOURS[space]
        # the panel's header bar is painted in its own colour, inside its own region
        assert count(rows, bar(index), colour) > 0.5 * bar(index)[2] * PANEL_BAR_H, space
        # and no other panel's colour leaks into it
        for other in SPACES:
            if other is not space:
                assert count(rows, bar(index), SPACE_COLOURS[other]) == 0, (space, other)
    used = {a.space for a in compiled.allocations}
    for index, space in enumerate(SPACES):
        # a tile's outline (the space colour) appears in the plot of every used space
        outline = count(rows, plot(index), SPACE_COLOURS[space], tol=6)
        assert (outline > 400) if space in used else True, space
    assert all(count(rows, plot(i), CONFLICT_RED, tol=30) == 0 for i in range(len(SPACES)))


def test_conflict_is_red_in_its_panel_only(tmp_path):
    vec = MemorySpace.Vec
    tiles = [TileSpan("a", vec, 0, 64 * 1024, 1, 30), TileSpan("b", vec, 32 * 1024, 64 * 1024, 10, 40),
             TileSpan("m", MemorySpace.Mat, 0, 128 * 1024, 1, 40)]
    page = tmp_path / "conflict.html"
    page.write_text(render_memory_map(map_from_tiles("k", "a2a3", tiles)))
    rows = screenshot(page, tmp_path)
    vec_i, mat_i = SPACES.index(vec), SPACES.index(MemorySpace.Mat)
    assert count(rows, plot(vec_i), CONFLICT_RED, tol=30) > 2000
    assert count(rows, plot(mat_i), CONFLICT_RED, tol=30) == 0
    assert count(rows, plot(mat_i), SPACE_COLOURS[MemorySpace.Mat], tol=6) > 400
