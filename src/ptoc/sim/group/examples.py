"""Hand-written core-group kernels (an AIC kernel and an AIV kernel in one module) for tests,
the CLI and docs: the cross-core pipe protocol written by hand, independent of the compiler.

Both are Level 2 (no intra-core flags): the simulator inserts those; the cross-core protocol
(initialize_pipe, tpush, tpop, tfree) is explicit.

``matmul_bias``: for each of ``tiles`` row blocks, the AIC computes ``A_t @ B`` and pushes the
accumulator; each AIV pops its half (``split`` 1: rows, 2: columns), adds the bias and stores.

``matmul_round_trip``: the attention skeleton — the AIC computes ``S_t = A_t @ B`` and pushes
it; each AIV scales its half and converts it to f16 and pushes it back; the AIC pops the
joined tile into L1 and computes ``O_t = P_t @ V``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend.cross_core import cluster_model
from ptoc.pto.text_writer import PtoTextWriter, tile_type

_T = 32     # tile edge


@dataclass
class _Kernel(PtoTextWriter):
    """One kernel of the group: declarations where they are made, rendered as a func.func."""

    kind: str = "cube"
    name: str = "k"
    head: list[str] = field(default_factory=list)

    def decl(self, text: str) -> str:
        self.emit(text)
        return text.split(" =", 1)[0]

    def view(self, name, ptr, dtype, rows, cols) -> str:
        v, text = self.view_text(name, ptr, dtype, rows, cols)
        self.emit(text)
        return v

    def alloc(self, name, loc, dtype, rows, cols, addr) -> str:
        t, text = self.tile_text(name, loc, dtype, rows, cols, addr)
        self.emit(text)
        return t

    def render(self) -> str:
        params = ", ".join(f"{p}: !pto.ptr<{d}>" for p, d in self.params)
        lines = [f"  func.func @{self.name}({params}) attributes "
                 f"{{pto.kernel_kind = #pto.kernel_kind<{self.kind}>}} {{"]
        lines += ["    " + c for c in self.consts.values()] + self.lines
        return "\n".join(lines + ["    return", "  }"])


def _module(target: str, *kernels: _Kernel) -> str:
    body = "\n".join(k.render() for k in kernels)
    return f'module attributes {{pto.target_arch = "{target}"}} {{\n{body}\n}}\n'


def _pipe(k: _Kernel, target: str, *, c2v: str, v2c: str, dir_mask: int, slot_size: int,
          slot_num: int) -> None:
    in_gm = cluster_model(target).ring_in_gm
    ops = f"{c2v}, {v2c}" + (", %gm" if in_gm else "")
    types = "i32, i32" + (", !pto.ptr<f32>" if in_gm else "")
    core = "aic" if k.kind == "cube" else "aiv"
    k.emit(f"pto.{core}_initialize_pipe({ops} : {types}) {{id = 0, dir_mask = {dir_mask}, "
           f"slot_size = {slot_size}, slot_num = {slot_num}}}")


def _i32(k: _Kernel, n: int) -> str:
    name = f"%i32_{n}"
    k.consts[name] = f"{name} = arith.constant {n} : i32"
    return name


def _params(target: str, names: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return names + ([("%gm", "f32")] if cluster_model(target).ring_in_gm else [])


def _rhs_block(k: _Kernel, view: str, name: str, mat_addr: int, right_addr: int) -> str:
    """Load the [32, 32] block of ``view`` into L1 and move it to L0B (it stays there)."""
    mat = k.alloc(f"{name}1", "mat", "f16", _T, _T, mat_addr)
    right = k.alloc(f"{name}0", "right", "f16", _T, _T, right_addr)
    k.op("pto.tload", [k.window(view, k.idx(0), k.idx(0), _T, _T)], [k.t(mat)])
    k.op("pto.tmov", [k.t(mat)], [k.t(right)])
    return right


def _row_block_product(k: _Kernel, a_view: str, rhs: str, a_mat_addr: int, name: str) -> str:
    """In a loop over ``%t``: the accumulator ``A[t:t+32, :] @ rhs``, pushed to the AIVs."""
    a1 = k.alloc("a1", "mat", "f16", _T, _T, a_mat_addr)
    k.op("pto.tload", [k.window(a_view, "%t", k.idx(0), _T, _T)], [k.t(a1)])
    a0 = k.alloc("a0", "left", "f16", _T, _T, 0)
    k.op("pto.tmov", [k.t(a1)], [k.t(a0)])
    acc = k.alloc(name, "acc", "f32", _T, _T, 0)
    k.op("pto.tmatmul", [k.t(a0), k.t(rhs)], [k.t(acc)])
    return acc


def _lane_offsets(k: _Kernel, split: int, half: int) -> tuple[str, str]:
    """(row, col) offset of this AIV lane's half inside a 32x32 block."""
    sb = k.decl("%sb = pto.get_subblock_idx -> index")
    off = k.decl(f"%lane_off = arith.muli {sb}, {k.idx(half)} : index")
    return (off, k.idx(0)) if split == 1 else (k.idx(0), off)


def matmul_bias(target: str = "a2a3", split: int = 1, tiles: int = 4,
                slot_num: int = 2) -> str:
    """C[tiles*32, 32] = A @ B + bias (A, B f16, C and bias f32) on one core group."""
    if split not in (1, 2):
        raise ValueError("split is 1 (rows) or 2 (columns)")
    params = _params(target, [("%a", "f16"), ("%b", "f16"), ("%bias", "f32"), ("%c", "f32")])
    rows = tiles * _T
    slot = _T * _T * 4
    hr, hc = (_T // 2, _T) if split == 1 else (_T, _T // 2)
    aic = _Kernel(params, kind="cube", name="mm_bias_aic")
    peer = aic.decl('%peer = pto.import_reserved_buffer {name = "c2v", peer_func = '
                    '"mm_bias_aiv"} -> i32')
    _pipe(aic, target, c2v=peer, v2c=_i32(aic, 0), dir_mask=1, slot_size=slot,
          slot_num=slot_num)
    a_v = aic.view("a_view", "%a", "f16", rows, _T)
    b0 = _rhs_block(aic, aic.view("b_view", "%b", "f16", _T, _T), "b", _T * _T * 2, 0)
    aic.open(f"scf.for %t = {aic.idx(0)} to {aic.idx(rows)} step {aic.idx(_T)}")
    acc = _row_block_product(aic, a_v, b0, 0, "acc")
    aic.emit(f"pto.tpush_to_aiv({acc} : {aic.types[acc]}) {{split = {split}, id = 0}}")
    aic.close()

    aiv = _Kernel(params, kind="vector", name="mm_bias_aiv")
    ring = aiv.decl(f'%ring = pto.reserve_buffer {{name = "c2v", size = {slot_num * slot}, '
                    f'location = #pto.address_space<vec>, base = 0}} -> i32')
    _pipe(aiv, target, c2v=ring, v2c=_i32(aiv, 0), dir_mask=1, slot_size=slot,
          slot_num=slot_num)
    r_off, c_off = _lane_offsets(aiv, split, _T // 2)
    bias_v = aiv.view("bias_view", "%bias", "f32", rows, _T)
    c_v = aiv.view("c_view", "%c", "f32", rows, _T)
    half = tile_type("vec", "f32", hr, hc)
    base = slot_num * slot
    bias = aiv.alloc("bias_t", "vec", "f32", hr, hc, base)
    out = aiv.alloc("out_t", "vec", "f32", hr, hc, base + hr * hc * 4)
    aiv.open(f"scf.for %t = {aiv.idx(0)} to {aiv.idx(rows)} step {aiv.idx(_T)}")
    row = aiv.decl(f"%row = arith.addi %t, {r_off} : index")
    aiv.op("pto.tload", [aiv.window(bias_v, row, c_off, hr, hc)], [aiv.t(bias)])
    aiv.emit(f"%s = pto.tpop_from_aic {{split = {split}, id = 0}} -> {half}")
    aiv.op("pto.tadd", [("%s", half), aiv.t(bias)], [aiv.t(out)])
    aiv.emit(f"pto.tfree_from_aic(%s : {half}) {{split = {split}, id = 0}}")
    aiv.op("pto.tstore", [aiv.t(out)], [aiv.window(c_v, row, c_off, hr, hc)])
    aiv.close()
    return _module(target, aic, aiv)


def matmul_round_trip(target: str = "a2a3", split: int = 1, tiles: int = 3,
                      scale: float = 0.5) -> str:
    """O[tiles*32, 32] = f16(scale * (A @ B)) @ V: cube -> vector -> cube per row block."""
    if split not in (1, 2):
        raise ValueError("split is 1 (rows) or 2 (columns)")
    params = _params(target, [("%a", "f16"), ("%b", "f16"), ("%v", "f16"), ("%o", "f32")])
    rows = tiles * _T
    c2v_slot, slots = _T * _T * 4, 2      # one slot size for both directions: the larger
    hr, hc = (_T // 2, _T) if split == 1 else (_T, _T // 2)
    f16_full = tile_type("mat", "f16", _T, _T)
    aic = _Kernel(params, kind="cube", name="rt_aic")
    peer = aic.decl('%peer = pto.import_reserved_buffer {name = "c2v", peer_func = "rt_aiv"} '
                    '-> i32')
    ring = aic.decl(f'%ring = pto.reserve_buffer {{name = "v2c", size = {slots * c2v_slot}, '
                    f'location = #pto.address_space<mat>, base = 0}} -> i32')
    _pipe(aic, target, c2v=peer, v2c=ring, dir_mask=3, slot_size=c2v_slot, slot_num=slots)
    a_v = aic.view("a_view", "%a", "f16", rows, _T)
    o_v = aic.view("o_view", "%o", "f32", rows, _T)
    base = slots * c2v_slot            # Mat above the (larger) ring
    b0 = _rhs_block(aic, aic.view("b_view", "%b", "f16", _T, _T), "b", base, 0)
    v0 = _rhs_block(aic, aic.view("v_view", "%v", "f16", _T, _T), "v", base + 2048, 2048)
    aic.open(f"scf.for %t = {aic.idx(0)} to {aic.idx(rows)} step {aic.idx(_T)}")
    s_acc = _row_block_product(aic, a_v, b0, base + 4096, "s_acc")
    aic.emit(f"pto.tpush_to_aiv({s_acc} : {aic.types[s_acc]}) {{split = {split}, id = 0}}")
    aic.emit(f"%p = pto.tpop_from_aiv {{split = {split}, id = 0}} -> {f16_full}")
    p0 = aic.alloc("p0", "left", "f16", _T, _T, 2048)
    aic.op("pto.tmov", [("%p", f16_full)], [aic.t(p0)])
    aic.emit(f"pto.tfree_from_aiv(%p : {f16_full}) {{split = {split}, id = 0}}")
    o_acc = aic.alloc("o_acc", "acc", "f32", _T, _T, 4096)
    aic.op("pto.tmatmul", [aic.t(p0), aic.t(v0)], [aic.t(o_acc)])
    aic.op("pto.tstore", [aic.t(o_acc)], [aic.window(o_v, "%t", aic.idx(0), _T, _T)])
    aic.close()

    aiv = _Kernel(params, kind="vector", name="rt_aiv")
    vring = aiv.decl(f'%ring = pto.reserve_buffer {{name = "c2v", size = {slots * c2v_slot}, '
                     f'location = #pto.address_space<vec>, base = 0}} -> i32')
    vpeer = aiv.decl('%peer = pto.import_reserved_buffer {name = "v2c", peer_func = "rt_aic"} '
                     '-> i32')
    _pipe(aiv, target, c2v=vring, v2c=vpeer, dir_mask=3, slot_size=c2v_slot, slot_num=slots)
    half32 = tile_type("vec", "f32", hr, hc)
    vbase = slots * c2v_slot
    scaled = aiv.alloc("scaled", "vec", "f32", hr, hc, vbase)
    p16 = aiv.alloc("p16", "vec", "f16", hr, hc, vbase + hr * hc * 4)
    scale_v = aiv.decl(f"%scale = arith.constant {scale!r} : f32")
    aiv.open(f"scf.for %t = {aiv.idx(0)} to {aiv.idx(rows)} step {aiv.idx(_T)}")
    aiv.emit(f"%s = pto.tpop_from_aic {{split = {split}, id = 0}} -> {half32}")
    aiv.op("pto.tmuls", [("%s", half32), (scale_v, "f32")], [aiv.t(scaled)])
    aiv.emit(f"pto.tfree_from_aic(%s : {half32}) {{split = {split}, id = 0}}")
    aiv.op("pto.tcvt", [aiv.t(scaled)], [aiv.t(p16)], " {rmode = #pto.round_mode<rint>}")
    aiv.emit(f"pto.tpush_to_aic({p16} : {aiv.types[p16]}) {{split = {split}, id = 0}}")
    aiv.close()
    return _module(target, aic, aiv)
