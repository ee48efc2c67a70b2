"""Level-2 PTO programs (tiles with addresses, no sync) that exercise InsertSync.

Why in the package: the tests, the benchmarks and ``ptoc`` demos all need the same
workloads — double-accumulator (dbC) matmuls in both drain orders, a pipelined K loop, a
chunked vector kernel, and random programs over a few buffers and every pipe — written
without any synchronisation, so that ``insert_sync`` alone decides it.

Every generator returns PTO text (parse it with ``ptoc.pto.parse``) and documents its
kernel parameters so a caller can bind tensors.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ptoc.pto.text_writer import PtoTextWriter

@dataclass
class _Text(PtoTextWriter):
    """Declarations (views, tiles) are hoisted above the body; params carry their types."""

    decls: list[str] = field(default_factory=list)

    def view(self, name: str, ptr: str, dtype: str, rows: int, cols: int) -> str:
        v, decl = self.view_text(name, ptr, dtype, rows, cols)
        self.decls.append(decl)
        return v

    def tile(self, name: str, loc: str, dtype: str, rows: int, cols: int, addr: int) -> str:
        t, decl = self.tile_text(name, loc, dtype, rows, cols, addr)
        self.decls.append(decl)
        return t

    def render(self, name: str = "kernel") -> str:
        params = ", ".join(f"{p}: {t}" for p, t in self.params)
        out = ['module attributes {pto.target_arch = "a2a3"} {', f"  func.func @{name}({params}) {{"]
        out += ["  " + c for c in self.consts.values()]
        out += ["  " + d for d in self.decls]
        out += self.lines + ["  return", "  }", "}"]
        return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------------------
# Cube programs
# ---------------------------------------------------------------------------------------------


def dbc_matmul(M: int = 64, n: int = 64, K: int = 64, tiles: int = 4, *, order: str = "MSMS",
               accumulators: int = 2, loop: bool = False, dtype: str = "f32") -> str:
    """C[M, tiles*n] = A[M, K] @ B[K, tiles*n], one output tile per MAD.

    Parameters ``%arg0`` = A, ``%arg1`` = B, ``%arg2`` = C (f32). A and B are loaded once;
    each tile extracts its B window into Right slot ``t % 2`` (MTE1), runs one MAD (M) into
    accumulator ``t % accumulators`` and drains it to GM (FIX). ``order`` is ``"MSMS"``
    (matmul, drain, matmul, drain: the stage-major ping-pong) or ``"MMSS"`` (two matmuls,
    then two drains: PyPTO's CanonicalizeIOOrder chunks). ``loop`` puts one chunk of two
    tiles in an ``scf.for`` body instead of unrolling every tile.
    """
    if tiles % 2 or order not in ("MSMS", "MMSS"):
        raise ValueError("tiles must be even and order 'MSMS' or 'MMSS'")
    if order == "MMSS" and accumulators < 2:
        raise ValueError("M0 M1 S0 S1 needs two accumulators (M1 would overwrite tile 0)")
    eb = 4 if dtype == "f32" else 2
    N = n * tiles
    w = _Text([("%arg0", f"!pto.ptr<{dtype}>"), ("%arg1", f"!pto.ptr<{dtype}>"),
               ("%arg2", "!pto.ptr<f32>")])
    av = w.view("av", "%arg0", dtype, M, K)
    bv = w.view("bv", "%arg1", dtype, K, N)
    cv = w.view("cv", "%arg2", "f32", M, N)
    a1 = w.tile("a1", "mat", dtype, M, K, 0)
    b1 = w.tile("b1", "mat", dtype, K, N, M * K * eb)
    a0 = w.tile("a0", "left", dtype, M, K, 0)
    b0 = [w.tile(f"b0_{s}", "right", dtype, K, n, s * K * n * eb) for s in range(2)]
    acc_bytes = M * n * 4
    accs = [w.tile(f"acc{s}", "acc", "f32", M, n, s * acc_bytes) for s in range(accumulators)]
    w.op("pto.tload", [w.window(av, w.idx(0), w.idx(0), M, K)], [w.t(a1)])
    w.op("pto.tload", [w.window(bv, w.idx(0), w.idx(0), K, N)], [w.t(b1)])
    w.op("pto.textract", [w.t(a1), (w.idx(0), "index"), (w.idx(0), "index")], [w.t(a0)])

    def matmul(t: int, col: str) -> None:
        w.op("pto.textract", [w.t(b1), (w.idx(0), "index"), (col, "index")], [w.t(b0[t % 2])])
        w.op("pto.tmatmul", [w.t(a0), w.t(b0[t % 2])], [w.t(accs[t % accumulators])])

    def drain(t: int, col: str) -> None:
        w.op("pto.tstore", [w.t(accs[t % accumulators])], [w.window(cv, w.idx(0), col, M, n)])

    def chunk(t0: int, cols: list[str]) -> None:
        steps = [(matmul, 0), (drain, 0), (matmul, 1), (drain, 1)] if order == "MSMS" else \
            [(matmul, 0), (matmul, 1), (drain, 0), (drain, 1)]
        for fn, k in steps:
            fn(t0 + k, cols[k])

    if loop:
        w.open(f"scf.for %j = {w.idx(0)} to {w.idx(N)} step {w.idx(2 * n)}")
        second = w.fresh("col")
        w.emit(f"{second} = arith.addi %j, {w.idx(n)} : index")
        chunk(0, ["%j", second])
        w.close()
    else:
        for t0 in range(0, tiles, 2):
            chunk(t0, [w.idx(t0 * n), w.idx((t0 + 1) * n)])
    return w.render()


def remainder_then_dbc_loop(M: int = 64, n: int = 64, K: int = 64, *, trips: int | str = 2,
                            accumulate: bool = False) -> str:
    """A straight-line tile on accumulator 0 (the "remainder": MAD, drain), then a loop, then
    a tail tile on accumulator 0 — the seam where a dbC loop follows a remainder tile.

    C is f32 ``M x 8n``; the remainder drains column block 0, the tail block 7. The loop runs
    over column blocks from 1: by default two tiles per trip, on accumulator 1 then 0 (the
    dbC ping-pong; blocks ``1+2j``, ``2+2j``), so its first MAD is on the buffer the
    remainder is *not* draining. With ``accumulate`` each trip first adds ``A @ B[block]``
    into accumulator 0 (``tmatmul.acc``, nothing drained in the loop: it carries no FIX->M
    pair for that buffer) and then runs one tile on accumulator 1 (block ``1+j``); the tail
    drains the sum. ``trips`` is a constant (at most 3) or the name of an ``index`` parameter
    holding the loop's column bound (``n * (1 + 2 * trips)``, or ``n * (1 + trips)`` with
    ``accumulate``; zero trips when it is ``n``). Params: %arg0 A, %arg1 B (K x 8n),
    %arg2 C, and that bound.
    """
    params = [("%arg0", "!pto.ptr<f32>"), ("%arg1", "!pto.ptr<f32>"), ("%arg2", "!pto.ptr<f32>")]
    if isinstance(trips, str):
        params.append((trips, "index"))
    w = _Text(params)
    N, per_trip = 8 * n, 1 if accumulate else 2
    av, bv, cv = (w.view("av", "%arg0", "f32", M, K), w.view("bv", "%arg1", "f32", K, N),
                  w.view("cv", "%arg2", "f32", M, N))
    a1 = w.tile("a1", "mat", "f32", M, K, 0)
    b1 = w.tile("b1", "mat", "f32", K, N, M * K * 4)
    a0 = w.tile("a0", "left", "f32", M, K, 0)
    b0 = [w.tile(f"b0_{s}", "right", "f32", K, n, s * K * n * 4) for s in range(2)]
    accs = [w.tile(f"acc{s}", "acc", "f32", M, n, s * M * n * 4) for s in range(2)]
    zero = w.idx(0)
    w.op("pto.tload", [w.window(av, zero, zero, M, K)], [w.t(a1)])
    w.op("pto.tload", [w.window(bv, zero, zero, K, N)], [w.t(b1)])
    w.op("pto.textract", [w.t(a1), (zero, "index"), (zero, "index")], [w.t(a0)])

    def tile(col: str, slot: int, acc: int, *, add: bool = False, drain: bool = True) -> None:
        w.op("pto.textract", [w.t(b1), (zero, "index"), (col, "index")], [w.t(b0[slot])])
        if add:
            w.op("pto.tmatmul.acc", [w.t(accs[acc]), w.t(a0), w.t(b0[slot])], [w.t(accs[acc])])
        else:
            w.op("pto.tmatmul", [w.t(a0), w.t(b0[slot])], [w.t(accs[acc])])
        if drain:
            w.op("pto.tstore", [w.t(accs[acc])], [w.window(cv, zero, col, M, n)])

    tile(zero, 0, 0)
    bound = trips if isinstance(trips, str) else w.idx(n * (1 + per_trip * trips))
    w.open(f"scf.for %c = {w.idx(n)} to {bound} step {w.idx(per_trip * n)}")
    if accumulate:
        tile("%c", 0, 0, add=True, drain=False)
        tile("%c", 1, 1)
    else:
        tile("%c", 1, 1)
        tile(w.plus("%c", n, "col"), 0, 0)
    w.close()
    tile(w.idx(7 * n), 0, 0, add=accumulate)
    return w.render()


def kloop_matmul(M: int = 64, N: int = 64, K: int = 256, k: int = 64, *,
                 dtype: str = "bf16") -> str:
    """C[M, N] = A[M, K] @ B[K, N] with a K loop of two k-steps per iteration (slots 0/1 for
    the L1 panels and the L0A/L0B tiles), ``matmul`` on the first step (an ``scf.if``) and
    ``matmul.acc`` after; one accumulator drained after the loop. Params: %arg0 A, %arg1 B,
    %arg2 C (f32)."""
    if K % (2 * k):
        raise ValueError("K must be a multiple of 2k")
    eb = 2 if dtype in ("bf16", "f16") else 4
    w = _Text([("%arg0", f"!pto.ptr<{dtype}>"), ("%arg1", f"!pto.ptr<{dtype}>"),
               ("%arg2", "!pto.ptr<f32>")])
    av = w.view("av", "%arg0", dtype, M, K)
    bv = w.view("bv", "%arg1", dtype, K, N)
    cv = w.view("cv", "%arg2", "f32", M, N)
    a1 = [w.tile(f"a1_{s}", "mat", dtype, M, k, s * M * k * eb) for s in range(2)]
    b1 = [w.tile(f"b1_{s}", "mat", dtype, k, N, 2 * M * k * eb + s * k * N * eb)
          for s in range(2)]
    a0 = [w.tile(f"a0_{s}", "left", dtype, M, k, s * M * k * eb) for s in range(2)]
    b0 = [w.tile(f"b0_{s}", "right", dtype, k, N, s * k * N * eb) for s in range(2)]
    c = w.tile("c", "acc", "f32", M, N, 0)
    w.open(f"scf.for %ko = {w.idx(0)} to {w.idx(K)} step {w.idx(2 * k)}")
    for s in range(2):
        kk = w.plus("%ko", s * k)
        w.op("pto.tload", [w.window(av, w.idx(0), kk, M, k)], [w.t(a1[s])])
        w.op("pto.tload", [w.window(bv, kk, w.idx(0), k, N)], [w.t(b1[s])])
        zero = (w.idx(0), "index")
        w.op("pto.textract", [w.t(a1[s]), zero, zero], [w.t(a0[s])])
        w.op("pto.textract", [w.t(b1[s]), zero, zero], [w.t(b0[s])])
        if s == 0:
            w.matmul_first_then_acc("%ko", a0[s], b0[s], c)
        else:
            w.op("pto.tmatmul.acc", [w.t(c), w.t(a0[s]), w.t(b0[s])], [w.t(c)])
    w.close()
    w.op("pto.tstore", [w.t(c)], [w.window(cv, w.idx(0), w.idx(0), M, N)])
    return w.render()


# ---------------------------------------------------------------------------------------------
# Vector programs
# ---------------------------------------------------------------------------------------------


def vector_chunks(rows: int = 64, cols: int = 64, chunk: int = 16, *, slots: int = 2,
                  trips: str | None = None) -> str:
    """z = relu(x + y) * 0.5 over row chunks: load x and y chunks (MTE2), two vector ops
    (V), store (MTE3); chunk buffers rotate over ``slots`` sets of Vec tiles (the loop body
    holds ``slots`` chunks). Params: %arg0 x, %arg1 y, %arg2 z (f32, rows x cols); with
    ``trips`` naming a scalar parameter (``"%n"``) the loop bound is that parameter (number
    of rows to process, possibly zero) instead of ``rows``."""
    if rows % (chunk * slots):
        raise ValueError("rows must be a multiple of chunk * slots")
    params = [("%arg0", "!pto.ptr<f32>"), ("%arg1", "!pto.ptr<f32>"), ("%arg2", "!pto.ptr<f32>")]
    if trips:
        params.append((trips, "index"))
    w = _Text(params)
    views = [w.view(n, f"%arg{i}", "f32", rows, cols) for i, n in enumerate(("xv", "yv", "zv"))]
    nb = chunk * cols * 4
    tiles = [[w.tile(f"{n}{s}", "vec", "f32", chunk, cols, (3 * s + i) * nb)
              for i, n in enumerate(("x", "y", "z"))] for s in range(slots)]
    w.open(f"scf.for %r = {w.idx(0)} to {trips or w.idx(rows)} step {w.idx(chunk * slots)}")
    for s in range(slots):
        r = "%r"
        if s:
            r = w.fresh("r")
            w.emit(f"{r} = arith.addi %r, {w.idx(s * chunk)} : index")
        x, y, z = tiles[s]
        w.op("pto.tload", [w.window(views[0], r, w.idx(0), chunk, cols)], [w.t(x)])
        w.op("pto.tload", [w.window(views[1], r, w.idx(0), chunk, cols)], [w.t(y)])
        w.op("pto.tadd", [w.t(x), w.t(y)], [w.t(z)])
        w.op("pto.trelu", [w.t(z)], [w.t(z)])
        half = w.fresh("half")
        w.emit(f"{half} = arith.constant 0.5 : f32")
        w.op("pto.tmuls", [w.t(z), (half, "f32")], [w.t(z)])
        w.op("pto.tstore", [w.t(z)], [w.window(views[2], r, w.idx(0), chunk, cols)])
    w.close()
    return w.render()


# ---------------------------------------------------------------------------------------------
# Random programs
# ---------------------------------------------------------------------------------------------

#: Random-program shapes: every tile is 16 x 16 f32 (1 KiB; 2 KiB in L0C padding-free).
RANDOM_ROWS, RANDOM_COLS = 16, 16


def random_program(seed: int, *, ops: int = 24, control: bool = True, depth: int = 2) -> str:
    """A random kernel over a few buffers and every pipe (MTE2, MTE1, M, FIX, V, MTE3).

    Params: ``%arg0`` x (f32, 16 x 64), read only, ``%arg1`` y (f32, 16 x 64), read and
    written, and ``%n`` (index), a run-time loop bound. Tiles are 16 x 16 f32; some tiles of
    one space share bytes (partly or fully), GM windows of y overlap, so RAW/WAR/WAW hazards
    arise on every buffer kind. With ``control``, parts of the program sit in ``scf.for``
    loops (0 to 3 trips, or ``%n`` trips, so zero-trip loops occur) and ``scf.if`` branches
    (on constants and on the loop counter), nested up to ``depth`` regions deep.
    """
    rng = random.Random(seed)
    R, C = RANDOM_ROWS, RANDOM_COLS
    tb = R * C * 4
    w = _Text([("%arg0", "!pto.ptr<f32>"), ("%arg1", "!pto.ptr<f32>"), ("%n", "index")])
    xv = w.view("xv", "%arg0", "f32", R, 4 * C)
    yv = w.view("yv", "%arg1", "f32", R, 4 * C)
    half = tb // 2 // 64 * 64
    vec = [w.tile(f"v{i}", "vec", "f32", R, C, a) for i, a in enumerate((0, tb, 2 * tb, half))]
    mat = [w.tile(f"m{i}", "mat", "f32", R, C, a) for i, a in enumerate((0, tb, half))]
    left = [w.tile(f"l{i}", "left", "f32", R, C, a) for i, a in enumerate((0, tb))]
    right = [w.tile(f"r{i}", "right", "f32", R, C, a) for i, a in enumerate((0, tb))]
    acc = [w.tile(f"acc{i}", "acc", "f32", R, C, a) for i, a in enumerate((0, tb))]
    scale = w.fresh("s")
    w.decls.append(f"{scale} = arith.constant 0.5 : f32")
    cols = [w.idx(0), w.idx(8), w.idx(C), w.idx(2 * C), w.idx(3 * C)]

    def one() -> None:
        kind = rng.choice(["load_v", "load_v", "load_m", "extract", "extract", "mad", "mad",
                           "drain", "vec", "vec", "vec", "store"])
        src_view = rng.choice([xv, yv])
        if kind == "load_v":
            w.op("pto.tload", [w.window(src_view, w.idx(0), rng.choice(cols), R, C)],
                 [w.t(rng.choice(vec))])
        elif kind == "load_m":
            w.op("pto.tload", [w.window(src_view, w.idx(0), rng.choice(cols), R, C)],
                 [w.t(rng.choice(mat))])
        elif kind == "extract":
            dst = rng.choice(left + right)
            zero = (w.idx(0), "index")
            w.op("pto.textract", [w.t(rng.choice(mat)), zero, zero], [w.t(dst)])
        elif kind == "mad":
            c = rng.choice(acc)
            if rng.random() < 0.4:
                w.op("pto.tmatmul.acc", [w.t(c), w.t(rng.choice(left)), w.t(rng.choice(right))],
                     [w.t(c)])
            else:
                w.op("pto.tmatmul", [w.t(rng.choice(left)), w.t(rng.choice(right))], [w.t(c)])
        elif kind == "drain":
            w.op("pto.tstore", [w.t(rng.choice(acc))],
                 [w.window(yv, w.idx(0), rng.choice(cols), R, C)])
        elif kind == "vec":
            code = rng.choice(["tadd", "tsub", "tmax", "tmuls", "tabs", "trelu"])
            dst = w.t(rng.choice(vec))
            a = w.t(rng.choice(vec))
            if code in ("tadd", "tsub", "tmax"):
                w.op(f"pto.{code}", [a, w.t(rng.choice(vec))], [dst])
            elif code == "tmuls":
                w.op("pto.tmuls", [a, (scale, "f32")], [dst])
            else:
                w.op(f"pto.{code}", [a], [dst])
        else:
            w.op("pto.tstore", [w.t(rng.choice(vec))],
                 [w.window(yv, w.idx(0), rng.choice(cols), R, C)])

    def segment(n: int, level: int, iv: str | None) -> None:
        i = 0
        while i < n:
            roll = rng.random()
            if control and level < depth and roll < 0.12 and n - i >= 3:
                trips = rng.choice(["0", "1", "2", "3", "%n"])
                bound = trips if trips == "%n" else w.idx(int(trips))
                v = w.fresh("i")
                w.open(f"scf.for {v} = {w.idx(0)} to {bound} step {w.idx(1)}")
                segment(rng.randint(2, 5), level + 1, v)
                w.close()
                i += 3
            elif control and level < depth and roll < 0.22 and n - i >= 3:
                cond = w.fresh("p")
                if iv is not None and rng.random() < 0.6:
                    w.emit(f"{cond} = arith.cmpi eq, {iv}, {w.idx(rng.choice([0, 1]))} : index")
                else:
                    w.emit(f"{cond} = arith.cmpi eq, {w.idx(rng.choice([0, 1]))}, {w.idx(1)} "
                           f": index")
                w.open(f"scf.if {cond}")
                segment(rng.randint(1, 3), level + 1, iv)
                if rng.random() < 0.7:
                    w.close("} else {")
                    w.depth += 1
                    segment(rng.randint(1, 3), level + 1, iv)
                w.close()
                i += 3
            else:
                one()
                i += 1

    for c in acc:  # an accumulation reads only what a matmul wrote (the simulator refuses
        w.op("pto.tmatmul", [w.t(left[0]), w.t(right[0])], [w.t(c)])  # an undefined Acc)
    segment(ops, 0, None)
    return w.render()
