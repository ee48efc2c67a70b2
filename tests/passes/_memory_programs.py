"""Program builders and inspectors shared by the memory-pass tests.

``cube_program`` writes a kernel (as printed IR text, parsed by ``parse_program``) in which
each listed Right operand is moved from Mat, multiplied with a [16, K] Left tile and its
result stored, with a hand-written ``pipeline_membership`` per operand: the shape of the
stage operands LowerPipelineLoops produces, without depending on that pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.ir import ForStmt, IfStmt, Program
from ptoc.ir.types import TileType
from ptoc.language import parse_program
from ptoc.passes import PassContext
from ptoc.passes.allocate_memory_addr import allocate_memory_addr
from ptoc.passes.init_mem_ref import init_mem_ref
from ptoc.passes.materialize_semantic_aliases import materialize_semantic_aliases
from ptoc.passes.memory_reuse import memory_reuse
from ptoc.passes.memref_rewrite import defined_vars, memref_of

HEADER = """import ptoc.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def kernel(self, {params}) -> {ret}:
"""


def program(params: str, ret: str, lines: list[str]) -> Program:
    """A one-kernel program from printed-IR statement lines (8-space indentation added)."""
    body = "\n".join("        " + line for line in lines)
    return parse_program(HEADER.format(params=params, ret=ret) + body + "\n")


@dataclass
class Operand:
    """A Right operand [k, n] (bf16) with an optional membership tag."""

    name: str
    k: int
    n: int
    tag: str | None = None


def cube_program(operands: list[Operand], *, colive: bool = False,
                 blocker: Operand | None = None) -> Program:
    """Right operands moved from Mat and used by a matmul each.

    ``colive=False``: each operand is defined, used and dead before the next one (only the
    stage guard can keep them apart). ``colive=True``: all are defined before any is used.
    ``blocker``: an untagged Right tile defined first and used last (co-resident with all).
    """
    every = ([blocker] if blocker else []) + operands
    ks = sorted({o.k for o in every})
    kns = sorted({(o.k, o.n) for o in every})
    ns = sorted({o.n for o in every})
    params = [f"a{k}: pl.Tensor[[16, {k}], pl.BF16]" for k in ks]
    params += [f"b{k}x{n}: pl.Tensor[[{k}, {n}], pl.BF16]" for k, n in kns]
    params += [f"out{n}: pl.Out[pl.Tensor[[16, {n}], pl.FP32]]" for n in ns]
    lines = []
    for k in ks:
        lines.append(f"am{k}: pl.Tile[[16, {k}], pl.BF16, pl.Mem.Mat] = pl.tile.load(a{k}, [0, 0], "
                     f"[16, {k}], [16, {k}], target_memory=pl.Mem.Mat)")
        lines.append(f"l{k}: pl.Tile[[16, {k}], pl.BF16, pl.Mem.Left] = pl.tile.move(am{k}, "
                     f"target_memory=pl.Mem.Left)")
    for k, n in kns:
        lines.append(f"bm{k}x{n}: pl.Tile[[{k}, {n}], pl.BF16, pl.Mem.Mat] = pl.tile.load("
                     f"b{k}x{n}, [0, 0], [{k}, {n}], [{k}, {n}], target_memory=pl.Mem.Mat)")
    version = {n: f"out{n}" for n in ns}

    def define(o: Operand) -> str:
        attrs = f', attrs={{"pipeline_membership": "{o.tag}"}}' if o.tag else ""
        return (f"{o.name}: pl.Tile[[{o.k}, {o.n}], pl.BF16, pl.Mem.Right] = pl.tile.move("
                f"bm{o.k}x{o.n}, target_memory=pl.Mem.Right{attrs})")

    def use(o: Operand) -> list[str]:
        prev = version[o.n]
        version[o.n] = f"o_{o.name}"
        return [f"c_{o.name}: pl.Tile[[16, {o.n}], pl.FP32, pl.Mem.Acc] = pl.tile.matmul("
                f"l{o.k}, {o.name})",
                f"o_{o.name}: pl.Tensor[[16, {o.n}], pl.FP32] = pl.tile.store(c_{o.name}, "
                f"[0, 0], {prev})"]

    if blocker:
        lines.append(define(blocker))
    if colive:
        lines += [define(o) for o in operands]
        for o in operands:
            lines += use(o)
    else:
        for o in operands:
            lines.append(define(o))
            lines += use(o)
    if blocker:
        lines += use(blocker)
    n0 = every[0].n
    lines.append(f"return {version[n0]}")
    return program(", ".join(params), f"pl.Tensor[[16, {n0}], pl.FP32]", lines)


def run_memory_passes(prog: Program, ctx: PassContext | None = None, *, allocate: bool = True,
                      **reuse_options) -> Program:
    """InitMemRef -> MaterializeSemanticAliases -> MemoryReuse [-> AllocateMemoryAddr]."""
    ctx = ctx if ctx is not None else PassContext()
    with ctx:
        prog = init_mem_ref()(prog)
        prog = materialize_semantic_aliases()(prog)
        prog = memory_reuse(**reuse_options)(prog)
        if allocate:
            prog = allocate_memory_addr()(prog)
    return prog


def buffers(prog: Program, function: str = "kernel") -> dict[str, tuple[str, int]]:
    """Tile name -> (buffer name, byte offset) for every tile of ``function``."""
    fn = prog.get_function(function)
    out = {}
    for v in defined_vars(fn):
        m = memref_of(v)
        if isinstance(v.type, TileType) and m is not None:
            out[v.name] = (m.base.name, getattr(m.offset, "value", None))
    return out


def allocs(prog: Program, space: str, function: str = "kernel") -> list[int]:
    """Sizes of the ``tile.alloc`` statements of one space, in order."""
    fn = prog.get_function(function)
    return [s.value.args[1] for s in fn.body.stmts
            if getattr(getattr(s, "value", None), "op", None) == "tile.alloc"
            and s.value.args[0].value == space]


def hints(ctx: PassContext, code: str = "PH-MR-001") -> list[str]:
    return [d.message for d in ctx.diagnostics if d.code == code]


def has_nested(prog: Program) -> bool:
    fn = prog.get_function("kernel")
    return any(isinstance(s, (ForStmt, IfStmt)) for s in fn.body.stmts)


def buffers_named(prog: Program, name: str, function: str = "kernel") -> list[tuple[str, int]]:
    """(buffer, offset) of every tile whose name hint is ``name`` (clones share hints)."""
    fn = prog.get_function(function)
    return [(memref_of(v).base.name, getattr(memref_of(v).offset, "value", None))
            for v in defined_vars(fn)
            if v.name == name and isinstance(v.type, TileType) and memref_of(v) is not None]
