"""Block identity under ``pl.spmd``: which of the launched blocks this kernel instance is
(``get_block_idx``) and how many there are (``get_block_num``). Each ``register`` call is
one op's single entry. Codegen passes them to the kernel as two trailing parameters, as
PyPTO's does; a kernel launched without ``pl.spmd`` runs as block 0 of 1."""

from __future__ import annotations

from ptoc.dtypes import DataType
from ptoc.ir.types import ScalarType
from ptoc.ops.registry import OpDef, register


def _index(_args, _loc):
    return ScalarType(DataType.INDEX)


for _name, _doc in (("get_block_idx", "This block's index (0 .. block count - 1) under pl.spmd"),
                    ("get_block_num", "The number of blocks of the pl.spmd launch")):
    register(OpDef(f"tile.{_name}", (), _index, pipe="S", dsl_names=(_name,), doc=_doc))

del _name, _doc
