"""How an error names a tile: the user's variable and source line, not a compiler temporary.

The DSL names the result of a nested call ``t_<op>`` (``t_move``), passes add suffixes
(``x_vec``, pipeline copies ``t_1``), and a capacity error that lists those names, located
at the ``def`` line, leaves the user to guess which statement made the buffer. Here a tile
is described by the name the user wrote on its line when there is one, else as the result
of its op, always with the line.
"""

from __future__ import annotations

import linecache
import re

from ptoc.errors import SourceLoc
from ptoc.ir.nodes import AssignStmt, Call, Function, Var
from ptoc.passes.memref_rewrite import walk_stmts

_COPY = re.compile(r"^(?P<base>.+?)_(?P<n>\d+)$")


def tile_definitions(fn: Function) -> dict[Var, AssignStmt]:
    """The statement defining each variable of ``fn``."""
    return {s.var: s for s in walk_stmts(fn.body) if isinstance(s, AssignStmt)}


def source_loc(var: Var, stmt: AssignStmt | None) -> SourceLoc | None:
    """Where the user wrote the statement that made ``var``."""
    return var.loc or (stmt.loc if stmt is not None else None)


def _assigned_in(name: str, line: str) -> bool:
    return re.search(rf"(^|[\s,(])\b{re.escape(name)}\b\s*(:[^=]*)?(\[[^\]]*\])?\s*=(?!=)",
                     line) is not None


def describe_tile(var: Var, stmt: AssignStmt | None) -> str:
    """``t (line 12)``, ``t (pipeline copy 1, line 12)`` or ``the pl.move result (line 9)``."""
    loc = source_loc(var, stmt)
    line = linecache.getline(loc.file, loc.line) if loc is not None and loc.line else ""
    where = f"line {loc.line}" if loc is not None and loc.line else "no source line"
    copy = _COPY.match(var.name)
    if line and _assigned_in(var.name, line):
        return f"{var.name} ({where})"
    if line and copy and _assigned_in(copy["base"], line):
        return f"{copy['base']} (pipeline copy {copy['n']}, {where})"
    op = stmt.value.op if stmt is not None and isinstance(stmt.value, Call) else None
    if op is not None and (line or var.name.startswith("t_")):
        return f"the pl.{op.rsplit('.', 1)[-1]} result ({where})"
    return f"{var.name} ({where})"


__all__ = ["tile_definitions", "describe_tile", "source_loc"]
