"""How a kernel learns which block of a multi-block launch it is.

A kernel whose last two parameters are ``%block_idx`` and ``%block_num`` (``i32``) reads its
block identity from them, as PyPTO's kernels do: the launcher of an SPMD task passes each
block its index and the block count (a plain launch is block 0 of 1). Codegen adds the two
parameters to a kernel that uses ``pl.tile.get_block_idx`` / ``get_block_num``; a
hand-written kernel may declare them too.
"""

from __future__ import annotations

#: the names of the trailing kernel parameters, in order
BLOCK_PARAMS = ("block_idx", "block_num")


def takes_block_identity(kernel) -> bool:
    """Whether a PTO kernel ends with the two block-identity parameters."""
    names = tuple(p.name for p in kernel.params[-len(BLOCK_PARAMS):])
    return names == BLOCK_PARAMS


def block_arguments(kernel, index: int, count: int) -> list[int]:
    """The values to append to a task's arguments for block ``index`` of ``count``."""
    return [index, count] if takes_block_identity(kernel) else []
