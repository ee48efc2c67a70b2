"""Hand-written Level-3 PTO kernels (generated as text) for tests, benchmarks and demos.

Why in the package: they are the simulator's reference workloads — written by hand with
the pto-isa synchronisation protocol, independent of the compiler — so the CLI, the
benchmarks and the tests all run the same programs.

``dbuf_matmul``: one (M x N) output tile, K split into k-steps; L1 and L0A/L0B double
buffered (slot = step % 2) with the pto-isa GEMM protocol (hw-model.md §3.2); the loop body
holds two k-steps (slot 0 and slot 1) and runs K / (2k) times.

``two_acc_matmul``: T output tiles along N, full K per tile, accumulators alternating
between two L0C slots (dbC = 2) or sharing one (``same_address``), hw-model.md §3.3.

``k_loop_sum``: a long K loop on MTE2 and V with one final MTE3 store (MTE3 idles until
the end): the race checker's scaling workload.

``reference_gemm``: one core's share of pto-isa's hand-written reference GEMM
(kernels/manual/a2a3/gemm_performance: base tile 128x256x64, L1 panels of ``step_k`` k-steps,
L1 and L0A/L0B double buffered, one L0C), the workload the device numbers were measured on.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.pto.text_writer import PtoTextWriter


@dataclass
class Writer(PtoTextWriter):
    """Views and tiles are declared where they are made; params are (name, element dtype)."""

    def view(self, name: str, ptr: str, dtype: str, rows: int, cols: int,
             pitch: int | None = None) -> str:
        v, decl = self.view_text(name, ptr, dtype, rows, cols, pitch)
        self.emit(decl)
        return v

    def alloc(self, name: str, loc: str, dtype: str, rows: int, cols: int, addr: int) -> str:
        t, decl = self.tile_text(name, loc, dtype, rows, cols, addr)
        self.emit(decl)
        return t

    def render(self, name: str = "kernel") -> str:
        params = ", ".join(f"{p}: !pto.ptr<{d}>" for p, d in self.params)
        head = [f'module attributes {{pto.target_arch = "a2a3"}} {{',
                f"  func.func @{name}({params}) {{"]
        consts = ["  " + c for c in self.consts.values()]
        return "\n".join(head + consts + self.lines + ["    return", "  }", "}"]) + "\n"


def _matmul_writer(dtype: str, M: int, K: int, N: int, ldb: int | None = None,
                   ldc: int | None = None, lda: int | None = None):
    """A writer for C[M,N] (fp32) = A[M,K] @ B[K,N] and the three tensor views (rows ``lda``
    / ``ldb`` / ``ldc`` elements apart when they are column blocks of wider tensors)."""
    w = Writer([("%arg0", dtype), ("%arg1", dtype), ("%arg2", "f32")])
    return (w, w.view("a_view", "%arg0", dtype, M, K, lda),
            w.view("b_view", "%arg1", dtype, K, N, ldb), w.view("c_view", "%arg2", "f32", M, N, ldc))


def _double_buffers(w: Writer, dtype: str, eb: int, m: int, n: int, k: int, panel: int):
    """Two L1 slots of A (m x panel) and B (panel x n), two L0A/L0B slots (m x k, k x n) and
    one accumulator (m x n), with the reverse flags pre-set (every slot starts free)."""
    a_bytes, b_bytes = m * panel * eb, panel * n * eb
    a1 = [w.alloc(f"a1_{s}", "mat", dtype, m, panel, s * a_bytes) for s in range(2)]
    b1 = [w.alloc(f"b1_{s}", "mat", dtype, panel, n, 2 * a_bytes + s * b_bytes)
          for s in range(2)]
    a0 = [w.alloc(f"a0_{s}", "left", dtype, m, k, s * m * k * eb) for s in range(2)]
    b0 = [w.alloc(f"b0_{s}", "right", dtype, k, n, s * k * n * eb) for s in range(2)]
    c = w.alloc("c", "acc", "f32", m, n, 0)
    for s in range(2):
        w.sync("set_flag", "MTE1", "MTE2", s)      # L1 slot s starts free
        w.sync("set_flag", "M", "MTE1", s)         # L0 slot s starts free
    w.sync("set_flag", "FIX", "M", 0)              # the accumulator starts free
    return a1, b1, a0, b0, c


def dbuf_matmul(M: int = 128, N: int = 256, K: int = 256, k: int = 64, *,
                m: int | None = None, n: int | None = None, dtype: str = "bf16") -> str:
    """Level-3 double-buffered K-loop matmul C[M,N] = A[M,K] @ B[K,N] (fp32 out).

    Output tiles (m x n, default the whole output) are walked by two ``scf.for`` loops;
    one L0C accumulator is reused, guarded by FIX->M id 0 (drain exposed, dbC = 1).
    """
    m, n = m or M, n or N
    if K % (2 * k) or M % m or N % n:
        raise ValueError("K must be a multiple of 2k, M of m and N of n")
    eb = {"bf16": 2, "f16": 2, "f32": 4}[dtype]
    w, a_v, b_v, c_v = _matmul_writer(dtype, M, K, N)
    a1, b1, a0, b0, c = _double_buffers(w, dtype, eb, m, n, k, k)
    w.emit(f"scf.for %mi = {w.idx(0)} to {w.idx(M)} step {w.idx(m)} {{")
    w.depth += 1
    w.emit(f"scf.for %ni = {w.idx(0)} to {w.idx(N)} step {w.idx(n)} {{")
    w.depth += 1
    w.sync("wait_flag", "FIX", "M", 0)
    w.emit(f"scf.for %ko = {w.idx(0)} to {w.idx(K)} step {w.idx(2 * k)} {{")
    w.depth += 1
    for s in range(2):
        kk = w.plus("%ko", s * k)
        w.sync("wait_flag", "MTE1", "MTE2", s)
        pa = w.window(a_v, "%mi", kk, m, k)
        pb = w.window(b_v, kk, "%ni", k, n)
        w.op("pto.tload", [pa], [w.t(a1[s])])
        w.op("pto.tload", [pb], [w.t(b1[s])])
        w.sync("set_flag", "MTE2", "MTE1", s)
        w.sync("wait_flag", "MTE2", "MTE1", s)
        w.sync("wait_flag", "M", "MTE1", s)
        w.op("pto.textract", [w.t(a1[s]), (w.idx(0), "index"), (w.idx(0), "index")], [w.t(a0[s])])
        w.op("pto.textract", [w.t(b1[s]), (w.idx(0), "index"), (w.idx(0), "index")], [w.t(b0[s])])
        w.sync("set_flag", "MTE1", "MTE2", s)
        w.sync("set_flag", "MTE1", "M", s)
        w.sync("wait_flag", "MTE1", "M", s)
        if s == 0:
            w.matmul_first_then_acc("%ko", a0[s], b0[s], c)
        else:
            w.op("pto.tmatmul.acc", [w.t(c), w.t(a0[s]), w.t(b0[s])], [w.t(c)])
        w.sync("set_flag", "M", "MTE1", s)
    w.depth -= 1
    w.emit("}")
    w.sync("set_flag", "M", "FIX", 0)
    w.sync("wait_flag", "M", "FIX", 0)
    pc = w.window(c_v, "%mi", "%ni", m, n)
    w.op("pto.tstore", [w.t(c)], [pc])
    w.sync("set_flag", "FIX", "M", 0)
    for _ in range(2):
        w.depth -= 1
        w.emit("}")
    for s in range(2):
        w.sync("wait_flag", "MTE1", "MTE2", s)
        w.sync("wait_flag", "M", "MTE1", s)
    w.sync("wait_flag", "FIX", "M", 0)
    return w.render()


def reference_gemm(M: int, N: int, K: int, *, m: int = 128, n: int = 256, k: int = 64,
                   step_k: int = 4, dtype: str = "f16", ldb: int | None = None,
                   ldc: int | None = None, lda: int | None = None,
                   atomic: bool = False) -> str:
    """Level-3 C[M,N] = A[M,K] @ B[K,N] (fp32 out) with the pto-isa reference GEMM schedule.

    Output tiles (m x n) in row-major order; per tile the K loop walks L1 panels of
    ``step_k`` k-steps (A: m x step_k*k, B: step_k*k x n) in two L1 slots, and extracts each
    k-step into two L0A/L0B slots; one accumulator, drained by ``tstore`` after the last
    k-step (FIX->M waited before the next tile's first MAD: the drain is exposed). The loop
    body holds two panels (slot 0 and slot 1), so K must be a multiple of 2*step_k*k.
    Flags follow hw-model.md §3.2 (the reference kernel's protocol). ``ldb`` / ``ldc``: the
    row pitch of B and C when the kernel computes one core's block of a larger GEMM (its B
    and C are column blocks of the whole tensors); ``lda`` A's, for a slice of K. ``atomic``: each output tile is added into
    C (``atomicType = atomic_add``) instead of stored — one split of a split-K GEMM.
    """
    panel = step_k * k
    if K % (2 * panel) or M % m or N % n or step_k % 2:
        raise ValueError("K must be a multiple of 2*step_k*k, M of m, N of n; step_k even")
    eb = {"bf16": 2, "f16": 2}[dtype]
    w, a_v, b_v, c_v = _matmul_writer(dtype, M, K, N, ldb, ldc, lda)
    a1, b1, a0, b0, c = _double_buffers(w, dtype, eb, m, n, k, panel)
    w.open(f"scf.for %mi = {w.idx(0)} to {w.idx(M)} step {w.idx(m)}")
    w.open(f"scf.for %ni = {w.idx(0)} to {w.idx(N)} step {w.idx(n)}")
    w.sync("wait_flag", "FIX", "M", 0)
    w.open(f"scf.for %ko = {w.idx(0)} to {w.idx(K)} step {w.idx(2 * panel)}")
    for s in range(2):
        kp = w.plus("%ko", s * panel, "kp")
        w.sync("wait_flag", "MTE1", "MTE2", s)
        w.op("pto.tload", [w.window(a_v, "%mi", kp, m, panel)], [w.t(a1[s])])
        w.op("pto.tload", [w.window(b_v, kp, "%ni", panel, n)], [w.t(b1[s])])
        w.sync("set_flag", "MTE2", "MTE1", s)
        w.sync("wait_flag", "MTE2", "MTE1", s)
        for ks in range(step_k):
            t = ks % 2
            w.sync("wait_flag", "M", "MTE1", t)
            w.op("pto.textract", [w.t(a1[s]), (w.idx(0), "index"), (w.idx(ks * k), "index")],
                 [w.t(a0[t])])
            w.op("pto.textract", [w.t(b1[s]), (w.idx(ks * k), "index"), (w.idx(0), "index")],
                 [w.t(b0[t])])
            w.sync("set_flag", "MTE1", "M", t)
            w.sync("wait_flag", "MTE1", "M", t)
            if s == 0 and ks == 0:
                w.matmul_first_then_acc("%ko", a0[t], b0[t], c)
            else:
                w.op("pto.tmatmul.acc", [w.t(c), w.t(a0[t]), w.t(b0[t])], [w.t(c)])
            w.sync("set_flag", "M", "MTE1", t)
        w.sync("set_flag", "MTE1", "MTE2", s)
    w.close()
    w.sync("set_flag", "M", "FIX", 0)
    w.sync("wait_flag", "M", "FIX", 0)
    w.op("pto.tstore", [w.t(c)], [w.window(c_v, "%mi", "%ni", m, n)],
         " {atomicType = #pto<atomic_type atomic_add>}" if atomic else "")
    w.sync("set_flag", "FIX", "M", 0)
    w.close()
    w.close()
    for s in range(2):
        w.sync("wait_flag", "MTE1", "MTE2", s)
        w.sync("wait_flag", "M", "MTE1", s)
    w.sync("wait_flag", "FIX", "M", 0)
    return w.render()


def two_acc_matmul(M: int = 128, n: int = 128, K: int = 64, tiles: int = 4, *,
                   same_address: bool = False, ids: int | None = None, sync: str = "flags",
                   order: str = "MSMS", dtype: str = "bf16") -> str:
    """C[M, tiles*n] = A @ B with one MAD per output tile, the hw-model.md §3.3 dbC protocol.

    Accumulators alternate between two L0C slots ({0, L0C/2}-style), or share one address
    (``same_address``). ``ids``: FIX<->M event ids, 2 = one per slot (default), 1 = one shared
    id (default when ``same_address``). ``sync="barrier"`` replaces the FIX<->M flags by
    ``barrier(PIPE_ALL)`` around each drain. ``order``: ``MSMS`` emits matmul, drain, matmul,
    drain; ``MMSS`` emits two matmuls then their two drains (the chunked order).
    """
    if order not in ("MSMS", "MMSS") or sync not in ("flags", "barrier"):
        raise ValueError("order is MSMS or MMSS; sync is flags or barrier")
    eb = 2
    N = n * tiles
    ids = ids or (1 if same_address else 2)
    w, a_v, b_v, c_v = _matmul_writer(dtype, M, K, N)
    a1 = w.alloc("a1", "mat", dtype, M, K, 0)
    b1 = w.alloc("b1", "mat", dtype, K, N, M * K * eb)
    a0 = w.alloc("a0", "left", dtype, M, K, 0)
    b0 = [w.alloc(f"b0_{t}", "right", dtype, K, n, t * K * n * eb) for t in range(tiles)]
    acc_bytes = M * n * 4
    accs = [w.alloc(f"acc{s}", "acc", "f32", M, n, 0 if same_address else s * acc_bytes)
            for s in range(2)]
    w.op("pto.tload", [w.window(a_v, w.idx(0), w.idx(0), M, K)], [w.t(a1)])
    w.op("pto.tload", [w.window(b_v, w.idx(0), w.idx(0), K, N)], [w.t(b1)])
    w.sync("set_flag", "MTE2", "MTE1", 0)
    w.sync("wait_flag", "MTE2", "MTE1", 0)
    w.op("pto.textract", [w.t(a1), (w.idx(0), "index"), (w.idx(0), "index")], [w.t(a0)])
    for t in range(tiles):
        w.op("pto.textract", [w.t(b1), (w.idx(0), "index"), (w.idx(t * n), "index")],
             [w.t(b0[t])])
    w.sync("set_flag", "MTE1", "M", 0)
    w.sync("wait_flag", "MTE1", "M", 0)
    flags = sync == "flags"

    def mad(t):
        if flags:
            w.sync("wait_flag", "FIX", "M", t % ids)
        w.op("pto.tmatmul", [w.t(a0), w.t(b0[t])], [w.t(accs[t % 2])])
        if flags:
            w.sync("set_flag", "M", "FIX", t % ids)
        else:
            w.emit("pto.barrier <PIPE_ALL>")

    def drain(t):
        if flags:
            w.sync("wait_flag", "M", "FIX", t % ids)
        w.op("pto.tstore", [w.t(accs[t % 2])], [w.window(c_v, w.idx(0), w.idx(t * n), M, n)])
        if flags:
            w.sync("set_flag", "FIX", "M", t % ids)
        else:
            w.emit("pto.barrier <PIPE_ALL>")

    if flags:
        for s in range(ids):
            w.sync("set_flag", "FIX", "M", s)
    step = 2 if order == "MMSS" else 1
    for t0 in range(0, tiles, step):
        group = range(t0, min(t0 + step, tiles))
        for t in group:
            mad(t)
            if order == "MSMS":
                drain(t)
        if order == "MMSS":
            for t in group:
                drain(t)
    if flags:
        for s in range(ids):
            w.sync("wait_flag", "FIX", "M", s)
    return w.render()


def k_loop_sum(trips: int, rows: int = 16, cols: int = 16) -> str:
    """Level-3 ``y = trips * x`` (f32): ``x`` is loaded into the accumulator, then ``trips - 1``
    times into a second tile that V adds into it (V->MTE2 id 0 guards that tile), and the
    accumulator is stored once after the loop."""
    if trips < 1:
        raise ValueError("trips must be at least 1")
    w = Writer([("%arg0", "f32"), ("%arg1", "f32")])
    x_v = w.view("x_view", "%arg0", "f32", rows, cols)
    y_v = w.view("y_view", "%arg1", "f32", rows, cols)
    acc = w.alloc("acc", "vec", "f32", rows, cols, 0)
    t = w.alloc("t", "vec", "f32", rows, cols, rows * cols * 4)
    w.op("pto.tload", [w.window(x_v, w.idx(0), w.idx(0), rows, cols)], [w.t(acc)])
    w.sync("set_flag", "MTE2", "V", 1)
    w.sync("wait_flag", "MTE2", "V", 1)
    w.sync("set_flag", "V", "MTE2", 0)             # the second tile starts free
    w.open(f"scf.for %i = {w.idx(1)} to {w.idx(trips)} step {w.idx(1)}")
    w.sync("wait_flag", "V", "MTE2", 0)
    w.op("pto.tload", [w.window(x_v, w.idx(0), w.idx(0), rows, cols)], [w.t(t)])
    w.sync("set_flag", "MTE2", "V", 0)
    w.sync("wait_flag", "MTE2", "V", 0)
    w.op("pto.tadd", [w.t(acc), w.t(t)], [w.t(acc)])
    w.sync("set_flag", "V", "MTE2", 0)
    w.close()
    w.sync("wait_flag", "V", "MTE2", 0)
    w.sync("set_flag", "V", "MTE3", 0)
    w.sync("wait_flag", "V", "MTE3", 0)
    w.op("pto.tstore", [w.t(acc)], [w.window(y_v, w.idx(0), w.idx(0), rows, cols)])
    return w.render("k_loop_sum")


def sync_pairs(text: str) -> list[tuple[int, int]]:
    """(set line, wait line) index pairs (0-based) of a kernel's flags, paired structurally:
    a set pairs with the nearest wait of the same (src, dst, id) in the same block (after it
    if possible, else before it); the pre-loop set pairs with the post-loop wait."""
    lines = text.splitlines()
    ops = []
    depth_stack: list[int] = [0]
    block_id = 0
    for i, line in enumerate(lines):
        s = line.strip()
        if s.startswith("}"):
            depth_stack.pop()
            if s.endswith("{"):                 # "} else {"
                block_id += 1
                depth_stack.append(block_id)
        if s.startswith("pto.set_flag") or s.startswith("pto.wait_flag"):
            key = s[s.index("["):]
            ops.append((i, s.startswith("pto.set_flag"), key, depth_stack[-1]))
        if s.endswith("{") and not s.startswith("}"):
            block_id += 1
            depth_stack.append(block_id)
    pairs, used = [], set()
    for i, is_set, key, blk in ops:
        if not is_set:
            continue
        waits = [j for j, st, k2, b2 in ops if not st and k2 == key and b2 == blk and j not in used]
        after = [j for j in waits if j > i]
        pick = after[0] if after else (waits[0] if waits else None)
        if pick is not None:
            used.add(pick)
            pairs.append((i, pick))
    return pairs


def delete_lines(text: str, indices) -> str:
    drop = set(indices)
    return "\n".join(l for i, l in enumerate(text.splitlines()) if i not in drop) + "\n"


def vector_add(R: int = 16, C: int = 64, *, synced: bool = True, repeat: int = 1,
               name: str = "kernel") -> str:
    """z = x + y on UB (R x C fp32): x from arg0, y from arg1, z stored to arg2; the add runs
    ``repeat`` times (a longer vector phase). Without ``synced`` there is no add and no flag:
    the store of (zero) z is not ordered after the loads."""
    w = Writer([("%arg0", "f32"), ("%arg1", "f32"), ("%arg2", "f32")])
    views = [w.view(f"v{i}", f"%arg{i}", "f32", R, C) for i in range(3)]
    nb = R * C * 4
    x, y, z = (w.alloc(n, "vec", "f32", R, C, i * nb) for i, n in enumerate("xyz"))
    w.op("pto.tload", [w.window(views[0], w.idx(0), w.idx(0), R, C)], [w.t(x)])
    w.op("pto.tload", [w.window(views[1], w.idx(0), w.idx(0), R, C)], [w.t(y)])
    if synced:
        w.sync("set_flag", "MTE2", "V", 0)
        w.sync("wait_flag", "MTE2", "V", 0)
        for _ in range(repeat):
            w.op("pto.tadd", [w.t(x), w.t(y)], [w.t(z)])
        w.sync("set_flag", "V", "MTE3", 0)
        w.sync("wait_flag", "V", "MTE3", 0)
    w.op("pto.tstore", [w.t(z)], [w.window(views[2], w.idx(0), w.idx(0), R, C)])
    return w.render(name)
