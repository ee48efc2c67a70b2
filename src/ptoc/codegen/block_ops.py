"""Block identity under ``pl.spmd`` (``tile.get_block_idx`` / ``tile.get_block_num``).

As PyPTO's codegen does, a kernel that reads its block identity takes two extra ``i32``
parameters after its own (``ptoc.pto.launch.BLOCK_PARAMS``: index, then count); the
launcher passes each block its index and the block count, and the op is an ``index_cast``
of the parameter.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ptoc.codegen.errors import CodegenError
from ptoc.dtypes import DataType

if TYPE_CHECKING:  # pragma: no cover
    from ptoc.codegen.emitter import KernelEmitter

#: the block-identity ops, with the index of their parameter in ``BLOCK_PARAMS``
BLOCK_OPS = {"tile.get_block_idx": 0, "tile.get_block_num": 1}


def _lower(em: "KernelEmitter", var, a, site) -> None:
    if var is None:
        raise CodegenError(f"the result of {site.call.op} must be assigned to a variable",
                           site.op)
    em.scalars[var] = em._cast(em.block_params[BLOCK_OPS[site.call.op]], DataType.INDEX,
                               site.op)


LOWERINGS = {name: _lower for name in BLOCK_OPS}
