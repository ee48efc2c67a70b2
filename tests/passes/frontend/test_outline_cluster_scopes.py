"""OutlineClusterScopes and OutlineHierarchyScopes: SPMD, cluster and hierarchy regions."""

import ptoc.language as pl
from ptoc.ir import assert_structural_equal
from ptoc.passes import PassContext
from ptoc.passes.frontend import (
    outline_cluster_scopes, outline_hierarchy_scopes, outline_incore_scopes,
)

HEAD = """import ptoc.language as pl

@pl.program
class P:
"""
T = "pl.Tensor[[32, 16], pl.FP32]"
KERNEL = f"""    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        i = pl.tile.get_block_idx()
        y = pl.store(pl.load(x, [i * 16, 0], [16, 16]), [i * 16, 0], y)
        return y

"""


def lower(src: str):
    with PassContext():
        program = pl.parse_program(HEAD + src)
        program = outline_hierarchy_scopes()(program)
        program = outline_incore_scopes()(program)
        return outline_cluster_scopes()(program)


def check(before: str, expected: str):
    after = lower(before)
    assert_structural_equal(after, pl.parse_program(HEAD + expected))


def test_spmd_loop_form_becomes_a_kernel_reading_its_block_and_an_spmd_launch():
    check(f"""    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, n: pl.Scalar[pl.INDEX], y: pl.Out[{T}]) -> {T}:
        for b in pl.spmd(n, sync_start=True):
            y = pl.store(pl.load(x, [b * 16, 0], [16, 16]), [b * 16, 0], y)
        return y
""", f"""    @pl.function(type=pl.FunctionType.InCore)
    def main_incore_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        b = pl.tile.get_block_idx()
        y2 = pl.store(pl.load(x, [b * 16, 0], [16, 16]), [b * 16, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Spmd)
    def main_spmd_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y2 = self.main_incore_0(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, n: pl.Scalar[pl.INDEX], y: pl.Out[{T}]) -> {T}:
        y = self.main_spmd_0(x, y, attrs={{"core_num": n, "sync_start": True}})
        return y
""")


def test_spmd_dispatch_of_a_declared_kernel():
    check(KERNEL + f"""    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        with pl.spmd(2):
            y = self.k(x, y)
        return y
""", KERNEL + f"""    @pl.function(type=pl.FunctionType.Spmd)
    def main_spmd_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y2 = self.k(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y = self.main_spmd_0(x, y, attrs={{"core_num": 2}})
        return y
""")


def test_spmd_inside_a_cluster_is_one_group_dispatch():
    check(KERNEL + f"""    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        with pl.cluster():
            with pl.spmd(4):
                y = self.k(x, y)
        return y
""", KERNEL + f"""    @pl.function(type=pl.FunctionType.Group, attrs={{"spmd_unwrapped": True}})
    def main_cluster_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y2 = self.k(x, y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y = self.main_cluster_0(x, y, attrs={{"core_num": 4}})
        return y
""")


def test_hierarchy_regions_become_level_functions_inner_first():
    check(f"""    @pl.function
    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        with pl.at(level=pl.Level.HOST, role=pl.Role.Orchestrator):
            with pl.at(level=pl.Level.CHIP):
                with pl.at(level=pl.Level.CORE_GROUP):
                    y = pl.store(pl.load(x, [0, 0], [32, 16]), [0, 0], y)
        return y
""", f"""    @pl.function(type=pl.FunctionType.InCore)
    def main_host_orch_0_chip_0_incore_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y2 = pl.store(pl.load(x, [0, 0], [32, 16]), [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration, level=pl.Level.CHIP)
    def main_host_orch_0_chip_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y2 = self.main_host_orch_0_chip_0_incore_0(x, y)
        return y2

    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)
    def main_host_orch_0(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y2 = self.main_host_orch_0_chip_0(x, y)
        return y

    @pl.function
    def main(self, x: {T}, y: pl.Out[{T}]) -> {T}:
        y = self.main_host_orch_0(x, y)
        return y
""")
