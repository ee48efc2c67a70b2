"""ptoc.passes: the pass pipeline from tile-level IR to IR with allocated MemRefs."""

from ptoc.passes.l0_tile_chooser import L0TileConfig, L0TileResult, Stationarity, choose_l0_tile
