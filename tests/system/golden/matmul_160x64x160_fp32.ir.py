# ptoc.program: Reference
import ptoc.language as pl

@pl.program
class Reference:
    @pl.function(type=pl.FunctionType.AIC)
    def kernel(self, a: pl.Tensor[[160, 64], pl.FP32, pl.MemRef("mem_ddr_0", pl.const(0, pl.INT64), 40960)], b: pl.Tensor[[64, 160], pl.FP32, pl.MemRef("mem_ddr_1", pl.const(0, pl.INT64), 40960)], out: pl.Out[pl.Tensor[[160, 160], pl.FP32, pl.MemRef("mem_ddr_2", pl.const(0, pl.INT64), 102400)]]) -> pl.Tensor[[160, 160], pl.FP32]:
        mem_mat_3: pl.Ptr = pl.tile.alloc(pl.Mem.Mat, 40960)
        mem_mat_4: pl.Ptr = pl.tile.alloc(pl.Mem.Mat, 40960)
        mem_acc_5: pl.Ptr = pl.tile.alloc(pl.Mem.Acc, 102400)
        mem_left_6: pl.Ptr = pl.tile.alloc(pl.Mem.Left, 20480)
        mem_right_7: pl.Ptr = pl.tile.alloc(pl.Mem.Right, 20480)
        mem_left_8: pl.Ptr = pl.tile.alloc(pl.Mem.Left, 20480)
        mem_right_9: pl.Ptr = pl.tile.alloc(pl.Mem.Right, 20480)
        lm: pl.Tile[[160, 64], pl.FP32, pl.MemRef(mem_mat_3, pl.const(0, pl.INT64), 40960), pl.Mem.Mat] = pl.tile.load(a, [0, 0], [160, 64], [160, 64], target_memory=pl.Mem.Mat)
        rm: pl.Tile[[64, 160], pl.FP32, pl.MemRef(mem_mat_4, pl.const(40960, pl.INT64), 40960), pl.Mem.Mat] = pl.tile.load(b, [0, 0], [64, 160], [64, 160], target_memory=pl.Mem.Mat)
        c_l0_init: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.tile.create([160, 160], dtype=pl.FP32, target_memory=pl.Mem.Acc)
        for c_l0_ko, (c_l0_c,) in pl.range(0, 64, 64, init_values=(c_l0_init,)):
            c_l0_a: pl.Tile[[160, 32], pl.FP32, pl.MemRef(mem_left_6, pl.const(0, pl.INT64), 20480), pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(lm, 0, c_l0_ko, [160, 32], target_memory=pl.Mem.Left)
            c_l0_b: pl.Tile[[32, 160], pl.FP32, pl.MemRef(mem_right_7, pl.const(0, pl.INT64), 20480), pl.Mem.Right] = pl.tile.extract(rm, c_l0_ko, 0, [32, 160], target_memory=pl.Mem.Right)
            c_l0_a_1: pl.Tile[[160, 32], pl.FP32, pl.MemRef(mem_left_8, pl.const(20480, pl.INT64), 20480), pl.Mem.Left, pl.TileView(blayout=pl.TileLayout.row_major)] = pl.tile.extract(lm, 0, c_l0_ko + 32, [160, 32], target_memory=pl.Mem.Left)
            c_l0_b_1: pl.Tile[[32, 160], pl.FP32, pl.MemRef(mem_right_9, pl.const(20480, pl.INT64), 20480), pl.Mem.Right] = pl.tile.extract(rm, c_l0_ko + 32, 0, [32, 160], target_memory=pl.Mem.Right)
            if c_l0_ko == 0:
                c_l0_c_first: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.tile.matmul(c_l0_a, c_l0_b)
                c_l0_c_phi: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.yield_(c_l0_c_first)
            else:
                c_l0_c_acc: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.tile.matmul_acc(c_l0_c, c_l0_a, c_l0_b)
                c_l0_c_phi: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.yield_(c_l0_c_acc)
            if c_l0_ko + 32 == 0:
                c_l0_c_first_1: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.tile.matmul(c_l0_a_1, c_l0_b_1)
                c_l0_c_phi: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.yield_(c_l0_c_first_1)
            else:
                c_l0_c_acc_1: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.tile.matmul_acc(c_l0_c_phi, c_l0_a_1, c_l0_b_1)
                c_l0_c_phi: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.yield_(c_l0_c_acc_1)
            c: pl.Tile[[160, 160], pl.FP32, pl.MemRef(mem_acc_5, pl.const(0, pl.INT64), 102400), pl.Mem.Acc] = pl.yield_(c_l0_c_phi)
        out: pl.Tensor[[160, 160], pl.FP32, pl.MemRef("mem_ddr_2", pl.const(0, pl.INT64), 102400)] = pl.tile.store(c, [0, 0], out)
        return out
