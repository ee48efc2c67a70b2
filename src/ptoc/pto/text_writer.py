"""A small writer of PTO text, shared by the hand-written example kernels (sim and sync tests).

It collects ``arith.constant``s, SSA types and indented body lines; subclasses decide where
declarations go and how the module is rendered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ptoc.backend.layouts import TILE_LAYOUTS

_LAYOUT = {space.lower: layout for space, layout in TILE_LAYOUTS.items()}


def tile_type(loc: str, dtype: str, rows: int, cols: int) -> str:
    """The ``!pto.tile_buf`` type text of a static tile in ``loc`` with PyPTO's layouts."""
    blayout, slayout, fractal = _LAYOUT[loc]
    return (f"!pto.tile_buf<loc={loc}, dtype={dtype}, rows={rows}, cols={cols}, v_row={rows}, "
            f"v_col={cols}, blayout={blayout}, slayout={slayout}, fractal={fractal}, pad=0>")


@dataclass
class PtoTextWriter:
    """Constants, SSA types and body lines of one kernel."""

    params: list[tuple[str, str]]
    consts: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)
    depth: int = 1
    counter: int = 0

    def idx(self, n: int) -> str:
        name = f"%c{n}"
        self.consts[name] = f"{name} = arith.constant {n} : index"
        return name

    def i64(self, n: int) -> str:
        name = f"%addr{n}"
        self.consts[name] = f"{name} = arith.constant {n} : i64"
        return name

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"%{stem}{self.counter}"

    def emit(self, text: str) -> None:
        self.lines.append("  " * self.depth + text)

    def view_text(self, name: str, ptr: str, dtype: str, rows: int, cols: int,
                  pitch: int | None = None) -> tuple[str, str]:
        """(value, declaration) of a row-major tensor view of ``ptr`` (rows ``pitch``
        elements apart, default ``cols``: a view of part of a wider tensor)."""
        v = f"%{name}"
        self.types[v] = dtype
        return v, (f"{v} = pto.make_tensor_view {ptr}, shape = [{self.idx(rows)}, "
                   f"{self.idx(cols)}], strides = [{self.idx(pitch or cols)}, {self.idx(1)}] "
                   f"{{layout = #pto.layout<nd>}} : !pto.tensor_view<?x?x{dtype}>")

    def tile_text(self, name: str, loc: str, dtype: str, rows: int, cols: int,
                  addr: int) -> tuple[str, str]:
        """(value, declaration) of a static tile at byte ``addr``."""
        t = f"%{name}"
        self.types[t] = tile_type(loc, dtype, rows, cols)
        return t, f"{t} = pto.alloc_tile addr = {self.i64(addr)} : {self.types[t]}"

    def window(self, view: str, r0: str, c0: str, rows: int, cols: int) -> tuple[str, str]:
        dtype = self.types[view]
        pv = self.fresh("pv")
        ty = f"!pto.partition_tensor_view<{rows}x{cols}x{dtype}>"
        self.emit(f"{pv} = pto.partition_view {view}, offsets = [{r0}, {c0}], sizes = "
                  f"[{self.idx(rows)}, {self.idx(cols)}] : !pto.tensor_view<?x?x{dtype}> -> {ty}")
        return pv, ty

    def t(self, tile: str) -> tuple[str, str]:
        return tile, self.types[tile]

    def op(self, opcode: str, ins, outs, attrs: str = "") -> None:
        def group(vs):
            return ", ".join(v for v, _ in vs) + " : " + ", ".join(t for _, t in vs)
        self.emit(f"{opcode} ins({group(ins)}) outs({group(outs)}){attrs}")

    def sync(self, kind: str, src: str, dst: str, ident: int) -> None:
        self.emit(f"pto.{kind}[<PIPE_{src}>, <PIPE_{dst}>, <EVENT_ID{ident}>]")

    def plus(self, iv: str, delta: int, stem: str = "kk") -> str:
        """``iv + delta`` as an SSA value (``iv`` itself when ``delta`` is 0)."""
        if not delta:
            return iv
        value = self.fresh(stem)
        self.emit(f"{value} = arith.addi {iv}, {self.idx(delta)} : index")
        return value

    def matmul_first_then_acc(self, iv: str, a: str, b: str, c: str) -> None:
        """``tmatmul`` when ``iv`` is 0 and ``tmatmul.acc`` after (an ``scf.if``): the first
        k-step of a K loop starts the accumulator, the others add to it."""
        first = self.fresh("first")
        self.emit(f"{first} = arith.cmpi eq, {iv}, {self.idx(0)} : index")
        self.open(f"scf.if {first}")
        self.op("pto.tmatmul", [self.t(a), self.t(b)], [self.t(c)])
        self.close("} else {")
        self.depth += 1
        self.op("pto.tmatmul.acc", [self.t(c), self.t(a), self.t(b)], [self.t(c)])
        self.close()

    def open(self, head: str) -> None:
        self.emit(head + " {")
        self.depth += 1

    def close(self, tail: str = "}") -> None:
        self.depth -= 1
        self.emit(tail)
