"""PyPTO's operator catalog, family by family, and why ptoc does not run the names it lacks.

Why a table apart from the registry: the registry holds the ops ptoc runs; this lists every
name PyPTO's catalog (``docs/en/user/ops/01-catalog.md`` and the ``pl``/``pl.tile``/
``pl.tensor`` namespaces) defines, so that a name ptoc does not run is an error that says why
— never "unknown op" — and the generated op page (``docs/gen_ops.py``) shows every family.
A name with no entry in ``NOT_RUN`` must reach a registered op (a test checks both ways).
"""

from __future__ import annotations

from dataclasses import dataclass

from ptoc.errors import TypeCheckError


@dataclass(frozen=True)
class Family:
    title: str
    names: tuple[str, ...]


CATALOG: tuple[Family, ...] = (
    Family("Creation", ("create_tensor", "create_tile", "create_l1", "full", "arange",
                        "random", "tri", "const", "array.create")),
    Family("Data movement", ("load", "store", "move", "extract", "reserve_buffer",
                             "import_peer_buffer")),
    Family("Elementwise arithmetic", ("add", "sub", "mul", "div", "adds", "subs", "muls",
                                      "divs", "neg", "abs", "recip", "rem", "rems", "fmod",
                                      "fmods", "addc", "subc", "addsc", "subsc", "part_add",
                                      "part_mul", "part_max", "part_min")),
    Family("Math", ("exp", "log", "sqrt", "rsqrt", "sin", "cos")),
    Family("Comparison and selection", ("cmp", "cmps", "maximum", "minimum", "maximums",
                                        "minimums", "max", "min", "sel", "sels")),
    Family("Activations", ("relu", "prelu", "lrelu")),
    Family("Bitwise", ("and_", "or_", "xor", "not_", "ands", "ors", "xors", "shl", "shr",
                       "shls", "shrs")),
    Family("Reductions", ("row_sum", "row_prod", "row_max", "row_min", "col_sum", "col_prod",
                          "col_max", "col_min", "row_argmax", "row_argmin", "col_argmax",
                          "col_argmin")),
    Family("Broadcast and expand", ("row_expand", "col_expand", "row_expand_add",
                                    "row_expand_sub", "row_expand_mul", "row_expand_div",
                                    "row_expand_max", "row_expand_min", "col_expand_add",
                                    "col_expand_sub", "col_expand_mul", "col_expand_div",
                                    "col_expand_max", "col_expand_min", "row_expand_expdif",
                                    "col_expand_expdif", "expand_clone", "expands", "fillpad",
                                    "fillpad_expand", "fillpad_inplace")),
    Family("Shape and layout", ("reshape", "transpose", "transpose_view", "slice", "concat",
                                "assemble", "reinterpret_view", "set_validshape", "cast",
                                "dim", "read", "write")),
    Family("Linear algebra", ("matmul", "matmul_acc", "matmul_bias", "batch_matmul",
                              "batch_matmul_acc", "gemv", "gemv_acc", "gemv_bias",
                              "matmul_mx", "matmul_mx_acc", "matmul_mx_bias")),
    Family("Gather, scatter, sort", ("gather", "gather_row", "paged_gather", "gatherb",
                                     "gather_mask", "gather_compare", "mgather", "scatter",
                                     "scatter_update", "scatter_mask", "mscatter", "sort32",
                                     "mrgsort")),
    Family("Block identity", ("get_block_idx", "get_block_num", "get_subblock_idx")),
    Family("Cross-core transfer", ("tpush_to_aiv", "tpush_to_aic", "tpop_from_aic",
                                   "tpop_from_aiv", "tfree_to_aic", "tfree_to_aiv",
                                   "aic_initialize_pipe", "aiv_initialize_pipe", "aiv_shard",
                                   "aic_gather")),
    Family("Tasks and dependencies", ("submit", "spmd_submit", "no_dep", "dump_tag")),
    Family("Arrays", ("array.create", "array.get_element", "array.update_element")),
)

#: DSL directives the parser handles itself (no op behind them).
DIRECTIVES = {
    "const": "a parse-time directive: pl.const(value, dtype) is a typed constant",
    "submit": "a task launch: out, tid = pl.submit(self.kernel, args..., deps=[...])",
    "spmd_submit": "an SPMD task launch: out, tid = pl.spmd_submit(self.kernel, args..., "
                   "core_num=n, deps=[...])",
    "no_dep": "a kernel-call argument the runtime does not track: self.k(pl.no_dep(x), ...)",
}

_GATHER = ("the gather/scatter/sort family is not implemented in ptoc: no op of it is "
           "registered, lowered or simulated")
_TASKS = "task-graph bookkeeping of orchestration, not an op a core runs"

#: Catalog names ptoc does not run, and why (the error a user gets).
NOT_RUN: dict[str, str] = {
    "create_l1": "allocate the L1 tile with pl.create_tile(shape, dtype, "
                 "target_memory=pl.Mem.Mat) instead",
    "expand_clone": "PyPTO defines it for rank-3 tensors only (a batched broadcast), and ptoc "
                    "lowers 2-D tiles: use pl.row_expand / pl.col_expand",
    "random": "the TRANDOM counter-based generator is not simulated (its bit stream has no "
              "reference in ptoc); draw random inputs on the host",
    "batch_matmul": "rank-3 tiles do not exist in ptoc (tiles are 2-D): loop over the batch "
                    "and call pl.matmul per slice",
    "batch_matmul_acc": "rank-3 tiles do not exist in ptoc (tiles are 2-D): loop over the "
                        "batch and call pl.matmul_acc per slice",
    "matmul_mx": "A5 MX block-scale matmul needs FP8/FP4 data and E8M0 scales, which ptoc's "
                 "dtypes and cube model do not have",
    "matmul_mx_acc": "A5 MX block-scale matmul needs FP8/FP4 data and E8M0 scales, which "
                     "ptoc's dtypes and cube model do not have",
    "matmul_mx_bias": "A5 MX block-scale matmul needs FP8/FP4 data and E8M0 scales, which "
                      "ptoc's dtypes and cube model do not have",
    **{name: _GATHER for name in ("gather", "gather_row", "paged_gather", "gatherb",
                                  "gather_mask", "gather_compare", "mgather", "scatter",
                                  "scatter_update", "scatter_mask", "mscatter", "sort32",
                                  "mrgsort")},
    "dump_tag": _TASKS,
}


class NotRunError(TypeCheckError):
    """A PyPTO catalog op that ptoc does not run (the message says why)."""


def not_run_reason(name: str) -> str | None:
    """Why ptoc does not run the catalog name ``name`` (``add``, ``tile.gather``), else None."""
    short = name.split(".", 1)[1] if name.startswith(("tile.", "tensor.")) else name
    return NOT_RUN.get(short)
