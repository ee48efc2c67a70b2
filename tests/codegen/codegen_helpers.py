"""Small builders for hand-written, already-allocated kernels in DSL text (codegen tests).

``kernel_src(params, body)`` wraps body lines in a one-kernel ``@pl.program``; ``tile(...)``
spells a tile annotation with its MemRef, the way PyPTO's post-allocation dumps do; ``lower``
runs codegen and returns both the PTO text and its parsed, verified model.
"""

from __future__ import annotations

import textwrap

import ptoc.pto as pto
from ptoc.codegen import generate_kernels
from ptoc.language import parse_program

FILE = "kern.py"


def tile(shape, space="Vec", base="m0", offset=0, dtype="FP32", size=None, view=None,
         memref=True) -> str:
    """``pl.Tile[[r, c], pl.FP32, pl.MemRef(base, pl.const(offset, pl.INT64), size), pl.Mem.X]``."""
    dims = ", ".join(str(d) for d in shape)
    parts = [f"[{dims}]", f"pl.{dtype}"]
    if memref:
        nbytes = size if size is not None else _bytes(shape, dtype)
        parts.append(f"pl.MemRef({base}, pl.const({offset}, pl.INT64), {nbytes})")
    parts.append(f"pl.Mem.{space}")
    if view:
        parts.append(f"pl.TileView({view})")
    return "pl.Tile[" + ", ".join(parts) + "]"


def tensor(shape, dtype="FP32", out=False) -> str:
    dims = ", ".join(str(d) for d in shape)
    t = f"pl.Tensor[[{dims}], pl.{dtype}]"
    return f"pl.Out[{t}]" if out else t


def _bytes(shape, dtype) -> int:
    n = 1
    for d in shape:
        n *= d
    return n * {"FP32": 4, "FP16": 2, "BF16": 2, "INT32": 4, "INT8": 1}[dtype]


def kernel_src(params: str, body: str, *, ftype: str = "InCore", name: str = "kernel",
               allocs: dict | None = None, ret: str | None = None) -> str:
    """DSL text of a program with one kernel ``name(self, <params>)`` and ``body``.

    ``allocs`` maps a MemRef base name to (space, bytes) and becomes ``pl.tile.alloc`` lines;
    ``ret`` is the return annotation.
    """
    lines = [f"{b}: pl.Ptr = pl.tile.alloc(pl.Mem.{sp}, {n})"
             for b, (sp, n) in (allocs or {}).items()]
    lines += textwrap.dedent(body).strip("\n").splitlines()
    inner = "\n".join("        " + ln for ln in lines)
    return ("import pypto.language as pl\n\n@pl.program\nclass P:\n"
            f"    @pl.function(type=pl.FunctionType.{ftype})\n"
            f"    def {name}(self, {params}){' -> ' + ret if ret else ''}:\n{inner}\n")


def lower(src: str, name: str = "kernel", **options):
    """(PTO text, verified ptoc.pto Kernel) of kernel ``name`` of the program in ``src``."""
    program = parse_program(src, FILE)
    text = generate_kernels(program, **options)[name]
    module = pto.verify(pto.parse(text), options.get("target"))
    return text, module.kernel(name)


def opcodes(kernel) -> list[str]:
    """Opcodes in program order (regions flattened), without the hoisted constants."""
    return [op.opcode for op in kernel.walk() if op.opcode != "arith.constant"]


def find(kernel, opcode: str):
    """Every op with ``opcode``, in program order."""
    return [op for op in kernel.walk() if op.opcode == opcode]
