"""User-facing reports built from a compile or a run: the per-kernel memory map and the
per-run trace bundle.

Why a package of its own: both read the Level-3 PTO, the simulator's results and the
target's capacities, and ``ptoc.tools`` only parses arguments and prints paths.
"""

from ptoc.report.memmap_model import Buffer, KernelMemoryMap, SpacePanel, TileSpan, build_memory_map
from ptoc.report.memmap_html import render_memory_map
from ptoc.report.memmap_write import memory_map_path, write_memory_map, write_memory_maps
from ptoc.report.trace_bundle import write_run_trace

__all__ = ["Buffer", "KernelMemoryMap", "SpacePanel", "TileSpan", "build_memory_map",
           "memory_map_path", "render_memory_map", "write_memory_map", "write_memory_maps",
           "write_run_trace"]
