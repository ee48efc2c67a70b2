"""Tile layouts per memory space: the PTO ``blayout`` / ``slayout`` / ``fractal`` facts and the
NZ box width, used by codegen, the example PTO writers and the split-K load narrowing.

All of them are facts of the cube's fractal formats (hw-model.md §1.4), the same on a2a3 and a5.
"""

from __future__ import annotations

from ptoc.dtypes import MemorySpace

#: NZ fractal box: 16 rows of C0 = 32 bytes [S] hw-model.md §1.4 (pto-isa nz-fractal-layout.md)
C0_BYTES = 32

#: (blayout, slayout, fractal bytes) of a tile in each on-chip space [S] hw-model.md §1.4
#: (PTOAS PTO_IR_manual §2.5; pto-isa performance-best-practices ``fractalCSize = 1024``).
TILE_LAYOUTS: dict[MemorySpace, tuple[str, str, int]] = {
    MemorySpace.Mat: ("col_major", "row_major", 512),    # NZ: 16 x 32-byte boxes
    MemorySpace.Left: ("row_major", "row_major", 512),   # what PyPTO stamps on Left tiles
    MemorySpace.Right: ("row_major", "col_major", 512),  # ZN
    MemorySpace.Acc: ("col_major", "row_major", 1024),   # 16 x 16 fp32 boxes
    MemorySpace.Vec: ("row_major", "none_box", 512),     # plain row-major UB tile
    MemorySpace.Bias: ("row_major", "none_box", 512),
}
