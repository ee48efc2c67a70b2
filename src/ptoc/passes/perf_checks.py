"""Post-pipeline performance checks: advisory findings on the fully lowered program.

PyPTO runs these after the last pass (its ``PostPipeline`` diagnostic phase); so does
``PassManager.run_passes``. Each check reads the IR and reports through the diagnostics
sink, so ``disabled_diagnostics`` silences it like any other code.

PH001 (``TileInnermostDimGranularity``): every ``tile.load`` / ``tile.store`` moves data
between GM and the chip, whatever space the tile lives in, as rows of its innermost
dimension; a row narrower than the target's recommended size (a2a3 512 B, a5 128 B) uses
part of an L2 line per transaction. The finding gives the row width, the transfer volume
(``moves N B as R x W B rows``, from the valid shape, omitted when it is dynamic) so that
hints can be ranked, and the threshold.
"""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.ir.nodes import Call, ConstInt, ListExpr, Program
from ptoc.ir.types import TileType
from ptoc.ir.visitor import calls_in
from ptoc.passes.diagnostics import report_diagnostic

_TRANSFERS = ("tile.load", "tile.store")


def run_post_pipeline_checks(program: Program, target) -> None:
    """Every post-pipeline check on ``program`` (findings go to the current context)."""
    check_tile_innermost_dim(program, target)


def _ints(value) -> tuple[int, ...] | None:
    items = value.items if isinstance(value, ListExpr) else value
    if not isinstance(items, (tuple, list)):
        return None
    out = []
    for item in items:
        if isinstance(item, ConstInt):
            out.append(item.value)
        elif isinstance(item, int):
            out.append(item)
        else:
            return None
    return tuple(out)


def _tile_of(call: Call) -> TileType | None:
    ty = call.type if call.op == "tile.load" else (call.args[0].type if call.args else None)
    return ty if isinstance(ty, TileType) else None


def _valid_shape(call: Call, tile: TileType) -> tuple[int, ...] | None:
    if call.op == "tile.load":
        for key in ("valid_shapes", "shapes"):
            shape = _ints(call.kwarg(key)) if call.kwarg(key) is not None else None
            if shape is not None:
                return shape
    elif call.kwarg("shapes") is not None:
        return _ints(call.kwarg("shapes"))
    return tuple(tile.shape) if all(isinstance(d, int) for d in tile.shape) else None


def _dtype_name(dtype: DataType) -> str:
    """The dtype as PyPTO's messages spell it (``fp32``, ``bfloat16``)."""
    return "bfloat16" if dtype is DataType.BF16 else dtype.value.lower()


def innermost_dim_message(call: Call, target) -> str | None:
    """PH001's text for one transfer, or None when its rows are wide enough."""
    tile = _tile_of(call)
    if tile is None or not tile.shape or not isinstance(tile.shape[-1], int):
        return None
    width = tile.dtype.get_byte()
    inner = tile.shape[-1] * width
    threshold = target.recommended_innermost_dim_bytes
    if inner >= threshold:
        return None
    space = tile.memory_space.value if tile.memory_space is not None else "?"
    text = (f"{call.op} has innermost dim = {inner}B (tile {_dtype_name(tile.dtype)}"
            f"[{tile.shape[-1]}], target_memory={space})")
    valid = _valid_shape(call, tile)
    if valid:
        rows = 1
        for d in valid[:-1]:
            rows *= d
        row_bytes = valid[-1] * width
        text += f"; moves {rows * row_bytes}B as {rows} x {row_bytes}B rows"
    return (text + f"; recommended >= {threshold}B for backend {target.name} (L2 cache line = "
            f"{target.l2_cache_line_bytes}B). Consider increasing tile shape on the innermost "
            "axis.")


def check_tile_innermost_dim(program: Program, target) -> None:
    """Report PH001 for every narrow ``tile.load`` / ``tile.store`` (see the module doc)."""
    for call in calls_in(program, lambda call: not call.is_function and call.op in _TRANSFERS):
        message = innermost_dim_message(call, target)
        if message is not None:
            report_diagnostic("PH001", message, location=call.loc,
                              pass_name="TileInnermostDimGranularity")


__all__ = ["run_post_pipeline_checks", "check_tile_innermost_dim", "innermost_dim_message"]
