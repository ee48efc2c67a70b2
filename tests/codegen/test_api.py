"""The public entry points: which functions become kernels, kernel kinds, targets, PTOAS form."""

from __future__ import annotations

import ptoc.pto as pto
from codegen_helpers import FILE, kernel_src, tensor, tile
from ptoc.codegen import (
    SUPPORTED_OPS, generate_kernels, generate_module, generate_modules, kernel_functions,
)
from ptoc.language import parse_program
from ptoc.ops import all_ops
from ptoc.pto.model import Module

VEC_BODY = f"""
x: {tile([16, 64])} = pl.tile.load(a, [0, 0], [16, 64], target_memory=pl.Mem.Vec)
o: {tensor([64, 64])} = pl.tile.store(x, [0, 0], out)
"""
P = f"a: {tensor([64, 64])}, out: {tensor([64, 64], out=True)}"


def _two_kernel_program() -> str:
    src = kernel_src(P, VEC_BODY + "return o", ftype="AIV", name="vec_kernel",
                     allocs={"m0": ("Vec", 4096)}, ret=tensor([64, 64]))
    cube = kernel_src(f"a: {tensor([64, 64], 'BF16')}", f"""
        am: {tile([64, 64], 'Mat', 'mm', 0, 'BF16')} = pl.tile.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    """, ftype="AIC", name="cube_kernel", allocs={"mm": ("Mat", 8192)})
    orch = kernel_src(P, "o: " + tensor([64, 64]) + " = self.vec_kernel(a, out)\nreturn o",
                      ftype="Orchestration", name="main", ret=tensor([64, 64]))
    # splice the extra functions into the first program's class
    body = lambda s: s.split("class P:\n", 1)[1]  # noqa: E731
    return src + body(cube) + body(orch)


def test_every_kernel_function_and_only_those():
    program = parse_program(_two_kernel_program(), FILE)
    assert [f.name for f in kernel_functions(program)] == ["vec_kernel", "cube_kernel"]
    texts = generate_kernels(program)
    assert list(texts) == ["vec_kernel", "cube_kernel"]
    kinds = {name: pto.parse(t).kernel(name).attr("pto.kernel_kind").value
             for name, t in texts.items()}
    assert kinds == {"vec_kernel": "vector", "cube_kernel": "cube"}


def test_generate_module_returns_a_verified_model_for_the_target():
    program = parse_program(kernel_src(P, VEC_BODY, allocs={"m0": ("Vec", 4096)}), FILE)
    module = generate_module(program.functions[0], target="a5")
    assert isinstance(module, Module) and module.target_arch == "a5"
    pto.verify(module)
    assert pto.print_module(module) == generate_kernels(program, target="a5")["kernel"]
    assert pto.parse(pto.print_module(module)) == module  # the printed text round-trips


def test_incore_kernel_kind_is_inferred_from_its_buffers():
    program = parse_program(kernel_src(P, VEC_BODY, allocs={"m0": ("Vec", 4096)}), FILE)
    text = generate_kernels(program)["kernel"]
    assert "#pto.kernel_kind<vector>" in text


def test_every_registered_tile_op_has_a_lowering():
    """Composite ops (tile.sin) are expanded before codegen, the split markers
    (tile.aiv_shard/aic_gather) folded into pipe ops by ExpandMixedKernel; every other tile op
    lowers."""
    markers = {"tile.aiv_shard", "tile.aic_gather"}
    tile_ops = {op.name for op in all_ops()
                if op.name.startswith("tile.") and op.composite is None} - markers
    assert tile_ops <= set(SUPPORTED_OPS)


def test_generate_modules_matches_the_printed_kernels():
    program = parse_program(_two_kernel_program(), FILE)
    modules = generate_modules(program, with_addresses=False)
    texts = generate_kernels(program, with_addresses=False)
    assert {n: pto.print_module(m) for n, m in modules.items()} == texts
